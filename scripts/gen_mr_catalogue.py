#!/usr/bin/env python3
"""Generates the managed-resource catalogue from the CRDs of the pinned upjet providers.

    gen_mr_catalogue.py           rewrite the three generated files below
    gen_mr_catalogue.py --check   regenerate them in memory; fail, naming each file, when one differs

The catalogue says which Crossplane managed-resource (MR) kinds of the upjet providers carry a cloud tag
field, and where (docs/managed-resources.md). Its source is the CustomResourceDefinitions under
`package/crds/` of three Go modules, pinned by crds/managed-resources/go.mod and go.sum:

    aws    github.com/upbound/provider-aws/v2     (the repository crossplane-contrib/provider-upjet-aws)
    azure  github.com/upbound/provider-azure/v2   (crossplane-contrib/provider-upjet-azure)
    gcp    github.com/upbound/provider-gcp        (crossplane-contrib/provider-upjet-gcp)

Each module's zip comes from the Go module proxy through `go mod download -json` (GOPROXY without `direct`,
GOTOOLCHAIN=local, GOWORK=off, -mod=readonly), so the Go command checks it against the committed go.sum;
it lands in the machine's module cache (GOMODCACHE) and later runs read it from there.

The rules (docs/managed-resources.md, "The rules"), per CRD file of a family's group (`<service>.aws.upbound.io`,
its namespaced twin `<service>.aws.m.upbound.io`, the same for azure and gcp): a CRD whose served versions have
no `spec.forProvider` is not an MR; the field is `spec.forProvider.tags` (aws, azure) or
`spec.forProvider.labels` (gcp; `resourceLabels` for the kinds that have no `labels`, GKE's Cluster) and it
must be a map of strings (`type: object`, `additionalProperties: {type: string}`); for gcp
`status.atProvider.effectiveLabels` must be in the schema too (Terraform google's labels model: a `labels`
field without it means something else), except for GKE's Cluster (GKE_CLUSTER below). A kind gets a row when
every served version of both scopes gives the same field; the row's group is the cluster-scoped one (`.m.`
removed), shared by the twin.

Writes:
    crates/core/src/tags/targets/mr_catalogue.tsv  the table the policy compiles in, sorted by (group, kind)
    crds/managed-resources/files.tsv       every CRD file read: module, version, path, sha256
    docs/managed-resources.md              the counts and the excluded kinds, between its BEGIN/END markers

Parsing every CRD (about 215 MB of YAML) takes half a minute; what is read from each file is cached by the
file's sha256 under $CACHE_DIR/mr-catalogue (CACHE_DIR as the Makefile's: ~/.cache/metadata-propagation-policy),
so a warm `--check` costs a few seconds.
"""

import hashlib
import inspect
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = os.path.join("crds", "managed-resources")
CATALOGUE_OUT = os.path.join("crates", "core", "src", "tags", "targets", "mr_catalogue.tsv")
FILES_OUT = os.path.join(PIN, "files.tsv")
DOC = os.path.join("docs", "managed-resources.md")
DOC_BEGIN = "<!-- BEGIN catalogue: written by scripts/gen_mr_catalogue.py -->"
DOC_END = "<!-- END catalogue -->"

# family, Go module, upstream repository (the module path still names the repository's former home), the
# field candidates in order (the first one present and valid wins), whether the GCP
# labels model is required.
FAMILIES = [
    ("aws", "github.com/upbound/provider-aws/v2", "crossplane-contrib/provider-upjet-aws",
     ("tags",), False),
    ("azure", "github.com/upbound/provider-azure/v2", "crossplane-contrib/provider-upjet-azure",
     ("tags",), False),
    ("gcp", "github.com/upbound/provider-gcp", "crossplane-contrib/provider-upjet-gcp",
     ("labels", "resourceLabels"), True),
]
# GKE's Cluster: `resourceLabels` are "the GCE resource labels (a map of key/value pairs) to be applied to the
# cluster" (its CRD's description). provider-upjet-gcp v1 (Terraform google 5.x) gives this kind no
# `status.atProvider.effectiveLabels`; later releases do, and the rule then selects it without this exception.
GKE_CLUSTER = ("resourceLabels", "container.gcp.upbound.io", "Cluster")
MAP_OF_STRINGS = "map[string]"


