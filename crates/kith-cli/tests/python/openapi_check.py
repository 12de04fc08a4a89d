"""Validates an OpenAPI document with openapi-spec-validator.

Usage: openapi_check.py SOURCE

SOURCE is an http:// URL (the document a running `kith serve` serves at
/openapi.json) or a file path. Prints one line per error the validator
finds and exits 1 if there is any; otherwise prints
`valid: OpenAPI <version>, <n> operations (openapi-spec-validator <v>)`
and exits 0. Run by kith-cli's tests/python.rs.
"""

import json
import sys
import urllib.request

import openapi_spec_validator
from openapi_spec_validator import OpenAPIV31SpecValidator


def load(source):
    if source.startswith("http://"):
        # The server is on loopback: never go through a proxy from the
        # environment.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(source, timeout=30) as response:
            return json.load(response)
    with open(source, encoding="utf-8") as f:
        return json.load(f)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    spec = load(sys.argv[1])
    version = spec.get("openapi", "")
    if not str(version).startswith("3.1."):
        print(f"error: the document says openapi {version!r}, not 3.1.x")
        return 1
    errors = list(OpenAPIV31SpecValidator(spec).iter_errors())
    for error in errors:
        # The first line of each message names the rule and the place.
        print("error:", str(error).splitlines()[0])
    if errors:
        print(f"invalid: {len(errors)} error(s)")
        return 1
    operations = sum(
        1
        for item in spec.get("paths", {}).values()
        for method in item
        if method in ("get", "put", "post", "delete", "patch", "head", "options", "trace")
    )
    print(
        f"valid: OpenAPI {version}, {operations} operations "
        f"(openapi-spec-validator {openapi_spec_validator.__version__})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
