#!/usr/bin/env python3
"""Renders what the test bed applies, from pinned upstream files and the repository's examples.

    render.py crds CA CONVERT_URL XCRD          the CRDs of cluster/crds.tsv and cluster/vendored-crds.tsv, the
                                                XR CRDs Crossplane generates
                                                for the XRDs of examples/crossplane and cluster/objects, and the
                                                Kubewarden ClusterAdmissionPolicy CRD
    render.py capi-webhooks CA BASE_URL         CAPI's admission webhook configurations, pointed at the manager
    render.py rke2-webhooks CA BASE_URL         the RKE2 control-plane manager's, pointed at that manager
    render.py k0smotron-webhooks CA BASE_URL    k0smotron's control-plane webhooks, pointed at its manager
    render.py kubewarden CA BASE_URL MODULE POLICIES_OUT WEBHOOKS_OUT POLICY_FILE...
                                                policies.yml and the webhook configurations the Kubewarden
                                                controller generates for the files' ClusterAdmissionPolicies

Objects are written as one JSON List (kubectl applies it as it is); `crds` and `capi-webhooks` write it on
stdout. CA is the PEM file the webhooks' caBundle carries. The provenance of each file is
cluster/crds.tsv and crds/sources.tsv; nothing is fetched but through the Go command (the Go module proxy,
checked against the committed go.sum).
"""

import base64
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPONENTS = os.path.join(ROOT, "cluster", "components")


def read_tsv(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path) if line.strip() and not line.startswith("#")]
    header, body = rows[0], rows[1:]
    return [dict(zip(header, row)) for row in body]


def pin_dir(component):
    """The folder whose go.mod and go.sum pin a crds.tsv row's module: a folder under cluster/components, or
    a path from the repository's root (crds/managed-resources, the MR catalogue's pin)."""
    return os.path.join(ROOT, component) if "/" in component else os.path.join(COMPONENTS, component)


def module_dir(component, module):
    """The module's folder in the Go module cache, downloaded (and checked against go.sum) if need be."""
    env = dict(os.environ, GOTOOLCHAIN="local", GOWORK="off", GOFLAGS="-mod=readonly")
    env.setdefault("GOPROXY", "https://proxy.golang.org")
    out = subprocess.run(["go", "mod", "download", "-json", module], cwd=pin_dir(component),
                         env=env, capture_output=True, text=True)
    info = json.loads(out.stdout or "{}")
    if out.returncode != 0 or "Dir" not in info:
        sys.exit(f"render.py: cannot download {module} ({os.path.relpath(pin_dir(component), ROOT)}): "
                 f"{info.get('Error') or out.stderr.strip()}")
    return info["Dir"]


def expand_braces(pattern):
    """`a{b,c}d{e,}` -> [abde, abd, acde, acd]: each brace (none nested) in turn, as a shell expands them."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    return [expanded for option in match.group(1).split(",")
            for expanded in expand_braces(pattern[:match.start()] + option + pattern[match.end():])]


def kustomize_labels(path):
    """The labels a kustomization gives every resource: `labels[].pairs` and `commonLabels`."""
    document = yaml.safe_load(open(path)) or {}
    labels = dict(document.get("commonLabels") or {})
    for entry in document.get("labels") or []:
        labels.update(entry.get("pairs") or {})
    return labels


def recorded_sha256():
    """file name -> sha256 as crds/sources.tsv records the upstream file."""
    return {row["file"]: row["sha256"] for row in read_tsv(os.path.join(ROOT, "crds", "sources.tsv"))}


def catalogue_sha256():
    """file name -> sha256 as crds/managed-resources/files.tsv records each CRD file the MR catalogue is
    generated from (scripts/gen_mr_catalogue.py)."""
    return {row["file"]: row["sha256"]
            for row in read_tsv(os.path.join(ROOT, "crds", "managed-resources", "files.tsv"))}


def conversion_webhook(ca_pem, url):
    """The conversion block controller-runtime's envtest writes (pkg/envtest/crd.go modifyConversionWebhooks)."""
    return {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1", "v1beta1"],
                                               "clientConfig": {"url": url, "caBundle": ca_pem}}}


