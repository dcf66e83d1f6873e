#!/usr/bin/env python3
"""Checks docs/openapi.yaml itself.

    check_document.py docs/openapi.yaml

- It parses, says `openapi: 3.1.x`, and every "$ref" in it resolves.
- Every schema (components, parameters, headers, request and response bodies,
  webhooks) is a valid JSON Schema 2020-12 schema once its references are
  inlined (no recursion), and every example in components validates against its
  schema (closed, as check_responses.py holds answers).
- Every operation has responses, an operationId unique in the document, and
  declares each of its path's {parameters}; an alias path item ($ref to another
  path item) names the path it aliases in `x-alias-of`, and that path exists.
- Every "required" property of an object schema is one it lists.
That every route of http/routes.cpp (and its alias) and every code of the error
table is in the document is tests/unit/openapi_document_test.cpp's part: it reads
the document embedded into the binary and the C++ tables themselves.
"""

import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import openapi_check as oc  # noqa: E402


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    problems = []

    def problem(text):
        problems.append(text)

    doc = oc.load(argv[1])
    if not isinstance(doc, dict) or not str(doc.get("openapi", "")).startswith("3.1."):
        print("FAIL: not an OpenAPI 3.1 document")
        return 1

    refs = list(oc.every_ref(doc))
    for where, ref in refs:
        try:
            oc.pointer(doc, ref)
        except oc.DocumentError as e:
            problem(f"{where}: {e}")

    def schema_ok(where, schema, strict=False):
        try:
            oc.validator(doc, schema, strict)
        except Exception as e:  # DocumentError, jsonschema.SchemaError
            problem(f"{where}: not a usable schema: {e}")

    components = doc.get("components", {})
    for name, schema in components.get("schemas", {}).items():
        where = f"#/components/schemas/{name}"
        schema_ok(where, schema, strict=True)
        for example in schema.get("examples", []):
            try:
                errors = list(oc.validator(doc, schema, True).iter_errors(example))
            except Exception:
                continue  # reported above
            for e in errors:
                problem(f"{where}: example {example!r} does not validate: {e.message}")
        for inner_where, inner in walk_schemas(where, schema):
            required = inner.get("required", [])
            listed = inner.get("properties", {})
            if required and "allOf" not in inner and "$ref" not in inner:
                for r in required:
                    if r not in listed:
                        problem(f"{inner_where}: required {r!r} is not among its properties")
    for kind in ("parameters", "headers"):
        for name, item in components.get(kind, {}).items():
            schema_ok(f"#/components/{kind}/{name}", item.get("schema", {}))

    operation_ids = {}
    for template, raw in doc.get("paths", {}).items():
        try:
            item = oc.path_item(doc, template)
        except oc.DocumentError as e:
            problem(f"path {template}: {e}")
            continue
        is_alias = "$ref" in raw
        if is_alias:
            target = raw.get("x-alias-of")
            if target not in doc["paths"]:
                problem(f"alias {template}: x-alias-of {target!r} is not a path of the document")
            elif oc.pointer(doc, raw["$ref"]) is not doc["paths"][target]:
                problem(f"alias {template}: $ref {raw['$ref']} is not the item of {target}")
            if [p for p in re.findall(r"\{[^}]+\}", template)] != re.findall(r"\{[^}]+\}", target or ""):
                problem(f"alias {template}: its path parameters differ from {target}'s")
        operations = {m: op for m, op in item.items() if m in oc.HTTP_METHODS}
        if not operations:
            problem(f"path {template}: no operation")
        for method, op in operations.items():
            where = f"{method.upper()} {template}"
            if not is_alias:
                oid = op.get("operationId")
                if not oid:
                    problem(f"{where}: no operationId")
                elif oid in operation_ids:
                    problem(f"{where}: operationId {oid} is also {operation_ids[oid]}'s")
                else:
                    operation_ids[oid] = where
            check_operation(doc, where, template, op, problem, schema_ok)
    for name, raw in doc.get("webhooks", {}).items():
        item = oc.deref(doc, raw)
        for method, op in item.items():
            if method in oc.HTTP_METHODS:
                check_operation(doc, f"webhook {name} {method.upper()}", None, op, problem, schema_ok)

    if problems:
        print(f"FAIL: {len(problems)} problems in {argv[1]}:")
        for p in problems:
            print(f"  {p}")
        return 1
    print(f"OK: {argv[1]}: {len(doc.get('paths', {}))} paths, {len(doc.get('webhooks', {}))} webhooks, "
          f"{len(components.get('schemas', {}))} schemas, {len(refs)} references, all resolved and valid")
    return 0


def walk_schemas(where, schema):
    """(location, schema) of a schema and the schemas inside it (not through $ref)."""
    if not isinstance(schema, dict):
        return
    yield where, schema
    for k in ("properties", "$defs"):
        for name, s in schema.get(k, {}).items():
            yield from walk_schemas(f"{where}/{k}/{name}", s)
    for k in ("allOf", "anyOf", "oneOf", "prefixItems"):
        for i, s in enumerate(schema.get(k, [])):
            yield from walk_schemas(f"{where}/{k}/{i}", s)
    for k in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(k), dict):
            yield from walk_schemas(f"{where}/{k}", schema[k])


def check_operation(doc, where, template, op, problem, schema_ok):
    responses = op.get("responses")
    if not responses:
        problem(f"{where}: no responses")
        return
    params = [oc.deref(doc, p) for p in op.get("parameters", [])]
    for p in params:
        schema_ok(f"{where} parameter {p.get('name')}", p.get("schema", {}))
    if template is not None:
        declared = {p["name"] for p in params if p.get("in") == "path"}
        for name in re.findall(r"\{([^}]+)\}", template):
            if name not in declared:
                problem(f"{where}: path parameter {{{name}}} is not declared")
    if "requestBody" in op:
        request = oc.deref(doc, op["requestBody"])
        for media, content in request.get("content", {}).items():
            schema_ok(f"{where} request {media}", content.get("schema", {}))
    for status, response in responses.items():
        if not re.fullmatch(r"[1-5]([0-9]{2}|XX)|default", str(status)):
            problem(f"{where}: {status!r} is not a status")
        response = oc.deref(doc, response)
        if "description" not in response:
            problem(f"{where} {status}: no description")
        for name, header in response.get("headers", {}).items():
            header = oc.deref(doc, header)
            schema_ok(f"{where} {status} header {name}", header.get("schema", {}))
        for media, content in response.get("content", {}).items():
            schema_ok(f"{where} {status} {media}", content.get("schema", {}), strict=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
