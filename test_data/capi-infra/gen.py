#!/usr/bin/env python3
"""Writes the requests and parents of test_data/capi-infra (README.md beside
this file): the CAPI infrastructure objects whose labels become cloud tags,
shaped as the providers' CRDs (crds/) accept them and as CAPI and the
providers create them. The cases in cases/ are written by hand; this script
never computes an expectation.

    python3 test_data/capi-infra/gen.py

Run it after editing it; `make check-schemas` validates what it writes.
"""
import copy
import json
import os
import uuid

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "default"
INFRA = "infrastructure.cluster.x-k8s.io"
CP = "controlplane.cluster.x-k8s.io"
LABELS_ANNOTATION = "cloud-tags.plexsphere.io/labels"
CAPI_USER = {
    "username": "system:serviceaccount:capi-system:capi-manager",
    "uid": "6c4f5e0d-8a2b-4e11-9d3f-2b1c0a9e8d71",
    "groups": ["system:serviceaccounts", "system:serviceaccounts:capi-system", "system:authenticated"],
}


def uid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"capi-infra/{name}"))


def owner(api_version, kind, name, controller=None):
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(f"{kind}/{name}")}
    if controller is not None:
        ref["controller"] = controller
        ref["blockOwnerDeletion"] = True
    return ref


def cluster_owner(name, controller=True):
    return owner("cluster.x-k8s.io/v1beta2", "Cluster", name, controller)


def request(kind, version, plural, obj, operation="CREATE", old=None, group=INFRA):
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": plural}
    req = {
        "uid": uid(f"request/{obj['metadata']['name']}/{operation}"),
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": obj["metadata"]["name"],
        "namespace": NS,
        "operation": operation,
        "userInfo": CAPI_USER,
        "object": obj,
    }
    if old is not None:
        req["oldObject"] = old
    req["dryRun"] = False
    kind_name = "CreateOptions" if operation == "CREATE" else "UpdateOptions"
    req["options"] = {"kind": kind_name, "apiVersion": "meta.k8s.io/v1", "fieldManager": "manager"}
    return req


def meta(name, labels=None, annotations=None, owners=None, server_set=False):
    m = {"name": name, "namespace": NS}
    if server_set:
        m.update({"uid": uid(name), "resourceVersion": "61220", "generation": 1,
                  "creationTimestamp": "2026-03-02T10:15:00Z"})
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    if owners:
        m["ownerReferences"] = owners
    return m


def topology_labels(cluster):
    return {"cluster.x-k8s.io/cluster-name": cluster, "topology.cluster.x-k8s.io/owned": ""}


def machine_labels(cluster, md, ms, hash_):
    return {
        "cluster.x-k8s.io/cluster-name": cluster,
        "cluster.x-k8s.io/deployment-name": md,
        "cluster.x-k8s.io/set-name": ms,
        "machine-template-hash": hash_,
    }


def cloned(template_kind, template):
    return {"cluster.x-k8s.io/cloned-from-groupkind": f"{template_kind}.{INFRA}",
            "cluster.x-k8s.io/cloned-from-name": template}


# ---------------------------------------------------------------------------
# parents: the Clusters (v1beta2) and the MachineSets the machines are cloned by
# ---------------------------------------------------------------------------

def cluster(name, labels, infra_kind, annotations=None, comment=""):
    obj = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {**meta(name, labels, annotations, server_set=True),
                     "finalizers": ["cluster.cluster.x-k8s.io"]},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
            "controlPlaneRef": {"apiGroup": CP, "kind": "KubeadmControlPlane", "name": f"{name}-cp"},
            "infrastructureRef": {"apiGroup": INFRA, "kind": infra_kind, "name": f"{name}-x2k9f"},
            "topology": {"classRef": {"name": f"{name.split('-')[0]}-default"}, "version": "v1.33.1",
                         "controlPlane": {"replicas": 3},
                         "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0"}]}},
        },
    }
    return comment, obj


