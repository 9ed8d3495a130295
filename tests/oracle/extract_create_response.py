"""Makes tests/oracle/openai-create-response.schema.json, the second oracle for Responses
request bodies, from OpenAI's own OpenAPI document: `CreateResponse` and every component
schema it reaches, as one JSON Schema (draft 2020-12) with the components under `$defs`.

Source: github.com/openai/openai-openapi, `openapi.yaml` at commit
f85dbe223d40e1a31cba812ab2d755c7e98a92a3 (2026-08-21; OpenAPI 3.1.0, `info.version` 2.3.0;
sha256 db5d7478feae10b4d331834c60d9765a8aa042e38419f9b1694288c11aa8ebc8; MIT license). The
document is not vendored (3 MB); this script records how the vendored extract was made:

  python3 tests/oracle/extract_create_response.py openapi.yaml \
      > tests/oracle/openai-create-response.schema.json

Only two things change, both OpenAPI spellings a JSON Schema validator does not read:
`$ref`s point into `$defs`, and the OpenAPI 3.0 `nullable: true` left in some schemas
becomes a `null` the schema allows. Descriptions and examples are dropped (they are most of
the size and no validator reads them); every other keyword, `discriminator` included, stays
as OpenAI wrote it. Needs PyYAML (not a test dependency: only this script reads YAML).
"""
import hashlib
import json
import sys

import yaml

SOURCE = "github.com/openai/openai-openapi openapi.yaml @ f85dbe223d40e1a31cba812ab2d755c7e98a92a3 (2026-08-21, info.version 2.3.0)"
DROPPED = {"description", "example", "examples", "title", "x-oaiMeta"}
PREFIX = "#/components/schemas/"


def refs(node, found):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(PREFIX):
            found.add(ref[len(PREFIX):])
        for value in node.values():
            refs(value, found)
    elif isinstance(node, list):
        for value in node:
            refs(value, found)


def convert(node):
    if isinstance(node, list):
        return [convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in DROPPED:
            continue
        if key == "$ref" and isinstance(value, str) and value.startswith(PREFIX):
            out[key] = "#/$defs/" + value[len(PREFIX):]
        elif key == "properties" and isinstance(value, dict):
            # Property names are data, not keywords: none is dropped.
            out[key] = {name: convert(schema) for name, schema in value.items()}
        else:
            out[key] = convert(value)
    if out.pop("nullable", False):
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = out["enum"] + [None]
        elif isinstance(kind, list):
            out["type"] = kind + ["null"]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def main(path):
    with open(path, "rb") as f:
        raw = f.read()
    spec = yaml.safe_load(raw)
    schemas = spec["components"]["schemas"]
    wanted, todo = set(), ["CreateResponse"]
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.add(name)
        found = set()
        refs(schemas[name], found)
        todo.extend(found - wanted)
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"CreateResponse and the component schemas it reaches, from {SOURCE}; sha256 of the source document {hashlib.sha256(raw).hexdigest()}; made by tests/oracle/extract_create_response.py",
        "$ref": "#/$defs/CreateResponse",
        "$defs": {name: convert(schemas[name]) for name in sorted(wanted)},
    }
    json.dump(document, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
