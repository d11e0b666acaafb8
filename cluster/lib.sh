# Shared by cluster/up.sh, down.sh and the cluster tests: where the test bed keeps its state, its ports, and
# how it starts and waits for a process. Sourced from the repository root.
STATE=$PWD/target/cluster
# kubectl's discovery cache, the test bed's own (removed with its state): the default one, ~/.kube/cache, is
# shared by every test bed on this machine's 127.0.0.1:26443, and kubectl asks for a resource at the version
# that cache remembers (another checkout's CRDs: RKE2Configs at v1beta2, where this one serves v1beta1 only).
export KUBECACHEDIR=$STATE/kubectl-cache
# Fixed loopback ports, away from the components' defaults (2379, 6443, 9443, 3000, 8081...), so a test bed
# does not clash with a real one on a developer's machine; up.sh refuses to start when one is taken. They
# lie below Linux's ephemeral range (32768-60999 by default): a port inside it can be handed to an outgoing
# connection (kubectl's, the API server's) between up.sh's check and the component's bind. The one exception
# is k0smotron's webhook server: its manager has no flag for the port or the address, so it listens on
# controller-runtime's default, 9443, on every interface (its health probe is ours to place); Crossplane's
# metrics and health probe servers listen on every interface too (its flags take a port, not an address).
ETCD_PORT=22379 ETCD_PEER_PORT=22380 APISERVER_PORT=26443
CAPI_WEBHOOK_PORT=29443 CAPI_HEALTH_PORT=29440 RKE2_WEBHOOK_PORT=29543 RKE2_HEALTH_PORT=29540
K0S_WEBHOOK_PORT=9443 K0S_HEALTH_PORT=29640
CROSSPLANE_HEALTH_PORT=29740 CROSSPLANE_METRICS_PORT=29741
WEBHOOK_PORT=23443 READINESS_PORT=23081
TESTBED_PORTS="$ETCD_PORT $ETCD_PEER_PORT $APISERVER_PORT $CAPI_WEBHOOK_PORT $CAPI_HEALTH_PORT $RKE2_WEBHOOK_PORT $RKE2_HEALTH_PORT
  $K0S_WEBHOOK_PORT $K0S_HEALTH_PORT $CROSSPLANE_HEALTH_PORT $CROSSPLANE_METRICS_PORT $WEBHOOK_PORT $READINESS_PORT"
# The ClusterAdmissionPolicies the webhook server hosts: the examples users deploy, and the test bed's own.
POLICIES="examples/capi-policy.yaml examples/xr-policy.yaml examples/validate-mode-policy.yaml $(ls cluster/policies/*.yaml)"
# The processes up.sh starts, in order; down.sh stops them in reverse.
PROCESSES="etcd apiserver capi rke2 k0smotron crossplane webhook-server"

fail() { echo "cluster: $*" >&2; exit 1; }
step() { echo "cluster-up: $*"; }
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The test bed's ports that fall in this machine's ephemeral range, if its range differs from Linux's default.
ports_in_ephemeral_range() {
  local low high port
  read -r low high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || return 0
  for port in $TESTBED_PORTS; do
    if [ "$port" -ge "$low" ] && [ "$port" -le "$high" ]; then echo "$port"; fi
  done
}
pid_alive() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

# start NAME CMD...: runs CMD in its own session (so it outlives the make that started it and a signal to
# the caller's process group leaves it alone), output in $STATE/NAME.log, pid in $STATE/NAME.pid. File
# descriptor 3 is closed: bats waits for every process that holds it before it ends.
start() {
  local name=$1
  shift
  setsid "$@" >"$STATE/$name.log" 2>&1 </dev/null 3>&- &
  echo $! >"$STATE/$name.pid"
}

# wait_for WHAT SECONDS CMD...: until CMD succeeds; on time-out, the log of what died or hung.
wait_for() {
  local what=$1 seconds=$2 name
  shift 2
  for _ in $(seq "$seconds"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  for name in $PROCESSES; do
    if [ -f "$STATE/$name.pid" ] && ! pid_alive "$name"; then
      echo "cluster-up: $name exited; the end of $STATE/$name.log:" >&2
      tail -n 30 "$STATE/$name.log" >&2
    fi
  done
  fail "$what was not ready within $seconds s (logs in $STATE)"
}

# kubeconfig FILE USER CREDENTIAL-FLAGS...: a kubeconfig for the test bed's API server.
kubeconfig() {
  local file=$1 user=$2
  shift 2
  kubectl config --kubeconfig="$file" set-cluster testbed --server="https://127.0.0.1:$APISERVER_PORT" \
    --certificate-authority="$STATE/pki/ca.crt" --embed-certs >/dev/null
  kubectl config --kubeconfig="$file" set-credentials "$user" "$@" >/dev/null
  kubectl config --kubeconfig="$file" set-context testbed --cluster=testbed --user="$user" >/dev/null
  kubectl config --kubeconfig="$file" use-context testbed >/dev/null
}

# Whether everything up.sh starts is running and ready.
cluster_running() {
  local name
  for name in $PROCESSES; do pid_alive "$name" || return 1; done
  [ -d "$STATE/bin" ] && PATH=$STATE/bin:$PATH KUBECONFIG=$STATE/kubeconfig kubectl get --raw /readyz >/dev/null 2>&1 &&
    curl -sf "http://127.0.0.1:$CAPI_HEALTH_PORT/readyz" >/dev/null &&
    curl -sf "http://127.0.0.1:$RKE2_HEALTH_PORT/readyz" >/dev/null &&
    curl -sf "http://127.0.0.1:$K0S_HEALTH_PORT/readyz" >/dev/null &&
    curl -sf "http://127.0.0.1:$CROSSPLANE_HEALTH_PORT/readyz" >/dev/null &&
    curl -sf "http://127.0.0.1:$READINESS_PORT/readiness" >/dev/null
}

# The webhook server: `policy-runner serve`, or $POLICY_SERVER (a policy-server binary: the same flags and
# policies.yml; the download and sigstore folders are for policy-server, which writes there, and the
# runner ignores them), its look-ups made as the policy-server ServiceAccount. The tests stop and restart it.
# policy-server logs JSON, which the scenarios read (cluster/tests/helpers.bash, `monitor_verdicts`).
start_webhook_server() {
  local server=${POLICY_SERVER:-$PWD/target/host/policy-runner serve}
  [ -z "${POLICY_SERVER:-}" ] || server="$server --log-fmt json"
  KUBECONFIG=$STATE/kubewarden/kubeconfig start webhook-server $server \
    --policies "$STATE/kubewarden/policies.yml" --addr 127.0.0.1 --port "$WEBHOOK_PORT" \
    --readiness-probe-port "$READINESS_PORT" --cert-file "$STATE/pki/webhook.crt" --key-file "$STATE/pki/webhook.key" \
    --policies-download-dir "$STATE/kubewarden" --sigstore-cache-dir "$STATE/kubewarden/sigstore"
}