def eks_cluster(name, labels, comment, refs=None, topology=None):
    """An EKS Cluster; `refs` names its control plane and AWSManagedCluster, `topology` its ClusterClass
    topology (none: made without a ClusterClass)."""
    cp_name, infra_name = refs or (f"{name}-control-plane", name)
    obj = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {**meta(name, labels, None, server_set=True),
                     "finalizers": ["cluster.cluster.x-k8s.io"]},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
            "controlPlaneRef": {"apiGroup": CP, "kind": "AWSManagedControlPlane", "name": cp_name},
            "infrastructureRef": {"apiGroup": INFRA, "kind": "AWSManagedCluster", "name": infra_name},
        },
    }
    if topology:
        obj["spec"]["topology"] = topology
    return comment, obj


def eks_class(name, cp_labels, comment):
    obj = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "ClusterClass",
        "metadata": meta(name, None, None, server_set=True),
        "spec": {
            "controlPlane": {
                "metadata": {"labels": cp_labels},
                "templateRef": {"apiVersion": f"{CP}/v1beta2", "kind": "AWSManagedControlPlaneTemplate",
                                "name": f"{name}-control-plane"},
            },
            "infrastructure": {
                "templateRef": {"apiVersion": f"{INFRA}/v1beta2", "kind": "AWSManagedClusterTemplate",
                                "name": f"{name}-cluster"},
            },
        },
    }
    return comment, obj


def machine_set(name, cluster_name, md, hash_, template_labels, infra_kind, template):
    labels = {"cluster.x-k8s.io/cluster-name": cluster_name, "cluster.x-k8s.io/deployment-name": md,
              "machine-template-hash": hash_, **template_labels}
    template_meta = {"cluster.x-k8s.io/cluster-name": cluster_name, "cluster.x-k8s.io/deployment-name": md,
                     "machine-template-hash": hash_, **template_labels}
    obj = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineSet",
        "metadata": meta(name, labels, {"machinedeployment.clusters.x-k8s.io/revision": "1"},
                         [owner("cluster.x-k8s.io/v1beta2", "MachineDeployment", md, True)], server_set=True),
        "spec": {
            "clusterName": cluster_name,
            "replicas": 3,
            "selector": {"matchLabels": {"cluster.x-k8s.io/cluster-name": cluster_name,
                                         "cluster.x-k8s.io/deployment-name": md,
                                         "machine-template-hash": hash_}},
            "template": {
                "metadata": {"labels": template_meta},
                "spec": {
                    "clusterName": cluster_name,
                    "version": "v1.33.1",
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io",
                                                "kind": "KubeadmConfigTemplate", "name": md}},
                    "infrastructureRef": {"apiGroup": INFRA, "kind": infra_kind, "name": template},
                },
            },
        },
    }
    return obj


