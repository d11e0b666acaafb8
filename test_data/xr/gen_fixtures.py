#!/usr/bin/env python3
"""Writes the Crossplane XR fixtures of e2e-tests/xr.bats and test_data/xr/cases/.

Run from the repository root: `python3 test_data/xr/gen_fixtures.py`.

This script only *builds inputs*: realistic AdmissionRequests around Crossplane
composite resources. It never computes what the policy should answer; every
expectation (which tags are kept, which labels are skipped and why) is written
out literally in the cases, test_data/xr/cases/*.yaml.

Two XR shapes (crossplane-runtime pkg/resource/unstructured/composite), each
as the API server stores it, which is what tells the policy a composite
resource (docs, "Which objects are composite resources"):
- XNetwork: Crossplane v1 / v2 LegacyCluster, cluster-scoped, claim-backed;
  machinery fields directly under `spec` (compositionRef, claimRef,
  resourceRefs, writeConnectionSecretToRef, ...), among them
  `compositionUpdatePolicy`, which the XR's CRD defaults to Automatic.
- XDatabase: Crossplane v2 Namespaced; machinery under `spec.crossplane`,
  which has no default: Crossplane writes it once it reconciles the XR (the
  UPDATE fixtures: compositionRef, revision, resourceRefs). A CREATE is
  tagged only when the manifest carries `spec.crossplane` itself: the CREATE
  fixtures' manifests carry `spec.crossplane: {}`, which the API server
  stores with its defaulted member `compositionUpdatePolicy: Automatic`
  (xcrd's default under `spec.crossplane`).
"""

import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

LABELS_ANNOTATION = "cloud-tags.plexsphere.io/labels"
SKIPPED_ANNOTATION = "cloud-tags.plexsphere.io/skipped"
GROUP = "platform.example.org"
VERSION = "v1alpha1"

CROSSPLANE_SA = {
    "username": "system:serviceaccount:crossplane-system:crossplane",
    "uid": "0e6c1f1a-43a5-4f5e-9d0e-8e1f8f3f6a11",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:crossplane-system",
        "system:authenticated",
    ],
}
BROKER_SA = {
    "username": "system:serviceaccount:plexsphere-system:provisioning-broker",
    "uid": "7d3e2b90-1c4f-4a8e-b6a2-2f9f0c5d4e21",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:plexsphere-system",
        "system:authenticated",
    ],
}
TRANSITION = "2025-03-11T09:16:40Z"


def rep(text, n):
    return text * n


def labels_annotation(entries):
    """The label-set annotation: compact JSON, as a broker would write it."""
    return json.dumps(entries, ensure_ascii=False, separators=(",", ":"))


def skipped(records):
    return json.dumps(records, ensure_ascii=False, separators=(",", ":"))


def ready_status():
    return {
        "conditions": [
            {
                "type": "Synced",
                "status": "True",
                "reason": "ReconcileSuccess",
                "lastTransitionTime": TRANSITION,
            },
            {
                "type": "Ready",
                "status": "True",
                "reason": "Available",
                "lastTransitionTime": "2025-03-11T09:21:05Z",
            },
        ]
    }


