#!/usr/bin/env python3
"""Regenerates crds/*.json, the CRD schemas `make check-schemas` validates
against, from the upstream CustomResourceDefinition files listed in
crds/sources.tsv.

Usage (`make vendor-crds CRDS=<dir>` runs it):
    python3 scripts/vendor_crds.py UPSTREAM_DIR

UPSTREAM_DIR holds the upstream files under their upstream names (the `file`
column of crds/sources.tsv), byte for byte as the upstream repository has
them at the tag of their row (crds/README.md says how to get them). Every
*.yaml / *.yml file there must have a row, every row a file, and every
file the row's sha256; otherwise nothing is written and each problem is
listed.

Each crds/<file stem>.json keeps what the checks use: the CRD's group, kind,
plural and scope and, for each served version, its `openAPIV3Schema` with the
`description` keyword of every schema node removed (prose, not validation;
a property that is *named* description stays), plus a `source` object that
records where the file comes from, its license, and what was changed. The
output is deterministic (sorted keys, one-space indent, a trailing newline),
so running this on the same upstream files reproduces crds/ byte for byte;
JSON files in crds/ without a row are removed. The sources table of
crds/README.md is rewritten from sources.tsv too.
"""
import hashlib
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRDS = os.path.join(ROOT, "crds")
SOURCES = os.path.join(CRDS, "sources.tsv")
COLUMNS = ["file", "repository", "tag", "path", "sha256", "license"]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CHANGES = ("derived by scripts/vendor_crds.py: only the group, kind, plural, scope and the served "
           "versions' openAPIV3Schema are kept, and the description keyword of every schema node "
           "is removed")

# The keywords of a JSONSchemaProps (apiextensions.k8s.io/v1) whose values
# are schemas, by shape. Everything else is a value (default, enum, example,
# x-kubernetes-validations, ...) and is kept as it is.
SCHEMA = ("not", "additionalProperties", "additionalItems", "items")  # a schema (or bool / list)
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")  # a list of schemas
SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")  # name -> schema


def read_sources(path=SOURCES):
    """{file: row dict} from sources.tsv. Raises SystemExit on a malformed
    table."""
    rows, header = {}, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if header is None:
                if cells != COLUMNS:
                    raise SystemExit(f"{rel(path)}:{n}: the header must be {' '.join(COLUMNS)} (tab-separated)")
                header = cells
                continue
            if len(cells) != len(COLUMNS) or not all(cells):
                raise SystemExit(f"{rel(path)}:{n}: expected {len(COLUMNS)} non-empty tab-separated cells "
                                 f"({', '.join(COLUMNS)})")
            row = dict(zip(COLUMNS, cells))
            if row["file"] in rows:
                raise SystemExit(f"{rel(path)}:{n}: {row['file']} has two rows")
            if os.path.basename(row["path"]) != row["file"]:
                raise SystemExit(f"{rel(path)}:{n}: path {row['path']} does not end in {row['file']}")
            rows[row["file"]] = row
    return rows


def json_name(upstream_file):
    return os.path.splitext(upstream_file)[0] + ".json"


def strip_descriptions(node):
    """A copy of one schema node without the `description` keyword, in it
    and in every schema below it."""
    if not isinstance(node, dict):
        return node  # `additionalProperties: true`, a `dependencies` list of names
    out = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key in SCHEMA:
            value = [strip_descriptions(s) for s in value] if isinstance(value, list) else strip_descriptions(value)
        elif key in SCHEMA_LISTS:
            value = [strip_descriptions(s) for s in value]
        elif key in SCHEMA_MAPS:
            value = {name: strip_descriptions(s) for name, s in value.items()}
        out[key] = value
    return out


def derive(crd, row):
    """The vendored JSON object of one upstream CRD document."""
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1" or crd.get("kind") != "CustomResourceDefinition":
        raise ValueError("not an apiextensions.k8s.io/v1 CustomResourceDefinition")
    spec = crd["spec"]
    versions = {}
    for version in spec["versions"]:
        if version.get("served"):
            versions[version["name"]] = strip_descriptions(version["schema"]["openAPIV3Schema"])
    if not versions:
        raise ValueError("serves no version")
    return {
        "source": {**{k: row[k] for k in COLUMNS}, "changes": CHANGES},
        "group": spec["group"],
        "kind": spec["names"]["kind"],
        "plural": spec["names"]["plural"],
        "scope": spec["scope"],
        "versions": versions,
    }


