#!/usr/bin/env bash
# Builds the test bed's real components from their Go modules, each pinned by
# the go.mod and go.sum of its folder here, into the machine's shared cache:
#
#   kubernetes/  kube-apiserver, kubectl   k8s.io/kubernetes (staging modules
#                                          replaced by their published tags)
#   etcd/        etcd                      go.etcd.io/etcd/server/v3
#   capi/        capi-manager              sigs.k8s.io/cluster-api (core)
#   xcrd/        xcrd                      crossplane-runtime's XR CRD generator
#   rke2/        rke2-controlplane         github.com/rancher/cluster-api-provider-rke2 (its control-plane
#                                          manager, controlplane/: the newest tag the proxy serves, v0.21.0)
#   k0smotron/   k0smotron                 github.com/k0sproject/k0smotron (its one manager, cmd/, which
#                                          up.sh runs with its control-plane controllers only: v1.10.9)
#   crossplane/  crossplane                github.com/crossplane/crossplane (Crossplane v1 core, cmd/crossplane:
#                                          v1.20.7, the newest v1 the proxy serves; it composes in Resources
#                                          mode without functions, which v2 cannot)
#
# and the release tools, built only when named (`make release-tools`):
#
#   cosign/      cosign                    github.com/sigstore/cosign/v3 (signs and verifies releases)
#   actionlint/  actionlint                github.com/rhysd/actionlint (checks .github/workflows)
#
# Usage: build.sh [COMPONENT...]   (default: the test bed's seven). Prints the bin folder.
#
# A component is built once per machine and pin: its binaries are kept under
# $CACHE_DIR/cluster/<component>-<hash of go.mod, go.sum, main.go, its build
# function below and the Go settings every build shares>/, so a changed pin or
# flag builds that component afresh, an unchanged one costs nothing, and an
# edit elsewhere in this script rebuilds nothing. Go's own module and build caches (GOMODCACHE, GOCACHE) are the
# machine's, shared with any other Go work. Modules come from the Go module
# proxy only (GOPROXY without `direct`), verified against the committed
# go.sum; GOTOOLCHAIN=local keeps the machine's Go (never a download).
# Builds are lean: only the named binaries, -trimpath, stripped, no tests.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/metadata-propagation-policy}/cluster

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly
export GOPROXY=${GOPROXY_CLUSTER:-https://proxy.golang.org}

command -v go >/dev/null || { echo "build.sh: go not found; the test bed builds its components with Go 1.26 (docs/development.md)" >&2; exit 1; }

# version MODULE: the version the component's go.mod pins.
version() { go list -m -f '{{.Version}}' "$1"; }

# The ldflags kube-apiserver and kubectl are stamped with, as Kubernetes'
# hack/lib/version.sh stamps them: the CAPI manager refuses a server whose
# version does not parse (an unstamped build says v0.0.0-master).
kubernetes() {
  local k minor ld="-s -w" p
  k=$(version k8s.io/kubernetes)
  minor=$(echo "$k" | cut -d. -f2)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X '$p.gitVersion=$k' -X '$p.gitMajor=1' -X '$p.gitMinor=$minor' -X '$p.gitTreeState=clean'"
  done
  go build -trimpath -tags selinux,notest -ldflags "$ld" -o "$1/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
}

etcd() {
  go build -trimpath -ldflags "-s -w" -o "$1/etcd" .
}

# core/main.go is CAPI's core manager; its Dockerfile builds it with the
# fieldsv1string tag and the version stamped.
capi() {
  local v
  v=$(version sigs.k8s.io/cluster-api)
  go build -trimpath -tags fieldsv1string \
    -ldflags "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$v" \
    -o "$1/capi-manager" sigs.k8s.io/cluster-api/core
}

xcrd() {
  go build -trimpath -ldflags "-s -w" -o "$1/xcrd" .
}

# The RKE2 control-plane manager alone (its Makefile's `managers` builds it the same way, from
# controlplane/), the version stamped as its hack/version.sh stamps it.
rke2() {
  local v
  v=$(version github.com/rancher/cluster-api-provider-rke2)
  go build -trimpath -ldflags "-s -w -X 'github.com/rancher/cluster-api-provider-rke2/version.gitVersion=$v'" \
    -o "$1/rke2-controlplane" github.com/rancher/cluster-api-provider-rke2/controlplane
}

# k0smotron's manager (cmd/, as its Dockerfile builds it: no version stamp). Its go.mod's replace
# directives (footloose, k8s.io staging modules at v0.32.3) name nothing this package imports, so the
# module build needs none. The other control-plane providers the test bed installs have no controller
# here: Talos's builds only with a replace copied into a pin and a TalosControlPlane has no machine
# template; MicroK8s's and Kairos's modules are not served (docs/test-bed.md, "What runs").
k0smotron() {
  go build -trimpath -ldflags "-s -w" -o "$1/k0smotron" github.com/k0sproject/k0smotron/cmd
}

# Crossplane v1 core (cmd/crossplane), the version stamped as its Earthfile stamps it. v1.20.7 is the
# newest v1 tag the proxy serves (v1.20.8 and v1.21.0 are refused); v2 composes only through composition
# functions, whose modules (function-patch-and-transform) the proxy refuses.
crossplane() {
  local v
  v=$(version github.com/crossplane/crossplane)
  go build -trimpath -ldflags "-s -w -X github.com/crossplane/crossplane/internal/version.version=$v" \
    -o "$1/crossplane" github.com/crossplane/crossplane/cmd/crossplane
}

# Both report the version their module was built at (Go's build information).
cosign() {
  go build -trimpath -ldflags "-s -w" -o "$1/cosign" github.com/sigstore/cosign/v3/cmd/cosign
}

actionlint() {
  go build -trimpath -ldflags "-s -w" -o "$1/actionlint" github.com/rhysd/actionlint/cmd/actionlint
}

# One build at a time per machine: `.ci/run` builds the components in one lane while the other may reach
# `make cluster-test`, which asks for them too; the second waits, then finds them built. A component
# already built is used without the lock, so asking for a small one never waits on another's build.
locked=0
lock() {
  if [ "$locked" = 0 ]; then
    exec 9>"$cache/.lock"
    flock 9
    locked=1
  fi
}

build() {
  local component=$1 key out start
  cd "$here/$component"
  key=$({
    cat go.mod go.sum $(ls main.go 2>/dev/null)
    declare -f version "$component"
    echo "$GOTOOLCHAIN $GOWORK $CGO_ENABLED $GOFLAGS"
  } | sha256sum | cut -c1-12)
  out=$cache/$component-$key
  [ -f "$out/.built" ] || lock
  if [ ! -f "$out/.built" ]; then
    start=$(date +%s)
    echo "build.sh: building $component (first time on this machine with this pin)" >&2
    rm -rf "$out" && mkdir -p "$out"
    "$component" "$out"
    touch "$out/.built"
    echo "build.sh: $component built in $(($(date +%s) - start)) s" >&2
  fi
  # One folder holds every component's binaries: symlinks to the pinned builds.
  mkdir -p "$cache/bin"
  for binary in "$out"/*; do ln -sfn "$binary" "$cache/bin/$(basename "$binary")"; done
}

mkdir -p "$cache"

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(etcd kubernetes capi xcrd rke2 k0smotron crossplane)
for component in "${components[@]}"; do
  case $component in
    etcd | kubernetes | capi | xcrd | rke2 | k0smotron | crossplane | cosign | actionlint) build "$component" ;;
    *) echo "build.sh: unknown component '$component' (etcd, kubernetes, capi, xcrd, rke2, k0smotron, crossplane, cosign, actionlint)" >&2; exit 1 ;;
  esac
done
echo "$cache/bin"
