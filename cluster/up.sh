#!/usr/bin/env bash
# `make cluster-up`: a management cluster of real components on loopback, the policy in front of it.
#
#   etcd, kube-apiserver     started as controller-runtime's envtest starts them, with their own CA
#   CRDs                     CAPI v1.14 (conversion served by the CAPI manager), CAPA, CAPG and Crossplane's
#                            from their pinned Go modules; a few upjet AWS, Azure and GCP managed-resource kinds
#                            from the MR catalogue's pinned provider modules; the XR CRDs Crossplane generates for
#                            the examples' XRDs; Kubewarden's ClusterAdmissionPolicy (cluster/render.py)
#   capi-manager             CAPI's core manager, out of cluster, ClusterTopology and MachinePool on, with its
#                            admission and conversion webhooks
#   rke2-controlplane        the RKE2 control-plane manager (CAPRKE2 v0.21.0, the newest the Go module proxy
#                            serves), out of cluster, with its admission webhooks: it creates the Machines,
#                            AWSMachines and RKE2Configs of an RKE2ControlPlane itself
#   k0smotron                k0smotron's manager (v1.10.9, the newest the Go module proxy serves), out of cluster,
#                            its control-plane controllers only, with their admission webhooks: it creates the
#                            Machines, AWSMachines and K0sControllerConfigs of a K0sControlPlane itself
#   crossplane               Crossplane v1 core (v1.20.7, the newest v1 the Go module proxy serves), out of cluster,
#                            its webhooks and leader election off: it renders the XRDs of
#                            cluster/tests/crossplane-compose.bats to CRDs and composes their XRs' MRs itself
#                            (Resources mode, patch-and-transform built into core); its package manager runs idle
#   the webhook server       `policy-runner serve` (or $POLICY_SERVER, a real policy-server: same flags and
#                            policies.yml) with the ClusterAdmissionPolicies of examples/ and cluster/policies/,
#                            wired by the webhook configurations the Kubewarden controller generates; its
#                            look-ups use a ServiceAccount token bound by examples/capi-rbac.yaml and the
#                            ClusterRole of cluster/policies/managed-resources.yaml alone
#
# Idempotent: when everything it starts is running and ready it does nothing. State, logs and pids live in
# target/cluster/; the admin kubeconfig is target/cluster/kubeconfig. `make cluster-down` stops it all.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. cluster/lib.sh

if cluster_running; then
  echo "cluster-up: already running (KUBECONFIG=$STATE/kubeconfig)"
  exit 0
fi
cluster/down.sh >/dev/null 2>&1 || true
for port in $TESTBED_PORTS; do
  port_free "$port" || fail "port $port is taken (another test bed? \`make cluster-down\`, or stop what holds it)"
done
clash=$(ports_in_ephemeral_range | tr '\n' ' ')
[ -z "$clash" ] || echo "cluster-up: warning: ports $clash lie in this machine's ephemeral range" \
  "($(cat /proc/sys/net/ipv4/ip_local_port_range)); an outgoing connection may take one before its component binds it" >&2

mkdir -p "$STATE"/{pki,etcd,capi-certs,rke2-certs,k0smotron-tmp/k8s-webhook-server/serving-certs,kubewarden}
mkdir -p "$STATE"/{crossplane-certs,crossplane-xpkg}
BIN=$(cluster/components/build.sh)
ln -sfn "$BIN" "$STATE/bin"   # target/cluster/bin/kubectl: the pinned kubectl
export PATH=$BIN:$PATH

step "certificates"
cluster/pki.sh "$STATE/pki"
cp "$STATE/pki/capi-webhook.crt" "$STATE/capi-certs/tls.crt"
cp "$STATE/pki/capi-webhook.key" "$STATE/capi-certs/tls.key"
cp "$STATE/pki/rke2-webhook.crt" "$STATE/rke2-certs/tls.crt"
cp "$STATE/pki/rke2-webhook.key" "$STATE/rke2-certs/tls.key"
# k0smotron's manager has no flag for its webhook certificates: controller-runtime reads them from
# $TMPDIR/k8s-webhook-server/serving-certs, and TMPDIR is the test bed's.
cp "$STATE/pki/k0smotron-webhook.crt" "$STATE/k0smotron-tmp/k8s-webhook-server/serving-certs/tls.crt"
cp "$STATE/pki/k0smotron-webhook.key" "$STATE/k0smotron-tmp/k8s-webhook-server/serving-certs/tls.key"
# Crossplane's client certificate, under the names its --tls-client-certs-dir wants.
cp "$STATE/pki/ca.crt" "$STATE/crossplane-certs/ca.crt"
cp "$STATE/pki/crossplane-client.crt" "$STATE/crossplane-certs/tls.crt"
cp "$STATE/pki/crossplane-client.key" "$STATE/crossplane-certs/tls.key"

step "etcd"
start etcd etcd --data-dir="$STATE/etcd" --name=testbed \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="testbed=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync=true
wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_PORT/health"

step "kube-apiserver"
P=$STATE/pki
# The address the API server advertises: its default-route interface's, as envtest lets it choose; on a
# machine without a default route it cannot choose, and 127.0.0.1 is named (controller-runtime#669).
advertise=()
awk 'NR > 1 && $2 == "00000000" { found = 1 } END { exit !found }' /proc/net/route || advertise=(--advertise-address=127.0.0.1)
# The audit log starts with this test bed: an earlier one's events must not answer for this one's.
rm -f "$STATE/audit.log"
start apiserver kube-apiserver "${advertise[@]}" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --secure-port="$APISERVER_PORT" --cert-dir="$P" \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --authorization-mode=RBAC --service-account-issuer="https://127.0.0.1:$APISERVER_PORT/" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true --disable-admission-plugins=ServiceAccount \
  --audit-policy-file="$PWD/cluster/audit-policy.yaml" --audit-log-path="$STATE/audit.log" --audit-log-format=json
