#!/usr/bin/env python3
"""Writes the benchmark scenarios of `make bench` (scripts/bench.sh).

Run from the repository root: `python3 test_data/bench/gen.py`. The output is
deterministic (no clock, no randomness), so re-running it reproduces the
committed files byte for byte. `python3 test_data/bench/gen.py --scaling DIR
N...` writes every SCALING dimension at each size N to DIR instead, with its
own scenarios.tsv (scripts/cost-per-entry.sh; not committed).

Every scenario is an AdmissionRequest as the API server sends it (objects
with metadata.managedFields, status and the controller's user), its policy
settings, and the parents its look-ups find: `<scenario>.parents.yaml`, the
whole objects as `kubectl get -o yaml` prints them (one YAML document each).
`policy-runner bench --parents` answers every look-up from them as
policy-server does, pruned by the field masks the policy sends; nothing here
knows those masks (`--record-session` writes them down).

scenarios.tsv lists them: name, request, settings, parents (or -). A variant
scenario (md-ms-validate, kcp-machine-regexes) points at its base scenario's
request and parents and has only its own settings file.

Scenarios:
- md-ms: a MachineSet UPDATE; its MachineDeployment (one look-up) carries an
  annotation and a template label the MachineSet lacks.
- kcp-machine: a control-plane Machine CREATE; its KubeadmControlPlane (one
  look-up, a full kubeadmConfigSpec) carries machineTemplate metadata.
- topology-kcp: a topology-owned KubeadmControlPlane CREATE; the Cluster and
  then its ClusterClass (two look-ups; CAPD's quick-start class with
  variables and patches) give the merged metadata.
- machine-node-sync: a worker Machine UPDATE under a MachineSet (one
  look-up), with node-role / node-restriction / node.cluster.x-k8s.io and
  kubernetes.io labels, and settings with additional sync regexes: the
  node-labels / node-annotations audit annotations and warnings.
- xr-aws-5, xr-aws-50, xr-aws-500: an XNetwork CREATE on aws with 5, 50 and
  500 opted-in labels (500 exceeds aws's cap of 50: 450 count-cap skips, each
  a warning and a record in the skip annotation).
- xr-annotation-10k: an XNetwork CREATE on aws whose label-set annotation
  holds 10,000 entries (225 KiB, under the API server's 256 KiB limit on all
  annotations); 48 of them and two labels are opted in (aws's cap of 50).
- infra-awscluster-class: an AWSCluster (infrastructure.cluster.x-k8s.io/
  v1beta2) CREATE by the topology controller, under a ClusterClass topology
  Cluster (cluster.x-k8s.io/v1beta2, one look-up) carrying 20 opted-in
  labels (team, cost-center, environment, ...), with
  cloudTags.capiInfrastructure on: the 20 labels become CAPA additionalTags
  beside the AWSCluster's own two.
- mr-aws-vpc: a Crossplane managed resource (an upjet AWS VPC,
  ec2.aws.upbound.io/v1beta1) UPDATE by the provider after its first
  reconcile: composed by an XNetwork (one look-up, masked to its label set)
  that carries 10 opted-in labels, with the provider's three crossplane-*
  tags and a user tag in spec.forProvider.tags, and
  cloudTags.managedResources.families [aws]. Its look-up is of a user's XR
  kind, granted by mr-aws-vpc.metadata.yml (`-m`), as a
  ClusterAdmissionPolicy's contextAwareResources grant it.
- unhandled-cluster: a CAPI Cluster UPDATE; no rule has Cluster as child,
  so no look-up and no change.
- md-ms-fields: md-ms with in-place fields flowing (docs/capi.md, "In-place fields"): the
  MachineDeployment also sets the three node timeouts (drain 10m0s,
  volume-detach 2m0s, deletion 30s), minReadySeconds 30 and a readiness gate;
  the MachineSet has the MD's older values (drain 5m0s, deletion 10s, no
  volume-detach timeout, no minReadySeconds, no gate) besides md-ms's missing
  annotation and template label. md-ms-fields vs md-ms is what the field
  flows cost per request.
- md-ms-validate: md-ms (same request and parents) with settings
  {"mode": "validate"}: the policy rejects the MachineSet listing every
  deviation instead of returning a patch.
- topology-kcp-10k-parent-gates: topology-kcp whose Cluster lists 10,000
  readiness gates (all added to the KubeadmControlPlane);
  topology-kcp-10k-child-gates: a topology KubeadmControlPlane CREATE that
  holds 10,000 gates, its Cluster listing 2 (keyed lists cost the same per
  entry however long either list is; both exceed the CRDs' cap of 32, see
  SCALING).
- kcp-machine-regexes: kcp-machine (same request and parents) with
  machine-node-sync's settings (2 additionalSyncMachineLabels regexes, 1
  additionalSyncMachineAnnotations regex). None of them matches a key of the
  Machine or of the KubeadmControlPlane's machineTemplate, so the answer is
  kcp-machine's; kcp-machine vs kcp-machine-regexes is what configured regexes
  cost per request.
"""

import copy
import json
import os
import sys
import uuid

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.relpath(HERE, os.path.join(HERE, "..", ".."))

NS = "payments"
CLUSTER = "payments-prod"
K8S_VERSION = "v1.31.4"
CAPI_SA = {
    "username": "system:serviceaccount:capi-system:capi-manager",
    "uid": "3f9a1c52-7b0e-4d8a-9c61-2e4f5a6b7c80",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:capi-system",
        "system:authenticated",
    ],
}
TOPOLOGY_SA = CAPI_SA
CROSSPLANE_SA = {
    "username": "system:serviceaccount:crossplane-system:crossplane",
    "uid": "0e6c1f1a-43a5-4f5e-9d0e-8e1f8f3f6a11",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:crossplane-system",
        "system:authenticated",
    ],
}
PROVIDER_SA = {
    "username": "system:serviceaccount:crossplane-system:provider-aws-ec2-3f7c1b9d2e4a",
    "uid": "6b1d2f3a-7c8e-4d9f-a0b1-c2d3e4f5a6b7",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:crossplane-system",
        "system:authenticated",
    ],
}


def uid(name):
    """A stable UID per object name."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "bench/" + name))


# --------------------------------------------------------------------------
# Object plumbing
# --------------------------------------------------------------------------
def fields_v1(value):
    """metadata.managedFields[].fieldsV1 for `value`, as the API server
    writes it: every map key becomes `f:<key>`, lists become `.`."""
    if isinstance(value, dict):
        return {f"f:{k}": fields_v1(v) for k, v in value.items()}
    return {}


def managed(obj, manager, operation="Update", time="2025-03-11T09:16:40Z"):
    """One managedFields entry covering the object's metadata and spec."""
    owned = {}
    for part in ("metadata", "spec"):
        if part in obj:
            sub = dict(obj[part])
            if part == "metadata":
                sub = {k: v for k, v in sub.items()
                       if k in ("labels", "annotations", "ownerReferences", "finalizers")}
                if "ownerReferences" in sub:
                    sub["ownerReferences"] = {
                        f'k:{{"uid":"{o["uid"]}"}}': {} for o in sub["ownerReferences"]}
            owned[part] = sub
    return {
        "apiVersion": obj["apiVersion"],
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(owned),
        "manager": manager,
        "operation": operation,
        "time": time,
    }


def with_managed_fields(obj, manager):
    obj = copy.deepcopy(obj)
    entries = [managed(obj, manager)]
    if "status" in obj:
        entries.append({
            "apiVersion": obj["apiVersion"],
            "fieldsType": "FieldsV1",
            "fieldsV1": fields_v1({"status": obj["status"]}),
            "manager": manager,
            "operation": "Update",
            "subresource": "status",
            "time": "2025-03-11T09:21:05Z",
        })
    obj["metadata"]["managedFields"] = entries
    return obj


