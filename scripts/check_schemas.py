#!/usr/bin/env python3
"""Checks every Kubernetes object the project ships or tests with against
the real CRD schemas, strictly, as an API server would store it.

Usage (from anywhere; `make check-schemas` runs the first form):
    python3 scripts/check_schemas.py                        # check, exit 1 on any failure
    python3 scripts/check_schemas.py --write-rust-schemas   # regenerate crates/core/tests/schemas/*.json

The CRDs are read from crds/ in the repository ($CRDS_DIR overrides): one
JSON file per CRD, derived by scripts/vendor_crds.py from the pinned upstream
files crds/sources.tsv lists (CAPI v1.14, its infrastructure providers,
Kubewarden, Crossplane; crds/README.md), with the `openAPIV3Schema` of each
served version. The check also fails when crds/ and crds/sources.tsv
disagree.

The managed-resource kinds the test bed installs (cluster/crds.tsv, rows
vendored `catalogue`) are not in crds/: their CRDs are read from the pinned
upjet provider modules (crds/managed-resources) through the Go module cache,
when the first object of an upjet group is met; an object of another upjet
kind gets the ObjectMeta check only.

Which objects: every AdmissionRequest `object` / `oldObject` (bare or wrapped
in an AdmissionReview), every bare object (.json), every YAML document that
is an object (parents, web example parents, examples/), every item of a
`kind: List` (the audit's dumps, test_data/dumps), and every `Success`
payload of a kwctl replay session, in SCAN_DIRS, and the child, the parents
and the expected child of every row of crates/core/tests/capi_conformance/
(ports of CAPI's own unit-test tables).

How: the CRD is picked by the apiVersion's group and the kind, its version
entry by the apiVersion's version, and its `openAPIV3Schema` made strict by
`strict_schema` (undeclared fields are errors, as `kubectl apply
--validate=strict` reports them). `metadata` is ObjectMeta, which the API
server validates itself rather than the CRD: OBJECT_META stands in for it
(strict, label and annotation maps of strings). Objects with no CRD get the
ObjectMeta check only and are listed in the summary with the reason: built-in
Kubernetes kinds, and Crossplane XRs (checked against their XRD in
examples/crossplane when there is one). A Cluster API kind with no CRD in
crds/ is a failure, and so is a version its CRD does not serve.

Intentional failures (bad-input fixtures) are listed in
test_data/schema_exceptions.tsv: file, where in the file, the JSON path every
failure must lie under, and the reason. A listed object that validates, or
that no longer exists, is itself a failure.

The Rust tests validate the policy's outputs with the same strict schemas,
written once by --write-rust-schemas into crates/core/tests/schemas/
(RUST_SCHEMA_KINDS); the check fails when those files are stale.

Other scripts import this module: `Checker.load().errors(obj)`.
"""
import copy
import glob
import json
import os
import re
import sys
from collections import Counter, defaultdict

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The vendored CRDs (crds/README.md); CRDS_DIR may name another directory of
# files in the same form (scripts/vendor_crds.py writes them).
CRDS_DIR = os.path.normpath(os.path.join(ROOT, os.environ.get("CRDS_DIR") or "crds"))
CRD_SOURCES = "crds/sources.tsv"
EXCEPTIONS = "test_data/schema_exceptions.tsv"
RUST_SCHEMAS = "crates/core/tests/schemas"
SCAN_DIRS = ["test_data", "web/examples", "examples", "cluster/objects", "cluster/policies", "crates/runner/tests/data",
             "crates/core/tests/capi_conformance"]
# The XRDs the examples ship and the test bed's own (cluster/objects).
XRD_GLOBS = ["examples/crossplane/*.yaml", "cluster/objects/xrd-*.yaml"]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