def pinned_crds(ca_pem, convert_url):
    recorded, catalogue = recorded_sha256(), catalogue_sha256()
    crds = []
    for row in read_tsv(os.path.join(ROOT, "cluster", "crds.tsv")):
        root = module_dir(row["component"], row["module"])
        labels = kustomize_labels(os.path.join(root, row["labels"])) if row["labels"] != "-" else {}
        patterns = expand_braces(row["files"])
        files = sorted(f for pattern in patterns for f in glob.glob(os.path.join(root, pattern)))
        unmatched = [pattern for pattern in patterns if not glob.glob(os.path.join(root, pattern))]
        if unmatched:
            sys.exit(f"render.py: no file matches {', '.join(unmatched)} in {row['module']}")
        for path in files:
            name = os.path.basename(path)
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
            if row["vendored"] == "same" and name in recorded and recorded[name] != digest:
                sys.exit(f"render.py: {row['module']} {name} has sha256 {digest}, crds/sources.tsv records "
                         f"{recorded[name]}: the pins disagree")
            if row["vendored"] == "catalogue" and catalogue.get(name) != digest:
                sys.exit(f"render.py: {row['module']} {name} has sha256 {digest}, crds/managed-resources/files.tsv "
                         f"records {catalogue.get(name, 'no such file')}: the pins disagree")
            crd = yaml.safe_load(open(path))
            crd["metadata"].setdefault("labels", {}).update(labels)
            if row["provider"] != "-":
                crd["metadata"]["labels"].update({"cluster.x-k8s.io/provider": row["provider"],
                                                  "clusterctl.cluster.x-k8s.io": ""})
            crd["metadata"].pop("annotations", None)  # controller-gen's version stamp
            if row["conversion"] == "capi":
                crd["spec"]["conversion"] = conversion_webhook(ca_pem, convert_url)
            else:
                crd["spec"].pop("conversion", None)
            crds.append(crd)
    return crds


def with_xrd_defaults(xrd):
    """The XRD as the API server stores it, which is what Crossplane's definition controller reads: the
    defaults of its CRD's `spec` members applied (`scope`, and `defaultCompositionUpdatePolicy:
    Automatic`, which xcrd turns into the XR's defaulted `compositionUpdatePolicy`), from the vendored
    XRD CRD (crds/apiextensions.crossplane.io_compositeresourcedefinitions.json)."""
    crd = json.load(open(os.path.join(ROOT, "crds", "apiextensions.crossplane.io_compositeresourcedefinitions.json")))
    version = xrd["apiVersion"].rpartition("/")[2]
    spec = xrd.setdefault("spec", {})
    for name, member in crd["versions"][version]["properties"]["spec"]["properties"].items():
        if "default" in member:
            spec.setdefault(name, member["default"])
    return xrd


def xr_crds(xcrd):
    """The CRDs Crossplane generates for each XRD of examples/crossplane and cluster/objects/xrds: its
    composite resource's, and its claim's when it offers one."""
    crds = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "crossplane", "xrd*.yaml")) +
                       glob.glob(os.path.join(ROOT, "cluster", "objects", "xrd-*.yaml"))):
        for xrd in yaml.safe_load_all(open(path)):
            if not xrd or xrd.get("kind") != "CompositeResourceDefinition":
                continue
            xrd = with_xrd_defaults(xrd)
            # The XR's CRD, and the claim's when the XRD offers one.
            for flags in ([], ["-claim"]) if xrd["spec"].get("claimNames") else ([],):
                out = subprocess.run([xcrd, *flags], input=json.dumps(xrd), capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"render.py: {path}: {out.stderr.strip()}")
                crd = json.loads(out.stdout)
                # Crossplane makes its XRD the CRD's controller; no XRD controller runs here to own it.
                crd["metadata"].pop("ownerReferences", None)
                crds.append(crd)
    return crds