def admission_request(obj, operation, user, old=None, name=None):
    api_version = obj["apiVersion"]
    group, _, version = api_version.rpartition("/")
    kind = obj["kind"]
    resource = kind.lower() + ("es" if kind.endswith("s") else "s")
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": resource}
    name = name or obj["metadata"].get("name", "")
    request = {
        "uid": uid(f"request/{kind}/{name}/{operation}"),
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": name,
        "operation": operation,
        "userInfo": user,
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {
            "kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions",
            "apiVersion": "meta.k8s.io/v1",
            "fieldManager": "manager",
        },
    }
    namespace = obj["metadata"].get("namespace")
    if namespace:
        request["namespace"] = namespace
    return request


def created(obj):
    """The object as a controller submits it on CREATE: no server fields."""
    obj = copy.deepcopy(obj)
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"):
        obj["metadata"].pop(key, None)
    obj.pop("status", None)
    return obj


def server_meta(name, generation=1, rv="184211", created_at="2025-03-11T09:12:03Z"):
    return {
        "creationTimestamp": created_at,
        "generation": generation,
        "resourceVersion": rv,
        "uid": uid(name),
    }


def condition(kind, status="True", reason=None, time="2025-03-11T09:16:40Z"):
    c = {"lastTransitionTime": time, "status": status, "type": kind}
    if reason:
        c["reason"] = reason
    return c


def v1beta2_condition(kind, reason, status="True", time="2025-03-11T09:16:40Z"):
    """A v1beta2 condition is a metav1.Condition: reason and message are
    required (an empty message is valid, and what CAPI writes when all is
    well)."""
    return {"lastTransitionTime": time, "message": "", "reason": reason, "status": status,
            "type": kind}


def owner(api_version, kind, name, controller=True):
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(name)}
    if controller:
        ref["blockOwnerDeletion"] = True
        ref["controller"] = True
    return ref


# --------------------------------------------------------------------------
# Cluster API objects (CAPD quick-start shapes, a "payments-prod" cluster)
# --------------------------------------------------------------------------
CORE_V1B1 = "cluster.x-k8s.io/v1beta1"
CORE_V1B2 = "cluster.x-k8s.io/v1beta2"
CP_V1B1 = "controlplane.cluster.x-k8s.io/v1beta1"
CP_V1B2 = "controlplane.cluster.x-k8s.io/v1beta2"
BOOT_V1B1 = "bootstrap.cluster.x-k8s.io/v1beta1"
INFRA_V1B1 = "infrastructure.cluster.x-k8s.io/v1beta1"

MD_NAME = f"{CLUSTER}-md-0"
MS_NAME = f"{MD_NAME}-7d8f9c5b4x"
MS_HASH = "2958413721"


def machine_deployment():
    template_labels = {
        "cluster.x-k8s.io/cluster-name": CLUSTER,
        "cluster.x-k8s.io/deployment-name": MD_NAME,
        "env": "prod",
        "team": "payments",
        "node-role.kubernetes.io/worker": "",
        "node.cluster.x-k8s.io/pool": "general",
    }
    md = {
        "apiVersion": CORE_V1B1,
        "kind": "MachineDeployment",
        "metadata": {
            "annotations": {
                "machinedeployment.clusters.x-k8s.io/revision": "3",
                "platform.example.com/owner": "team-payments",
                "platform.example.com/cost-center": "cc-4711",
                "platform.example.com/change-ticket": "CHG-20931",
            },
            **server_meta(MD_NAME, generation=6, rv="190233"),
            "labels": {
                "cluster.x-k8s.io/cluster-name": CLUSTER,
                "platform.example.com/tier": "gold",
            },
            "name": MD_NAME,
            "namespace": NS,
            "ownerReferences": [owner(CORE_V1B1, "Cluster", CLUSTER, controller=False)],
        },
        "spec": {
            "clusterName": CLUSTER,
            "minReadySeconds": 0,
            "progressDeadlineSeconds": 600,
            "replicas": 3,
            "revisionHistoryLimit": 1,
            "selector": {"matchLabels": {
                "cluster.x-k8s.io/cluster-name": CLUSTER,
                "cluster.x-k8s.io/deployment-name": MD_NAME,
            }},
            "strategy": {
                "rollingUpdate": {"deletePolicy": "Oldest", "maxSurge": 1, "maxUnavailable": 0},
                "type": "RollingUpdate",
            },
            "template": {
                "metadata": {
                    "labels": template_labels,
                    "annotations": {"platform.example.com/cost-center": "cc-4711"},
                },
                "spec": {
                    "bootstrap": {"configRef": {
                        "apiVersion": BOOT_V1B1, "kind": "KubeadmConfigTemplate",
                        "name": f"{MD_NAME}-bootstrap", "namespace": NS}},
                    "clusterName": CLUSTER,
                    "infrastructureRef": {
                        "apiVersion": INFRA_V1B1, "kind": "DockerMachineTemplate",
                        "name": f"{MD_NAME}-infra-2", "namespace": NS},
                    "nodeDeletionTimeout": "10s",
                    "nodeDrainTimeout": "5m0s",
                    "version": K8S_VERSION,
                },
            },
        },
        "status": {
            "availableReplicas": 3,
            "conditions": [condition("Ready"), condition("Available"),
                           condition("MachineSetReady")],
            "observedGeneration": 6,
            "phase": "Running",
            "readyReplicas": 3,
            "replicas": 3,
            "selector": f"cluster.x-k8s.io/cluster-name={CLUSTER},"
                        f"cluster.x-k8s.io/deployment-name={MD_NAME}",
            "unavailableReplicas": 0,
            "updatedReplicas": 3,
        },
    }
    return with_managed_fields(md, "manager")


def machine_set():
    """The MachineSet before the MachineDeployment's last change: it lacks
    change-ticket and the node.cluster.x-k8s.io/pool template label."""
    labels = {
        "cluster.x-k8s.io/cluster-name": CLUSTER,
        "cluster.x-k8s.io/deployment-name": MD_NAME,
        "env": "prod",
        "team": "payments",
        "node-role.kubernetes.io/worker": "",
        "machine-template-hash": MS_HASH,
    }
    ms = {
        "apiVersion": CORE_V1B1,
        "kind": "MachineSet",
        "metadata": {
            "annotations": {
                "machinedeployment.clusters.x-k8s.io/desired-replicas": "3",
                "machinedeployment.clusters.x-k8s.io/max-replicas": "4",
                "machinedeployment.clusters.x-k8s.io/revision": "3",
                "platform.example.com/owner": "team-payments",
                "platform.example.com/cost-center": "cc-4711",
            },
            **server_meta(MS_NAME, generation=3, rv="190240"),
            "labels": labels,
            "name": MS_NAME,
            "namespace": NS,
            "ownerReferences": [owner(CORE_V1B1, "MachineDeployment", MD_NAME)],
        },
        "spec": {
            "clusterName": CLUSTER,
            "deletePolicy": "Oldest",
            "replicas": 3,
            "selector": {"matchLabels": {
                "cluster.x-k8s.io/cluster-name": CLUSTER,
                "machine-template-hash": MS_HASH,
            }},
            "template": {
                "metadata": {
                    "labels": dict(labels),
                    "annotations": {"platform.example.com/cost-center": "cc-4711"},
                },
                "spec": machine_deployment()["spec"]["template"]["spec"],
            },
        },
        "status": {
            "availableReplicas": 3,
            "conditions": [condition("Ready"), condition("MachinesCreated"),
                           condition("MachinesReady"), condition("Resized")],
            "fullyLabeledReplicas": 3,
            "observedGeneration": 3,
            "readyReplicas": 3,
            "replicas": 3,
            "selector": f"cluster.x-k8s.io/cluster-name={CLUSTER},machine-template-hash={MS_HASH}",
        },
    }
    return with_managed_fields(ms, "manager")


