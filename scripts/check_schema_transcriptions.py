"""Check our transcriptions of the Every Eval Ever schemas (``odu/export/schemas/``) against the
upstream files, on records ``odu-bench export --format eee`` wrote.

The repository carries no third-party files (odu/export/schemas/README.md), so the upstream
schemas come from a checkout of https://github.com/evaleval/every_eval_ever at the recorded tag::

    git -C every_eval_ever show v0.2.0:eval.schema.json > upstream/eval.schema.json
    git -C every_eval_ever show v0.2.0:instance_level_eval.schema.json > upstream/instance_level_eval.schema.json
    odu-bench export RUN --format eee --out eee
    python scripts/check_schema_transcriptions.py upstream eee

Every exported record must pass both schemas; then every field of one aggregate and one instance
is mutated in turn (deleted, replaced by a string, a number or null, given an unknown key) and each
mutant must get the same verdict from ours and from upstream. Exit 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema

from odu.export import load_schema

#: (upstream file, our transcription, the export's files it governs)
PAIRS = (
    ("eval.schema.json", "eee_eval_0.2.0.schema.json", "*.json"),
    ("instance_level_eval.schema.json", "eee_instance_level_eval_0.2.0.schema.json", "*.jsonl"),
)


def records(export: Path, pattern: str) -> list[dict[str, Any]]:
    found = []
    for path in sorted(export.rglob(pattern)):
        text = path.read_text(encoding="utf-8")
        found += [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else [json.loads(text)]
    return found


def field_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path of ``value`` (the first two items of each list)."""
    items = value.items() if isinstance(value, dict) else enumerate(value[:2]) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from field_paths(child, (*prefix, key))


def mutants(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in field_paths(record):
        for kind in ("delete", "string", "number", "null", "extra"):
            mutant = copy.deepcopy(record)
            parent = mutant
            for key in path[:-1]:
                parent = parent[key]
            key = path[-1]
            if kind == "delete" and isinstance(parent, dict):
                del parent[key]
            elif kind in ("string", "number", "null"):
                parent[key] = {"string": "x", "number": -1, "null": None}[kind]
            elif kind == "extra" and isinstance(parent[key], dict):
                parent[key]["unknown_key"] = 1
            else:
                continue
            yield mutant


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream", type=Path, help="folder holding the upstream v0.2.0 schema files")
    parser.add_argument("export", type=Path, help="an `odu-bench export --format eee` output folder")
    args = parser.parse_args()
    failures = 0
    for upstream_name, ours_name, pattern in PAIRS:
        upstream = jsonschema.Draft7Validator(json.loads((args.upstream / upstream_name).read_text(encoding="utf-8")))
        ours = jsonschema.Draft7Validator(load_schema(ours_name))
        found = records(args.export, pattern)
        if not found:
            print(f"{pattern}: no record in {args.export}", file=sys.stderr)
            return 2
        invalid = [i for i, r in enumerate(found) if not (upstream.is_valid(r) and ours.is_valid(r))]
        differ = [m for m in mutants(found[0]) if upstream.is_valid(m) != ours.is_valid(m)]
        tried = sum(1 for _ in mutants(found[0]))
        print(
            f"{ours_name}: {len(found)} records, {len(invalid)} invalid; {tried} mutants, {len(differ)} verdicts differ"
        )
        failures += len(invalid) + len(differ)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