def kubewarden_crd():
    """ClusterAdmissionPolicy's CRD, rebuilt from the vendored schema: the kubewarden-controller module is not
    served by the Go module proxy, so the full upstream file cannot be fetched here (docs/test-bed.md)."""
    vendored = json.load(open(os.path.join(ROOT, "crds", "policies.kubewarden.io_clusteradmissionpolicies.json")))
    versions = [{"name": name, "served": True, "storage": name == "v1", "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": schema}} for name, schema in sorted(vendored["versions"].items())]
    singular = vendored["kind"].lower()
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{vendored['plural']}.{vendored['group']}"},
            "spec": {"group": vendored["group"], "scope": vendored["scope"], "versions": versions,
                     "names": {"kind": vendored["kind"], "plural": vendored["plural"], "singular": singular,
                               "listKind": vendored["kind"] + "List"}}}


def vendored_crds():
    """The CRDs of cluster/vendored-crds.tsv, rebuilt from the schemas vendored in crds/ (as
    `kubewarden_crd` is): their providers' Go modules are not served at the tags crds/ pins, or not at
    all. Each is the upstream CRD but for the `description` keywords vendor_crds.py removed: every served
    version with its schema, the row's storage version, and the row's contract labels (the ones the
    provider's kustomization gives it, which CAPI reads to map a version to a contract)."""
    crds = []
    for row in read_tsv(os.path.join(ROOT, "cluster", "vendored-crds.tsv")):
        vendored = json.load(open(os.path.join(ROOT, "crds", row["file"])))
        if row["storage"] not in vendored["versions"]:
            sys.exit(f"render.py: {row['file']} serves no version {row['storage']}")
        versions = [{"name": name, "served": True, "storage": name == row["storage"],
                     "subresources": {"status": {}}, "schema": {"openAPIV3Schema": schema}}
                    for name, schema in sorted(vendored["versions"].items())]
        labels = dict(pair.split("=", 1) for pair in row["labels"].split(",")) if row["labels"] != "-" else {}
        singular = vendored["kind"].lower()
        crds.append({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                     "metadata": {"name": f"{vendored['plural']}.{vendored['group']}", "labels": labels},
                     "spec": {"group": vendored["group"], "scope": vendored["scope"], "versions": versions,
                              "names": {"kind": vendored["kind"], "plural": vendored["plural"],
                                        "singular": singular, "listKind": vendored["kind"] + "List"}}})
    return crds


def webhooks(component, module, manifests, prefix, ca_pem, base_url):
    """A manager's webhook manifests as its kustomize install names them (its namePrefix), each service
    replaced by the manager's URL (envtest's updateClientConfig, with one slash). CAPI's `capi-` prefix sorts,
    and runs, before the Kubewarden configurations; the RKE2 control plane's `rke2-control-plane-` and
    k0smotron's `k0smotron-` after."""
    root = module_dir(component, module)
    out = []
    for config in yaml.safe_load_all(open(os.path.join(root, manifests))):
        if not config:
            continue
        config["metadata"]["name"] = prefix + config["metadata"]["name"]
        for webhook in config["webhooks"]:
            path = webhook["clientConfig"].pop("service")["path"]
            webhook["clientConfig"] = {"url": base_url + path, "caBundle": ca_pem}
        out.append(config)
    return out