def machine_deployment_fields():
    """machine_deployment() after a change of its in-place fields: the three
    node timeouts, minReadySeconds and a readiness gate (CAPI's MachineSet
    controller copies them to every MachineSet)."""
    md = machine_deployment()
    del md["metadata"]["managedFields"]
    md["metadata"].update(generation=7, resourceVersion="190301")
    md["status"]["observedGeneration"] = 7
    md["spec"]["minReadySeconds"] = 30
    md["spec"]["template"]["spec"].update({
        "nodeDeletionTimeout": "30s",
        "nodeDrainTimeout": "10m0s",
        "nodeVolumeDetachTimeout": "2m0s",
        "readinessGates": [{"conditionType": "network.platform.example.com/CNIReady"}],
    })
    return with_managed_fields(md, "manager")


KCP_NAME = f"{CLUSTER}-control-plane"


def kubeadm_config_spec():
    return {
        "clusterConfiguration": {
            "apiServer": {"extraArgs": [
                {"name": "audit-log-maxage", "value": "30"},
                {"name": "audit-log-path", "value": "/var/log/kubernetes/audit.log"},
                {"name": "audit-policy-file", "value": "/etc/kubernetes/audit-policy.yaml"},
                {"name": "enable-admission-plugins", "value": "NodeRestriction,PodSecurity"},
                {"name": "profiling", "value": "false"},
            ], "extraVolumes": [{
                "hostPath": "/etc/kubernetes/audit-policy.yaml",
                "mountPath": "/etc/kubernetes/audit-policy.yaml",
                "name": "audit-policy", "pathType": "File", "readOnly": True}],
                "certSANs": ["localhost", "127.0.0.1", "0.0.0.0", "host.docker.internal"]},
            "controllerManager": {"extraArgs": [
                {"name": "bind-address", "value": "0.0.0.0"},
                {"name": "profiling", "value": "false"}]},
            "etcd": {"local": {"extraArgs": [
                {"name": "listen-metrics-urls", "value": "http://0.0.0.0:2381"}]}},
            "scheduler": {"extraArgs": [
                {"name": "bind-address", "value": "0.0.0.0"},
                {"name": "profiling", "value": "false"}]},
        },
        "files": [{
            "content": "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n"
                       "- level: Metadata\n  omitStages: [RequestReceived]\n",
            "owner": "root:root", "path": "/etc/kubernetes/audit-policy.yaml",
            "permissions": "0600"}],
        "format": "cloud-config",
        "initConfiguration": {
            "nodeRegistration": {
                "imagePullPolicy": "IfNotPresent",
                "kubeletExtraArgs": [{"name": "eviction-hard",
                                      "value": "nodefs.available<0%,imagefs.available<0%"}],
                "taints": [{"effect": "NoSchedule",
                            "key": "node-role.kubernetes.io/control-plane"}]}},
        "joinConfiguration": {
            "nodeRegistration": {
                "imagePullPolicy": "IfNotPresent",
                "kubeletExtraArgs": [{"name": "eviction-hard",
                                      "value": "nodefs.available<0%,imagefs.available<0%"}]}},
        "postKubeadmCommands": ["echo control plane node up"],
        "preKubeadmCommands": ["sysctl -w fs.inotify.max_user_watches=524288"],
        "users": [{"name": "ops", "sshAuthorizedKeys": [
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk3b2Vx0m3b0Vh6mXcPq1vYq9kqH9xqj1g2m3n4o5p6 ops@plexsphere"],
            "sudo": "ALL=(ALL) NOPASSWD:ALL"}],
    }


def v1beta1_args(value):
    """v1beta1 writes kubeadm extra args as maps; v1beta2 as name/value lists."""
    if isinstance(value, dict):
        return {k: ({a["name"]: a["value"] for a in v}
                    if k in ("extraArgs", "kubeletExtraArgs") else v1beta1_args(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [v1beta1_args(v) for v in value]
    return value


def kcp_v1beta2():
    kcp = {
        "apiVersion": CP_V1B2,
        "kind": "KubeadmControlPlane",
        "metadata": {
            **server_meta(KCP_NAME, generation=2, rv="188410"),
            "finalizers": ["kubeadm.controlplane.cluster.x-k8s.io"],
            "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER},
            "name": KCP_NAME,
            "namespace": NS,
            "ownerReferences": [owner(CORE_V1B2, "Cluster", CLUSTER)],
        },
        "spec": {
            "kubeadmConfigSpec": kubeadm_config_spec(),
            "machineTemplate": {
                "metadata": {
                    "labels": {
                        "env": "prod",
                        "team": "payments",
                        "node-role.kubernetes.io/control-plane": "",
                        "node.cluster.x-k8s.io/pool": "control-plane",
                    },
                    "annotations": {
                        "platform.example.com/cost-center": "cc-4711",
                        "node.cluster.x-k8s.io/maintenance-window": "sun-02:00",
                    },
                },
                "spec": {
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                          "kind": "DockerMachineTemplate",
                                          "name": f"{CLUSTER}-control-plane"},
                    "deletion": {"nodeDrainTimeoutSeconds": 300},
                },
            },
            "replicas": 3,
            "rollout": {"strategy": {"rollingUpdate": {"maxSurge": 1}, "type": "RollingUpdate"}},
            "version": K8S_VERSION,
        },
        "status": {
            "availableReplicas": 3,
            "conditions": [v1beta2_condition("Available", "Available"),
                           v1beta2_condition("CertificatesAvailable", "CertificatesAvailable"),
                           v1beta2_condition("EtcdClusterHealthy", "Healthy"),
                           v1beta2_condition("Initialized", "Initialized"),
                           v1beta2_condition("MachinesReady", "Ready")],
            "initialization": {"controlPlaneInitialized": True},
            "observedGeneration": 2,
            "readyReplicas": 3,
            "replicas": 3,
            "selector": f"cluster.x-k8s.io/cluster-name={CLUSTER},"
                        "cluster.x-k8s.io/control-plane",
            "upToDateReplicas": 3,
            "version": K8S_VERSION,
        },
    }
    return with_managed_fields(kcp, "manager")


def control_plane_machine():
    name = f"{KCP_NAME}-q7x2m"
    return {
        "apiVersion": CORE_V1B2,
        "kind": "Machine",
        "metadata": {
            "annotations": {
                "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration": json.dumps(
                    kubeadm_config_spec()["clusterConfiguration"], separators=(",", ":")),
                "platform.example.com/cost-center": "cc-4711",
            },
            "labels": {
                "cluster.x-k8s.io/cluster-name": CLUSTER,
                "cluster.x-k8s.io/control-plane": "",
                "cluster.x-k8s.io/control-plane-name": KCP_NAME,
                "env": "prod",
                "team": "payments",
            },
            "name": name,
            "namespace": NS,
            "ownerReferences": [owner(CP_V1B2, "KubeadmControlPlane", KCP_NAME)],
        },
        "spec": {
            "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io",
                                        "kind": "KubeadmConfig", "name": name}},
            "clusterName": CLUSTER,
            "deletion": {"nodeDrainTimeoutSeconds": 300},
            "failureDomain": "fd-2",
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                  "kind": "DockerMachine", "name": name},
            "readinessGates": [{"conditionType": "APIServerPodHealthy"},
                               {"conditionType": "ControllerManagerPodHealthy"},
                               {"conditionType": "SchedulerPodHealthy"},
                               {"conditionType": "EtcdPodHealthy"},
                               {"conditionType": "EtcdMemberHealthy"}],
            "version": K8S_VERSION,
        },
    }


CLASS_NAME = "quick-start"