PARENTS = {
    "cluster_aws-prod.yaml": cluster(
        "aws-prod",
        {"environment": "prod", "cost-center": "cc-4711", "acme.io/team": "payments"},
        "AWSCluster",
        {LABELS_ANNOTATION: json.dumps({"acme:billing/owner": "Zürich AG"}, ensure_ascii=False)},
        "# Cluster aws-prod: opted-in labels environment, cost-center, acme.io/team, and in the label-set\n"
        "# annotation acme:billing/owner, whose value is not ASCII (CAPA's webhook refuses it).\n"),
    "cluster_azure-dev.yaml": cluster(
        "azure-dev", {"environment": "dev", "cost-center": "cc-0815", "acme.io/team": "platform"},
        "AzureCluster", None,
        "# Cluster azure-dev: acme.io/team gives a tag key with '/', which Azure refuses.\n"),
    "cluster_gcp-prod.yaml": cluster(
        "gcp-prod", {"environment": "prod", "cost-center": "cc-4711"}, "GCPCluster", None,
        "# Cluster gcp-prod: its labels become GCP labels under capg's own prefix, plexsphere-.\n"),
    "cluster_openstack-lab.yaml": cluster(
        "openstack-lab", {"environment": "lab", "cost-center": "cc-0042", "acme.io/team": "research"},
        "OpenStackCluster", None,
        "# Cluster openstack-lab: its machines take its labels directly (CAPO has no cluster-level\n"
        "# key/value field); acme.io/team gives a key with '/', which Nova metadata refuses.\n"),
    "cluster_eks-prod.yaml": eks_cluster(
        "eks-prod", {"environment": "prod", "cost-center": "cc-7001", "acme.io/team": "data"},
        "# Cluster eks-prod: an EKS cluster made without a ClusterClass; its AWSManagedControlPlane finds it\n"
        "# by the ownerReference CAPI sets.\n"),
    "cluster_eks-dev.yaml": eks_cluster(
        "eks-dev", {"environment": "dev", "cost-center": "cc-7002"},
        "# Cluster eks-dev: an EKS cluster under the ClusterClass eks-default. Its topology gives the control\n"
        "# plane the label acme.io/team; its own labels give the control plane's tags.\n",
        refs=("eks-dev-2mq8t", "eks-dev-v7c4k"),
        topology={"classRef": {"name": "eks-default"}, "version": "v1.33.0",
                  "controlPlane": {"metadata": {"labels": {"acme.io/team": "data"}}}}),
    "clusterclass_eks-default.yaml": eks_class(
        "eks-default", {"platform.acme.io/class": "eks-default"},
        "# ClusterClass eks-default: EKS control planes, labelled with their class.\n"),
    "machineset_gcp-prod-md-0-5hx7w.yaml": (
        "# MachineSet gcp-prod-md-0-5hx7w: the node pool's template labels, propagated to its GCPMachines.\n",
        machine_set("gcp-prod-md-0-5hx7w", "gcp-prod", "gcp-prod-md-0", "4127730581-5hx7w",
                    {"nodepool": "md-0", "cost-center": "cc-pool-g"}, "GCPMachineTemplate",
                    "gcp-prod-md-0-r8c2n")),
    "machineset_aws-prod-md-0-7xk2p.yaml": (
        "# MachineSet aws-prod-md-0-7xk2p: the node pool carries its own cost centre in its template\n"
        "# labels, which CAPI propagates to the AWSMachines it clones.\n",
        machine_set("aws-prod-md-0-7xk2p", "aws-prod", "aws-prod-md-0", "1734652903-7xk2p",
                    {"nodepool": "md-0", "cost-center": "cc-pool-a"}, "AWSMachineTemplate",
                    "aws-prod-md-0-6c4vd")),
    "machineset_openstack-lab-md-0-q8m4z.yaml": (
        "# MachineSet openstack-lab-md-0-q8m4z: the GPU pool's team label overrides the Cluster's.\n",
        machine_set("openstack-lab-md-0-q8m4z", "openstack-lab", "openstack-lab-md-0", "2290617412-q8m4z",
                    {"nodepool": "md-0", "acme.io/team": "research-gpu"}, "OpenStackMachineTemplate",
                    "openstack-lab-md-0-k7t2m")),
}

# ---------------------------------------------------------------------------
# the requests
# ---------------------------------------------------------------------------

def aws_cluster(name, labels=None, owners=None, tags=None, server_set=False):
    spec = {
        "region": "eu-central-1",
        "sshKeyName": "platform-admin",
        "controlPlaneLoadBalancer": {"loadBalancerType": "nlb", "scheme": "internet-facing"},
        "network": {"vpc": {"availabilityZoneUsageLimit": 3, "availabilityZoneSelection": "Ordered"}},
    }
    if tags is not None:
        spec["additionalTags"] = tags
    return {"apiVersion": f"{INFRA}/v1beta2", "kind": "AWSCluster",
            "metadata": meta(name, labels, None, owners, server_set), "spec": spec}


def aws_machine(name, labels, annotations, owners, tags=None):
    spec = {
        "instanceType": "m6i.xlarge",
        "ami": {"id": "ami-0a1b2c3d4e5f60718"},
        "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io",
        "sshKeyName": "platform-admin",
        "rootVolume": {"size": 80, "type": "gp3"},
    }
    if tags is not None:
        spec["additionalTags"] = tags
    return {"apiVersion": f"{INFRA}/v1beta2", "kind": "AWSMachine",
            "metadata": meta(name, labels, annotations, owners), "spec": spec}