def kubewarden(ca_pem, base_url, module, policy_files):
    """policies.yml (kubewarden-controller policyserver_controller_configmap.go buildPoliciesMap) and the
    webhook configurations (policy_subreconciler_webhook.go) for ClusterAdmissionPolicies."""
    policies, configs = {}, []
    for path in policy_files:
        for policy in yaml.safe_load_all(open(path)):
            if not policy or policy.get("kind") != "ClusterAdmissionPolicy":
                continue
            name, spec = policy["metadata"]["name"], policy["spec"]
            unique = "clusterwide-" + name
            entry = {"namespacedName": {"Namespace": "", "Name": name}, "module": module,
                     "policyMode": spec.get("mode", "protect"), "allowedToMutate": bool(spec.get("mutating")),
                     "settings": spec.get("settings") or {}, "hostCapabilities": ["*"]}
            if spec.get("contextAwareResources"):
                entry["contextAwareResources"] = spec["contextAwareResources"]
            if spec.get("message"):
                entry["message"] = spec["message"]
            policies[unique] = entry
            configs.append(webhook_configuration(ca_pem, base_url, name, unique, spec))
    return policies, configs


def webhook_configuration(ca_pem, base_url, name, unique, spec):
    # kubewarden-controller's webhookNamespaceSelector: the policy's own
    # selector, whole, with the exclusion of its deployments namespace added.
    selector = json.loads(json.dumps(spec.get("namespaceSelector") or {}))
    selector["matchExpressions"] = (selector.get("matchExpressions") or []) + [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kubewarden"]}]
    webhook = {"name": unique + ".kubewarden.admission", "admissionReviewVersions": ["v1"],
               "clientConfig": {"url": f"{base_url}/validate/{unique}", "caBundle": ca_pem},
               "rules": spec["rules"], "failurePolicy": spec.get("failurePolicy", "Fail"),
               "matchPolicy": spec.get("matchPolicy", "Equivalent"), "sideEffects": spec.get("sideEffects", "None"),
               "timeoutSeconds": spec.get("timeoutSeconds", 10), "namespaceSelector": selector,
               "objectSelector": spec.get("objectSelector") or {}}
    kind = "MutatingWebhookConfiguration" if spec.get("mutating") else "ValidatingWebhookConfiguration"
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": unique, "labels": {"app.kubernetes.io/part-of": "kubewarden"},
                         "annotations": {"kubewardenPolicyName": name, "kubewardenPolicyNamespace": ""}},
            "webhooks": [webhook]}


def as_list(items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1, sort_keys=True)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    command, args = argv[1], argv[2:]
    if command == "crds" and len(args) == 3:
        ca = base64.b64encode(open(args[0], "rb").read()).decode()
        print(as_list(pinned_crds(ca, args[1]) + vendored_crds() + xr_crds(args[2]) + [kubewarden_crd()]))
    elif command == "capi-webhooks" and len(args) == 2:
        ca = base64.b64encode(open(args[0], "rb").read()).decode()
        print(as_list(webhooks("capi", "sigs.k8s.io/cluster-api", "core/config/webhook/manifests.yaml", "capi-",
                               ca, args[1])))
    elif command == "rke2-webhooks" and len(args) == 2:
        ca = base64.b64encode(open(args[0], "rb").read()).decode()
        print(as_list(webhooks("rke2", "github.com/rancher/cluster-api-provider-rke2",
                               "controlplane/config/webhook/manifests.yaml", "rke2-control-plane-", ca, args[1])))
    elif command == "k0smotron-webhooks" and len(args) == 2:
        ca = base64.b64encode(open(args[0], "rb").read()).decode()
        print(as_list(webhooks("k0smotron", "github.com/k0sproject/k0smotron",
                               "config/clusterapi/controlplane/webhook/manifests.yaml", "k0smotron-", ca, args[1])))
    elif command == "kubewarden" and len(args) >= 5:
        # kubewarden CA BASE_URL MODULE POLICIES_OUT WEBHOOKS_OUT POLICY...
        ca = base64.b64encode(open(args[0], "rb").read()).decode()
        policies, configs = kubewarden(ca, args[1], args[2], args[5:])
        with open(args[3], "w") as out:
            yaml.safe_dump(policies, out, sort_keys=True)
        with open(args[4], "w") as out:
            out.write(as_list(configs) + "\n")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