def topology_cluster():
    cluster = {
        "apiVersion": CORE_V1B1,
        "kind": "Cluster",
        "metadata": {
            **server_meta(CLUSTER, generation=2, rv="187001"),
            "finalizers": ["cluster.cluster.x-k8s.io"],
            "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER,
                       "topology.cluster.x-k8s.io/owned": "",
                       "platform.example.com/tier": "gold"},
            "name": CLUSTER,
            "namespace": NS,
        },
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]},
                               "serviceDomain": "cluster.local",
                               "services": {"cidrBlocks": ["10.128.0.0/12"]}},
            "controlPlaneEndpoint": {"host": "172.18.0.3", "port": 6443},
            "controlPlaneRef": {"apiVersion": CP_V1B1, "kind": "KubeadmControlPlane",
                                "name": f"{CLUSTER}-x7k2p", "namespace": NS},
            "infrastructureRef": {"apiVersion": INFRA_V1B1, "kind": "DockerCluster",
                                  "name": f"{CLUSTER}-r8c4n", "namespace": NS},
            "topology": {
                "class": CLASS_NAME,
                "controlPlane": {
                    "metadata": {
                        "labels": {"env": "prod", "team": "payments",
                                   "node.cluster.x-k8s.io/pool": "control-plane"},
                        "annotations": {"platform.example.com/cost-center": "cc-4711"},
                    },
                    "replicas": 3,
                },
                "variables": [
                    {"name": "imageRepository", "value": ""},
                    {"name": "etcdImageTag", "value": ""},
                    {"name": "coreDNSImageTag", "value": ""},
                    {"name": "podSecurityStandard", "value": {
                        "audit": "restricted", "enabled": True, "enforce": "baseline",
                        "warn": "restricted"}},
                ],
                "version": K8S_VERSION,
                "workers": {"machineDeployments": [
                    {"class": "default-worker", "name": f"md-{i}", "replicas": 3,
                     "failureDomain": f"fd-{i + 1}",
                     "metadata": {"labels": {"pool": f"md-{i}"}}}
                    for i in range(3)
                ]},
            },
        },
        "status": {
            "conditions": [condition("Ready"), condition("ControlPlaneInitialized"),
                           condition("ControlPlaneReady"), condition("InfrastructureReady"),
                           condition("TopologyReconciled")],
            "controlPlaneReady": True,
            "failureDomains": {f"fd-{i}": {"controlPlane": True} for i in range(1, 4)},
            "infrastructureReady": True,
            "observedGeneration": 2,
            "phase": "Provisioned",
        },
    }
    return with_managed_fields(cluster, "capi-topology")


def quick_start_class():
    """CAPD's quick-start ClusterClass (test/infrastructure/docker/templates)."""
    def ref(kind, name, api=INFRA_V1B1):
        return {"ref": {"apiVersion": api, "kind": kind, "name": name, "namespace": NS}}

    def json_patch(op, path, value_from=None, value=None):
        p = {"op": op, "path": path}
        if value_from is not None:
            p["valueFrom"] = value_from
        if value is not None:
            p["value"] = value
        return p

    cp_selector = {"apiVersion": CP_V1B1, "kind": "KubeadmControlPlaneTemplate",
                   "matchResources": {"controlPlane": True}}
    patches = [
        {"name": "imageRepository", "enabledIf": '{{ ne .imageRepository "" }}',
         "definitions": [{"selector": cp_selector, "jsonPatches": [json_patch(
             "add", "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository",
             {"variable": "imageRepository"})]}]},
        {"name": "etcdImageTag", "enabledIf": '{{ ne .etcdImageTag "" }}',
         "definitions": [{"selector": cp_selector, "jsonPatches": [json_patch(
             "add", "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd",
             {"template": "local:\n  imageTag: {{ .etcdImageTag }}\n"})]}]},
        {"name": "coreDNSImageTag", "enabledIf": '{{ ne .coreDNSImageTag "" }}',
         "definitions": [{"selector": cp_selector, "jsonPatches": [json_patch(
             "add", "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/dns",
             {"template": "imageTag: {{ .coreDNSImageTag }}\n"})]}]},
        {"name": "customImage", "description": "Sets the container image used for the nodes.",
         "definitions": [
             {"selector": {"apiVersion": INFRA_V1B1, "kind": "DockerMachineTemplate",
                           "matchResources": {"machineDeploymentClass": {"names": ["default-worker"]}}},
              "jsonPatches": [json_patch("add", "/spec/template/spec/customImage", {
                  "template": "kindest/node:{{ .builtin.machineDeployment.version | "
                              "replace \"+\" \"_\" }}"})]},
             {"selector": {"apiVersion": INFRA_V1B1, "kind": "DockerMachineTemplate",
                           "matchResources": {"controlPlane": True}},
              "jsonPatches": [json_patch("add", "/spec/template/spec/customImage", {
                  "template": "kindest/node:{{ .builtin.controlPlane.version | "
                              "replace \"+\" \"_\" }}"})]}]},
        {"name": "podSecurityStandard", "enabledIf": "{{ .podSecurityStandard.enabled }}",
         "definitions": [{"selector": cp_selector, "jsonPatches": [
             json_patch("add", "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/apiServer/extraArgs/admission-control-config-file",
                        value="/etc/kubernetes/kube-apiserver-admission-pss.yaml"),
             json_patch("add", "/spec/template/spec/kubeadmConfigSpec/files/-", {"template": (
                 "content: |\n  apiVersion: apiserver.config.k8s.io/v1\n  kind: AdmissionConfiguration\n"
                 "  plugins:\n  - name: PodSecurity\n    configuration:\n"
                 "      apiVersion: pod-security.admission.config.k8s.io/v1\n"
                 "      kind: PodSecurityConfiguration\n      defaults:\n"
                 "        enforce: \"{{ .podSecurityStandard.enforce }}\"\n"
                 "        audit: \"{{ .podSecurityStandard.audit }}\"\n"
                 "        warn: \"{{ .podSecurityStandard.warn }}\"\n"
                 "      exemptions:\n        namespaces: [kube-system]\n"
                 "path: /etc/kubernetes/kube-apiserver-admission-pss.yaml\n")})]}]},
    ]
    variables = [
        {"name": "imageRepository", "required": True, "schema": {"openAPIV3Schema": {
            "type": "string", "default": "", "example": "registry.k8s.io",
            "description": "imageRepository sets the container registry to pull images from."}}},
        {"name": "etcdImageTag", "required": True, "schema": {"openAPIV3Schema": {
            "type": "string", "default": "", "example": "3.5.3-0",
            "description": "etcdImageTag sets the tag for the etcd image."}}},
        {"name": "coreDNSImageTag", "required": True, "schema": {"openAPIV3Schema": {
            "type": "string", "default": "", "example": "v1.8.5",
            "description": "coreDNSImageTag sets the tag for the coreDNS image."}}},
        {"name": "podSecurityStandard", "required": False, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {
                "enabled": {"type": "boolean", "default": True},
                "enforce": {"type": "string", "default": "baseline"},
                "audit": {"type": "string", "default": "restricted"},
                "warn": {"type": "string", "default": "restricted"}}}}},
    ]
    cc = {
        "apiVersion": CORE_V1B1,
        "kind": "ClusterClass",
        "metadata": {
            **server_meta(CLASS_NAME, generation=1, rv="150022", created_at="2025-02-01T08:00:00Z"),
            "labels": {"platform.example.com/catalog": "standard"},
            "name": CLASS_NAME,
            "namespace": NS,
        },
        "spec": {
            "controlPlane": {
                "machineInfrastructure": ref("DockerMachineTemplate", "quick-start-control-plane"),
                "metadata": {
                    "labels": {"node-role.kubernetes.io/control-plane": "",
                               "platform.example.com/class": CLASS_NAME},
                    "annotations": {"node.cluster.x-k8s.io/maintenance-window": "sun-02:00"},
                },
                **ref("KubeadmControlPlaneTemplate", "quick-start-control-plane", CP_V1B1),
            },
            "infrastructure": ref("DockerClusterTemplate", "quick-start-cluster"),
            "patches": patches,
            "variables": variables,
            "workers": {"machineDeployments": [{
                "class": "default-worker",
                "template": {
                    "bootstrap": ref("KubeadmConfigTemplate",
                                     "quick-start-default-worker-bootstraptemplate", BOOT_V1B1),
                    "infrastructure": ref("DockerMachineTemplate",
                                          "quick-start-default-worker-machinetemplate"),
                    "metadata": {"labels": {"node-role.kubernetes.io/worker": ""}},
                },
            }]},
        },
        "status": {"conditions": [condition("VariablesReconciled")],
                   "observedGeneration": 1,
                   "variables": [{"definitions": [{"from": "inline", "required": v["required"],
                                                   "schema": v["schema"]}],
                                  "name": v["name"]} for v in variables]},
    }
    return with_managed_fields(cc, "manager")


