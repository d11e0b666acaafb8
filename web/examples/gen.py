#!/usr/bin/env python3
"""Writes the page's bundled examples (web/examples/) from the repository's fixtures.

Objects are the fixtures' `request.object`, parents are the fixtures'
parents/*.yaml files verbatim (several joined into one YAML stream), settings
the fixtures' settings documents. Three XR examples are derived from a fixture
by adding labels to the label-set annotation (and opting them in), so that every
provider profile shows a skipped label; `derived` in index.json says what was
added. `cargo test -p explain-web` checks the files against the fixtures.

Run from anywhere: python3 web/examples/gen.py
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = pathlib.Path(__file__).resolve().parent
CAPI = "test_data/capi/v1beta2"
XR = "test_data/xr"
INFRA = "test_data/capi-infra"
LABELS = "cloud-tags.plexsphere.io/labels"
CAPI_NODE_SYNC = {
    "capi": {
        "additionalSyncMachineLabels": ["^nodepool$"],
        "additionalSyncMachineAnnotations": ["^edge\\.example\\.com/"],
    }
}

EXAMPLES = [
    {
        "id": "machineset",
        "title": "MachineSet created from its MachineDeployment",
        "request": f"{CAPI}/machineset_create_from_md.json",
        "parents": [f"{CAPI}/parents/machinedeployment_capi-quickstart-md-1.yaml"],
    },
    {
        "id": "machineset-drifted",
        "title": "MachineSet drifted from its MachineDeployment (UPDATE)",
        "request": f"{CAPI}/machineset_update_drifted_from_md.json",
        "parents": [f"{CAPI}/parents/machinedeployment_capi-quickstart-md-1.yaml"],
    },
    {
        "id": "machineset-fields",
        "title": "MachineSet whose timeouts and readiness gates drifted from its MachineDeployment (UPDATE)",
        "request": f"{CAPI}/machineset_update_fields_drifted_from_md.json",
        "parents": [f"{CAPI}/parents/machinedeployment_capi-quickstart-md-2.yaml"],
    },
    {
        "id": "topology-md",
        "title": "Topology MachineDeployment with its Cluster and ClusterClass",
        "request": f"{CAPI}/machinedeployment_create_topology.json",
        "parents": [
            f"{CAPI}/parents/cluster_capi-quickstart.yaml",
            f"{CAPI}/parents/clusterclass_quick-start.yaml",
        ],
    },
    {
        "id": "machine-node-labels",
        "title": "Machine with node labels (additionalSyncMachine* settings)",
        "request": f"{CAPI}/machine_create_node_labels.json",
        "parents": [f"{CAPI}/parents/machineset_capi-quickstart-md-edge-r8w2d.yaml"],
        "settings_value": CAPI_NODE_SYNC,
        "settings_from": "test_data/capi/v1beta2/cases/machine_create_node_labels.additional-sync.yaml",
    },
    {
        # Cloud tags on CAPI infrastructure: the demo's two objects.
        "id": "infra-awscluster",
        "title": "AWSCluster under a ClusterClass: its Cluster's labels become CAPA tags (capiInfrastructure)",
        "request": f"{INFRA}/awscluster_create_topology.json",
        "parents": [f"{INFRA}/parents/cluster_aws-prod.yaml"],
        "settings": f"{INFRA}/examples/settings.json",
    },
    {
        "id": "infra-openstackmachine",
        "title": "OpenStackMachine from its MachineSet: CAPI metadata and CAPO serverMetadata in one patch",
        "request": f"{INFRA}/openstackmachine_create_from_machineset.json",
        "parents": [
            f"{INFRA}/parents/machineset_openstack-lab-md-0-q8m4z.yaml",
            f"{INFRA}/parents/cluster_openstack-lab.yaml",
        ],
        "settings": f"{INFRA}/examples/settings.json",
    },
    {
        # Cloud tags on a Crossplane managed resource: the README tour's VPC.
        "id": "mr-vpc",
        "title": "Managed resource (AWS VPC): its XR's opted-in labels become its tags (managedResources)",
        "request": "test_data/managed-resources/examples/vpc_from_xnetwork.json",
        "parents": ["test_data/managed-resources/examples/vpc_from_xnetwork.parents.yaml"],
        "settings": "test_data/managed-resources/examples/settings.json",
    },
    {
        "id": "xr-aws",
        "title": "XR on AWS: reserved prefix and a comma skipped",
        "request": f"{XR}/examples/xnetwork_aws.json",
        "settings": f"{XR}/examples/settings.json",
        "derived": {
            "labels": {"aws:cost-center": "42", "acme:checkout/owner,backup": "team-sre"},
        },
    },
    {
        "id": "xr-hetzner",
        "title": "XR on Hetzner: a space in the key skipped",
        "request": f"{XR}/examples/xdatabase_hetzner.json",
        "settings": f"{XR}/examples/settings.json",
    },
    {
        "id": "xr-openstack",
        "title": "XR on OpenStack: a tab in the key and a value over 255 bytes skipped",
        "request": f"{XR}/examples/xdatabase_openstack.json",
        "settings": f"{XR}/examples/settings.json",
        "derived": {
            "labels": {"acme:checkout/on\tcall": "pager", "acme:checkout/motto": "東" * 86},
        },
    },
    {
        "id": "xr-generic",
        "title": "XR on an unknown provider (ibm, generic profile): a warning says so; '+' and '@' skipped",
        "request": f"{XR}/xdatabase_ibm_generic.json",
        "settings": f"{XR}/settings_propagating.json",
    },
    {
        # The README's ready-made profiles (test_data/xr/settings_ready_profiles.json,
        # as crates/core/tests/tags/ready_made_profiles.rs runs them): provider gcp
        # selects the user-defined gcp-labels profile, whose key characters refuse
        # the ':' of the mandated prefix, so every opted-in label is skipped.
        "id": "xr-gcp-labels",
        "title": "XR on GCP, user-defined profile gcp-labels: no tag can ever propagate",
        "request": f"{XR}/xdatabase_gcp_labels_profile.json",
        "settings": f"{XR}/settings_ready_profiles.json",
    },
]

AUDIT_EXAMPLES = [
    {
        "id": "audit-quickstart-v1beta2-drift",
        "title": "Audit: a v1beta2 quick-start cluster with planted drift",
        "dump": "test_data/dumps/quickstart_v1beta2_drift.yaml",
    },
]


def dump(value):
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def main():
    index = []
    for ex in EXAMPLES:
        request = json.loads((ROOT / ex["request"]).read_text())
        obj = request["object"]
        if "settings" in ex:
            settings = json.loads((ROOT / ex["settings"]).read_text())
        else:
            settings = ex.get("settings_value", {})
        derived = ex.get("derived")
        if derived:
            annotations = obj["metadata"].setdefault("annotations", {})
            label_set = json.loads(annotations.get(LABELS, "{}"))
            label_set.update(derived["labels"])
            annotations[LABELS] = json.dumps(label_set, ensure_ascii=False, separators=(",", ":"))
            opted = settings["cloudTags"]["propagatingLabels"]
            opted.extend(k for k in derived["labels"] if k not in opted)
        parents = "---\n".join((ROOT / p).read_text() for p in ex.get("parents", []))

        files = {"object": f"{ex['id']}.object.json", "settings": f"{ex['id']}.settings.json"}
        (OUT / files["object"]).write_text(dump(obj))
        (OUT / files["settings"]).write_text(dump(settings))
        if parents:
            files["parents"] = f"{ex['id']}.parents.yaml"
            (OUT / files["parents"]).write_text(parents)
        entry = {
            "id": ex["id"],
            "title": ex["title"],
            "operation": request["operation"],
            **files,
            "source": {
                "request": ex["request"],
                "parents": ex.get("parents", []),
                "settings": ex.get("settings", ex.get("settings_from")),
            },
        }
        if derived:
            entry["derived"] = {"addedLabels": derived["labels"]}
        index.append(entry)
    for ex in AUDIT_EXAMPLES:
        files = {"dump": f"{ex['id']}.dump.yaml", "settings": f"{ex['id']}.settings.json"}
        (OUT / files["dump"]).write_text((ROOT / ex["dump"]).read_text())
        (OUT / files["settings"]).write_text(dump(ex.get("settings_value", {})))
        index.append({
            "id": ex["id"],
            "title": ex["title"],
            "view": "audit",
            **files,
            "source": {"dump": ex["dump"], "settings": None},
        })
    (OUT / "index.json").write_text(dump(index))


if __name__ == "__main__":
    main()