CAPI_GROUP = "cluster.x-k8s.io"
# The groups of the upjet providers' managed resources (crds/managed-resources): their CRDs are not in crds/;
# the kinds the test bed installs (cluster/crds.tsv, rows vendored `catalogue`) are read from the pinned
# provider modules, through the Go module cache, when an object of such a group is first met.
MR_GROUP = re.compile(r"(^|\.)(aws|azure|gcp)(\.m)?\.upbound\.io$")
TEST_BED_CRDS = "cluster/crds.tsv"
# The kinds whose outputs the Rust tests check: every child the policy
# mutates, at every version its CRD (or XRD) serves.
RUST_SCHEMA_KINDS = [
    ("cluster.x-k8s.io", "MachineDeployment"),
    ("cluster.x-k8s.io", "MachineSet"),
    ("cluster.x-k8s.io", "Machine"),
    ("cluster.x-k8s.io", "MachinePool"),
    ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "KubeadmConfig"),
    ("infrastructure.cluster.x-k8s.io", "DockerMachine"),
    # the control planes of every provider (children of a Cluster topology)
    # and the BootstrapConfigs they create
    ("controlplane.cluster.x-k8s.io", "RKE2ControlPlane"),
    ("controlplane.cluster.x-k8s.io", "K0sControlPlane"),
    ("controlplane.cluster.x-k8s.io", "KairosControlPlane"),
    ("controlplane.cluster.x-k8s.io", "TalosControlPlane"),
    ("controlplane.cluster.x-k8s.io", "MicroK8sControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "RKE2Config"),
    ("bootstrap.cluster.x-k8s.io", "K0sControllerConfig"),
    ("bootstrap.cluster.x-k8s.io", "KairosConfig"),
    # the rows of the cloud-tag target table (crates/core/src/tags/targets.rs)
    # whose CRD is vendored in crds/
    ("infrastructure.cluster.x-k8s.io", "AWSCluster"),
    ("infrastructure.cluster.x-k8s.io", "AWSMachine"),
    ("infrastructure.cluster.x-k8s.io", "AWSMachinePool"),
    ("infrastructure.cluster.x-k8s.io", "AWSManagedMachinePool"),
    ("controlplane.cluster.x-k8s.io", "AWSManagedControlPlane"),
    ("infrastructure.cluster.x-k8s.io", "AzureCluster"),
    ("infrastructure.cluster.x-k8s.io", "AzureMachine"),
    ("infrastructure.cluster.x-k8s.io", "AzureMachinePool"),
    ("infrastructure.cluster.x-k8s.io", "GCPCluster"),
    ("infrastructure.cluster.x-k8s.io", "GCPMachine"),
    ("infrastructure.cluster.x-k8s.io", "GCPManagedMachinePool"),
    ("infrastructure.cluster.x-k8s.io", "OpenStackMachine"),
    ("platform.example.org", "XDatabase"),  # the XRD in examples/crossplane
]

# The API groups Kubernetes itself serves (no CRD): the core group "" and the
# built-in named groups. Anything else without a CRD is a Crossplane XR.
BUILTIN_GROUPS = {
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
    "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io", "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io", "policy",
    "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io",
    "storagemigration.k8s.io",
}

# RFC 3339 as the API server parses `format: date-time`; JSON Schema's own
# format checks are optional and differ between validators, so the formats
# the CRDs use become plain keywords both the Python and the Rust validator
# enforce the same way.
DATE_TIME = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
FORMATS = {
    "date-time": {"pattern": DATE_TIME},
    "byte": {"pattern": r"^[A-Za-z0-9+/]*={0,2}$"},
    "int32": {"minimum": -(2**31), "maximum": 2**31 - 1},
    "int64": {"minimum": -(2**63), "maximum": 2**63 - 1},
}

STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
NULLABLE_TIME = {"type": ["string", "null"], "pattern": DATE_TIME}
INT64 = {"type": "integer", **FORMATS["int64"]}


def strict_object(properties, required=()):
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