def topology_kcp():
    """A KubeadmControlPlane as the topology controller creates it."""
    spec = kcp_v1beta2()["spec"]
    return {
        "apiVersion": CP_V1B1,
        "kind": "KubeadmControlPlane",
        "metadata": {
            "annotations": {"cluster.x-k8s.io/cloned-from-groupkind":
                            "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io",
                            "cluster.x-k8s.io/cloned-from-name": "quick-start-control-plane"},
            "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER,
                       "topology.cluster.x-k8s.io/owned": ""},
            "name": f"{CLUSTER}-x7k2p",
            "namespace": NS,
            "ownerReferences": [owner(CORE_V1B1, "Cluster", CLUSTER, controller=False)],
        },
        "spec": {
            "kubeadmConfigSpec": v1beta1_args(spec["kubeadmConfigSpec"]),
            "machineTemplate": {
                "infrastructureRef": {"apiVersion": INFRA_V1B1, "kind": "DockerMachineTemplate",
                                      "name": f"{CLUSTER}-control-plane-9kq2d", "namespace": NS},
                "metadata": {"labels": {"cluster.x-k8s.io/cluster-name": CLUSTER,
                                        "topology.cluster.x-k8s.io/owned": ""}},
                "nodeDrainTimeout": "5m0s",
            },
            "replicas": 3,
            "rolloutStrategy": {"rollingUpdate": {"maxSurge": 1}, "type": "RollingUpdate"},
            "version": K8S_VERSION,
        },
    }


# machine-node-sync's settings: additional node-sync regexes (2 labels, 1 annotation)
NODE_SYNC_SETTINGS = {"capi": {
    "additionalSyncMachineLabels": [r"^topology\.kubernetes\.io/", r"^platform\.example\.com/"],
    "additionalSyncMachineAnnotations": [r"^platform\.example\.com/maintenance-"]}}


def node_sync_machine_set():
    ms = machine_set()
    labels = {
        "cluster.x-k8s.io/cluster-name": CLUSTER,
        "cluster.x-k8s.io/deployment-name": MD_NAME,
        "machine-template-hash": MS_HASH,
        "env": "prod",
        "team": "payments",
        "node-role.kubernetes.io/worker": "",
        "node-role.kubernetes.io/ingress": "",
        "node-restriction.kubernetes.io/dedicated": "payments",
        "gpu.node-restriction.kubernetes.io/model": "none",
        "node.cluster.x-k8s.io/pool": "general",
        "topology.kubernetes.io/zone": "eu-central-1a",
        "topology.kubernetes.io/region": "eu-central-1",
        "node.kubernetes.io/exclude-from-external-load-balancers": "",
        "kubernetes.io/os": "linux",
        "platform.example.com/rack": "r12",
        "platform.example.com/power-domain": "pd-3",
    }
    ms["spec"]["template"]["metadata"] = {
        "labels": labels,
        "annotations": {
            "platform.example.com/cost-center": "cc-4711",
            "platform.example.com/maintenance-window": "sun-02:00",
            "node.cluster.x-k8s.io/drain-priority": "low",
            "cluster-autoscaler.kubernetes.io/scale-down-disabled": "false",
        },
    }
    return ms


def node_sync_machine():
    name = f"{MS_NAME}-h6z4k"
    m = {
        "apiVersion": CORE_V1B1,
        "kind": "Machine",
        "metadata": {
            "annotations": {"platform.example.com/cost-center": "cc-4711"},
            **server_meta(name, generation=3, rv="190512"),
            "finalizers": ["machine.cluster.x-k8s.io"],
            "labels": {
                "cluster.x-k8s.io/cluster-name": CLUSTER,
                "cluster.x-k8s.io/deployment-name": MD_NAME,
                "cluster.x-k8s.io/set-name": MS_NAME,
                "machine-template-hash": MS_HASH,
                "env": "prod",
                "team": "payments",
                "node-role.kubernetes.io/worker": "",
            },
            "name": name,
            "namespace": NS,
            "ownerReferences": [owner(CORE_V1B1, "MachineSet", MS_NAME)],
        },
        "spec": {
            "bootstrap": {"configRef": {"apiVersion": BOOT_V1B1, "kind": "KubeadmConfig",
                                        "name": name, "namespace": NS},
                          "dataSecretName": name},
            "clusterName": CLUSTER,
            "failureDomain": "fd-1",
            "infrastructureRef": {"apiVersion": INFRA_V1B1, "kind": "DockerMachine",
                                  "name": name, "namespace": NS},
            "nodeDeletionTimeout": "10s",
            "nodeDrainTimeout": "5m0s",
            "providerID": f"docker:////{name}",
            "version": K8S_VERSION,
        },
        "status": {
            "addresses": [{"address": name, "type": "Hostname"},
                          {"address": "172.18.0.7", "type": "InternalIP"},
                          {"address": "172.18.0.7", "type": "ExternalIP"}],
            "bootstrapReady": True,
            "conditions": [condition("Ready"), condition("BootstrapReady"),
                           condition("InfrastructureReady"), condition("NodeHealthy")],
            "infrastructureReady": True,
            "lastUpdated": "2025-03-11T09:18:12Z",
            "nodeInfo": {"architecture": "amd64", "bootID": uid(name + "/boot"),
                         "containerRuntimeVersion": "containerd://1.7.18",
                         "kernelVersion": "6.8.0-45-generic", "kubeProxyVersion": K8S_VERSION,
                         "kubeletVersion": K8S_VERSION, "machineID": "8c1d3e5f7a9b",
                         "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)",
                         "systemUUID": uid(name + "/system")},
            "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": name,
                        "uid": uid(name + "/node")},
            "observedGeneration": 3,
            "phase": "Running",
        },
    }
    return with_managed_fields(m, "manager")


def unhandled_cluster():
    return topology_cluster()


# --------------------------------------------------------------------------
# Crossplane XNetwork (v1 legacy, cluster-scoped, claim-backed) on aws
# --------------------------------------------------------------------------
XR_GROUP = "platform.example.org"
XR_VERSION = "v1alpha1"


def xnetwork(labels, annotations=None, name="payments-network-7xk2p", claim="payments-network"):
    meta = {
        "name": name,
        "generateName": claim + "-",
        "labels": {
            "crossplane.io/claim-name": claim,
            "crossplane.io/claim-namespace": "team-payments",
            "crossplane.io/composite": name,
            **labels,
        },
        "finalizers": ["composite.apiextensions.crossplane.io"],
    }
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": f"{XR_GROUP}/{XR_VERSION}",
        "kind": "XNetwork",
        "metadata": meta,
        "spec": {
            "parameters": {
                "provider": "aws",
                "region": "eu-central-1",
                "cidrBlock": "10.20.0.0/16",
                "subnets": [
                    {"zone": "eu-central-1a", "cidrBlock": "10.20.0.0/20"},
                    {"zone": "eu-central-1b", "cidrBlock": "10.20.16.0/20"},
                    {"zone": "eu-central-1c", "cidrBlock": "10.20.32.0/20"},
                ],
            },
            "compositionRef": {"name": "xnetwork-aws"},
            "compositionRevisionRef": {"name": "xnetwork-aws-8d3f1a2"},
            # The XR CRD's default, on a cluster-scoped object: what tells the
            # policy a v1 composite resource, so the scenarios time tagging
            # rather than the early exit for other kinds.
            "compositionUpdatePolicy": "Automatic",
            "claimRef": {"apiVersion": f"{XR_GROUP}/{XR_VERSION}", "kind": "Network",
                         "name": claim, "namespace": "team-payments"},
            "resourceRefs": [],
            "writeConnectionSecretToRef": {"name": name + "-connection",
                                           "namespace": "crossplane-system"},
        },
    }


