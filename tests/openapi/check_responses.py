#!/usr/bin/env python3
"""Holds every answer the functional tests received from receiptd against
docs/openapi.yaml.

    check_responses.py docs/openapi.yaml RECORD.jsonl

RECORD.jsonl is what tests/functional/http_client.cpp wrote while the functional
tests ran (RECEIPTD_OPENAPI_RECORD): one JSON object per line, either

    {"kind": "http", "method", "path" (as requested, query included), "status",
     "content_type", "headers" (lower-case names), "body", "request_body"?}
    {"kind": "webhook", "body"}      a webhook delivery the emulator's receiver got

For each answer: the path resolves to a path of the document (Mbaasy's alias paths
included; a path the document does not have must have been answered 404
`NotFound`, a method its path item lacks 405 `MethodNotAllowed`); the status is
listed for that operation; the required response headers are there (Retry-After on
a 503, WWW-Authenticate on a 401) and match their schemas; the content type is
one the response lists; the body validates against the response's schema (JSON
Schema 2020-12, formats checked, every object closed: a field the document does
not list is an error). An upload the service judged (200, 206, 402, 409) must
also have sent a body that validates against the request schema. Each webhook body
validates against the document's `webhooks` entry of its `type` (of its `name`
for the purchase and customer events, whose `type` is the resource's).

Fails, listing every answer that does not match (method, path, status, the schema's
complaint), and fails when the record is missing or holds no answer at all: a check
that cannot fail is no check.
"""

import collections
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import openapi_check as oc  # noqa: E402

JUDGED = (200, 206, 402, 409)  # the body was read, checked and acted on


class Checker:
    def __init__(self, doc):
        self.doc = doc
        self.paths = oc.PathMatcher(doc)
        self.validators = {}
        self.failures = collections.OrderedDict()  # (where, complaint) → count
        self.seen = collections.Counter()  # (method, template, status) checked

    def fail(self, where, complaint):
        key = (where, complaint)
        self.failures[key] = self.failures.get(key, 0) + 1

    def validate(self, key, schema, value, strict=True):
        if key not in self.validators:
            self.validators[key] = oc.validator(self.doc, schema, strict)
        errors = sorted(self.validators[key].iter_errors(value), key=lambda e: list(e.absolute_path))
        # A property whose own schema failed also counts as unevaluated: say only the
        # failure (a field the document lacks is still said once the rest passes).
        def explained(e):
            at = list(e.absolute_path)
            return e.validator == "unevaluatedProperties" and any(
                o.validator != "unevaluatedProperties" and list(o.absolute_path)[: len(at)] == at
                for o in errors)
        return [f"{'/'.join(str(p) for p in e.absolute_path) or '(body)'}: {e.message[:300]}"
                for e in errors if not explained(e)]

    def check_http(self, x):
        method = x["method"].lower()
        status = int(x["status"])
        path = x["path"]
        template = self.paths.match(path)
        where = f"{x['method']} {template or path.split('?', 1)[0]} → {status}"
        if template is None:
            response_name, response = "NotFound", self.doc["components"]["responses"]["NotFound"]
            if status != 404:
                return self.fail(where, "the document has no such path, so the answer must be 404")
        else:
            item = oc.path_item(self.doc, template)
            operation = item.get(method)
            if method == "head" and operation is None and "get" in item:
                # HEAD on a GET path: the GET's answer, headers only (RFC 9110 §9.3.2).
                operation = item["get"]
                if x.get("body"):
                    return self.fail(where, "an answer to HEAD has a body")
                x = dict(x, body=None)
            if operation is None:
                response_name = "MethodNotAllowed"
                response = self.doc["components"]["responses"]["MethodNotAllowed"]
                if status != 405:
                    return self.fail(where, f"{template} has no {method.upper()}, so the answer must be 405")
            else:
                key, response = oc.response_for(operation.get("responses", {}), status)
                if response is None:
                    return self.fail(where, f"status {status} is not listed for {method.upper()} {template}")
                response_name = f"{method.upper()} {template} {key}"
                self.check_request(where, f"{method.upper()} {template}", operation, status, x)
        self.seen[(x["method"], template or "(no such path)", status)] += 1
        response = oc.deref(self.doc, response)
        self.check_headers(where, response_name, response, x.get("headers", {}))
        self.check_body(where, response_name, response, x.get("content_type", ""), x.get("body", ""))

    def check_headers(self, where, response_name, response, headers):
        for name, header in response.get("headers", {}).items():
            header = oc.deref(self.doc, header)
            value = headers.get(name.lower())
            if value is None:
                if header.get("required"):
                    self.fail(where, f"the required header {name} is missing")
                continue
            schema = header.get("schema", {})
            if schema.get("type") == "integer":
                try:
                    value = int(value)
                except ValueError:
                    self.fail(where, f"header {name}: {value!r} is not an integer")
                    continue
            for e in self.validate(("header", response_name, name), schema, value):
                self.fail(where, f"header {name}: {e}")

    def check_body(self, where, response_name, response, content_type, body):
        if body is None:
            return  # HEAD: no body to hold against the schema
        content = response.get("content")
        if not content:
            if body:
                self.fail(where, "the document lists no body for this answer, but it has one")
            return
        media = oc.media_type(content_type)
        listed = {oc.media_type(k): v for k, v in content.items()}
        if media not in listed:
            return self.fail(where, f"content type {content_type!r} is not one of {sorted(listed)}")
        schema = listed[media].get("schema")
        if schema is None:
            return
        if media == "application/json" or media.endswith("+json"):
            try:
                value = json.loads(body)
            except ValueError as e:
                return self.fail(where, f"the body is not JSON ({e}): {body[:200]!r}")
        else:
            value = body
        for e in self.validate((response_name, media), schema, value):
            self.fail(where, e)

    def check_request(self, where, operation_name, operation, status, x):
        body = x.get("request_body")
        if status not in JUDGED or body is None or "requestBody" not in operation:
            return
        request = oc.deref(self.doc, operation["requestBody"])
        schema = request.get("content", {}).get("application/json", {}).get("schema")
        if schema is None:
            return
        try:
            value = json.loads(body)
        except ValueError:
            return self.fail(where, "the service judged a request body that is not JSON")
        # Requests are checked open: the service ignores fields it does not know.
        for e in self.validate(("request", operation_name), schema, value, strict=False):
            self.fail(where, f"request body accepted by the service, refused by the document: {e}")

    def check_webhook(self, body):
        try:
            event = json.loads(body)
        except ValueError as e:
            return self.fail("webhook", f"the body is not JSON ({e})")
        # Record events are keyed by their type ("receipt.created"); Mbaasy's purchase
        # and customer events by their name (type "in_app_purchase", name
        # "in_app_purchase.created").
        kind = None
        if isinstance(event, dict):
            kind = event.get("name") if isinstance(event.get("name"), str) else event.get("type")
        entry = self.doc.get("webhooks", {}).get(kind)
        where = f"webhook {kind}"
        if entry is None:
            return self.fail(where, "no such entry under the document's webhooks")
        entry = oc.deref(self.doc, entry)
        request = oc.deref(self.doc, entry["post"]["requestBody"])
        schema = request["content"]["application/json"]["schema"]
        self.seen[("webhook", kind, 0)] += 1
        for e in self.validate(("webhook", kind), schema, event):
            self.fail(where, e)