# ObjectMeta (k8s.io/apimachinery meta/v1), which the API server validates
# for every kind; the CRDs only say `type: object`. A name is required, or a
# generateName (admission sees the object before the name is generated).
OBJECT_META = {
    **strict_object({
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "selfLink": {"type": "string"},
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": INT64,
        "creationTimestamp": NULLABLE_TIME,
        "deletionTimestamp": NULLABLE_TIME,
        "deletionGracePeriodSeconds": INT64,
        "labels": STRING_MAP,
        "annotations": STRING_MAP,
        "ownerReferences": {"type": "array", "items": strict_object({
            "apiVersion": {"type": "string", "minLength": 1},
            "kind": {"type": "string", "minLength": 1},
            "name": {"type": "string", "minLength": 1},
            "uid": {"type": "string", "minLength": 1},
            "controller": {"type": "boolean"},
            "blockOwnerDeletion": {"type": "boolean"},
        }, required=["apiVersion", "kind", "name", "uid"])},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "managedFields": {"type": "array", "items": strict_object({
            "manager": {"type": "string"},
            "operation": {"type": "string", "enum": ["Apply", "Update"]},
            "apiVersion": {"type": "string"},
            "time": NULLABLE_TIME,
            "fieldsType": {"type": "string"},
            "fieldsV1": {"type": "object"},
            "subresource": {"type": "string"},
        })},
    }),
    "anyOf": [{"required": ["name"]}, {"required": ["generateName"]}],
}

# Keywords that do not constrain a value, or that JSON Schema cannot express:
# CEL rules (`x-kubernetes-validations`) need a CEL engine, and list-map key
# uniqueness has no JSON Schema keyword.
DROPPED = {"description", "example", "x-kubernetes-validations", "x-kubernetes-list-map-keys",
           "x-kubernetes-map-type", "x-kubernetes-embedded-resource"}
SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf")


# --------------------------------------------------------------------------
# Making a CRD schema strict
# --------------------------------------------------------------------------
def strict_schema(node, strict=True):
    """The JSON Schema (draft 7) for one structural-schema node.

    strict: undeclared fields are errors. False inside
    `x-kubernetes-preserve-unknown-fields: true` (everything below is kept as
    written) and inside anyOf/allOf/oneOf/not, whose branches only add value
    checks to the properties declared beside them, so closing them would
    reject what the node itself declares."""
    out = {k: v for k, v in node.items() if k not in DROPPED and not k.startswith("x-kubernetes-")}
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    strict = strict and not preserve
    if "properties" in node:
        out["properties"] = {name: strict_schema(sub, strict) for name, sub in node["properties"].items()}
        if strict and "additionalProperties" not in node:
            out["additionalProperties"] = False
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = strict_schema(node["additionalProperties"], strict)
    if isinstance(node.get("items"), dict):
        out["items"] = strict_schema(node["items"], strict)
    for key in SUBSCHEMA_LISTS:
        if key in node:
            out[key] = [strict_schema(sub, False) for sub in node[key]]
    if "not" in node:
        out["not"] = strict_schema(node["not"], False)
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if node.get("x-kubernetes-int-or-string") is True:
        out.pop("type", None)
        out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    out.update(FORMATS.get(out.pop("format", None), {}))
    if out.pop("nullable", False):
        out = allow_null(out)
    return out


def allow_null(schema):
    """OpenAPI's `nullable: true` in JSON Schema: null is valid too."""
    if isinstance(schema.get("type"), str) and "anyOf" not in schema:
        schema = dict(schema, type=[schema["type"], "null"])
        if "enum" in schema:
            schema["enum"] = schema["enum"] + [None]
        return schema
    return {"anyOf": [{"type": "null"}, schema]}


def object_schema(open_api_v3_schema):
    """The strict schema of a whole object: its CRD version's schema with
    ObjectMeta for `metadata`, and `metadata` required."""
    schema = strict_schema(open_api_v3_schema)
    schema.setdefault("properties", {})["metadata"] = OBJECT_META
    schema["required"] = sorted(set(schema.get("required", [])) | {"metadata"})
    return {"$schema": "http://json-schema.org/draft-07/schema#", **schema}


