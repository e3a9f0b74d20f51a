#!/usr/bin/env python3
"""Validates a JSON document against one of the official schemas kept, offline, in
tests/fixtures/schemas (see SOURCES.md there), with Debian's python3-jsonschema.

usage: validate_schema.py SCHEMA.json DOCUMENT.json
Every schema in the schema's folder is registered under its $id, so CycloneDX's references to
spdx.schema.json and jsf-0.82.schema.json resolve without a network. Exit 0 when valid, 1 with
the errors (at most 20) on stderr, 2 when a file cannot be read.
"""
import json
import pathlib
import sys

import jsonschema


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path = pathlib.Path(sys.argv[1])
    try:
        schema = json.loads(schema_path.read_text())
        doc = json.loads(pathlib.Path(sys.argv[2]).read_text())
    except (OSError, ValueError) as e:
        print(f"validate_schema: {e}", file=sys.stderr)
        return 2
    store = {}
    for other in schema_path.parent.glob("*.json"):
        s = json.loads(other.read_text())
        for key in ("$id", "id"):
            if isinstance(s.get(key), str):
                store[s[key].rstrip("#")] = s
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    validator = cls(schema, resolver=resolver, format_checker=cls.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:20]:
        where = "/".join(str(p) for p in e.absolute_path) or "(document)"
        print(f"{where}: {e.message[:300]}", file=sys.stderr)
    if errors:
        print(f"{len(errors)} error(s) against {schema_path.name}", file=sys.stderr)
        return 1
    print(f"valid against {schema_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
