#!/usr/bin/env python3
"""Schema test: validates every /v1 response body the sim tests received (collected as
JSON lines in the response directory) against docs/oxide-api/nexus-subset.json.
2xx bodies use the operation's response schema; 4xx/5xx bodies use the Error schema."""
import glob
import json
import os
import re
import sys

import jsonschema


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# RFC 3339 UTC with microseconds, as the reference says the server prints times.
DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def openapi_to_jsonschema(node):
    """OpenAPI 3.0 'nullable: true' -> anyOf [schema, null], recursively."""
    if isinstance(node, list):
        return [openapi_to_jsonschema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: openapi_to_jsonschema(value) for key, value in node.items()
                 if key != "nullable"}
    if node.get("nullable") is True:
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def format_checker():
    checker = jsonschema.FormatChecker()

    @checker.checks("uuid")
    def is_uuid(value):
        return not isinstance(value, str) or bool(UUID.match(value))

    @checker.checks("date-time")
    def is_date_time(value):
        return not isinstance(value, str) or bool(DATE_TIME.match(value))

    return checker


def main():
    spec_path, response_dir = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = openapi_to_jsonschema(json.load(f))
    # Resolve "#/components/..." refs against the whole document.
    schema_root = {"components": spec["components"]}
    validator_cls = jsonschema.Draft4Validator
    checker = format_checker()

    def validator_for(schema):
        full = dict(schema_root)
        full.update(schema)
        return validator_cls(full, format_checker=checker)

    routes = []
    for path, methods in spec["paths"].items():
        pattern = "^" + re.sub(r"\{[^/]+\}", "[^/]+", path) + "$"
        for method, operation in methods.items():
            routes.append((method.upper(), re.compile(pattern), path, operation))

    error_validator = validator_for({"$ref": "#/components/schemas/Error"})
    files = glob.glob(os.path.join(response_dir, "*.jsonl"))
    checked, failures, by_schema = 0, [], {}
    for name in files:
        with open(name) as f:
            for line in f:
                record = json.loads(line)
                status, body = record["status"], record["body"]
                if not record["raw_is_json"]:
                    failures.append(f"{record['method']} {record['path']} {status}: body is not JSON")
                    continue
                if status >= 400:
                    validator, label = error_validator, "Error"
                else:
                    matches = [r for r in routes if r[0] == record["method"] and r[1].match(record["path"])]
                    if not matches:
                        failures.append(f"no operation for {record['method']} {record['path']}")
                        continue
                    operation = matches[0][3]
                    response = operation["responses"].get(str(status))
                    if response is None:
                        failures.append(f"{operation['operationId']}: undocumented status {status}")
                        continue
                    schema = response.get("content", {}).get("application/json", {}).get("schema")
                    if schema is None:
                        failures.append(f"{operation['operationId']}: status {status} has no body")
                        continue
                    validator, label = validator_for(schema), operation["operationId"]
                errors = list(validator.iter_errors(body))
                checked += 1
                by_schema[label] = by_schema.get(label, 0) + 1
                for error in errors[:3]:
                    failures.append(f"{label} {record['method']} {record['path']} {status}: "
                                    f"{error.message} at {list(error.absolute_path)}")
    print(f"validated {checked} response bodies from {len(files)} files")
    for label in sorted(by_schema):
        print(f"  {label}: {by_schema[label]}")
    for failure in failures[:50]:
        print("FAIL:", failure)
    if checked == 0:
        print("FAIL: no responses were collected")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