# The members Crossplane adds to a v1 (and v2 LegacyCluster) XR's and a
# claim's `spec` beside the XRD's own (crossplane-runtime pkg/xcrd): their
# schemas are Crossplane's own and accepted as they are, but for the update
# policy, whose values the policy reads.
V1_MACHINERY = ["compositionRef", "compositionRevisionRef", "compositionRevisionSelector",
                "compositionSelector", "resourceRefs", "writeConnectionSecretToRef"]
XR_MACHINERY = V1_MACHINERY + ["claimRef"]
CLAIM_MACHINERY = V1_MACHINERY + ["compositeDeletePolicy", "resourceRef"]
UPDATE_POLICY = {"type": "string", "enum": ["Automatic", "Manual"]}


def xr_schema(xrd_version, legacy=False, claim=False):
    """A Crossplane XR's (or claim's) schema from its XRD version: the XRD
    declares the user's fields; Crossplane adds apiVersion, kind, metadata,
    its machinery (`spec.crossplane` for a v2 XR; members of `spec` itself
    for a v1 or LegacyCluster XR and for a claim) and `status`, whose
    schemas are Crossplane's own (not in the reference CRDs) and are
    accepted as they are."""
    base = copy.deepcopy(xrd_version["schema"]["openAPIV3Schema"])
    props = base.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    machinery = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    spec = props.setdefault("spec", {"type": "object", "properties": {}}).setdefault("properties", {})
    if legacy or claim:
        for name in CLAIM_MACHINERY if claim else XR_MACHINERY:
            spec[name] = {"type": "array", "items": machinery} if name == "resourceRefs" else machinery
        spec["compositionUpdatePolicy"] = UPDATE_POLICY
    else:
        spec["crossplane"] = machinery
    props["status"] = machinery
    return object_schema(base)


# --------------------------------------------------------------------------
# Schemas by apiVersion and kind
# --------------------------------------------------------------------------
def split_api_version(api_version):
    group, _, version = api_version.rpartition("/")
    return group, version


def is_capi_group(group):
    return group == CAPI_GROUP or group.endswith("." + CAPI_GROUP)


class MissingCrd(Exception):
    """An object whose kind must have a CRD here has none: a Cluster API
    kind, or a version its CRD (or XRD) does not serve."""


# What an object of a kind without a CRD gets: ObjectMeta only.
METADATA_ONLY = {"type": "object", "properties": {"metadata": OBJECT_META}, "required": ["metadata"]}


