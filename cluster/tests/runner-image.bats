#!/usr/bin/env bats
# The runner's image as a cluster runs it (docs/releasing.md, "The runner image"): the image `make
# runner-image` writes (RUNNER_IMAGE, the Makefile passes it) is pushed with `make push-runner-image` to a
# registry of its own (Debian's docker-registry on 127.0.0.1, scripts/registry.sh) and pulled back by digest
# through the registry's HTTP API, each blob checked against its digest. Its one layer is unpacked as a
# container's root filesystem, and its /policy-runner runs as in a pod: chrooted into that root as the
# image's user, in a private mount namespace with the ServiceAccount's token, the cluster's CA and the
# namespace mounted at /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST and _PORT set,
# and no other variable (no KUBECONFIG, no HOME). The ServiceAccount is examples/fixer-rbac.yaml's, applied
# as a user applies it, its token from `kubectl create token`. It audits and fixes a MachineSet of
# cluster/objects/runner-image.yaml through the deployed examples/capi-policy.yaml; the API server's audit
# log shows the write made as that ServiceAccount, and what the policy's webhook made of it.
# Runs as root (unshare, mount, chroot), as make cluster-test does.

bats_require_minimum_version 1.5.0

NS=runner-image
SA=metadata-propagation-fixer
AS=system:serviceaccount:$SA:$SA
MS=machinesets.cluster.x-k8s.io
MD=machinedeployments.cluster.x-k8s.io