TAG_VALUES = ["prod", "payments", "eu-central-1", "cc-4711", "team-payments", "gold",
              "pci-dss", "2025-q1", "checkout", "on-call-a"]


def opted_in_labels(n):
    """n label keys such as `platform.example.org/cost-center-007`, with
    short realistic values; all valid aws tag keys and values."""
    return {f"platform.example.org/attr-{i:03d}": TAG_VALUES[i % len(TAG_VALUES)]
            for i in range(n)}


def xr_labels(n):
    labels = opted_in_labels(n)
    obj = xnetwork(labels)
    settings = {"cloudTags": {"propagatingLabels": sorted(labels)}}
    return obj, settings


def xr_annotation_10k():
    entries = {f"acme:k{i:04d}/x": f"v{i:04d}" for i in range(10_000)}
    annotation = json.dumps(entries, separators=(",", ":"))
    assert len(annotation) < 256 * 1024, "the API server caps all annotations at 256 KiB"
    obj = xnetwork({"platform/env": "prod", "platform/team": "payments"},
                   {"cloud-tags.plexsphere.io/labels": annotation})
    # 48 annotation entries + 2 labels: aws's cap of 50 exactly, nothing skipped
    opted = [f"acme:k{i:04d}/x" for i in range(0, 9_600, 200)]
    settings = {"cloudTags": {"propagatingLabels": ["platform/env", "platform/team"] + opted}}
    return obj, settings


# --------------------------------------------------------------------------
# Scaling: one dimension of a request grown to n entries
# --------------------------------------------------------------------------
# The CRDs cap some of these lists (readinessGates 32, taints 64, a
# topology's machineDeployments 2,000); the scaling objects exceed the caps
# on purpose: the policy must not rely on them (a cap is the API server's
# to enforce, and a CRD can raise it), so its cost per entry has to stay
# flat past them. test_data/schema_exceptions.tsv records the two that are
# committed as bench scenarios.

def gate(i):
    return {"conditionType": f"example.com/Gate{i:05d}"}


def taint(i):
    return {"effect": "NoSchedule", "key": f"platform.example.com/taint-{i:05d}",
            "propagation": "Always"}


def topology_cluster_with(**control_plane):
    """topology_cluster() whose spec.topology.controlPlane also sets these fields."""
    cluster = topology_cluster()
    cluster["spec"]["topology"]["controlPlane"].update(control_plane)
    return with_managed_fields(cluster, "capi-topology")


def scaling_parent_gates(n):
    """A topology KubeadmControlPlane CREATE whose Cluster lists n readiness
    gates (spec.topology.controlPlane): n entries added to the child."""
    request = admission_request(topology_kcp(), "CREATE", TOPOLOGY_SA)
    return request, {}, [topology_cluster_with(readinessGates=[gate(i) for i in range(n)]),
                         quick_start_class()]


def scaling_child_gates(n):
    """A topology KubeadmControlPlane CREATE holding n readiness gates
    (spec.machineTemplate.readinessGates) of its own; the Cluster sets two:
    the child's last gate (unchanged) and one it lacks (added)."""
    kcp = topology_kcp()
    kcp["spec"]["machineTemplate"]["readinessGates"] = [gate(i) for i in range(n)]
    request = admission_request(kcp, "CREATE", TOPOLOGY_SA)
    return request, {}, [topology_cluster_with(readinessGates=[gate(n - 1), gate(n)]),
                         quick_start_class()]


def scaling_both_gates(n):
    """Both lists long: the Cluster lists n gates, the child holds the same
    n in reverse order, every other one with the other polarity (n / 2
    corrections, each found far from where the parent lists it)."""
    kcp = topology_kcp()
    kcp["spec"]["machineTemplate"]["readinessGates"] = [
        dict(gate(i), polarity="Negative" if i % 2 else "Positive") for i in reversed(range(n))]
    request = admission_request(kcp, "UPDATE", TOPOLOGY_SA, old=kcp)
    gates = [dict(gate(i), polarity="Positive") for i in range(n)]
    return request, {}, [topology_cluster_with(readinessGates=gates), quick_start_class()]


def scaling_parent_taints(n):
    """scaling_parent_gates with n taints (a list keyed by key and effect)."""
    request = admission_request(topology_kcp(), "CREATE", TOPOLOGY_SA)
    return request, {}, [topology_cluster_with(taints=[taint(i) for i in range(n)]),
                         quick_start_class()]


def scaling_gates_validate(n):
    """scaling_parent_gates in validate mode: n deviations reported."""
    request, _, parents = scaling_parent_gates(n)
    return request, {"mode": "validate"}, parents


def numbered(prefix, n):
    return {f"{prefix}{i:05d}": TAG_VALUES[i % len(TAG_VALUES)] for i in range(n)}


def scaling_labels(n):
    """md-ms whose MachineDeployment has n more template labels; the
    MachineSet holds them all, every other one with another value (n / 2
    corrections in each of its two label maps)."""
    md = machine_deployment()
    labels = numbered("platform.example.com/l-", n)
    md["spec"]["template"]["metadata"]["labels"].update(labels)
    ms = machine_set()
    held = {k: (v if i % 2 else "old") for i, (k, v) in enumerate(labels.items())}
    ms["metadata"]["labels"].update(held)
    ms["spec"]["template"]["metadata"]["labels"].update(held)
    return admission_request(ms, "UPDATE", CAPI_SA, old=ms), {}, [md]


def scaling_annotations(n):
    """md-ms whose MachineDeployment has n more annotations, none of which
    the MachineSet holds (n added)."""
    md = machine_deployment()
    md["metadata"]["annotations"].update(numbered("platform.example.com/a-", n))
    ms = machine_set()
    return admission_request(ms, "UPDATE", CAPI_SA, old=ms), {}, [md]


def scaling_owner_references(n):
    """md-ms whose MachineSet lists n ownerReferences that are not its
    controller before the MachineDeployment that is."""
    ms = machine_set()
    others = [owner("example.com/v1", "Widget", f"widget-{i:05d}", controller=False)
              for i in range(n)]
    ms["metadata"]["ownerReferences"] = others + ms["metadata"]["ownerReferences"]
    return admission_request(ms, "UPDATE", CAPI_SA, old=ms), {}, [machine_deployment()]


def scaling_topology_machine_deployments(n):
    """A topology-owned MachineDeployment UPDATE whose Cluster lists n
    machineDeployments; the child is the last of them."""
    entry = f"md-{n - 1}"
    cluster = topology_cluster()
    cluster["spec"]["topology"]["workers"]["machineDeployments"] = [
        {"class": "default-worker", "name": f"md-{i}", "replicas": 3,
         "metadata": {"labels": {"pool": f"md-{i}"}}} for i in range(n)]
    md = machine_deployment()
    name = f"{CLUSTER}-{entry}-t5w9z"
    own = {"cluster.x-k8s.io/cluster-name": CLUSTER, "topology.cluster.x-k8s.io/owned": "",
           "topology.cluster.x-k8s.io/deployment-name": entry}
    md["metadata"].update(name=name, labels=dict(own))
    md["metadata"]["ownerReferences"] = [owner(CORE_V1B1, "Cluster", CLUSTER, controller=False)]
    request = admission_request(md, "UPDATE", TOPOLOGY_SA, old=md)
    return request, {}, [cluster, quick_start_class()]