# --------------------------------------------------------------------------
# Crossplane v1 legacy, cluster-scoped, claim-backed XNetwork
# --------------------------------------------------------------------------
def xnetwork(labels, annotations=None, provider="aws", cloud_tags=None,
             name="payments-network-7xk2p", claim="payments-network",
             namespace="team-payments", with_status=True):
    meta = {
        "name": name,
        "generateName": claim + "-",
        "uid": "5b0f9d8e-2a41-4c7b-9f3e-6d1a7c2e8b90",
        "resourceVersion": "482113",
        "generation": 4,
        "creationTimestamp": "2025-03-11T09:14:22Z",
        "labels": {
            "crossplane.io/claim-name": claim,
            "crossplane.io/claim-namespace": namespace,
            "crossplane.io/composite": name,
            **labels,
        },
    }
    if annotations is not None:
        meta["annotations"] = annotations
    meta["finalizers"] = ["composite.apiextensions.crossplane.io"]
    spec = {
        "parameters": {
            **({"provider": provider} if provider is not None else {}),
            "region": "eu-central-1",
            "cidrBlock": "10.20.0.0/16",
            "subnets": [
                {"zone": "eu-central-1a", "cidrBlock": "10.20.0.0/20"},
                {"zone": "eu-central-1b", "cidrBlock": "10.20.16.0/20"},
            ],
        },
        "compositionRef": {"name": "xnetwork-aws"},
        "compositionRevisionRef": {"name": "xnetwork-aws-8d3f1a2"},
        "compositionUpdatePolicy": "Automatic",
        "claimRef": {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Network",
            "name": claim,
            "namespace": namespace,
        },
        "resourceRefs": [
            {"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "VPC", "name": name},
            {"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "Subnet", "name": name + "-a"},
            {"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "Subnet", "name": name + "-b"},
            {"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "InternetGateway", "name": name},
        ],
        "writeConnectionSecretToRef": {
            "name": name + "-connection",
            "namespace": "crossplane-system",
        },
    }
    if cloud_tags is not None:
        spec["cloudTags"] = cloud_tags
    obj = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "XNetwork", "metadata": meta, "spec": spec}
    if with_status:
        obj["status"] = {
            **ready_status(),
            "connectionDetails": {"lastPublishedTime": "2025-03-11T09:21:04Z"},
            "vpcId": "vpc-0a1b2c3d4e5f60718",
        }
    return obj


# --------------------------------------------------------------------------
# Crossplane v2 namespaced XDatabase
# --------------------------------------------------------------------------
COMPOSED = {
    "aws": {"apiVersion": "rds.aws.m.upbound.io/v1beta1", "kind": "Instance"},
    "hetzner": {"apiVersion": "cloud.hetzner.m.crossplane.io/v1alpha1", "kind": "Server"},
    "openstack": {"apiVersion": "compute.openstack.m.crossplane.io/v1alpha1", "kind": "InstanceV2"},
    "gcp": {"apiVersion": "sql.gcp.m.upbound.io/v1beta1", "kind": "DatabaseInstance"},
    "generic": {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object"},
}


def xdatabase(labels, annotations=None, provider="hetzner", cloud_tags=None,
              name="payments-db", namespace="team-payments", composition=None,
              parameters_extra=None, with_status=True, created=False):
    family = (provider or "generic").lower() if isinstance(provider, str) else "generic"
    family = family if family in COMPOSED else "generic"
    composition = composition or f"xdatabase-{family}"
    meta = {"name": name, "namespace": namespace}
    if not created:
        meta.update({
            "uid": "c2f4a6b8-3d5e-4f70-8a1b-9c0d1e2f3a4b",
            "resourceVersion": "913377",
            "generation": 7,
            "creationTimestamp": "2025-02-27T14:03:51Z",
        })
    meta["labels"] = dict(labels)
    if annotations is not None:
        meta["annotations"] = annotations
    if not created:
        meta["finalizers"] = ["composite.apiextensions.crossplane.io"]
    params = {}
    if provider is not None:
        params["provider"] = provider
    region = {"aws": "eu-central-1", "hetzner": "fsn1", "openstack": "RegionOne",
              "gcp": "europe-west3"}.get(family, "eu-de")
    params.update({"region": region, "engine": "postgres", "version": "16", "storageGB": 50})
    if parameters_extra:
        params.update(parameters_extra)
    if created:
        # The manifest's `spec.crossplane: {}`, with the CRD's default.
        crossplane = {"compositionUpdatePolicy": "Automatic"}
    else:
        crossplane = {
            "compositionRef": {"name": composition},
            "compositionRevisionRef": {"name": composition + "-5c976ad"},
            "compositionUpdatePolicy": "Automatic",
            "resourceRefs": [
                {**COMPOSED[family], "name": name + "-7d9fk"},
                {"apiVersion": "v1", "kind": "Secret", "name": name + "-credentials"},
            ],
        }
    spec = {"crossplane": crossplane, "parameters": params}
    if cloud_tags is not None:
        spec["cloudTags"] = cloud_tags
    obj = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "XDatabase", "metadata": meta, "spec": spec}
    if with_status and not created:
        obj["status"] = {
            "crossplane": {"connectionDetails": {"lastPublishedTime": "2025-03-02T08:12:10Z"}},
            **ready_status(),
            "endpoint": f"{name}.{namespace}.db.internal",
        }
    return obj


def request(obj, operation="UPDATE", uid=None, user=BROKER_SA, old=None):
    kind = obj["kind"]
    plural = kind.lower() + "s"
    req = {
        "uid": uid,
        "kind": {"group": GROUP, "version": VERSION, "kind": kind},
        "resource": {"group": GROUP, "version": VERSION, "resource": plural},
        "requestKind": {"group": GROUP, "version": VERSION, "kind": kind},
        "requestResource": {"group": GROUP, "version": VERSION, "resource": plural},
        "name": obj["metadata"]["name"],
    }
    if "namespace" in obj["metadata"]:
        req["namespace"] = obj["metadata"]["namespace"]
    req["operation"] = operation
    req["userInfo"] = user
    if operation == "DELETE":
        req["object"] = None
        req["oldObject"] = obj
        req["dryRun"] = False
        req["options"] = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                          "propagationPolicy": "Background"}
        return req
    req["object"] = obj
    if operation == "UPDATE":
        if old is None:
            old = copy.deepcopy(obj)
            old["metadata"]["generation"] = obj["metadata"].get("generation", 2) - 1
        req["oldObject"] = old
        req["dryRun"] = False
        req["options"] = {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                          "fieldManager": "plexsphere-broker"}
    else:
        req["dryRun"] = False
        req["options"] = {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                          "fieldManager": "plexsphere-broker"}
    return req


def write(path, document):
    full = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=2)
        f.write("\n")


def main():
    # ---------------------------------------------------------------- settings
    write("settings_propagating.json", {"cloudTags": {"propagatingLabels": [
        "platform/env",
        "platform/team",
        "platform/tier",
        "platform/retired",
        "acme:checkout/owner",
        "acme:checkout/region",
        "acme:checkout/on call",
        "acme:checkout/owner+backup",
        "acme:checkout/on-call@night",
        "billing.payments.example.org/cost-allocation-identifier",
    ]}})

    write("settings_limits.json", {"cloudTags": {"propagatingLabels": [
        "platform/env",
        # aws (rune counting, reserved prefix, reason order)
        "AwS:" + rep("z", 130),
        "acme:limits/," + rep("é", 105),
        "acme:limits/aws:billing",
        "acme:limits/cost center+a=b@c",
        "acme:limits/owner,backup",
        "acme:limits/value,over",
        "acme:limits/value-at",
        "acme:limits/value-over",
        "acme:limits/" + rep("é", 105),
        "acme:limits/" + rep("é", 106),
        "aws:cost-center",
        # hetzner
        "acme:limits/" + rep("ü", 40),
        "acme:limits/" + rep("ü", 41),
        "acme:limits/on call",
        "acme:limits/owner@night",
        # openstack (byte counting)
        "acme:limits/" + rep("日", 77) + "x",
        "acme:limits/" + rep("日", 77) + "xy",
        "acme:limits/on\tcall",
        "acme:limits/cost center, #1 (€)",
        # generic
        "acme:limits/" + rep("g", 40),
        "acme:limits/" + rep("g", 41),
    ]}})

    count_cap_keys = (["acme:tag/K99"] + [f"acme:tag/k{i:02d}" for i in range(55)]
                      + ["acme:tag/k0,bad", "aws:tag/x", "platform/env", "acme:tag/absent"])
    write("settings_count_cap.json", {"cloudTags": {"propagatingLabels": count_cap_keys}})

    # ---------------------------------------------------------------- v1 aws
    write("xnetwork_v1_aws.json", request(xnetwork(
        labels={
            "platform/env": "prod",
            "platform/team": "payments",
            "platform/tier": "standard",
            "platform/origin": "provisioned",
            "app.kubernetes.io/part-of": "checkout",
        },
        annotations={
            "plexsphere.io/provisioned-resource": "pr-01hq8zk3v4w5x6y7z8a9b0c1d2",
            LABELS_ANNOTATION: labels_annotation({
                "acme:checkout/owner": "team-payments@acme.example",
                "acme:checkout/region": "日本語 / Tōkyō",
                "platform/tier": "critical",
                "acme:checkout/not-opted-in": "ignored",
            }),
        },
    ), uid="e2e-xr-v1-aws-0001", user=CROSSPLANE_SA))

    write("xnetwork_stale_update.json", request(xnetwork(
        labels={"platform/env": "prod", "platform/team": "payments"},
        annotations={
            "plexsphere.io/provisioned-resource": "pr-01hq8zk3v4w5x6y7z8a9b0c1d2",
            LABELS_ANNOTATION: labels_annotation({"acme:checkout/owner": "team-payments"}),
            SKIPPED_ANNOTATION: skipped([{
                "qualifiedKey": "acme:checkout/on call",
                "tagKey": "plexsphere:acme:checkout/on call",
                "provider": "hetzner",
                "reason": "key-character-class",
            }]),
        },
        cloud_tags={
            "CostCenter": "42",
            "owner": "finops",
            "plexsphere:platform/env": "staging",
            "plexsphere:platform/retired": "yes",
            "plexsphere:platform/team": "payments",
        },
    ), uid="e2e-xr-stale-0002", user=CROSSPLANE_SA))

    write("xnetwork_adopted.json", request(xnetwork(
        labels={"platform/origin": "adopted", "platform/env": "prod", "platform/team": "payments"},
        annotations={
            LABELS_ANNOTATION: labels_annotation({"acme:checkout/owner": "team-payments"}),
            SKIPPED_ANNOTATION: skipped([{
                "qualifiedKey": "acme:checkout/on call",
                "tagKey": "plexsphere:acme:checkout/on call",
                "provider": "hetzner",
                "reason": "key-character-class",
            }]),
        },
        cloud_tags={"CostCenter": "42", "plexsphere:platform/env": "staging"},
    ), uid="e2e-xr-adopted-0003", user=CROSSPLANE_SA))

    write("xnetwork_delete.json", request(xnetwork(
        labels={"platform/env": "prod", "platform/team": "payments"},
        annotations={LABELS_ANNOTATION: labels_annotation({"acme:checkout/owner": "team-payments"})},
        cloud_tags={"plexsphere:platform/env": "staging"},
    ), operation="DELETE", uid="e2e-xr-delete-0004", user=CROSSPLANE_SA))

    # A Kubernetes kind bound by mistake: a ConfigMap with opted-in labels,
    # as kubectl creates it. It has no spec.cloudTags and must stay unchanged.
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "payments-network-settings",
            "namespace": "team-payments",
            "uid": "6f0e2a51-8c3d-4b7e-9a14-5d2c7e8f1b36",
            "resourceVersion": "48213",
            "creationTimestamp": "2025-03-02T08:12:10Z",
            "labels": {"platform/env": "prod", "platform/team": "payments"},
        },
        "data": {"region": "eu-central-1", "cidr": "10.42.0.0/16"},
    }
    write("configmap_create_opted_in_labels.json", {
        "uid": "e2e-xr-configmap-0005",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"},
        "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
        "name": "payments-network-settings",
        "namespace": "team-payments",
        "operation": "CREATE",
        "userInfo": {"username": "kubernetes-admin",
                     "groups": ["system:masters", "system:authenticated"]},
        "object": config_map,
        "oldObject": None,
        "dryRun": False,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                    "fieldManager": "kubectl-create"},
    })

    # ------------------------------------------------------------- v2 stale
    write("xdatabase_stale_only_prefixed.json", request(xdatabase(
        labels={"app.kubernetes.io/name": "payments-db"},
        annotations={
            "plexsphere.io/provisioned-resource": "pr-01hqa0m4n5p6q7r8s9t0v1w2x3",
            SKIPPED_ANNOTATION: skipped([{
                "qualifiedKey": "acme:checkout/on call",
                "tagKey": "plexsphere:acme:checkout/on call",
                "provider": "hetzner",
                "reason": "key-character-class",
            }]),
        },
        cloud_tags={"plexsphere:acme:checkout/owner": "team-payments", "plexsphere:platform/env": "prod"},
    ), uid="e2e-xr-stale-only-0005"))

    write("xdatabase_converged_hetzner.json", request(xdatabase(
        labels={"platform/env": "prod", "platform/team": "payments"},
        annotations={
            LABELS_ANNOTATION: labels_annotation({"acme:checkout/on call": "payments-sre"}),
            SKIPPED_ANNOTATION: skipped([{
                "qualifiedKey": "acme:checkout/on call",
                "tagKey": "plexsphere:acme:checkout/on call",
                "provider": "hetzner",
                "reason": "key-character-class",
            }]),
        },
        cloud_tags={"CostCenter": "42", "plexsphere:platform/env": "prod", "plexsphere:platform/team": "payments"},
    ), uid="e2e-xr-converged-0006"))

    # ------------------------------------------------------------- limits
    write("xdatabase_hetzner_limits.json", request(xdatabase(
        labels={"platform/env": "prod", "app.kubernetes.io/name": "payments-db"},
        annotations={LABELS_ANNOTATION: labels_annotation({
            "acme:limits/" + rep("ü", 40): "at-limit",
            "acme:limits/" + rep("ü", 41): "over",
            "acme:limits/value-at": rep("日", 63),
            "acme:limits/value-over": rep("日", 64),
            "acme:limits/on call": "pager",
            "acme:limits/owner@night": "sre",
            "acme:limits/not-opted-in": "ignored",
        })},
        created=True,
    ), operation="CREATE", uid="e2e-xr-hetzner-limits-0007"))

    write("xdatabase_openstack_limits.json", request(xdatabase(
        labels={"platform/env": "prod", "app.kubernetes.io/name": "payments-db"},
        provider="OpenStack",
        annotations={
            "plexsphere.io/provisioned-resource": "pr-01hqa0m4n5p6q7r8s9t0v1w2x3",
            LABELS_ANNOTATION: labels_annotation({
                "acme:limits/" + rep("日", 77) + "x": "at-limit",
                "acme:limits/" + rep("日", 77) + "xy": "over",
                "acme:limits/value-at": rep("é", 127) + "x",
                "acme:limits/value-over": rep("é", 128),
                "acme:limits/on\tcall": "pager",
                "acme:limits/cost center, #1 (€)": "kept",
                "aws:cost-center": "42",
            }),
        },
    ), uid="e2e-xr-openstack-limits-0008"))

    write("xdatabase_aws_limits.json", request(xdatabase(
        labels={"platform/env": "prod", "app.kubernetes.io/name": "payments-db"},
        provider="AWS",
        annotations={
            "plexsphere.io/provisioned-resource": "pr-01hqa0m4n5p6q7r8s9t0v1w2x3",
            LABELS_ANNOTATION: labels_annotation({
                "AwS:" + rep("z", 130): "reserved-wins",
                "acme:limits/," + rep("é", 105): "too-long-wins",
                "acme:limits/aws:billing": "finops",
                "acme:limits/cost center+a=b@c": "kept",
                "acme:limits/owner,backup": "sre",
                "acme:limits/value,over": rep("é", 257),
                "acme:limits/value-at": rep("é", 256),
                "acme:limits/value-over": rep("é", 257),
                "acme:limits/" + rep("é", 105): "at-limit",
                "acme:limits/" + rep("é", 106): "over",
                "aws:cost-center": "42",
            }),
        },
    ), uid="e2e-xr-aws-limits-0009"))

    cap_labels = {f"acme:tag/k{i:02d}": f"v{i:02d}" for i in range(55)}
    cap_labels.update({"acme:tag/K99": "v99", "acme:tag/k0,bad": "bad", "aws:tag/x": "reserved",
                       "acme:tag/not-opted-in": "ignored"})
    write("xdatabase_aws_count_cap.json", request(xdatabase(
        labels={"platform/env": "prod", "app.kubernetes.io/name": "payments-db"},
        provider="aws",
        annotations={
            LABELS_ANNOTATION: labels_annotation(cap_labels),
            SKIPPED_ANNOTATION: skipped([{
                "qualifiedKey": "acme:tag/k50",
                "tagKey": "plexsphere:acme:tag/k50",
                "provider": "aws",
                "reason": "count-cap",
            }]),
        },
        cloud_tags={"CostCenter": "42"},
    ), uid="e2e-xr-count-cap-0010"))

    # ------------------------------------------------------------- generic
    # A provider no profile lists (gcp and azure have built-in profiles).
    write("xdatabase_ibm_generic.json", request(xdatabase(
        labels={"platform/env": "staging", "platform/team": "data"},
        provider="ibm",
        annotations={LABELS_ANNOTATION: labels_annotation({
            "acme:checkout/owner": "team-data",
            "acme:checkout/owner+backup": "team-sre",
            "acme:checkout/on-call@night": "sre",
        })},
    ), uid="e2e-xr-ibm-0011"))

    # A provider value with a leading space: no profile may list it (the
    # settings refuse " aws"), so the fix the warning names is the object's.
    write("xdatabase_provider_typo.json", request(xdatabase(
        labels={"platform/env": "staging", "platform/team": "data"},
        provider=" aws",
    ), uid="e2e-xr-provider-typo-0031"))

    # ------------------------------------------------------------- gcp
    # The built-in gcp profile: GCP label rules under plexsphere-; the
    # qualified keys need tag-key bodies, and an upper-case value is refused.
    write("xdatabase_gcp_builtin.json", request(xdatabase(
        labels={"platform/env": "staging", "platform/team": "data"},
        provider="gcp",
        annotations={LABELS_ANNOTATION: labels_annotation({
            "acme:checkout/owner": "team-data",
            "acme:checkout/on-call@night": "SRE-Night",
        })},
    ), uid="e2e-xr-gcp-0020"))

    write("xdatabase_no_provider.json", request(xdatabase(
        labels={"platform/env": "dev"},
        provider=None,
        annotations={LABELS_ANNOTATION: labels_annotation({
            "acme:limits/" + rep("g", 40): "at-limit",
            "acme:limits/" + rep("g", 41): "over",
            "acme:limits/value-at": rep("ß", 255),
            "acme:limits/value-over": rep("ß", 256),
        })},
    ), uid="e2e-xr-no-provider-0012"))

    # -------------------------------------------------- skip, no annotations
    write("xdatabase_skip_without_annotations.json", request(xdatabase(
        labels={
            "platform/env": "prod",
            "billing.payments.example.org/cost-allocation-identifier": "cc-4711",
        },
    ), uid="e2e-xr-no-annotations-0013"))

    # ------------------------------------------------- custom provider path
    write("xdatabase_custom_provider_path.json", request(xdatabase(
        labels={"platform/env": "prod"},
        provider="aws",
        parameters_extra={"cloud": {"name": "hetzner", "location": "fsn1"}},
        annotations={LABELS_ANNOTATION: labels_annotation({"acme:checkout/on call": "payments-sre"})},
    ), uid="e2e-xr-provider-path-0014"))

    # ------------------------------------------------------------- adopted
    write("xdatabase_adopted_via_annotation.json", request(xdatabase(
        labels={"platform/env": "prod"},
        annotations={LABELS_ANNOTATION: labels_annotation({
            "platform/origin": "adopted",
            "acme:checkout/owner": "team-payments",
        })},
    ), uid="e2e-xr-adopted-annotation-0015"))

    # ------------------------------------------------------------- malformed
    for scenario, text, uid in [
        ("not_json", "acme:checkout/owner=team-payments", "0016"),
        ("array", '["acme:checkout/owner","team-payments"]', "0017"),
        ("nested", '{"acme:checkout/owner":{"name":"team-payments"}}', "0018"),
    ]:
        write(f"xdatabase_labels_annotation_{scenario}.json", request(xdatabase(
            labels={"platform/env": "prod"},
            annotations={LABELS_ANNOTATION: text},
        ), uid=f"e2e-xr-malformed-{scenario}-{uid}"))

    write("xdatabase_provider_number.json", request(xdatabase(
        labels={"platform/env": "prod"},
        provider=42,
        annotations={LABELS_ANNOTATION: labels_annotation({"acme:checkout/owner": "team-payments"})},
    ), uid="e2e-xr-provider-number-0019"))

    # ------------------------------------------------------------- examples
    write("examples/settings.json", {"cloudTags": {"propagatingLabels": [
        "platform/env",
        "platform/team",
        "acme:checkout/owner",
        "acme:checkout/on call",
        "acme:checkout/region",
    ]}})

    ex_net = xnetwork(
        labels={"platform/env": "prod", "platform/team": "payments"},
        annotations={LABELS_ANNOTATION: labels_annotation({"acme:checkout/owner": "team-payments"})},
        with_status=False,
    )
    for field in ("uid", "resourceVersion", "generation", "creationTimestamp", "finalizers"):
        del ex_net["metadata"][field]
    ex_net["spec"]["resourceRefs"] = []
    del ex_net["spec"]["compositionRevisionRef"]
    write("examples/xnetwork_aws.json",
          request(ex_net, operation="CREATE", uid="example-xnetwork-aws", user=CROSSPLANE_SA))

    ex_hetzner = xdatabase(
        labels={"platform/env": "prod", "platform/team": "payments"},
        annotations={LABELS_ANNOTATION: labels_annotation({
            "acme:checkout/owner": "Zoë Dupré",
            "acme:checkout/on call": "payments-sre",
        })},
        created=True,
    )
    # The examples' manifests name their composition in spec.crossplane;
    # compositionUpdatePolicy is the CRD's default.
    ex_hetzner["spec"]["crossplane"] = {"compositionRef": {"name": "xdatabase-hetzner"},
                                        "compositionUpdatePolicy": "Automatic"}
    write("examples/xdatabase_hetzner.json",
          request(ex_hetzner, operation="CREATE", uid="example-xdatabase-hetzner"))

    ex_openstack = xdatabase(
        name="orders-db",
        namespace="team-orders",
        labels={"platform/env": "staging", "platform/team": "orders"},
        provider="openstack",
        annotations={LABELS_ANNOTATION: labels_annotation({
            "acme:checkout/on call": "orders-sre",
            "acme:checkout/region": "東京",
        })},
        created=True,
    )
    ex_openstack["spec"]["crossplane"] = {"compositionRef": {"name": "xdatabase-openstack"},
                                          "compositionUpdatePolicy": "Automatic"}
    write("examples/xdatabase_openstack.json",
          request(ex_openstack, operation="CREATE", uid="example-xdatabase-openstack"))


if __name__ == "__main__":
    main()
