"""Prints a YAML file as JSON (PyYAML's safe loader).

Usage: yaml_to_json.py FILE. Run by kith-cli's tests/dockerfile.rs to read
docker-compose.yml.
"""

import json
import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    print(json.dumps(yaml.safe_load(f)))