def scaling_node_sync(n):
    """machine-node-sync whose MachineSet has n more template labels that the
    Machine lacks and the settings sync to its Node (n added, n synced)."""
    ms = node_sync_machine_set()
    ms["spec"]["template"]["metadata"]["labels"].update(numbered("platform.example.com/n-", n))
    machine = node_sync_machine()
    return admission_request(machine, "UPDATE", CAPI_SA, old=machine), NODE_SYNC_SETTINGS, [ms]


def scaling_label_set_annotation(n):
    """xr-annotation-10k with n entries in the label-set annotation."""
    entries = {f"acme:k{i:05d}/x": f"v{i:05d}" for i in range(n)}
    obj = xnetwork({"platform/env": "prod"},
                   {"cloud-tags.plexsphere.io/labels": json.dumps(entries, separators=(",", ":"))})
    opted = ["platform/env"] + [f"acme:k{i:05d}/x" for i in range(0, n, max(1, n // 48))][:48]
    settings = {"cloudTags": {"propagatingLabels": opted}}
    return admission_request(obj, "CREATE", CROSSPLANE_SA), settings, []


def scaling_tag_labels(n):
    """xr-aws-500 with n opted-in labels: 50 tags (aws's cap), n - 50
    count-cap skips, each a warning and a record."""
    obj, settings = xr_labels(n)
    return admission_request(obj, "CREATE", CROSSPLANE_SA), settings, []


SCALING = {
    "parent-gates": scaling_parent_gates,
    "child-gates": scaling_child_gates,
    "both-gates": scaling_both_gates,
    "parent-taints": scaling_parent_taints,
    "gates-validate": scaling_gates_validate,
    "labels": scaling_labels,
    "annotations": scaling_annotations,
    "owner-references": scaling_owner_references,
    "topology-machine-deployments": scaling_topology_machine_deployments,
    "node-sync": scaling_node_sync,
    "label-set-annotation": scaling_label_set_annotation,
    "tag-labels": scaling_tag_labels,
}


# --------------------------------------------------------------------------
# Cloud tags on CAPI infrastructure: an AWSCluster under a topology Cluster
# --------------------------------------------------------------------------
INFRA_V1B2 = "infrastructure.cluster.x-k8s.io/v1beta2"
AWS_CLUSTER = "payments-aws"
# 20 labels a platform team puts on its Clusters for cost allocation and
# ownership; every one is opted in and a valid aws tag key and value.
INFRA_CLUSTER_LABELS = {
    "team": "payments",
    "cost-center": "cc-4711",
    "environment": "prod",
    "business-unit": "retail",
    "owner": "payments-platform",
    "application": "checkout",
    "service-tier": "gold",
    "data-classification": "confidential",
    "compliance": "pci-dss",
    "region-group": "emea",
    "budget-code": "fy25-pay-017",
    "on-call": "payments-oncall-a",
    "project": "checkout-v3",
    "lifecycle": "long-lived",
    "backup-policy": "daily-35d",
    "support-level": "24x7",
    "acme.io/department": "finance-technology",
    "acme.io/product-line": "payments-core",
    "acme.io/cost-allocation": "shared-eu",
    "acme.io/created-by": "platform-gitops",
}


MR_XR_NAME = "payments-network-7xk2p"


def mr_xnetwork():
    """The XR that composed the VPC, as the API server stores it, with 10
    opted-in labels."""
    obj = xnetwork(opted_in_labels(10), name=MR_XR_NAME)
    obj["metadata"].update(server_meta(MR_XR_NAME, generation=2, rv="201377"))
    obj["spec"]["resourceRefs"] = [{"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "VPC",
                                    "name": MR_XR_NAME + "-vpc"}]
    obj["status"] = {"conditions": [condition("Ready", reason="Available"),
                                    condition("Synced", reason="ReconcileSuccess")]}
    return with_managed_fields(obj, "apiextensions.crossplane.io/composite")


def mr_vpc():
    """An upjet AWS VPC as its provider updates it after the first
    reconcile: Crossplane's composition metadata, the provider's three
    default tags beside the Composition's own, the external-name annotation
    and late-initialised fields."""
    name = MR_XR_NAME + "-vpc"
    obj = {
        "apiVersion": "ec2.aws.upbound.io/v1beta1",
        "kind": "VPC",
        "metadata": {
            **server_meta(name, generation=3, rv="201412"),
            "name": name,
            "generateName": MR_XR_NAME + "-",
            "labels": {"crossplane.io/claim-name": "payments-network",
                       "crossplane.io/claim-namespace": "team-payments",
                       "crossplane.io/composite": MR_XR_NAME},
            "annotations": {"crossplane.io/composition-resource-name": "vpc",
                            "crossplane.io/external-name": "vpc-0a1b2c3d4e5f67890",
                            "crossplane.io/external-create-pending": "2025-03-11T09:12:05Z",
                            "crossplane.io/external-create-succeeded": "2025-03-11T09:12:09Z"},
            "finalizers": ["finalizer.managedresource.crossplane.io"],
            "ownerReferences": [owner(f"{XR_GROUP}/{XR_VERSION}", "XNetwork", MR_XR_NAME)],
        },
        "spec": {
            "deletionPolicy": "Delete",
            "managementPolicies": ["*"],
            "providerConfigRef": {"name": "default"},
            "forProvider": {
                "region": "eu-central-1",
                "cidrBlock": "10.20.0.0/16",
                "enableDnsHostnames": True,
                "enableDnsSupport": True,
                "instanceTenancy": "default",
                "tags": {"Name": "payments-network",
                         "crossplane-kind": "vpc.ec2.aws.upbound.io",
                         "crossplane-name": name,
                         "crossplane-providerconfig": "default"},
            },
            "initProvider": {},
        },
        "status": {"atProvider": {"id": "vpc-0a1b2c3d4e5f67890", "cidrBlock": "10.20.0.0/16",
                                  "arn": "arn:aws:ec2:eu-central-1:123456789012:vpc/vpc-0a1b2c3d4e5f67890"},
                   "conditions": [condition("Ready", reason="Available"),
                                  condition("Synced", reason="ReconcileSuccess")]},
    }
    return with_managed_fields(obj, "provider-aws-ec2")


def mr_settings():
    return {"cloudTags": {"propagatingLabels": sorted(opted_in_labels(10)),
                          "managedResources": {"families": ["aws"]}}}


MR_METADATA = f"""# written by gen.py: what mr-aws-vpc's ClusterAdmissionPolicy grants its
# look-ups (its spec.contextAwareResources), read by `policy-runner -m`
rules:
  - apiGroups: ["ec2.aws.upbound.io"]
    apiVersions: ["v1beta1"]
    resources: ["vpcs"]
    operations: ["CREATE", "UPDATE"]
mutating: true
contextAware: true
contextAwareResources:
  - apiVersion: {XR_GROUP}/{XR_VERSION}
    kind: XNetwork
"""


def infra_topology_cluster():
    """A v1beta2 Cluster under a ClusterClass, as CAPI v1.11 stores it."""
    labels = {"cluster.x-k8s.io/cluster-name": AWS_CLUSTER,
              "topology.cluster.x-k8s.io/owned": "", **INFRA_CLUSTER_LABELS}
    cluster = {
        "apiVersion": CORE_V1B2,
        "kind": "Cluster",
        "metadata": {
            **server_meta(AWS_CLUSTER, generation=3, rv="193344"),
            "finalizers": ["cluster.cluster.x-k8s.io"],
            "labels": labels,
            "name": AWS_CLUSTER,
            "namespace": NS,
        },
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]},
                               "services": {"cidrBlocks": ["10.128.0.0/12"]}},
            "controlPlaneEndpoint": {
                "host": "payments-aws-apiserver-4c1f.elb.eu-central-1.amazonaws.com", "port": 6443},
            "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io",
                                "kind": "KubeadmControlPlane", "name": f"{AWS_CLUSTER}-m4q8d"},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                  "kind": "AWSCluster", "name": f"{AWS_CLUSTER}-x2k9f"},
            "topology": {
                "classRef": {"name": "aws-default"},
                "version": K8S_VERSION,
                "controlPlane": {"replicas": 3},
                "variables": [
                    {"name": "region", "value": "eu-central-1"},
                    {"name": "sshKeyName", "value": "platform-admin"},
                    {"name": "controlPlaneMachineType", "value": "m6i.xlarge"},
                    {"name": "workerMachineType", "value": "m6i.2xlarge"},
                ],
                "workers": {"machineDeployments": [
                    {"class": "default-worker", "name": f"md-{i}", "replicas": 3,
                     "failureDomain": f"eu-central-1{'abc'[i]}"}
                    for i in range(3)
                ]},
            },
        },
        "status": {
            "conditions": [v1beta2_condition("Available", "Available"),
                           v1beta2_condition("InfrastructureReady", "Ready"),
                           v1beta2_condition("ControlPlaneAvailable", "Available"),
                           v1beta2_condition("TopologyReconciled", "ReconcileSucceeded")],
            "initialization": {"infrastructureProvisioned": True, "controlPlaneInitialized": True},
            "observedGeneration": 3,
            "phase": "Provisioned",
        },
    }
    return with_managed_fields(cluster, "capi-topology")