def documented(doc):
    """(template, method, status) of every response the document lists (aliases aside)."""
    for template, raw in doc.get("paths", {}).items():
        if "$ref" in raw:
            continue  # an alias: the same operations as the path it names
        for method, operation in oc.path_item(doc, template).items():
            if method in oc.HTTP_METHODS:
                for status in operation.get("responses", {}):
                    yield template, method, str(status)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    doc = oc.load(argv[1])
    checker = Checker(doc)
    try:
        with open(argv[2], encoding="utf-8", errors="replace") as f:
            lines = [line for line in f if line.strip()]
    except OSError as e:
        print(f"FAIL: no record of the functional tests' answers: {e}")
        return 1
    if not lines:
        print(f"FAIL: {argv[2]} is empty: the functional tests recorded no answer to check")
        return 1
    http_count = webhook_count = 0
    webhook_bodies = set()
    for number, line in enumerate(lines, 1):
        try:
            x = json.loads(line)
        except ValueError as e:
            checker.fail(f"{argv[2]}:{number}", f"not a JSON line ({e})")
            continue
        if x.get("kind") == "webhook":
            if x["body"] not in webhook_bodies:  # the tests poll the receiver
                webhook_bodies.add(x["body"])
                webhook_count += 1
                checker.check_webhook(x["body"])
        else:
            http_count += 1
            checker.check_http(x)
    if http_count == 0:
        checker.fail(argv[2], "no HTTP answer was recorded")

    print(f"checked {http_count} answers and {webhook_count} webhook bodies against {argv[1]}")
    for (method, template, status), n in sorted(checker.seen.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        print(f"  {n:6d}  {method} {template} {status if status else ''}")
    untried = [f"{m.upper()} {t} {k}" for t, m, k in documented(doc)
               if (m.upper(), t, k) not in {(a, b, str(c)) for a, b, c in checker.seen}]
    if untried:  # for the reader: what no functional test provokes (not a failure)
        print(f"documented, not seen in this run ({len(untried)}): {', '.join(untried)}")
    if checker.failures:
        print(f"FAIL: {sum(checker.failures.values())} mismatches ({len(checker.failures)} distinct):")
        for (where, complaint), n in checker.failures.items():
            print(f"  {where}: {complaint}" + (f"  (×{n})" if n > 1 else ""))
        return 1
    print("OK: every answer matches the document")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