setup_file() {
  load helpers
  export FAILURE=""
  local tool
  for tool in docker-registry unshare chroot mount curl gzip tar; do
    command -v "$tool" >/dev/null 2>&1 || { FAILURE="'$tool' is required by these tests"; return 0; }
  done
  [ "$(id -u)" -eq 0 ] || { FAILURE="these tests run as root (a mount namespace and chroot)"; return 0; }
  export IMAGE=${RUNNER_IMAGE:-$ROOT/target/policy-runner-image-linux-amd64.tar}
  [[ "$IMAGE" == /* ]] || IMAGE=$ROOT/$IMAGE
  [ -f "$IMAGE" ] || { FAILURE="no runner image at $IMAGE: make runner-image"; return 0; }

  # Pushed, then pulled by digest: the manifest and each blob are what their digests name.
  export REGISTRY_DIR=$BATS_FILE_TMPDIR/registry
  REGISTRY=$("$ROOT/scripts/registry.sh" start "$REGISTRY_DIR") || { FAILURE="the registry did not start"; return 0; }
  local repo=policies/metadata-propagation-runner ref digest blob pulled=$BATS_FILE_TMPDIR/pulled
  ref=$(cd "$ROOT" && make -s --no-print-directory push-runner-image REGISTRY="$REGISTRY/$repo" TAG=cluster-test \
    PUSH_IMAGE="$IMAGE" 2>"$BATS_FILE_TMPDIR/push.log" | tail -n1) ||
    { FAILURE="make push-runner-image failed: $(tail -n 5 "$BATS_FILE_TMPDIR/push.log")"; return 0; }
  digest=${ref#*@}
  export DIGEST=$digest
  mkdir -p "$pulled"
  curl -fsS -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$REGISTRY/v2/$repo/manifests/$digest" >"$pulled/manifest.json"
  [ "sha256:$(sha256sum <"$pulled/manifest.json" | cut -d' ' -f1)" = "$digest" ] ||
    { FAILURE="the registry's manifest is not $digest"; return 0; }
  for blob in $(jq -r '.config.digest, .layers[].digest' "$pulled/manifest.json"); do
    curl -fsS "http://$REGISTRY/v2/$repo/blobs/$blob" >"$pulled/${blob#sha256:}"
    [ "sha256:$(sha256sum <"$pulled/${blob#sha256:}" | cut -d' ' -f1)" = "$blob" ] ||
      { FAILURE="blob $blob is not what its digest names"; return 0; }
  done
  export CONFIG=$pulled/$(jq -r '.config.digest | ltrimstr("sha256:")' "$pulled/manifest.json")
  export LAYER=$pulled/$(jq -r '.layers[0].digest | ltrimstr("sha256:")' "$pulled/manifest.json")
  export ROOTFS=$BATS_FILE_TMPDIR/rootfs
  mkdir -p "$ROOTFS"
  gzip -dc "$LAYER" | tar -xf - -C "$ROOTFS"

  # The fixer as examples/fixer-rbac.yaml makes it (applying it again changes nothing), and its token.
  kubectl apply -f "$ROOT/examples/fixer-rbac.yaml" >/dev/null
  eventually 30 "kubectl auth can-i patch $MS -n $NS --as=$AS >/dev/null"
  export SECRETS=$BATS_FILE_TMPDIR/serviceaccount
  mkdir -p "$SECRETS"
  kubectl create token "$SA" -n "$SA" --duration=1h >"$SECRETS/token"
  cp "$STATE/pki/ca.crt" "$SECRETS/ca.crt"
  printf '%s' "$SA" >"$SECRETS/namespace"
  chmod 0644 "$SECRETS"/*

  # The scenario's objects afresh (the namespace stays: no namespace controller runs here), the
  # MachineSet created under its MachineDeployment (the policy's webhook copies the template labels),
  # then the MachineDeployment's template changed: the paused Cluster's controllers propagate nothing.
  local objects=$ROOT/cluster/objects/runner-image.yaml uid
  apply_named "$objects" runner-image >/dev/null
  remove_mine
  apply_named "$objects" ri >/dev/null
  apply_named "$objects" ri-workers >/dev/null
  uid=$(kubectl get "$MD" ri-workers -n "$NS" -o jsonpath='{.metadata.uid}')
  named "$objects" ri-workers-1 | python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))' |
    jq --arg uid "$uid" '.metadata.ownerReferences[0].uid = $uid' | kubectl create -f - >/dev/null
  [ "$(kubectl get "$MS" ri-workers-1 -n "$NS" -o jsonpath='{.metadata.labels.nodepool}')" = blue ] ||
    { FAILURE="the policy's webhook did not give the MachineSet its template labels at create"; return 0; }
  kubectl patch "$MD" ri-workers -n "$NS" --type merge \
    -p '{"spec":{"template":{"metadata":{"labels":{"nodepool":"green"}}}}}' >/dev/null
}

setup() {
  load helpers
  if [ -n "${FAILURE:-}" ]; then
    echo "cannot run: $FAILURE" >&2
    return 1
  fi
}

teardown_file() {
  load helpers
  [ -z "${REGISTRY_DIR:-}" ] || "$ROOT/scripts/registry.sh" stop "$REGISTRY_DIR"
  remove_mine || true
}

# remove_mine: the scenario's MachineSets, MachineDeployments and Cluster gone. CAPI's finalizers would wait
# for the controllers of a paused Cluster, so they are removed after the delete.
remove_mine() {
  local kind name
  for kind in "$MS" "$MD" clusters.cluster.x-k8s.io; do
    for name in $(kubectl get "$kind" -n "$NS" -o jsonpath='{.items[*].metadata.name}'); do
      kubectl delete "$kind" "$name" -n "$NS" --ignore-not-found --wait=false >/dev/null
      kubectl patch "$kind" "$name" -n "$NS" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
    done
  done
  eventually 60 "[ -z \"\$(kubectl get $MS,$MD,clusters.cluster.x-k8s.io -n $NS -o name)\" ]"
}

# in_pod SECRETS ARGS...: the pulled image's /policy-runner with ARGS, run as a pod runs it: chrooted into the
# image's root filesystem as the image's user, in a private mount namespace where SECRETS (a folder) is
# mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount, the path kube-rs reads (the machine's own
# is never touched), with KUBERNETES_SERVICE_HOST and _PORT naming the test bed's API server and nothing else
# in its environment. The mount point is made in the unpacked root, as a container runtime makes it.
in_pod() {
  local secrets=$1 user
  shift
  user=$(jq -r .config.User "$CONFIG")
  mkdir -p "$ROOTFS/var/run/secrets/kubernetes.io/serviceaccount"
  unshare --mount --propagation private "$(command -v bash)" -c '
    set -e
    rootfs=$1 secrets=$2 user=$3 chroot=$4 port=$5
    shift 5
    mount --bind -o ro "$secrets" "$rootfs/var/run/secrets/kubernetes.io/serviceaccount"
    exec env -i KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$port" \
      "$chroot" --userspec="$user" "$rootfs" "$@"' \
    in_pod "$ROOTFS" "$secrets" "$user" "$(command -v chroot)" "$APISERVER_PORT" \
    "$(jq -r '.config.Entrypoint[0]' "$CONFIG")" "$@"
}

# The audit log's writes made as the fixer after line FROM: verb, resource, name, code, field manager, and the
# configurations whose webhook mutated the object, one compact JSON a line.
writes_as_fixer_since() {
  sleep 1
  tail -n +"$(($1 + 1))" "$STATE/audit.log" | jq -c -R --arg user "$AS" 'fromjson? | select(.stage == "ResponseComplete"
      and .user.username == $user and (.verb == "create" or .verb == "update" or .verb == "patch" or .verb == "delete"))
    | {verb, resource: .objectRef.resource, namespace: .objectRef.namespace, name: .objectRef.name,
       code: .responseStatus.code,
       fixer: (.requestURI | test("[?&]fieldManager=metadata-propagation-fix(&|$)")),
       mutatedBy: [(.annotations // {}) | to_entries[] | select(.key | startswith("mutation.webhook.admission.k8s.io/"))
         | .value | fromjson | select(.mutated) | .configuration]}'
}

@test "the pulled image is the binary alone, run as 65532:65532 from /policy-runner" {
  jq -e '.config.User == "65532:65532" and .config.Entrypoint == ["/policy-runner"] and .config.Env == null' "$CONFIG"
  [ "$(gzip -dc "$LAYER" | tar -tf -)" = policy-runner ]
  # No shell to fall back on: only the entrypoint can run.
  run ! chroot --userspec=65532:65532 "$ROOTFS" /bin/sh -c true
  run chroot --userspec=65532:65532 "$ROOTFS" /policy-runner --version
  [ "$status" -eq 0 ]
  [ "$output" = "$("$RUNNER" --version)" ]
}

@test "in the in-cluster configuration, the image's binary audits and fixes as the fixer ServiceAccount" {
  from=$(wc -l <"$STATE/audit.log")
  run --separate-stderr in_pod "$SECRETS" audit --full --cluster --policy-name capi-metadata-propagation -n "$NS" -o json
  echo "stderr: $stderr"
  [ "$status" -eq 1 ]
  jq -e '[.policies[].report.objects[] | select(.kind == "MachineSet" and .namespace == "runner-image")]
      | length == 1 and .[0].name == "ri-workers-1" and .[0].status == "deviates"' <<<"$output"
  # Reading writes nothing.
  [ -z "$(writes_as_fixer_since "$from")" ]

  from=$(wc -l <"$STATE/audit.log")
  run --separate-stderr in_pod "$SECRETS" audit --full --cluster --policy-name capi-metadata-propagation -n "$NS" --fix -o json
  echo "stderr: $stderr"
  jq -c '.fix.objects[]?' <<<"$output" || true
  [ "$status" -eq 0 ]
  jq -e '[.fix.objects[] | select(.id | contains("ri-workers-1"))] | length == 1 and .[0].outcome == "fixed"' <<<"$output"
  [ "$(kubectl get "$MS" ri-workers-1 -n "$NS" -o jsonpath='{.metadata.labels.nodepool}')" = green ]
  [ "$(kubectl get "$MS" ri-workers-1 -n "$NS" -o jsonpath='{.spec.template.metadata.labels.nodepool}')" = green ]
  # The API server's record: one patch of the MachineSet, made as the ServiceAccount with the fixer's field
  # manager, which the policy's webhook mutated; nothing else written as it but the pre-flight's access
  # reviews (SelfSubjectAccessReviews, which store nothing).
  writes=$(writes_as_fixer_since "$from")
  echo "$writes"
  grep -q '"resource":"selfsubjectaccessreviews"' <<<"$writes"
  writes=$(grep -v '"resource":"selfsubjectaccessreviews"' <<<"$writes")
  [ "$writes" = '{"verb":"patch","resource":"machinesets","namespace":"runner-image","name":"ri-workers-1","code":200,"fixer":true,"mutatedBy":["clusterwide-capi-metadata-propagation"]}' ]
}

@test "without the ServiceAccount's files, the image's binary finds no configuration and reads nothing" {
  empty=$BATS_TEST_TMPDIR/empty
  mkdir -p "$empty"
  run --separate-stderr in_pod "$empty" audit --full --cluster --policy-name capi-metadata-propagation -n "$NS" -o json
  echo "stderr: $stderr"
  # Bad input (exit 2): with no kubeconfig either, nothing to audit.
  [ "$status" -eq 2 ]
  [[ "$stderr" == *"no cluster to audit"* ]]
  [[ "$stderr" == *"in-cluster: (failed to read"* ]]
}