def infra_aws_cluster():
    """The AWSCluster the topology controller creates for the Cluster: the
    cluster-name label (no ownerReference yet), the ClusterClass template's
    spec with two tags of its own, and the managedFields of its apply."""
    obj = {
        "apiVersion": INFRA_V1B2,
        "kind": "AWSCluster",
        "metadata": {
            "annotations": {"cluster.x-k8s.io/cloned-from-groupkind":
                            "AWSClusterTemplate.infrastructure.cluster.x-k8s.io",
                            "cluster.x-k8s.io/cloned-from-name": "aws-default-cluster"},
            "labels": {"cluster.x-k8s.io/cluster-name": AWS_CLUSTER,
                       "topology.cluster.x-k8s.io/owned": ""},
            "name": f"{AWS_CLUSTER}-x2k9f",
            "namespace": NS,
        },
        "spec": {
            "region": "eu-central-1",
            "sshKeyName": "platform-admin",
            "additionalTags": {"owner-email": "payments-sre@acme.example",
                               "managed-by": "cluster-api"},
            "controlPlaneLoadBalancer": {"loadBalancerType": "nlb", "scheme": "internet-facing"},
            "network": {"vpc": {"availabilityZoneUsageLimit": 3,
                                "availabilityZoneSelection": "Ordered"}},
        },
    }
    obj = with_managed_fields(obj, "capi-topology")
    obj["metadata"]["managedFields"][0]["operation"] = "Apply"
    return obj


def infra_settings():
    return {"cloudTags": {"capiInfrastructure": True,
                          "propagatingLabels": sorted(INFRA_CLUSTER_LABELS)}}


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------
def parents_yaml(objects):
    """The parent objects as `kubectl get -o yaml` prints each one (keys
    sorted, block style), one YAML document per object."""
    return "# written by gen.py: the parents the scenario's look-ups find\n" + "---\n".join(
        yaml.safe_dump(obj, sort_keys=True, default_flow_style=False, allow_unicode=True,
                       width=1 << 16)
        for obj in objects)


def write(name, text, directory=HERE):
    with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
        f.write(text)


def write_json(name, value, directory=HERE):
    write(name, json.dumps(value, indent=2, ensure_ascii=False) + "\n", directory)


def scenario_writer(rows, directory=HERE, shown=ROOT):
    """A function writing one scenario's files into `directory` and its row
    (paths as `shown`, relative to the repository root) into `rows`."""
    def scenario(name, request, settings, parents, compact=False):
        if compact:
            write(f"{name}.request.json", json.dumps(request, separators=(",", ":")) + "\n",
                  directory)
        else:
            write_json(f"{name}.request.json", request, directory)
        write_json(f"{name}.settings.json", settings, directory)
        parents_file = "-"
        if parents:
            write(f"{name}.parents.yaml", parents_yaml(parents), directory)
            parents_file = f"{shown}/{name}.parents.yaml"
        rows.append((name, f"{shown}/{name}.request.json", f"{shown}/{name}.settings.json",
                     parents_file))
    return scenario


def write_scenarios(rows, directory=HERE):
    write("scenarios.tsv",
          "# name\trequest\tsettings\tparents (or -); written by gen.py\n"
          + "".join("\t".join(row) + "\n" for row in rows), directory)


def scaling(directory, sizes):
    """`gen.py --scaling DIR N...`: every SCALING dimension at each size,
    written to DIR (relative to the repository root) with its own
    scenarios.tsv, for BENCHMARKS.md's cost per entry. Not committed."""
    os.makedirs(directory, exist_ok=True)
    rows = []
    scenario = scenario_writer(rows, directory, directory.rstrip("/"))
    for dimension, build in SCALING.items():
        for n in sizes:
            scenario(f"{dimension}-{n}", *build(n))
    write_scenarios(rows, directory)


def main():
    rows = []
    scenario = scenario_writer(rows)

    def variant(name, base, settings):
        """`base`'s request and parents (the same files) with other settings."""
        _, request, _, parents_file = next(row for row in rows if row[0] == base)
        write_json(f"{name}.settings.json", settings)
        rows.append((name, request, f"{ROOT}/{name}.settings.json", parents_file))

    ms = machine_set()
    scenario("md-ms", admission_request(ms, "UPDATE", CAPI_SA, old=ms), {},
             [machine_deployment()])
    # the same MachineSet (the MD's older template spec) under the changed MD
    scenario("md-ms-fields", admission_request(ms, "UPDATE", CAPI_SA, old=ms), {},
             [machine_deployment_fields()])
    scenario("kcp-machine", admission_request(control_plane_machine(), "CREATE", CAPI_SA), {},
             [kcp_v1beta2()])
    scenario("topology-kcp", admission_request(topology_kcp(), "CREATE", TOPOLOGY_SA), {},
             [topology_cluster(), quick_start_class()])
    machine = node_sync_machine()
    scenario("machine-node-sync", admission_request(machine, "UPDATE", CAPI_SA, old=machine),
             NODE_SYNC_SETTINGS, [node_sync_machine_set()])
    for n in (5, 50, 500):
        obj, settings = xr_labels(n)
        scenario(f"xr-aws-{n}", admission_request(obj, "CREATE", CROSSPLANE_SA), settings, [])
    obj, settings = xr_annotation_10k()
    scenario("xr-annotation-10k", admission_request(obj, "CREATE", CROSSPLANE_SA), settings, [])
    vpc = mr_vpc()
    scenario("mr-aws-vpc", admission_request(vpc, "UPDATE", PROVIDER_SA, old=vpc),
             mr_settings(), [mr_xnetwork()])
    write("mr-aws-vpc.metadata.yml", MR_METADATA)
    cluster = unhandled_cluster()
    scenario("unhandled-cluster", admission_request(cluster, "UPDATE", TOPOLOGY_SA, old=cluster),
             {}, [])
    # Past the CRDs' cap of 32 gates on purpose (SCALING, above); the child's
    # 10,000 gates are written compact (420 KB instead of 780).
    scenario("topology-kcp-10k-parent-gates", *scaling_parent_gates(10_000))
    scenario("topology-kcp-10k-child-gates", *scaling_child_gates(10_000), compact=True)
    scenario("infra-awscluster-class",
             admission_request(infra_aws_cluster(), "CREATE", TOPOLOGY_SA),
             infra_settings(), [infra_topology_cluster()])
    variant("md-ms-validate", "md-ms", {"mode": "validate"})
    variant("kcp-machine-regexes", "kcp-machine", NODE_SYNC_SETTINGS)

    write_scenarios(rows)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--scaling"] and len(sys.argv) > 3:
        scaling(sys.argv[2], [int(n) for n in sys.argv[3:]])
    else:
        main()