class Checker:
    """Strict schemas for every kind with a CRD (or an XRD), and validators
    compiled once per (apiVersion, kind)."""

    def __init__(self, crds, xrds):
        self.crds = crds  # (group, kind) -> (file, {version: openAPIV3Schema})
        self.xrds = xrds  # (group, kind) -> (file, {version: xrd version})
        self._mrs = None  # (group, kind) -> (file, {version: openAPIV3Schema}), read when first needed
        self._validators = {}

    def managed_resources(self):
        """The MR CRDs the test bed installs (TEST_BED_CRDS rows vendored `catalogue`), their served versions,
        from the pinned provider modules (cluster/render.py downloads them as the test bed does)."""
        if self._mrs is None:
            sys.path.insert(0, os.path.join(ROOT, "cluster"))
            import render  # cluster/render.py
            self._mrs = {}
            for row in render.read_tsv(os.path.join(ROOT, TEST_BED_CRDS)):
                if row["vendored"] != "catalogue":
                    continue
                root = render.module_dir(row["component"], row["module"])
                for pattern in render.expand_braces(row["files"]):
                    for path in sorted(glob.glob(os.path.join(root, pattern))):
                        with open(path, encoding="utf-8") as f:
                            crd = yaml.load(f, Loader=LOADER)
                        spec = crd["spec"]
                        self._mrs[(spec["group"], spec["names"]["kind"])] = (
                            f"{row['module']} {os.path.relpath(path, root)}",
                            {v["name"]: v["schema"]["openAPIV3Schema"] for v in spec["versions"] if v.get("served")})
        return self._mrs

    @classmethod
    def load(cls, crds_dir=CRDS_DIR):
        crds = {}
        paths = sorted(glob.glob(os.path.join(crds_dir, "*.json")))
        if not paths:
            raise SystemExit(f"no CRDs (*.json) in {crds_dir}: crds/ is part of the repository; "
                             "make vendor-crds CRDS=<dir> regenerates it from the upstream files (crds/README.md)")
        for path in paths:
            with open(path, encoding="utf-8") as f:
                crd = json.load(f)
            # Named by its upstream file, as the generated crates/core/tests/schemas say.
            crds[(crd["group"], crd["kind"])] = (crd["source"]["file"], crd["versions"])
        xrds = {}
        for path in sorted(p for pattern in XRD_GLOBS for p in glob.glob(os.path.join(ROOT, pattern))):
            with open(path) as f:
                for doc in yaml.load_all(f, Loader=LOADER):
                    if isinstance(doc, dict) and doc.get("kind") == "CompositeResourceDefinition":
                        spec = doc["spec"]
                        # A v1 XRD's scope defaults to LegacyCluster (its CRD in crds/).
                        v1 = doc["apiVersion"].endswith("/v1")
                        legacy = spec.get("scope", "LegacyCluster" if v1 else "Namespaced") == "LegacyCluster"
                        versions = {v["name"]: v for v in spec["versions"]}
                        name = os.path.relpath(path, ROOT)
                        xrds[(spec["group"], spec["names"]["kind"])] = (
                            name, {v: (x, legacy, False) for v, x in versions.items()})
                        if "claimNames" in spec:
                            xrds[(spec["group"], spec["claimNames"]["kind"])] = (
                                name, {v: (x, False, True) for v, x in versions.items()})
        return cls(crds, xrds)

    def schema(self, api_version, kind):
        """(strict schema, None), or (None, why the kind has no CRD here) for
        built-in kinds and XRs without an XRD. Raises MissingCrd."""
        group, version = split_api_version(api_version)
        for source, build in ((self.crds, object_schema), (self.xrds, lambda args: xr_schema(*args))):
            if (group, kind) in source:
                name, versions = source[(group, kind)]
                if version not in versions:
                    raise MissingCrd(f"{name} serves {sorted(versions)}, not {version}")
                return build(versions[version]), None
        if MR_GROUP.search(group):
            if (group, kind) not in self.managed_resources():
                return None, (f"managed resource kind the test bed does not install ({TEST_BED_CRDS}): its CRD "
                              "is in the provider's module (crds/managed-resources)")
            name, versions = self.managed_resources()[(group, kind)]
            if version not in versions:
                raise MissingCrd(f"{name} serves {sorted(versions)}, not {version}")
            return object_schema(versions[version]), None
        if is_capi_group(group):
            raise MissingCrd(f"no CRD for Cluster API kind {kind} ({group}) in {rel(CRDS_DIR)}")
        if group in BUILTIN_GROUPS or group.endswith(".k8s.io"):
            return None, "built-in Kubernetes kind: the API server's own schema, not a CRD"
        return None, f"Crossplane XR kind without an XRD in {' or '.join(XRD_GLOBS)}: its CRD is generated by Crossplane"

    def validator(self, api_version, kind):
        """(validator, why only ObjectMeta is checked or None), compiled once
        per kind; a MissingCrd is raised again on every use."""
        key = (api_version, kind)
        if key not in self._validators:
            try:
                schema, unchecked = self.schema(api_version, kind)
                self._validators[key] = (jsonschema.Draft7Validator(schema or METADATA_ONLY), unchecked)
            except MissingCrd as missing:
                self._validators[key] = missing
        if isinstance(self._validators[key], MissingCrd):
            raise self._validators[key]
        return self._validators[key]

    def errors(self, obj):
        """(failures, why only ObjectMeta was checked or None). Failures are
        sorted "json-path: message" strings."""
        if not isinstance(obj, dict):
            return [f"$: expected an object, found {json_type(obj)}"], None
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return ["$: apiVersion and kind are required strings"], None
        try:
            validator, unchecked = self.validator(api_version, kind)
        except MissingCrd as missing:
            return [f"$: {missing}"], None
        return sorted({f"{json_path(e.absolute_path)}: {message(e)}" for e in validator.iter_errors(obj)}), unchecked


