"""What check_document.py and check_responses.py share: reading docs/openapi.yaml,
resolving its references, and turning its schemas into JSON Schema 2020-12
validators.

Python 3 with Debian 12's python3-yaml and python3-jsonschema (4.10, which knows
Draft 2020-12). References are resolved here, not by jsonschema (whose reference
API changed in 4.18), so any jsonschema from 4.10 on gives the same verdicts.
"""

import copy
import re
import sys
import urllib.parse

try:
    import jsonschema
    import yaml
except ImportError as e:  # pragma: no cover - a setup problem, said plainly
    sys.exit(f"openapi check: {e}; install python3-yaml and python3-jsonschema (scripts/setup --test)")

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class DocumentError(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        sys.exit(f"FAIL: {path} does not parse: {e}")


def pointer(doc, ref):
    """The node a local reference ('#/a/b~1c', percent-encoded as a URI fragment) names."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise DocumentError(f"{ref!r}: only local references ('#/…') are used here")
    node = doc
    fragment = urllib.parse.unquote(ref[1:])
    if fragment == "":
        return node
    if not fragment.startswith("/"):
        raise DocumentError(f"{ref!r}: not a JSON pointer")
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise DocumentError(f"{ref!r} does not resolve (no {token!r})")
    return node


def deref(doc, node):
    """An object that may be a Reference Object (responses, parameters, headers…):
    the object it stands for, siblings of "$ref" (summary, description) kept."""
    seen = []
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            raise DocumentError(f"reference cycle: {' → '.join(seen + [ref])}")
        seen.append(ref)
        target = pointer(doc, ref)
        merged = dict(target) if isinstance(target, dict) else target
        if isinstance(merged, dict):
            for k, v in node.items():
                if k != "$ref":
                    merged.setdefault(k, v)
        node = merged
    return node


def inline_schema(doc, schema, stack=()):
    """The schema with every "$ref" replaced by what it names (a copy). A "$ref" with
    siblings becomes {"allOf": [target], …siblings} (2020-12: $ref is an applicator
    beside its siblings). The document's schemas are not recursive; a cycle is an
    error."""
    if isinstance(schema, list):
        return [inline_schema(doc, s, stack) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in stack:
            raise DocumentError(f"recursive schema: {' → '.join(stack + (ref,))}")
        target = inline_schema(doc, pointer(doc, ref), stack + (ref,))
        siblings = {k: inline_schema(doc, v, stack) for k, v in schema.items() if k != "$ref"}
        if not siblings:
            return target
        return {"allOf": [target], **siblings}
    out = {}
    for k, v in schema.items():
        if k in ("properties", "patternProperties", "$defs", "dependentSchemas"):
            out[k] = {name: inline_schema(doc, s, stack) for name, s in v.items()}
        elif k in ("examples", "enum", "const", "default", "required", "description"):
            out[k] = copy.deepcopy(v)
        else:
            out[k] = inline_schema(doc, v, stack)
    return out


def closed(schema, in_all_of=False):
    """A copy of an inlined schema in which every object schema that lists its
    properties (or composes others with allOf) admits no others
    ("unevaluatedProperties": false), unless it says otherwise. The document stays
    open for clients (a field added later is no error for them); the check is
    strict, so a field receiptd sends that the document does not list fails it.
    The members of an allOf are left open: the schema composing them is closed,
    and sees the properties each member evaluated."""
    if isinstance(schema, list):
        return [closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k in ("properties", "patternProperties", "$defs", "dependentSchemas"):
            out[k] = {name: closed(s) for name, s in v.items()}
        elif k == "allOf":
            out[k] = [closed(s, in_all_of=True) for s in v]
        elif k in ("anyOf", "oneOf", "prefixItems"):
            out[k] = [closed(s) for s in v]
        elif k in ("items", "additionalProperties", "unevaluatedItems", "contains", "not",
                   "if", "then", "else", "propertyNames"):
            out[k] = closed(v)
        else:
            out[k] = v
    describes_object = "properties" in schema or "allOf" in schema
    if (describes_object and not in_all_of and "unevaluatedProperties" not in schema
            and "additionalProperties" not in schema):
        out["unevaluatedProperties"] = False
    return out


def validator(doc, schema, strict):
    inlined = inline_schema(doc, schema)
    if strict:
        inlined = closed(inlined)
    jsonschema.Draft202012Validator.check_schema(inlined)
    return jsonschema.Draft202012Validator(inlined, format_checker=jsonschema.FormatChecker())


def path_item(doc, template):
    return deref(doc, doc["paths"][template])


def template_regex(template):
    parts = re.split(r"(\{[^}/]+\})", template)
    return re.compile("^" + "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$")


class PathMatcher:
    """Finds the path template of a concrete path. As OpenAPI says, a template without
    parameters wins over one with them (…/purchase_orders/legacy is not the record
    "legacy"), as receiptd's own routing does."""

    def __init__(self, doc):
        templates = list(doc.get("paths", {}))
        self.exact = {t for t in templates if "{" not in t}
        self.templated = [(t, template_regex(t)) for t in templates if "{" in t]

    def match(self, path):
        path = path.split("?", 1)[0]
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]  # receiptd ignores one trailing slash
        if path in self.exact:
            return path
        hits = [t for t, rx in self.templated if rx.match(path)]
        return hits[0] if hits else None


def response_for(responses, status):
    """The Response Object for a status: the exact code, its range ("4XX"), default."""
    for key in (str(status), f"{str(status)[0]}XX", "default"):
        if key in responses:
            return key, responses[key]
    return None, None


def media_type(content_type):
    return content_type.split(";", 1)[0].strip().lower()


def every_ref(node, where="#"):
    """(location, ref) of every "$ref" in the document."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield where, v
            else:
                yield from every_ref(v, f"{where}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from every_ref(v, f"{where}/{i}")
