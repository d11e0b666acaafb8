#!/usr/bin/env python3
"""Generates the bad-input catalogue (test_data/bad): one request (and where
needed a parent) per case, plus cases.tsv, which both tests/bad_inputs.rs and
e2e-tests/robustness.bats read. Bases are the real fixtures of
test_data/capi and test_data/xr. Deterministic: rerun after editing, commit
the output.

cases.tsv columns: name, request, settings (JSON or -), parent (file or -),
lookup (the look-up the case makes of its parent, Kind/namespace/name, or -),
outcome, message (substring the message must contain, or -).
Outcomes: allowed-unchanged, allowed-mutated, rejected, settings-refused,
undecodable (the payload is not JSON: the policy rejects it; kwctl and the
runner refuse the request file before calling the policy).

A parent is a plain object: the project's runner answers the look-up with it
(`run --parents`), pruned by the field masks the policy sends, and
robustness.bats checks that the policy asked for it (`--record-session`).
"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


MS = load("test_data/capi/v1beta2/machineset_create_from_md.json")
XR = load("test_data/xr/xnetwork_v1_aws.json")
TAGS = {"cloudTags": {"propagatingLabels": ["platform/env", "platform/team"]}}
cases = []


def write(name, document, raw=None):
    path = f"test_data/bad/{name}.json"
    with open(os.path.join(ROOT, path), "w") as f:
        if raw is not None:
            f.write(raw)
        else:
            json.dump(document, f, indent=1, ensure_ascii=False)
            f.write("\n")
    return path


def case(name, request, settings, outcome, message, parent="-", lookup="-"):
    settings_text = "-" if settings is None else json.dumps(settings, separators=(",", ":"))
    cases.append([name, request, settings_text, parent, lookup, outcome, message])


def with_object(base, edit):
    request = copy.deepcopy(base)
    edit(request["object"])
    return request


def md_parent(name, parent):
    """The MachineSet's parent `parent`, written as the case's parent file,
    and the look-up the MachineSet makes of it."""
    owner = MS["object"]["metadata"]["ownerReferences"][0]
    lookup = f"{owner['kind']}/{MS['object']['metadata']['namespace']}/{owner['name']}"
    return write(f"{name}_parent", parent), lookup


with open(os.path.join(ROOT, "test_data/capi/v1beta2/parents/machinedeployment_capi-quickstart-md-1.yaml")) as f:
    import yaml  # PyYAML: the parents are YAML
    MD = yaml.safe_load(f)

# --- the request itself
case("request_not_json", write("request_not_json", None, raw="{\"uid\": \"1\", \"kind\": not json\n"),
     None, "undecodable", "cannot decode the admission request")

# --- objects without metadata
case("xr_without_metadata", write("xr_without_metadata", with_object(XR, lambda o: o.pop("metadata"))),
     TAGS, "allowed-unchanged", "-")
case("machineset_without_metadata",
     write("machineset_without_metadata", with_object(MS, lambda o: o.pop("metadata"))),
     None, "allowed-unchanged", "-")

# --- labels / annotations that are not string maps: rejected on every path,
# before any look-up (so these cases have no parent)
case("xr_labels_not_a_map", write("xr_labels_not_a_map", with_object(
    XR, lambda o: o["metadata"].__setitem__("labels", ["platform/env=prod"]))),
     TAGS, "rejected", "metadata.labels: expected an object, found an array")
case("machineset_annotations_not_a_map", write("machineset_annotations_not_a_map", with_object(
    MS, lambda o: o["metadata"].__setitem__("annotations", "owner=team-a"))),
     None, "rejected", "metadata.annotations: expected an object, found a string")
case("xr_label_value_not_a_string", write("xr_label_value_not_a_string", with_object(
    XR, lambda o: o["metadata"]["labels"].__setitem__("platform/team", 42))),
     TAGS, "rejected", 'metadata.labels["platform/team"]: expected a string value, found a number')
case("machineset_label_value_null", write("machineset_label_value_null", with_object(
    MS, lambda o: o["metadata"]["labels"].__setitem__("nodepool", None))),
     None, "rejected", 'metadata.labels["nodepool"]: expected a string value, found null')


def orphan_with_null_annotation(o):
    # The fuzz finding crash-26f1: no owner, so no rule applies; checked
    # all the same.
    o["metadata"].pop("ownerReferences")
    o["metadata"].setdefault("annotations", {})["example.com/note"] = None


case("machineset_without_owner_annotation_value_null", write(
    "machineset_without_owner_annotation_value_null", with_object(MS, orphan_with_null_annotation)),
     None, "rejected", 'metadata.annotations["example.com/note"]: expected a string value, found null')

# --- malformed ownerReferences
case("machineset_owner_reference_without_name", write("machineset_owner_reference_without_name", with_object(
    MS, lambda o: o["metadata"]["ownerReferences"][0].pop("name"))),
     None, "rejected", "metadata.ownerReferences[0].name: required, and missing or empty")
case("machineset_owner_references_not_a_list", write("machineset_owner_references_not_a_list", with_object(
    MS, lambda o: o["metadata"].__setitem__("ownerReferences", {"kind": "MachineDeployment"}))),
     None, "rejected", "metadata.ownerReferences: expected an array, found an object")

# --- a parent whose template metadata has the wrong types
bad_md = copy.deepcopy(MD)
bad_md["spec"]["template"]["metadata"]["labels"] = "nodepool=pool1"
case("machineset_parent_template_labels_wrong_type",
     write("machineset_parent_template_labels_wrong_type", MS),
     None, "rejected",
     "of this MachineSet is malformed: spec.template.metadata.labels: expected an object, found a string",
     *md_parent("machineset_parent_template_labels_wrong_type", bad_md))
spec_less_md = copy.deepcopy(MD)
spec_less_md.pop("spec")
case("machineset_parent_without_spec", write("machineset_parent_without_spec", MS),
     None, "allowed-mutated", "-", *md_parent("machineset_parent_without_spec", spec_less_md))

# --- in-place fields: a keyed list (readiness gates) whose entries are not
# objects, on either side, once the parent sets the list (fuzz finding
# crash-9e10c842 for the child's side)
gated_md = copy.deepcopy(MD)
gated_md["spec"]["template"]["spec"]["readinessGates"] = [
    {"conditionType": "hardening.platform.example.com/CISBenchmarkPassed"}]
case("machineset_readiness_gate_null",
     write("machineset_readiness_gate_null", with_object(
         MS, lambda o: o["spec"]["template"]["spec"].__setitem__("readinessGates", [None]))),
     None, "rejected", "spec.template.spec.readinessGates[0]: expected an object, found null",
     *md_parent("machineset_readiness_gate_null", gated_md))
bad_gates_md = copy.deepcopy(MD)
bad_gates_md["spec"]["template"]["spec"]["readinessGates"] = [
    "hardening.platform.example.com/CISBenchmarkPassed"]
case("machineset_parent_readiness_gate_string", write("machineset_parent_readiness_gate_string", MS),
     None, "rejected",
     "of this MachineSet is malformed: spec.template.spec.readinessGates[0]: expected an object, found a string",
     *md_parent("machineset_parent_readiness_gate_string", bad_gates_md))

# --- the label-set annotation
ANNOTATION = "cloud-tags.plexsphere.io/labels"
case("xr_labels_annotation_not_json", write("xr_labels_annotation_not_json", with_object(
    XR, lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(ANNOTATION, "platform/env=prod"))),
     TAGS, "rejected", 'metadata.annotations["cloud-tags.plexsphere.io/labels"]: not valid JSON')
case("xr_labels_annotation_empty", write("xr_labels_annotation_empty", with_object(
    XR, lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(ANNOTATION, ""))),
     TAGS, "rejected",
     'metadata.annotations["cloud-tags.plexsphere.io/labels"]: empty; write {} for no labels, or remove the annotation')
case("xr_labels_annotation_nested", write("xr_labels_annotation_nested", with_object(
    XR, lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(
        ANNOTATION, json.dumps({"platform/env": {"value": "prod"}})))),
     TAGS, "rejected",
     'metadata.annotations["cloud-tags.plexsphere.io/labels"]["platform/env"]: expected a string value, found an object')
case("xr_labels_annotation_1mib", write("xr_labels_annotation_1mib", with_object(
    XR, lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(
        ANNOTATION, json.dumps({"platform/env": "x" * (1 << 20)})))),
     TAGS, "allowed-mutated", "value-too-long")

# --- the provider
case("xr_provider_number", write("xr_provider_number", with_object(
    XR, lambda o: o["spec"]["parameters"].__setitem__("provider", 7))),
     TAGS, "rejected", "spec.parameters.provider: expected a string, found a number")

# --- 10,000 labels
def many_labels(o):
    o["metadata"]["labels"] = {f"team/label-{i:05}": f"value-{i}" for i in range(10000)}
case("xr_10000_labels", write("xr_10000_labels", with_object(XR, many_labels)),
     {"cloudTags": {"propagatingLabels": [f"team/label-{i:05}" for i in range(0, 10000, 100)]}},
     "allowed-mutated", "count-cap")

# --- settings
for name, settings, message in [
    ("settings_unknown_field", {"cloudTags": {"propagatingLabel": ["a"]}},
     "cloudTags.propagatingLabel: unknown field `propagatingLabel`"),
    ("settings_wrong_type", {"capi": {"additionalSyncMachineLabels": "^node"}},
     "capi.additionalSyncMachineLabels: invalid type: string"),
    ("settings_invalid_regex", {"capi": {"additionalSyncMachineLabels": ["(unclosed"]}},
     'capi.additionalSyncMachineLabels[0]: invalid regex "(unclosed"'),
    ("settings_huge_regex", {"capi": {"additionalSyncMachineAnnotations": ["\\w{1000}" * 200]}},
     "exceeded size limit"),
    ("settings_regex_go_refuses", {"capi": {"additionalSyncMachineLabels": ["^node\\.example\\.com/.**"]}},
     'capi.additionalSyncMachineLabels[0]: invalid regex "^node\\\\.example\\\\.com/.**": Go refuses a '
     "repetition operator after another (**)"),
    ("settings_regex_go_reads_otherwise", {"capi": {"additionalSyncMachineLabels": ["\\<team"]}},
     'capi.additionalSyncMachineLabels[0]: invalid regex "\\\\<team": Go reads \\< as the character <, '
     "regex-lite as a word boundary"),
    ("settings_mode_not_a_string", {"mode": 1},
     "mode: invalid type: integer `1`, expected `mutate` or `validate`"),
    ("settings_seeded_key", {"cloudTags": {"propagatingLabels": ["platform/env", "platform/mesh-ip"]}},
     'cloudTags.propagatingLabels[1]: "platform/mesh-ip" is a seeded platform label'),
    ("settings_empty_provider_path", {"cloudTags": {"providerPath": ""}},
     'cloudTags.providerPath: "" is not a dotted field path'),
]:
    case(name, "test_data/xr/xnetwork_v1_aws.json", settings, "settings-refused", message)

# A setting written null is unset (docs/settings.md, "Every setting"): the
# form Rancher's UI sends for a field left empty. The XR is tagged as with
# those settings left out.
case("settings_null_is_unset", "test_data/xr/xnetwork_v1_aws.json",
     {"mode": None, "capi": None,
      "cloudTags": {"propagatingLabels": ["platform/env", "platform/team"], "providerPath": None,
                    "prefix": None, "tagKeys": None, "profiles": None, "capiInfrastructure": None,
                    "managedResources": {"families": None, "kinds": None}}},
     "allowed-mutated", "-")

with open(os.path.join(HERE, "cases.tsv"), "w") as f:
    f.write("# generated by gen.py: name\trequest\tsettings\tparent\tlookup\toutcome\tmessage\n")
    for row in cases:
        f.write("\t".join(row) + "\n")
print(f"{len(cases)} cases")