def json_type(value):
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}[type(value)]


def json_path(parts):
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += "." + part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def message(error, limit=200):
    """The validator's message, short: a failed anyOf names its branches'
    complaints instead of repeating the whole instance."""
    if error.validator == "anyOf" and error.context:
        text = "none of: " + "; ".join(sorted({message(c, 80) for c in error.context}))
    elif error.validator == "type":
        text = f"expected {error.validator_value}, found {json_type(error.instance)}"
    else:
        text = error.message
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --------------------------------------------------------------------------
# Finding the objects
# --------------------------------------------------------------------------
def rel(path):
    return os.path.relpath(path, ROOT)


def scanned_files():
    """Every .json/.yaml/.yml file under SCAN_DIRS, sorted; a symlink is the
    file it points to, read once."""
    seen, files = set(), []
    for top in SCAN_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if name.endswith((".json", ".yaml", ".yml")) and not os.path.islink(path):
                    real = os.path.realpath(path)
                    if real not in seen:
                        seen.add(real)
                        files.append(rel(path))
    return files


def is_object(doc):
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


def is_list(doc):
    """A `kind: List` (what `kubectl get -o yaml|json` prints): not an
    object itself; its items are (test_data/dumps)."""
    return is_object(doc) and doc["kind"] == "List" and isinstance(doc.get("items"), list)


def objects_in_list(doc, where=""):
    for i, item in enumerate(doc["items"]):
        if is_object(item):
            yield (f"{where} " if where else "") + f"items[{i}]", item


def objects_in_json(doc):
    """(where, object) for an AdmissionRequest (bare or in an AdmissionReview)
    or a bare object, or each item of a `kind: List`; nothing for other
    documents (settings, indexes)."""
    if is_list(doc):
        yield from objects_in_list(doc)
        return
    if is_object(doc) and doc.get("kind") != "AdmissionReview":
        yield "", doc
        return
    if not isinstance(doc, dict):
        return
    prefix, request = ("request.", doc["request"]) if isinstance(doc.get("request"), dict) else ("", doc)
    for key in ("object", "oldObject"):
        if request.get(key) is not None:
            yield prefix + key, request[key]


def objects_in_replay(entries):
    for i, entry in enumerate(entries):
        response = entry.get("response") if isinstance(entry, dict) else None
        if isinstance(response, dict) and response.get("type") == "Success":
            yield f"[{i}].response.payload", json.loads(response["payload"])


def is_conformance(doc):
    """A crates/core/tests/capi_conformance file: a list of rows, each with an `object`
    and an `expected.object`."""
    return isinstance(doc, list) and doc and all(
        isinstance(r, dict) and "object" in r and "expected" in r for r in doc)


def objects_in_conformance(rows):
    for i, row in enumerate(rows):
        yield f"[{i}].object", row["object"]
        for j, parent in enumerate(row.get("parents") or []):
            yield f"[{i}].parents[{j}]", parent
        expected = row["expected"].get("object") if isinstance(row["expected"], dict) else None
        if expected is not None:
            yield f"[{i}].expected.object", expected


def is_replay(doc):
    return isinstance(doc, list) and any(isinstance(e, dict) and e.get("type") == "Exchange" for e in doc)