def cache_dir():
    base = os.environ.get("CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "metadata-propagation-policy")
    return os.path.join(base, "mr-catalogue")


def download(module):
    """`go mod download -json MODULE` in the pin's folder: the module's folder, version and origin."""
    env = dict(os.environ, GOTOOLCHAIN="local", GOWORK="off", GOFLAGS="-mod=readonly")
    env.setdefault("GOPROXY", "https://proxy.golang.org")
    try:
        out = subprocess.run(["go", "mod", "download", "-json", module], cwd=os.path.join(ROOT, PIN), env=env,
                             capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("gen_mr_catalogue.py: go not found; the catalogue's provider modules come through Go 1.26 "
                 "(docs/development.md)")
    info = json.loads(out.stdout or "{}")
    if out.returncode != 0 or "Dir" not in info:
        sys.exit(f"gen_mr_catalogue.py: cannot download {module} ({PIN}/go.mod): "
                 f"{info.get('Error') or out.stderr.strip()}")
    return info


# --- What is read from one CRD file (cached by the file's sha256) ------------------------------------------

def shape(node):
    """A schema node's shape in a few characters: `map[string]`, `list[object]`, `object`, `string`, …"""
    if not isinstance(node, dict):
        return "any"
    kind = node.get("type")
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return f"map[{shape(extra)}]"
        if extra is True:
            return "map[any]"
        return "object"
    if kind == "array":
        return f"list[{shape(node.get('items'))}]"
    return kind or "any"


def read_crd(text):
    """What the rules need from one CRD: its group, kind, scope, and per version whether it is served, the
    shape of each member of `spec.forProvider` (None when there is none) and the members of
    `status.atProvider`."""
    crd = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        return None
    spec = crd["spec"]
    versions = []
    for version in spec.get("versions") or []:
        schema = ((version.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties") or {}
        for_provider = (((schema.get("spec") or {}).get("properties") or {}).get("forProvider"))
        at_provider = (((schema.get("status") or {}).get("properties") or {}).get("atProvider") or {})
        versions.append({
            "name": version["name"],
            "served": bool(version.get("served")),
            "forProvider": None if for_provider is None else
            {name: shape(member) for name, member in sorted((for_provider.get("properties") or {}).items())},
            "atProvider": sorted((at_provider.get("properties") or {}).keys()),
        })
    return {"group": spec["group"], "kind": spec["names"]["kind"], "scope": spec.get("scope"),
            "versions": versions}


def read_job(path):
    with open(path, "rb") as f:
        return read_crd(f.read())


# The cache is valid for this reading code only: its key is the code's own text.
READER_KEY = hashlib.sha256("".join(inspect.getsource(f) for f in (shape, read_crd)).encode()).hexdigest()[:16]


def read_all(paths_by_digest):
    """digest -> what read_crd found, from the cache or by parsing (both cores)."""
    path = os.path.join(cache_dir(), f"facts-{READER_KEY}.json")
    try:
        with open(path) as f:
            cached = json.load(f)
    except (OSError, ValueError):
        cached = {}
    facts = {d: cached[d] for d in paths_by_digest if d in cached}
    missing = sorted(d for d in paths_by_digest if d not in facts)
    if missing:
        print(f"gen_mr_catalogue.py: parsing {len(missing)} CRD files (cached for the next run)", file=sys.stderr)
        with multiprocessing.Pool(os.cpu_count() or 1) as pool:
            for digest, found in zip(missing, pool.map(read_job, [paths_by_digest[d] for d in missing],
                                                       chunksize=16)):
                facts[digest] = found
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(path), delete=False) as f:
            json.dump(facts, f, sort_keys=True)
        os.replace(f.name, path)
    return facts


# --- The rules -------------------------------------------------------------------------------------------

def base_group(group, family):
    """The cluster-scoped group of a group of `family`, None for a group of no family: `ec2.aws.m.upbound.io`
    -> `ec2.aws.upbound.io`, `azure.m.upbound.io` (Azure's root group) -> `azure.upbound.io`."""
    for suffix in (f"{family}.upbound.io", f"{family}.m.upbound.io"):
        if group == suffix or group.endswith("." + suffix):
            return group[: -len(suffix)] + f"{family}.upbound.io"
    return None


def field_of(version, candidates, labels_model, group, kind):
    """(field, None) when the version has a tag field by the rules, else (None, why not) — why is None
    when the version has no candidate at all."""
    members = version["forProvider"]
    problems = []
    for name in candidates:
        if name not in members:
            continue
        if members[name] != MAP_OF_STRINGS:
            problems.append(f"`{name}` is {members[name]}, not a map of strings")
            continue
        if labels_model and "effectiveLabels" not in version["atProvider"] and (name, group, kind) != GKE_CLUSTER:
            problems.append(f"`{name}` is a map of strings but `status.atProvider.effectiveLabels` is absent "
                            "(not Terraform google's resource labels)")
            continue
        return name, None
    return None, ("; ".join(problems) or None)


def catalogue(crds, families=FAMILIES):
    """rows: {(family, group, kind): field}; excluded: {(family, group, kind): why}; mrs: {family: count of
    MR kinds}, from crds: [(family, crd facts)]."""
    seen = {}  # (family, group, kind) -> {"scope/version": (field, why)}
    for family, crd in crds:
        _, _, _, candidates, labels_model = next(f for f in families if f[0] == family)
        group = base_group(crd["group"], family)
        if group is None:
            sys.exit(f"gen_mr_catalogue.py: {crd['group']} {crd['kind']} is in no {family} group")
        served = [v for v in crd["versions"] if v["served"]]
        if not any(v["forProvider"] is not None for v in served):
            continue  # ProviderConfig, ProviderConfigUsage, StoreConfig, …: not an MR
        per = seen.setdefault((family, group, crd["kind"]), {})
        scope = "namespaced" if crd["group"] != group else "cluster"
        for version in served:
            if version["forProvider"] is None:
                per[f"{scope} {version['name']}"] = (None, "no `spec.forProvider`")
            else:
                per[f"{scope} {version['name']}"] = field_of(version, candidates, labels_model, group, crd["kind"])
    rows, excluded, mrs = {}, {}, {}
    for key, per in sorted(seen.items()):
        mrs[key[0]] = mrs.get(key[0], 0) + 1
        fields = {field for field, _ in per.values()}
        whys = sorted({why for _, why in per.values() if why})
        if len(fields) == 1 and None not in fields:
            rows[key] = fields.pop()
        elif whys or len(fields) > 1:
            # A candidate is there somewhere but not a tag field everywhere: say which versions have what.
            if len(fields) > 1:
                detail = ", ".join(f"{sv}: `{f}`" if f else f"{sv}: none" for sv, (f, _) in sorted(per.items()))
                whys = [f"the served versions disagree ({detail})"] + whys
            excluded[key] = "; ".join(whys)
    return rows, excluded, mrs


# --- Output ----------------------------------------------------------------------------------------------

def catalogue_tsv(rows, mrs, releases):
    counts = {family: sum(1 for (f, _, _) in rows if f == family) for family, *_ in FAMILIES}
    out = [
        "# The managed-resource catalogue (docs/managed-resources.md): the Crossplane MR kinds of the upjet",
        "# providers that carry a cloud tag field, one per line as group (without `.m.`), kind, family and the",
        "# field's path, tab-separated and sorted by (group, kind). crates/core/src/tags/targets/mr_catalogue.rs compiles",
        "# it in. GENERATED by scripts/gen_mr_catalogue.py from the CRDs under `package/crds/` of the releases",
        "# crds/managed-resources/go.mod pins (each file read: crds/managed-resources/files.tsv). Do not edit:",
        "# `make mr-catalogue` rewrites it and `make check-mr-catalogue` fails when it and the CRDs disagree.",
        "# family\trelease\tMR kinds\trows:",
    ]
    for family, module, repository, *_ in FAMILIES:
        out.append(f"#   {family}\t{repository} {releases[family]} ({module})\t{mrs.get(family, 0)}\t{counts[family]}")
    # Rust's `str` order is byte order; Python's str order is code-point order: the same for ASCII.
    for (family, group, kind), field in sorted(rows.items(), key=lambda item: (item[0][1], item[0][2])):
        assert group.isascii() and kind.isascii()
        out.append(f"{group}\t{kind}\t{family}\tspec.forProvider.{field}")
    return "\n".join(out) + "\n"

def files_tsv(read, releases, origins):
    out = [
        "# Every CRD file scripts/gen_mr_catalogue.py reads, one row each: the family, the file's name under",
        "# package/crds/ in the family's Go module, and the file's sha256. The modules, pinned by go.mod and go.sum",
        "# beside this file and served by the Go module proxy, and where the proxy took each from:",
    ]
    for family, module, repository, *_ in FAMILIES:
        origin = origins[family]
        out.append(f"#   {family}\t{module}@{releases[family]}\t{repository} (the proxy's origin: "
                   f"{origin.get('URL', '?')}, its former name) {origin.get('Ref', '?')} {origin.get('Hash', '?')}")
    out += [
        "# `make check-mr-catalogue` fails when this list and the pinned modules disagree.",
        "family\tfile\tsha256",
    ]
    for family, name, digest in sorted(read):
        out.append(f"{family}\t{name}\t{digest}")
    return "\n".join(out) + "\n"


def doc_section(rows, excluded, mrs, releases, origins):
    counts = {family: sum(1 for (f, _, _) in rows if f == family) for family, *_ in FAMILIES}
    lines = [
        DOC_BEGIN,
        "| family | release (Go module) | commit | MR kinds | with a tag field (rows) | field |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for family, module, repository, candidates, _ in FAMILIES:
        fields = sorted({field for (f, _, _), field in rows.items() if f == family},
                        key=lambda field: candidates.index(field))
        described = ", ".join(f"`spec.forProvider.{field}`"
                              + (f" ({sum(1 for (f, _, _), x in rows.items() if f == family and x == field)})"
                                 if len(fields) > 1 else "") for field in fields)
        lines.append(f"| {family} | {repository} {releases[family]} (`{module}`) | `{origins[family].get('Hash', '?')[:12]}` "
                     f"| {mrs.get(family, 0)} | {counts[family]} | {described} |")
    lines += ["", f"Excluded ({len(excluded)}): a kind whose `spec.forProvider` has a candidate field that is not "
              "a tag field by the rules.", ""]
    if excluded:
        lines += ["| family | group | kind | why |", "| --- | --- | --- | --- |"]
        for (family, group, kind), why in sorted(excluded.items()):
            lines.append(f"| {family} | `{group}` | {kind} | {why} |")
    lines.append(DOC_END)
    return "\n".join(lines)


def doc_with_section(text, section):
    start, end = text.find(DOC_BEGIN), text.find(DOC_END)
    if start < 0 or end < start:
        sys.exit(f"gen_mr_catalogue.py: {DOC} has no {DOC_BEGIN} … {DOC_END} markers")
    return text[:start] + section + text[end + len(DOC_END):]


def generate():
    """{path: expected text} for the three outputs."""
    crds, read, releases, origins, paths_by_digest, digest_of = [], [], {}, {}, {}, {}
    for family, module, *_ in FAMILIES:
        info = download(module)
        releases[family] = info["Version"]
        # Where the proxy took the zip from (the .info file it serves beside the zip): repository and commit.
        with open(info["Info"]) as f:
            origins[family] = json.load(f).get("Origin") or {}
        crd_dir = os.path.join(info["Dir"], "package", "crds")
        names = sorted(n for n in os.listdir(crd_dir) if n.endswith(".yaml")) if os.path.isdir(crd_dir) else []
        if not names:
            sys.exit(f"gen_mr_catalogue.py: {module}@{info['Version']} has no package/crds/*.yaml")
        for name in names:
            path = os.path.join(crd_dir, name)
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            paths_by_digest[digest] = path
            digest_of[(family, name)] = digest
            read.append((family, name, digest))
    facts = read_all(paths_by_digest)
    for family, name in sorted(digest_of):
        crd = facts[digest_of[(family, name)]]
        if crd is not None:
            crds.append((family, crd))
    rows, excluded, mrs = catalogue(crds)
    with open(os.path.join(ROOT, DOC)) as f:
        doc = doc_with_section(f.read(), doc_section(rows, excluded, mrs, releases, origins))
    for family, *_ in FAMILIES:
        n = sum(1 for (f, _, _) in rows if f == family)
        print(f"gen_mr_catalogue.py: {family} {releases[family]}: {mrs.get(family, 0)} MR kinds, {n} with a tag "
              f"field, {sum(1 for (f, _, _) in excluded if f == family)} excluded", file=sys.stderr)
    return {CATALOGUE_OUT: catalogue_tsv(rows, mrs, releases), FILES_OUT: files_tsv(read, releases, origins), DOC: doc}


def main(argv):
    check = argv == ["--check"]
    if argv and not check:
        sys.exit(__doc__)
    stale = []
    for path, text in generate().items():
        full = os.path.join(ROOT, path)
        try:
            with open(full) as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        if check:
            stale.append(path)
        else:
            with open(full, "w") as f:
                f.write(text)
            print(f"gen_mr_catalogue.py: wrote {path}", file=sys.stderr)
    if stale:
        sys.exit("gen_mr_catalogue.py: not what the CRDs of the providers pinned by "
                 f"{PIN}/go.mod give: {', '.join(stale)}; `make mr-catalogue` rewrites them")
    if check:
        print("gen_mr_catalogue.py: the catalogue, its file list and its docs agree with the pinned CRDs",
              file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