def requests():
    out = {}
    user_tag = {"owner-email": "sre@acme.example"}

    topo = aws_cluster("aws-prod-x2k9f", topology_labels("aws-prod"), tags=dict(user_tag))
    out["awscluster_create_topology"] = request("AWSCluster", "v1beta2", "awsclusters", topo)
    out["awscluster_create_topology_feature_off"] = request("AWSCluster", "v1beta2", "awsclusters",
                                                            copy.deepcopy(topo))

    old_tags = {**user_tag, "plexsphere:environment": "staging", "plexsphere:cost-center": "cc-4711",
                "plexsphere:acme.io/team": "payments", "plexsphere:project": "apollo"}
    labels = {**topology_labels("aws-prod"), "acme.io/team": "payments-edge"}
    old = aws_cluster("aws-prod-x2k9f", labels, [cluster_owner("aws-prod")], old_tags, server_set=True)
    new = copy.deepcopy(old)
    new["spec"]["network"]["vpc"]["availabilityZoneUsageLimit"] = 2
    out["awscluster_update_cluster_label_changed"] = request("AWSCluster", "v1beta2", "awsclusters", new,
                                                             "UPDATE", old)

    out["awscluster_create_handmade"] = request(
        "AWSCluster", "v1beta2", "awsclusters",
        aws_cluster("sandbox-7", {"environment": "sandbox"}))
    out["awscluster_create_cluster_not_found"] = request(
        "AWSCluster", "v1beta2", "awsclusters",
        aws_cluster("aws-gone-p4r8s", {**topology_labels("aws-gone"), "environment": "prod"}))
    out["awscluster_create_lookup_unavailable"] = request(
        "AWSCluster", "v1beta2", "awsclusters", aws_cluster("aws-prod-m3n7c", topology_labels("aws-prod")))
    out["awscluster_create_room_taken"] = request(
        "AWSCluster", "v1beta2", "awsclusters",
        aws_cluster("aws-prod-r5t1w", topology_labels("aws-prod"),
                    tags={"owner-email": "sre@acme.example", "Name": "aws-prod"}))

    ms = "aws-prod-md-0-7xk2p"
    machine = aws_machine(f"{ms}-h2k8d", machine_labels("aws-prod", "aws-prod-md-0", ms, "1734652903-7xk2p"),
                          cloned("AWSMachineTemplate", "aws-prod-md-0-6c4vd"),
                          [owner("cluster.x-k8s.io/v1beta2", "MachineSet", ms)])
    out["awsmachine_create_from_machineset"] = request("AWSMachine", "v1beta2", "awsmachines", machine)

    bad = aws_machine(f"{ms}-b6j3q", machine_labels("aws-prod", "aws-prod-md-0", ms, "1734652903-7xk2p"),
                      cloned("AWSMachineTemplate", "aws-prod-md-0-6c4vd"),
                      [owner("cluster.x-k8s.io/v1beta2", "Machine", f"{ms}-b6j3q", True)])
    bad["spec"]["additionalTags"] = [{"key": "owner-email", "value": "sre@acme.example"}]
    out["awsmachine_update_bad_tags"] = request("AWSMachine", "v1beta2", "awsmachines", bad, "UPDATE",
                                                copy.deepcopy(bad))

    template = {
        "apiVersion": f"{INFRA}/v1beta2", "kind": "AWSMachineTemplate",
        "metadata": meta("aws-prod-md-0-6c4vd",
                         {**topology_labels("aws-prod"), "topology.cluster.x-k8s.io/deployment-name": "md-0",
                          "environment": "prod"},
                         {"topology.cluster.x-k8s.io/template-name": "aws-prod-md-0"},
                         [cluster_owner("aws-prod", False)]),
        "spec": {"template": {"spec": {"instanceType": "m6i.xlarge",
                                       "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io",
                                       "sshKeyName": "platform-admin"}}},
    }
    out["awsmachinetemplate_create_topology"] = request("AWSMachineTemplate", "v1beta2",
                                                        "awsmachinetemplates", template)

    azure = {
        "apiVersion": f"{INFRA}/v1beta1", "kind": "AzureCluster",
        "metadata": meta("azure-dev-x2k9f", topology_labels("azure-dev")),
        "spec": {"location": "westeurope", "resourceGroup": "azure-dev",
                 "subscriptionID": "00000000-1111-2222-3333-444444444444",
                 "identityRef": {"apiVersion": f"{INFRA}/v1beta1", "kind": "AzureClusterIdentity",
                                 "name": "cluster-identity"},
                 "networkSpec": {"vnet": {"name": "azure-dev-vnet"}},
                 "additionalTags": {"CostOwner": "platform-team"}},
    }
    out["azurecluster_create_topology"] = request("AzureCluster", "v1beta1", "azureclusters", azure)

    az_ms = "azure-dev-md-0-n4v8k"
    az_machine = {
        "apiVersion": f"{INFRA}/v1beta1", "kind": "AzureMachine",
        "metadata": meta(f"{az_ms}-w7p2x",
                         {**machine_labels("azure-dev", "azure-dev-md-0", az_ms, "3381049920-n4v8k"),
                          "cost-center": "cc-pool-b"},
                         cloned("AzureMachineTemplate", "azure-dev-md-0-2lq5t"),
                         [owner("cluster.x-k8s.io/v1beta2", "Machine", f"{az_ms}-w7p2x", True)]),
        "spec": {"vmSize": "Standard_D4s_v5",
                 "osDisk": {"osType": "Linux", "diskSizeGB": 128,
                            "managedDisk": {"storageAccountType": "Premium_LRS"}},
                 "sshPublicKey": "",
                 "providerID": f"azure:///subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/"
                               f"azure-dev/providers/Microsoft.Compute/virtualMachines/{az_ms}-w7p2x",
                 "additionalTags": {"plexsphere:cost-center": "cc-pool-old", "backup": "daily"}},
    }
    az_new = copy.deepcopy(az_machine)
    az_old = copy.deepcopy(az_machine)
    az_old["metadata"]["labels"]["cost-center"] = "cc-pool-old"
    out["azuremachine_update_own_label_changed"] = request("AzureMachine", "v1beta1", "azuremachines", az_new,
                                                           "UPDATE", az_old)

    gcp = {
        "apiVersion": f"{INFRA}/v1beta1", "kind": "GCPCluster",
        "metadata": meta("gcp-prod-x2k9f", topology_labels("gcp-prod")),
        "spec": {"project": "acme-prod-42", "region": "europe-west3",
                 "network": {"name": "gcp-prod-net"}},
    }
    out["gcpcluster_create_topology"] = request("GCPCluster", "v1beta1", "gcpclusters", gcp)
    # A qualified label key ('.' and '/'), which no GCP label key admits until
    # cloudTags.tagKeys gives it a body.
    gcp_team = copy.deepcopy(gcp)
    gcp_team["metadata"]["name"] = "gcp-prod-q7n2m"
    gcp_team["metadata"]["labels"]["team.example.com/cost-center"] = "cc-4711-shop"
    out["gcpcluster_create_qualified_label"] = request("GCPCluster", "v1beta1", "gcpclusters", gcp_team)

    os_ms = "openstack-lab-md-0-q8m4z"
    osm = {
        "apiVersion": f"{INFRA}/v1beta1", "kind": "OpenStackMachine",
        "metadata": meta(f"{os_ms}-f5d9c", machine_labels("openstack-lab", "openstack-lab-md-0", os_ms,
                                                          "2290617412-q8m4z"),
                         cloned("OpenStackMachineTemplate", "openstack-lab-md-0-k7t2m"),
                         [owner("cluster.x-k8s.io/v1beta2", "MachineSet", os_ms)]),
        "spec": {"flavor": "g1.xlarge.gpu", "image": {"filter": {"name": "ubuntu-2404-kube-v1.33.1"}},
                 "sshKeyName": "platform-admin",
                 "serverMetadata": [{"key": "role", "value": "gpu-worker"}]},
    }
    out["openstackmachine_create_from_machineset"] = request("OpenStackMachine", "v1beta1",
                                                             "openstackmachines", osm)

    os_new = copy.deepcopy(osm)
    os_new["metadata"]["name"] = f"{os_ms}-z1t6b"
    os_new["metadata"]["labels"]["nodepool"] = "md-0"
    os_new["metadata"]["ownerReferences"] = [owner("cluster.x-k8s.io/v1beta2", "Machine", f"{os_ms}-z1t6b", True)]
    os_new["spec"]["serverMetadata"] = [{"key": "role", "value": "gpu-worker"},
                                        {"key": "plexsphere:environment", "value": "lab"}]
    os_new["spec"]["providerID"] = "openstack:///0b5b1f2e-6a5c-4c1e-9f4e-5d9b2a7c3e11"
    os_old = copy.deepcopy(os_new)
    del os_old["spec"]["providerID"]
    out["openstackmachine_update_create_only"] = request("OpenStackMachine", "v1beta1", "openstackmachines",
                                                         os_new, "UPDATE", os_old)

    # EKS: the control plane the user wrote, found by the Cluster ownerReference CAPI sets (no
    # cluster-name label); a version bump is the UPDATE, and the Cluster's labels are restamped.
    eks_old = {
        "apiVersion": f"{CP}/v1beta2", "kind": "AWSManagedControlPlane",
        "metadata": meta("eks-prod-control-plane", None, None, [cluster_owner("eks-prod")], server_set=True),
        "spec": {"region": "eu-west-1", "version": "v1.32.0", "eksClusterName": "eks-prod",
                 "sshKeyName": "platform-admin",
                 "additionalTags": {"owner-email": "data-sre@acme.example",
                                    "plexsphere:environment": "staging"}},
    }
    eks_new = copy.deepcopy(eks_old)
    eks_new["spec"]["version"] = "v1.33.0"
    out["awsmanagedcontrolplane_update_cluster_owner"] = request(
        "AWSManagedControlPlane", "v1beta2", "awsmanagedcontrolplanes", eks_new, "UPDATE", eks_old, group=CP)

    # EKS under a ClusterClass: the topology controller bumps the control plane's version after
    # acme.io/team was added to the Cluster's topology, which the control plane does not carry yet.
    # Its rule reads the Cluster's topology and its tags the Cluster's labels: one look-up.
    topo_eks_labels = {**topology_labels("eks-dev"), "platform.acme.io/class": "eks-default"}
    topo_eks_old = {
        "apiVersion": f"{CP}/v1beta2", "kind": "AWSManagedControlPlane",
        "metadata": meta("eks-dev-2mq8t", topo_eks_labels, None, [cluster_owner("eks-dev")], server_set=True),
        "spec": {"region": "eu-west-1", "version": "v1.32.0", "eksClusterName": "default_eks-dev-2mq8t",
                 "additionalTags": {"plexsphere:environment": "dev", "plexsphere:cost-center": "cc-7002"}},
    }
    topo_eks_new = copy.deepcopy(topo_eks_old)
    topo_eks_new["spec"]["version"] = "v1.33.0"
    out["awsmanagedcontrolplane_update_topology"] = request(
        "AWSManagedControlPlane", "v1beta2", "awsmanagedcontrolplanes", topo_eks_new, "UPDATE", topo_eks_old,
        group=CP)

    pool_labels = {"cluster.x-k8s.io/cluster-name": "aws-prod", "topology.cluster.x-k8s.io/owned": "",
                   "topology.cluster.x-k8s.io/pool-name": "mp-0", "environment": "prod",
                   "cost-center": "cc-pool-c"}
    pool = {
        "apiVersion": f"{INFRA}/v1beta2", "kind": "AWSMachinePool",
        "metadata": meta("aws-prod-mp-0-l9x4b", pool_labels, None,
                         [owner("cluster.x-k8s.io/v1beta2", "MachinePool", "aws-prod-mp-0-wq5nd", True)]),
        "spec": {"minSize": 1, "maxSize": 6,
                 "awsLaunchTemplate": {"instanceType": "m6i.large", "ami": {"id": "ami-0a1b2c3d4e5f60718"},
                                       "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io",
                                       "sshKeyName": "platform-admin"}},
    }
    out["awsmachinepool_create_topology"] = request("AWSMachinePool", "v1beta2", "awsmachinepools", pool)

    managed = {
        "apiVersion": f"{INFRA}/v1beta2", "kind": "AWSManagedMachinePool",
        "metadata": meta("eks-prod-pool-0", {"cluster.x-k8s.io/cluster-name": "eks-prod", "environment": "prod",
                                             "cost-center": "cc-pool-e", "acme.io/team": "data-ml"},
                         None, [owner("cluster.x-k8s.io/v1beta2", "MachinePool", "eks-prod-pool-0", True)],
                         server_set=True),
        "spec": {"eksNodegroupName": "default_eks-prod-pool-0", "instanceType": "m6i.2xlarge",
                 "scaling": {"minSize": 2, "maxSize": 10}, "diskSize": 100, "capacityType": "onDemand",
                 "additionalTags": {"plexsphere:cost-center": "cc-pool-d", "plexsphere:environment": "prod",
                                    "plexsphere:acme.io/team": "data-ml", "backup": "weekly"}},
    }
    managed_old = copy.deepcopy(managed)
    managed_old["metadata"]["labels"]["cost-center"] = "cc-pool-d"
    out["awsmanagedmachinepool_update_own_label_changed"] = request(
        "AWSManagedMachinePool", "v1beta2", "awsmanagedmachinepools", managed, "UPDATE", managed_old)

    gcp_ms = "gcp-prod-md-0-5hx7w"
    gcp_machine = {
        "apiVersion": f"{INFRA}/v1beta1", "kind": "GCPMachine",
        "metadata": meta(f"{gcp_ms}-t3m8q", machine_labels("gcp-prod", "gcp-prod-md-0", gcp_ms, "4127730581-5hx7w"),
                         cloned("GCPMachineTemplate", "gcp-prod-md-0-r8c2n"),
                         [owner("cluster.x-k8s.io/v1beta2", "MachineSet", gcp_ms)]),
        "spec": {"instanceType": "n2-standard-8", "image": "projects/acme-images/global/images/ubuntu-2404-kube-v1-33-1",
                 "rootDeviceSize": 100, "additionalLabels": {"team": "platform"}},
    }
    out["gcpmachine_create_from_machineset"] = request("GCPMachine", "v1beta1", "gcpmachines", gcp_machine)

    hetzner = {
        "apiVersion": f"{INFRA}/v1beta1", "kind": "HetznerCluster",
        "metadata": meta("hetzner-eu-x2k9f", {**topology_labels("hetzner-eu"), "environment": "prod"}),
        "spec": {"controlPlaneRegions": ["fsn1"], "hetznerSecretRef": {
            "name": "hetzner", "key": {"hcloudToken": "hcloud"}},
                 "sshKeys": {"hcloud": [{"name": "platform-admin"}]},
                 "controlPlaneLoadBalancer": {"region": "fsn1"}},
    }
    out["hetznercluster_create_topology"] = request("HetznerCluster", "v1beta1", "hetznerclusters", hetzner)
    return out