kubeconfig "$STATE/kubeconfig" admin --client-certificate="$P/admin.crt" --client-key="$P/admin.key" --embed-certs
export KUBECONFIG=$STATE/kubeconfig
wait_for kube-apiserver 120 kubectl get --raw /readyz

step "CRDs"
python3 cluster/render.py crds "$P/ca.crt" "https://127.0.0.1:$CAPI_WEBHOOK_PORT/convert" "$BIN/xcrd" >"$STATE/crds.json"
kubectl apply --server-side --force-conflicts -f "$STATE/crds.json" >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd --all >/dev/null

step "capi-manager"
start capi capi-manager --kubeconfig="$STATE/kubeconfig" --leader-elect=false \
  --webhook-port="$CAPI_WEBHOOK_PORT" --webhook-cert-dir="$STATE/capi-certs" \
  --health-addr="127.0.0.1:$CAPI_HEALTH_PORT" --diagnostics-address=0 \
  --feature-gates=ClusterTopology=true,MachinePool=true
wait_for capi-manager 120 curl -sf "http://127.0.0.1:$CAPI_HEALTH_PORT/readyz"
python3 cluster/render.py capi-webhooks "$P/ca.crt" "https://127.0.0.1:$CAPI_WEBHOOK_PORT" >"$STATE/capi-webhooks.json"
kubectl apply -f "$STATE/capi-webhooks.json" >/dev/null

step "rke2-controlplane"
start rke2 rke2-controlplane --kubeconfig="$STATE/kubeconfig" --leader-elect=false \
  --webhook-port="$RKE2_WEBHOOK_PORT" --webhook-cert-dir="$STATE/rke2-certs" \
  --health-addr="127.0.0.1:$RKE2_HEALTH_PORT" --diagnostics-address=0
wait_for rke2-controlplane 120 curl -sf "http://127.0.0.1:$RKE2_HEALTH_PORT/readyz"
python3 cluster/render.py rke2-webhooks "$P/ca.crt" "https://127.0.0.1:$RKE2_WEBHOOK_PORT" >"$STATE/rke2-webhooks.json"
kubectl apply -f "$STATE/rke2-webhooks.json" >/dev/null

step "k0smotron"
# The control-plane controllers only (K0sControlPlane, K0smotronControlPlane, and the standalone k0smotron.io
# Cluster and JoinTokenRequest ones that flag also starts); its metrics endpoint is off; its webhook server
# listens on 9443 (no flag moves it).
TMPDIR=$STATE/k0smotron-tmp start k0smotron k0smotron --kubeconfig="$STATE/kubeconfig" --leader-elect=false \
  --enable-controller=control-plane --health-probe-bind-address="127.0.0.1:$K0S_HEALTH_PORT" \
  --metrics-bind-address=0
wait_for k0smotron 120 curl -sf "http://127.0.0.1:$K0S_HEALTH_PORT/readyz"
python3 cluster/render.py k0smotron-webhooks "$P/ca.crt" "https://127.0.0.1:$K0S_WEBHOOK_PORT" >"$STATE/k0smotron-webhooks.json"
kubectl apply -f "$STATE/k0smotron-webhooks.json" >/dev/null

step "crossplane"
# Crossplane v1 core as its Helm chart runs it, less what cannot work here: its webhooks (validation of
# XRDs and Compositions, Usages) and leader election off; its package manager cannot be turned off and
# finds no Provider, Configuration or Function to install; the package cache in the test bed's state. Its
# composition-function client loads the certificate above at start and never dials (no Function exists).
# Its kubeconfig is $KUBECONFIG (controller-runtime's; the command's own flags have none).
KUBECONFIG=$STATE/kubeconfig start crossplane crossplane core start --enable-webhooks=false \
  --health-probe-port="$CROSSPLANE_HEALTH_PORT" --metrics-port="$CROSSPLANE_METRICS_PORT" \
  --tls-client-certs-dir="$STATE/crossplane-certs" --xpkg-cache-dir="$STATE/crossplane-xpkg"
wait_for crossplane 120 curl -sf "http://127.0.0.1:$CROSSPLANE_HEALTH_PORT/readyz"

step "the policy's ServiceAccount and RBAC (examples/capi-rbac.yaml)"
kubectl apply -f cluster/objects/kubewarden-namespace.yaml -f examples/capi-rbac.yaml >/dev/null
token=$(kubectl create token policy-server -n kubewarden --duration=48h)
kubeconfig "$STATE/kubewarden/kubeconfig" policy-server --token="$token"

step "the webhook server"
python3 cluster/render.py kubewarden "$P/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT" "file://$PWD/annotated-policy.wasm" \
  "$STATE/kubewarden/policies.yml" "$STATE/kubewarden/webhooks.json" $POLICIES
start_webhook_server
wait_for "the webhook server" 60 curl -sf "http://127.0.0.1:$READINESS_PORT/readiness"
kubectl apply -f "$STATE/kubewarden/webhooks.json" >/dev/null
# The ClusterAdmissionPolicies themselves, as a user applies them (no Kubewarden controller acts on them).
kubectl apply $(printf -- '-f %s ' $POLICIES) >/dev/null

echo "cluster-up: ready: $(kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])') on https://127.0.0.1:$APISERVER_PORT; KUBECONFIG=$STATE/kubeconfig"