TABLE_BEGIN = "<!-- BEGIN sources table: written by scripts/vendor_crds.py from sources.tsv -->\n"
TABLE_END = "<!-- END sources table -->"


def sources_table(rows):
    """crds/README.md's table of sources.tsv, one line per row."""
    lines = ["| file | repository | tag | path in the repository | sha256 of the upstream file | license |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows.values():
        repository = row["repository"].removeprefix("https://github.com/")
        lines.append(f"| `{json_name(row['file'])}` | {repository} | {row['tag']} | `{row['path']}` | "
                     f"`{row['sha256']}` | {row['license']} |")
    return "\n".join(lines) + "\n"


def readme_with_table(readme, rows):
    """crds/README.md's text with its sources table written from rows.
    Raises ValueError when the markers are missing."""
    start, end = readme.find(TABLE_BEGIN), readme.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"crds/README.md: the lines {TABLE_BEGIN.strip()} and {TABLE_END} must enclose the table")
    return readme[:start + len(TABLE_BEGIN)] + sources_table(rows) + readme[end:]


def render(obj):
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def rel(path):
    return os.path.relpath(path, ROOT)


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    upstream = argv[0]
    if not os.path.isdir(upstream):
        print(f"vendor-crds: {upstream} is not a directory", file=sys.stderr)
        return 2
    rows = read_sources()
    present = sorted(n for n in os.listdir(upstream) if n.endswith((".yaml", ".yml")))
    problems, outputs = [], {}
    for name in present:
        if name not in rows:
            problems.append(f"{os.path.join(upstream, name)}: not in crds/sources.tsv; add a row for it "
                            f"({', '.join(COLUMNS)}: where it comes from and its sha256), then rerun")
    for name, row in sorted(rows.items()):
        path = os.path.join(upstream, name)
        if name not in present:
            problems.append(f"{path}: missing; crds/sources.tsv lists it: get {row['path']} from "
                            f"{row['repository']} at {row['tag']} (crds/README.md)")
            continue
        with open(path, "rb") as f:
            data = f.read()
        found = hashlib.sha256(data).hexdigest()
        if found != row["sha256"]:
            problems.append(f"{path}: sha256 mismatch: crds/sources.tsv expects {row['sha256']}, the file has "
                            f"{found}; it is not {row['path']} of {row['repository']} at {row['tag']} (a new tag "
                            f"needs its row updated: tag and sha256)")
            continue
        try:
            docs = [d for d in yaml.load_all(data, Loader=LOADER) if d is not None]
            if len(docs) != 1:
                raise ValueError(f"{len(docs)} YAML documents, expected one CRD")
            outputs[json_name(name)] = render(derive(docs[0], row))
        except (ValueError, KeyError, TypeError, yaml.YAMLError) as e:
            problems.append(f"{path}: {type(e).__name__}: {e}")
    if problems:
        for problem in problems:
            print(f"vendor-crds: {problem}", file=sys.stderr)
        print(f"vendor-crds: {len(problems)} problem(s); nothing written", file=sys.stderr)
        return 1
    changed = 0
    readme_path = os.path.join(CRDS, "README.md")
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    try:
        outputs["README.md"] = readme_with_table(readme, rows)
    except ValueError as e:
        print(f"vendor-crds: {e}", file=sys.stderr)
        return 1
    for old in sorted(os.listdir(CRDS)):
        if old.endswith(".json") and old not in outputs:
            os.unlink(os.path.join(CRDS, old))
            print(f"removed crds/{old}")
            changed += 1
    for name, text in sorted(outputs.items()):
        path = os.path.join(CRDS, name)
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote crds/{name}")
            changed += 1
    print(f"vendor-crds: {len(outputs) - 1} CRDs from {len(rows)} rows of crds/sources.tsv, "
          f"{changed} file(s) changed in crds/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