# ---------------------------------------------------------------------------
# the demo's examples (examples/, `make demo`): copies of two requests above
# with the parents each looks up in one file, so the demo shows one AWS and
# one OpenStack object; e2e-tests/infra.bats checks they stay the copies.
# ---------------------------------------------------------------------------

EXAMPLES = {
    # example file: (request scenario, parents files in look-up order)
    "awscluster_from_topology": ("awscluster_create_topology", ["cluster_aws-prod.yaml"]),
    "openstackmachine_from_machineset": ("openstackmachine_create_from_machineset",
                                         ["machineset_openstack-lab-md-0-q8m4z.yaml",
                                          "cluster_openstack-lab.yaml"]),
}

EXAMPLE_SETTINGS = {
    "cloudTags": {
        "capiInfrastructure": True,
        "propagatingLabels": ["environment", "cost-center", "acme.io/team", "acme:billing/owner"],
    }
}


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def write_examples(reqs):
    out = os.path.join(HERE, "examples")
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "settings.json"), EXAMPLE_SETTINGS)
    for example, (scenario, parents) in EXAMPLES.items():
        write_json(os.path.join(out, f"{example}.json"), reqs[scenario])
        with open(os.path.join(out, f"{example}.parents.yaml"), "w", encoding="utf-8") as f:
            f.write(f"# The objects {example}.json looks up, copied from ../parents/.\n")
            f.write("# Written by test_data/capi-infra/gen.py.\n")
            yaml.safe_dump_all([PARENTS[name][1] for name in parents], f, sort_keys=False,
                               allow_unicode=True)


def main():
    os.makedirs(os.path.join(HERE, "parents"), exist_ok=True)
    for name, (comment, obj) in PARENTS.items():
        with open(os.path.join(HERE, "parents", name), "w", encoding="utf-8") as f:
            f.write(comment)
            f.write("# Written by test_data/capi-infra/gen.py.\n")
            yaml.safe_dump(obj, f, sort_keys=False, allow_unicode=True)
    reqs = requests()
    for scenario, req in reqs.items():
        write_json(os.path.join(HERE, f"{scenario}.json"), req)
    write_examples(reqs)


if __name__ == "__main__":
    main()