def objects_in_file(path):
    """(where, object) for every object in one file. Raises ValueError when
    the file, or a replay payload in it, does not parse."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".json"):
        try:
            yield from objects_in_json(json.loads(text))
        except json.JSONDecodeError as e:
            raise ValueError(f"not JSON: {e}") from e
        return
    try:
        docs = [d for d in yaml.load_all(text, Loader=LOADER) if d is not None]
    except yaml.YAMLError as e:
        raise ValueError(f"not YAML: {e}") from e
    for n, doc in enumerate(docs):
        where = f"document {n}" if len(docs) > 1 else ""
        if is_replay(doc):
            for inner, obj in objects_in_replay(doc):
                yield (f"{where} " if where else "") + inner, obj
        elif is_conformance(doc):
            yield from objects_in_conformance(doc)
        elif is_list(doc):
            yield from objects_in_list(doc, where)
        elif is_object(doc):
            yield where, doc


# --------------------------------------------------------------------------
# Exceptions, the Rust schemas, and the check
# --------------------------------------------------------------------------
def load_exceptions():
    """{(file, where): (json-path prefix, reason)} from EXCEPTIONS; where is
    "-" for the whole file (a file that does not parse)."""
    out = {}
    with open(os.path.join(ROOT, EXCEPTIONS), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                file, where, under, reason = line.rstrip("\n").split("\t")
                out[(file, "" if where == "." else where)] = (under, reason)
    return out


def under(failure, prefix):
    """Whether a "json-path: message" failure lies at or below prefix."""
    path = failure.split(": ", 1)[0]
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


def rust_schemas(checker):
    """{file name: JSON text} of the strict schemas the Rust tests load."""
    out = {}
    for group, kind in RUST_SCHEMA_KINDS:
        name, versions = checker.crds.get((group, kind)) or checker.xrds[(group, kind)]
        for version in sorted(versions):
            schema, _ = checker.schema(f"{group}/{version}", kind)
            schema["$comment"] = (f"generated by scripts/check_schemas.py --write-rust-schemas from {name} "
                                  f"({version}); do not edit")
            text = json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            out[f"{group}_{version}_{kind}.json"] = text
    return out


def stale_rust_schemas(checker):
    wanted = rust_schemas(checker)
    directory = os.path.join(ROOT, RUST_SCHEMAS)
    present = {os.path.basename(p) for p in glob.glob(os.path.join(directory, "*.json"))}
    problems = []
    for name in sorted(present | set(wanted)):
        path = os.path.join(directory, name)
        current = open(path, encoding="utf-8").read() if name in present else None
        if current != wanted.get(name):
            state = "missing" if current is None else "not generated" if name not in wanted else "stale"
            problems.append(f"{RUST_SCHEMAS}/{name}: {state}; run python3 scripts/check_schemas.py "
                            "--write-rust-schemas")
    return problems


def stale_crds():
    """crds/ against crds/sources.tsv: each row has its JSON file, derived
    from the file and checksum the row names, no JSON file is without a row,
    and crds/README.md's table is the table's. Nothing to compare when
    CRDS_DIR names another directory."""
    if CRDS_DIR != os.path.join(ROOT, "crds"):
        return []
    from vendor_crds import COLUMNS, json_name, read_sources, readme_with_table  # scripts/vendor_crds.py
    sources = read_sources(os.path.join(ROOT, CRD_SOURCES))
    rows = {json_name(file): row for file, row in sources.items()}
    present = {os.path.basename(p) for p in glob.glob(os.path.join(CRDS_DIR, "*.json"))}
    problems = []
    with open(os.path.join(CRDS_DIR, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    try:
        if readme_with_table(readme, sources) != readme:
            problems.append(f"crds/README.md: its sources table differs from {CRD_SOURCES}: "
                            "make vendor-crds CRDS=<dir> rewrites it")
    except ValueError as e:
        problems.append(str(e))
    for name in sorted(present | set(rows)):
        if name not in rows:
            problems.append(f"crds/{name}: no row in {CRD_SOURCES}; add one, then make vendor-crds CRDS=<dir>")
            continue
        if name not in present:
            problems.append(f"crds/{name}: missing; {CRD_SOURCES} lists {rows[name]['file']}: "
                            "make vendor-crds CRDS=<dir>")
            continue
        with open(os.path.join(CRDS_DIR, name), encoding="utf-8") as f:
            source = json.load(f).get("source") or {}
        if any(source.get(k) != rows[name][k] for k in COLUMNS):
            problems.append(f"crds/{name}: stale; {CRD_SOURCES} names another upstream file or checksum: "
                            "make vendor-crds CRDS=<dir>")
    return problems


def write_rust_schemas(checker):
    directory = os.path.join(ROOT, RUST_SCHEMAS)
    os.makedirs(directory, exist_ok=True)
    for old in glob.glob(os.path.join(directory, "*.json")):
        os.unlink(old)
    for name, text in rust_schemas(checker).items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"wrote {len(RUST_SCHEMA_KINDS)} kinds into {RUST_SCHEMAS}/")


class Report:
    """The failures, held against the listed exceptions, and the counts for
    the summary."""

    def __init__(self, exceptions):
        self.exceptions = exceptions
        self.failures, self.seen, self.expected = [], set(), 0
        self.checked, self.metadata_only = Counter(), defaultdict(Counter)

    def count(self, obj, unchecked):
        kind = f"{obj.get('apiVersion')} {obj.get('kind')}" if isinstance(obj, dict) else "(not an object)"
        if unchecked:
            self.metadata_only[unchecked][kind] += 1
        else:
            self.checked[kind] += 1

    def add(self, file, where, problems):
        """Records one object's (or file's) problems: failures, unless the
        object is a listed exception that fails where the list says."""
        key, location = (file, where), f"{file}: {where or '.'}"
        self.seen.add(key)
        if key not in self.exceptions:
            self.failures += [f"{location} -> {p}" for p in problems]
        elif not problems:
            self.failures.append(f"{location} -> stale exception in {EXCEPTIONS}: the object validates")
        else:
            self.expected += 1
            prefix, _ = self.exceptions[key]
            self.failures += [f"{location} -> {p} (not under {prefix}, where {EXCEPTIONS} expects it)"
                              for p in problems if not under(p, prefix)]

    def finish(self):
        """Listed exceptions that were never seen are failures too."""
        for file, where in sorted(set(self.exceptions) - self.seen):
            self.failures.append(f"{file}: {where or '.'} -> listed in {EXCEPTIONS}, but there is no such object")

    def summary(self):
        lines = [f"{sum(self.checked.values())} objects checked against their CRD or XRD; "
                 f"{self.expected} listed in {EXCEPTIONS} fail as it says"]
        lines += [f"  {n:4} {kind}" for kind, n in sorted(self.checked.items())]
        for why, kinds in sorted(self.metadata_only.items()):
            lines.append(f"ObjectMeta checked only ({why}):")
            lines += [f"  {n:4} {kind}" for kind, n in sorted(kinds.items())]
        return lines


def check(checker):
    """(sorted failure lines, summary lines)."""
    report = Report(load_exceptions())
    for file in scanned_files():
        try:
            found = list(objects_in_file(file))
        except ValueError as e:
            report.add(file, "-", [f"$: {e}"])
            continue
        for where, obj in found:
            problems, unchecked = checker.errors(obj)
            report.count(obj, unchecked)
            report.add(file, where, problems)
    report.finish()
    return sorted(report.failures + stale_rust_schemas(checker) + stale_crds()), report.summary()


def main(argv):
    if argv not in ([], ["--write-rust-schemas"]):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    checker = Checker.load()
    if argv:
        write_rust_schemas(checker)
        return 0
    failures, summary = check(checker)
    print("\n".join(summary))
    for failure in failures:
        print("FAIL", failure)
    print(f"schema check: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
