# Targets as in Kubewarden's own Rust policies (policies/Makefile.rust), plus
# the project's own host: `policy-runner`, a kwctl-compatible subset built
# on wapc + wasmtime, used wherever kwctl is not installed.
SHELL := /bin/bash
CARGO ?= cargo
# Cargo's intermediate build outputs (dependencies, fingerprints) live in one
# cache per machine, outside the checkout, so a fresh clone (CI after a
# session) reuses what any earlier checkout built. Final artifacts are still
# uplifted into the checkout's own target/, and cargo's fingerprints (source
# mtimes and hashes, rustc version, features, flags) decide what is rebuilt,
# so a clone's workspace crates are always compiled from its own sources.
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/metadata-propagation-policy
export CARGO_BUILD_BUILD_DIR ?= $(CACHE_DIR)/target
# Cargo judges a workspace crate fresh when its cached build is newer than
# its sources, so a checkout whose files are older than another checkout's
# build in the shared cache would silently get that build (a clone made
# before a developer's next build, a second worktree). When the cache was
# last used from another checkout, this checkout's files are touched first:
# its crates are rebuilt from its own sources; dependencies are reused.
$(shell mkdir -p '$(CACHE_DIR)' && if [ "$$(cat '$(CACHE_DIR)/checkout' 2>/dev/null)" != '$(CURDIR)' ]; then \
  git ls-files -z | xargs -0 touch -c; echo '$(CURDIR)' >'$(CACHE_DIR)/checkout'; fi)
# The full runner, every command (`make runner`, the tests, the docs' commands,
# the benchmarks). `make demo` builds its lean one apart (DEMO_RUNNER).
RUNNER := target/host/policy-runner
# e2e tests and annotation use a real kwctl when one is on the PATH (or
# given: `make e2e-tests KWCTL=kwctl`), else the runner.
ifeq ($(origin KWCTL),undefined)
KWCTL := $(shell command -v kwctl 2>/dev/null || echo $(RUNNER))
endif
RUNNER_DEP := $(if $(filter $(RUNNER),$(KWCTL)),$(RUNNER),)

# The module is the edge (src/) over the core (crates/core): both rebuild it.
POLICY_SOURCES := $(shell find src crates/core/src -name '*.rs') Cargo.toml crates/core/Cargo.toml Cargo.lock
# explain embeds policy-metadata.yml: its contextAwareResources are what the look-ups may read.
RUNNER_SOURCES := $(shell find crates/runner/src crates/audit/src -name '*.rs') crates/runner/Cargo.toml crates/audit/Cargo.toml Cargo.lock \
  policy-metadata.yml

.PHONY: all demo check test fmt lint unit-tests e2e-tests fuzz clean runner module print-cargo-fuzz-version print-wasm-opt-features print-module cache-owner

# What decides the module's bytes, each pinned in one place
# (docs/releasing.md, "Reproducible builds"): the Rust toolchain in
# rust-toolchain.toml; binaryen's wasm-opt as the `wasm-opt` crate (binaryen
# 116) at WASM_OPT_VERSION, built once per machine into TOOLS_DIR (Debian's
# binaryen cannot be pinned); the dependencies' paths remapped (MODULE_RUSTFLAGS);
# the annotation by the runner of the same commit. The SBOM generator is pinned
# beside them. A changed version is a new folder, so it is built afresh.
WASM_OPT_VERSION := 0.116.1
CARGO_CYCLONEDX_VERSION := 0.5.9
# Shared by every checkout and CACHE_DIR of the machine: a pinned version never changes.
TOOLS_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/metadata-propagation-policy/tools
WASM_OPT := $(TOOLS_DIR)/wasm-opt-$(WASM_OPT_VERSION)/bin/wasm-opt
CARGO_CYCLONEDX := $(TOOLS_DIR)/cargo-cyclonedx-$(CARGO_CYCLONEDX_VERSION)/bin/cargo-cyclonedx

all: annotated-policy.wasm

# cargo's module; policy.wasm is this after wasm-opt.
MODULE := $(or $(CARGO_TARGET_DIR),target)/wasm32-wasip1/release/metadata_propagation_policy.wasm
# Features rustc enables by default for wasm32-wasip1: binaryen releases
# older than rustc (Debian's) refuse the module unless they are named.
WASM_OPT_FEATURES := --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue

# Panic locations name the dependencies' sources by their path under
# CARGO_HOME (/root/.cargo/registry/src/…): remapped to /cargo, the module is
# the same wherever cargo keeps them. The workspace's own crates are named
# relative to the workspace already, and the standard library by /rustc/<commit>.
MODULE_RUSTFLAGS := --remap-path-prefix=$(or $(CARGO_HOME),$(HOME)/.cargo)=/cargo

$(MODULE): $(POLICY_SOURCES) rust-toolchain.toml
	@rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1 || rustup target add wasm32-wasip1
	# `cargo rustc --crate-type cdylib`: with crate-type ["cdylib", "rlib"] in
	# Cargo.toml a plain `cargo build` silently skips LTO (rust-lang/cargo#9672),
	# costing 23-40% per evaluation and ~80 KB of module size.
	RUSTFLAGS='$(MODULE_RUSTFLAGS)' $(CARGO) rustc --target=wasm32-wasip1 --release --locked -p metadata-propagation-policy --lib --crate-type cdylib
	touch $@

module: $(MODULE)

# wasm-opt -O3 after rustc's LTO: 10 % smaller at the same cost per
# evaluation, as wasm-pack does by default (BENCHMARKS.md, "Size").
policy.wasm: $(MODULE) $(WASM_OPT)
	$(WASM_OPT) -O3 $(WASM_OPT_FEATURES) $(MODULE) -o $@

# The pinned tools, each built once per machine. flock: two lanes of .ci/run
# may ask at once; the second finds it built. Each in its own temporary target
# directory, not the shared build cache, so they never wait on its lock.
# wasm-opt compiles binaryen's C++ (minutes): without the `dwarf` feature
# (LLVM's DWARF code, for modules with debug information; policy.wasm has
# none) and at -O1 (opt-level 1): 14 CPU-minutes once per machine, and -O3 on
# the module takes 5.6 s, as long as with Debian's binaryen. The bytes are
# binaryen's passes at this version; make check-reproducible compares two
# builds with this tool. cargo-cyclonedx is a debug build, as .ci/run installs
# the other cargo tools: it runs once per release, for a second.
$(WASM_OPT):
	@mkdir -p '$(TOOLS_DIR)'
	flock '$(TOOLS_DIR)/.lock' sh -c 'test -x $@ || env -u CARGO_BUILD_BUILD_DIR -u CARGO_TARGET_DIR \
	  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 $(CARGO) install -q --locked --no-default-features \
	  --root $(TOOLS_DIR)/wasm-opt-$(WASM_OPT_VERSION) wasm-opt --version $(WASM_OPT_VERSION)'

$(CARGO_CYCLONEDX):
	@mkdir -p '$(TOOLS_DIR)'
	flock '$(TOOLS_DIR)/.lock' sh -c 'test -x $@ || env -u CARGO_BUILD_BUILD_DIR -u CARGO_TARGET_DIR \
	  $(CARGO) install -q --locked --debug --root $(TOOLS_DIR)/cargo-cyclonedx-$(CARGO_CYCLONEDX_VERSION) \
	  cargo-cyclonedx --version $(CARGO_CYCLONEDX_VERSION)'

# Both pinned cargo tools (.ci/run builds them in its side lane), and cosign
# and actionlint from their Go modules (cluster/components/build.sh).
.PHONY: release-tools
release-tools: $(WASM_OPT) $(CARGO_CYCLONEDX)
	cluster/components/build.sh cosign actionlint >/dev/null

# The runner links the policy's core (explain, audit), so core changes rebuild it.
# Cargo leaves a binary it finds fresh with its old date, so a manifest or
# Cargo.lock newer than it (a checkout, an edit that does not concern the
# runner) would have make call cargo again on every run: touched, as the
# module is.
$(RUNNER): $(RUNNER_SOURCES) $(POLICY_SOURCES)
	$(CARGO) build --locked -p policy-runner --profile host
	touch $@

runner: $(RUNNER)

# The runner a cluster runs (docs/releasing.md, "The runner image"): linked
# statically against musl for linux/amd64, the full runner (`audit --cluster`
# needs the `network` feature), the `dist` profile (the host profile,
# stripped). ring's C code is compiled by musl-gcc (Debian's musl-tools). Its
# bytes are a function of the commit: beside the dependencies' paths
# (MODULE_RUSTFLAGS), the build directory (where build scripts write the
# code they generate) and the checkout are remapped too, so two checkouts
# with their own build directories agree (make check-reproducible). Two
# more places name CARGO_HOME: ring's C objects (-ffile-prefix-map), and
# the code cranelift-codegen's build script generates, whose comments carry
# its generator's file!() (a host crate, which RUSTFLAGS do not reach once
# --target is given): cargo's host.rustflags remap it too. host.rustflags is
# unstable in cargo (-Zhost-config), hence RUSTC_BOOTSTRAP=1 for this build,
# as `make fuzz` uses it.
DIST_TARGET := x86_64-unknown-linux-musl
DIST_RUNNER := $(or $(CARGO_TARGET_DIR),target)/$(DIST_TARGET)/dist/policy-runner
CARGO_HOME_DIR := $(or $(CARGO_HOME),$(HOME)/.cargo)
DIST_RUSTFLAGS := $(MODULE_RUSTFLAGS) --remap-path-prefix=$(CARGO_BUILD_BUILD_DIR)=/build --remap-path-prefix=$(CURDIR)=/src
DIST_CARGO := RUSTC_BOOTSTRAP=1 RUSTFLAGS='$(DIST_RUSTFLAGS)' \
  CFLAGS_$(subst -,_,$(DIST_TARGET))='-ffile-prefix-map=$(CARGO_HOME_DIR)=/cargo' \
  $(CARGO) -Zhost-config -Ztarget-applies-to-host --config target-applies-to-host=false \
  --config 'host.rustflags=["--remap-path-prefix=$(CARGO_HOME_DIR)=/cargo"]'

$(DIST_RUNNER): $(RUNNER_SOURCES) $(POLICY_SOURCES) rust-toolchain.toml
	@rustup target list --installed 2>/dev/null | grep -qx $(DIST_TARGET) || rustup target add $(DIST_TARGET)
	@command -v musl-gcc >/dev/null || { echo "musl-gcc is missing (ring's C code for $(DIST_TARGET)): apt-get install musl-tools" >&2; exit 1; }
	$(DIST_CARGO) build --locked -p policy-runner --profile dist --target $(DIST_TARGET)
	touch $@

.PHONY: static-runner
static-runner: $(DIST_RUNNER)

# The runner's OCI image (scripts/oci_image.py): one layer holding
# /policy-runner alone, its entrypoint, user 65532:65532, written as an OCI
# image layout in one tar without a container daemon; its timestamps the
# commit's, so the digest is a function of the binary and the commit. A few
# seconds, so it is written afresh each time (its labels name HEAD).
# `make release` writes the release's into the release folder.
RUNNER_IMAGE := $(or $(CARGO_TARGET_DIR),target)/policy-runner-image-linux-amd64.tar
.PHONY: runner-image $(RUNNER_IMAGE)
$(RUNNER_IMAGE): $(DIST_RUNNER)
	@python3 scripts/oci_image.py --binary $(DIST_RUNNER) --version '$(POLICY_VERSION)' --tag '$(TAG)' \
	  --revision "$$(git rev-parse HEAD)" --created "$$(git log -1 --format=%ct HEAD)" \
	  --source "$$(sed -n 's/^ *io\.kubewarden\.policy\.source: *//p' policy-metadata.yml)" -o $@ >/dev/null
	@echo "$@: $$(python3 scripts/oci_image.py --digest $@)"

runner-image: $(RUNNER_IMAGE)

annotated-policy.wasm: policy.wasm policy-metadata.yml README.md $(RUNNER_DEP)
	rm -f annotated-policy.wasm
	$(KWCTL) annotate -m policy-metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

# Runs the policy on the bundled example objects and prints what it decided.
# It builds only what it needs, so a first build shows the policy soon:
# rustc's module annotated as it is (the pinned wasm-opt, binaryen's C++,
# is most of a cold first build; its pass changes the bytes, not the
# answers), and the runner without its `network` feature (push, pull,
# serve, scaffold: half its dependencies). The tests, the release and the
# size check use policy.wasm and the full runner.
# The lean runner lives beside the full one, in target and build
# directories of its own (target/demo/host/policy-runner, $(CACHE_DIR)/demo):
# in one target directory the two binaries would share a path, and in one
# build directory the policy crate's library (a cdylib, whose file name
# carries no hash of its features) would be rebuilt by each feature set in
# turn, making the other's runner stale. Apart, switching between `make
# demo`, `make runner` and `make check` compiles nothing already built.
DEMO_DIR := $(or $(CARGO_TARGET_DIR),target)/demo
DEMO_RUNNER := $(DEMO_DIR)/host/policy-runner
DEMO_POLICY := $(DEMO_DIR)/annotated-policy.wasm

$(DEMO_RUNNER): $(RUNNER_SOURCES) $(POLICY_SOURCES)
	CARGO_TARGET_DIR=$(DEMO_DIR) CARGO_BUILD_BUILD_DIR=$(CACHE_DIR)/demo \
	  $(CARGO) build --locked -p policy-runner --profile host --no-default-features
	touch $@

$(DEMO_POLICY): $(MODULE) policy-metadata.yml README.md $(DEMO_RUNNER)
	rm -f $@
	$(DEMO_RUNNER) annotate -m policy-metadata.yml -u README.md -o $@ $(MODULE)

demo: $(DEMO_POLICY) $(DEMO_RUNNER)
	KWCTL=$(DEMO_RUNNER) POLICY=$(DEMO_POLICY) scripts/demo.sh

fmt:
	$(CARGO) fmt --all -- --check

# No crate's modules import each other round a loop, and the core's
# folders import only downwards (the script says which imports break it). The look-up floor's code is behind a feature,
# linted on its own. The core's public API documents itself without a link
# to a private item. Every negated command in the bats suites can fail its
# test (scripts/check_bats.py).
lint: lint-workflows
	for src in crates/*/src src; do python3 scripts/check_module_graph.py $$src || exit 1; done
	python3 scripts/check_bats.py
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) clippy --locked -p floor-policy -p explain-web -p cluster-audit -p metadata-propagation-core --all-targets -- -D warnings
	$(CARGO) clippy --locked -p floor-policy --features lookup -- -D warnings
	$(CARGO) clippy --locked -p policy-runner --all-targets --profile host -- -D warnings
	# Each other feature set and target a user's build compiles: the lean
	# runner of `make demo` (no `network`), the module and the floors (make
	# bench) for wasm32-wasip1.
	# clippy's -D warnings fails on the compiler's warnings too.
	$(CARGO) clippy --locked -p policy-runner --no-default-features --bins --profile host -- -D warnings
	$(CARGO) clippy --locked -p metadata-propagation-policy --lib --target=wasm32-wasip1 -- -D warnings
	$(CARGO) clippy --locked -p floor-policy --target=wasm32-wasip1 -- -D warnings
	$(CARGO) clippy --locked -p floor-policy --features echo --target=wasm32-wasip1 -- -D warnings
	$(CARGO) clippy --locked -p floor-policy --features lookup --target=wasm32-wasip1 -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --no-deps -p metadata-propagation-core -p floor-policy

# The GitHub workflows, by actionlint built from its pinned Go module
# (cluster/components/actionlint; 16 s the first time on a machine). Its
# shellcheck and pyflakes passes are off, so the verdict does not depend on
# what else the machine has installed.
.PHONY: lint-workflows
lint-workflows:
	@actionlint="$$(cluster/components/build.sh actionlint)/actionlint" && \
	  "$$actionlint" -shellcheck= -pyflakes= .github/workflows/*.yml && \
	  echo "lint-workflows: $$(ls .github/workflows/*.yml | wc -l) workflows pass actionlint $$("$$actionlint" --version | head -n1)"

# The core's (its own tests, white-box, with crates/core/tests as their modules),
# the explain page's and the audit library's native tests run here, beside
# the policy's (tests/ at the root: what needs the edge): all are dev builds
# of the same dependencies, built once. Then Go's regexp, the parser of
# CAPI's node-sync flags, judges the table of patterns the policy's own test
# holds go_regex.rs to (scripts/go_regex_agree, the standard library only).
unit-tests:
	$(CARGO) test --locked -p metadata-propagation-policy -p metadata-propagation-core -p explain-web -p cluster-audit
	cd scripts/go_regex_agree && GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly \
	  go run . ../../crates/core/src/capi/go_regex_cases.tsv
	$(CARGO) test --locked -p policy-runner --profile host

test: fmt lint unit-tests

# The mutate suites run through record-kwctl, which logs every invocation;
# validate_mode.bats then replays them all in validate mode (docs/validate-and-audit.md:
# its invariants). With the runner, the mutate suites run hosted both as
# policy-server hosts and as kwctl hosts.
E2E_TMP := e2e-tests/.tmp
# The project's runner is needed whichever host answers: it applies the
# patches, and it answers the suites' --parents and records the sessions a
# real kwctl then replays.
e2e-tests: annotated-policy.wasm $(RUNNER) $(CARGO_CYCLONEDX) $(DIST_RUNNER)
	rm -rf $(E2E_TMP) && mkdir -p $(E2E_TMP)
	KWCTL=e2e-tests/record-kwctl KWCTL_REAL=$(KWCTL) KWCTL_RECORD=$(E2E_TMP)/invocations.jsonl \
	  POLICY=annotated-policy.wasm scripts/bats_checked.sh e2e-tests/capi.bats e2e-tests/infra.bats e2e-tests/inplace.bats e2e-tests/xr.bats
	KWCTL=$(KWCTL) RUNNER=$(RUNNER) POLICY=annotated-policy.wasm INVOCATIONS=$(E2E_TMP)/invocations.jsonl \
	  scripts/bats_checked.sh e2e-tests/validate_mode.bats e2e-tests/robustness.bats e2e-tests/distribution.bats e2e-tests/mr.bats \
	    e2e-tests/audit_scanner.bats
	# The runner hosts like policy-server: a fresh instance per request,
	# look-up answers pruned by their field masks. The mutate suites pass
	# again hosted as kwctl hosts: the instance that validated the settings,
	# and whole recorded objects (the policy's own projection keeps what it
	# reads). The every-case tests hold every case.
	if [ -n "$(RUNNER_DEP)" ]; then \
	  POLICY_RUNNER_REUSE_INSTANCE=1 POLICY_RUNNER_IGNORE_FIELD_MASKS=1 \
	    KWCTL=$(KWCTL) POLICY=annotated-policy.wasm scripts/bats_checked.sh -f '^every ' e2e-tests/capi.bats e2e-tests/infra.bats e2e-tests/xr.bats; \
	fi
	RUNNER=$(RUNNER) POLICY=annotated-policy.wasm scripts/bats_checked.sh e2e-tests/explain.bats e2e-tests/run_input.bats \
	  e2e-tests/audit.bats e2e-tests/warm_memory.bats
	# CHANGELOG.md's form and the version it must hold (scripts/changelog.py);
	# make release's refusals and folder, and the folder's module pushed,
	# signed with cosign, verified and pulled (docs/releasing.md).
	scripts/bats_checked.sh e2e-tests/changelog.bats
	RUNNER=$(RUNNER) DIST_RUNNER=$(DIST_RUNNER) scripts/bats_checked.sh e2e-tests/release.bats

# A management cluster of real components on loopback (cluster/up.sh): etcd,
# kube-apiserver, kubectl, CAPI's core manager, RKE2's control-plane manager
# and k0smotron's built from their pinned Go modules (cluster/components), the
# real CRDs, and the webhook server hosting the policies of examples/.
# `cluster-test` runs the scenarios of cluster/tests through kubectl, each
# checking what the API server stored; it starts the test bed when none is
# running and stops it afterwards (one that was already up is left up).
# POLICY_SERVER=<policy-server binary> hosts the module in a real
# policy-server instead of `policy-runner serve`.
CLUSTER_DEP := annotated-policy.wasm $(if $(POLICY_SERVER),,$(RUNNER))
.PHONY: cluster-components cluster-up cluster-down cluster-test
cluster-components:
	cluster/components/build.sh

cluster-up: $(CLUSTER_DEP)
	cluster/up.sh

cluster-down:
	cluster/down.sh

# cluster/tests/runner-image.bats runs the binary of the runner's image.
cluster-test: $(CLUSTER_DEP) runner-image
	RUNNER_IMAGE=$(RUNNER_IMAGE) cluster/test.sh

# Everything CI runs: the README's test command. The tools it needs are
# checked first, each missing one named with the command that installs it.
check: check-tools check-standalone check-schemas check-mr-catalogue test e2e-tests cluster-test check-artifacthub check-size check-docs

.PHONY: check-tools
check-tools:
	@bash scripts/check_tools.sh

# The user docs against the repository (scripts/check_docs.py): README.md
# within 250 lines, every relative link resolving, the list of what `check`
# runs equal to the line above, and every shell block of README.md and
# docs/ run against the bundled files (or marked as needing a cluster or a
# registry). A few seconds once the runner and the module are built.
.PHONY: check-docs
check-docs: annotated-policy.wasm $(RUNNER)
	python3 scripts/check_docs.py

# policy.wasm's size budget: the 1 MiB a policy module may take (BENCHMARKS.md,
# "Size"). Bytes are not saved by hand-written replacements of well-kept crates.
# Deterministic, so a check rather than a benchmark.
SIZE_BUDGET := 1048576
.PHONY: check-size
check-size: policy.wasm
	@size=$$(wc -c <policy.wasm); [ "$$size" -le $(SIZE_BUDGET) ] || \
	  { echo "policy.wasm is $$size bytes, over its budget of $(SIZE_BUDGET): BENCHMARKS.md, \"Size\", says where the bytes go" >&2; exit 1; }
	@echo "policy.wasm: $$(wc -c <policy.wasm) bytes, budget $(SIZE_BUDGET)"

# Every Kubernetes object the project ships or tests with (fixtures, replay
# payloads, bench scenarios, web and policy examples), checked strictly
# against the real CRDs vendored in crds/ (CRDS_DIR=... overrides),
# and crates/core/tests/schemas/ (what the Rust tests validate outputs with)
# up to date.
# A few seconds; see scripts/check_schemas.py.
.PHONY: check-schemas
check-schemas:
	python3 scripts/check_schemas.py

# Maintainers: regenerate crds/ from the upstream CRD files crds/sources.tsv
# pins (crds/README.md says how to get them); each file's sha256 is checked.
.PHONY: vendor-crds
vendor-crds:
	@[ -n "$(CRDS)" ] || { echo "usage: make vendor-crds CRDS=<directory of the upstream CRD files crds/sources.tsv lists> (crds/README.md)" >&2; exit 2; }
	python3 scripts/vendor_crds.py "$(CRDS)"

# The managed-resource catalogue (docs/managed-resources.md): crates/core/src/tags/targets/mr_catalogue.tsv, the
# list of the CRD files it is read from (crds/managed-resources/files.tsv) and the docs' table of counts and
# exclusions, written by scripts/gen_mr_catalogue.py from the CRDs of the upjet providers that
# crds/managed-resources/go.mod and go.sum pin. `check-mr-catalogue` regenerates them in memory and fails,
# naming each, when one differs. Under a second warm; the first run on a machine downloads the three
# modules through the Go command (85 MB of zips, 665 MB unpacked in GOMODCACHE, about 11 s) and parses their
# 3,964 CRD files (about 30 s; what it reads is cached under CACHE_DIR by each file's sha256): 45 s in all.
.PHONY: mr-catalogue check-mr-catalogue
mr-catalogue:
	CACHE_DIR='$(CACHE_DIR)' python3 scripts/gen_mr_catalogue.py

check-mr-catalogue:
	CACHE_DIR='$(CACHE_DIR)' python3 scripts/gen_mr_catalogue.py --check

# The repository stands alone: no file names a path outside the clone
# (file:line of each one that does). See scripts/check_standalone.sh.
.PHONY: check-standalone
check-standalone:
	bash scripts/check_standalone.sh

# Bounded fuzzing (CI): replay the regression inputs, then FUZZ_SECONDS per
# target, after formatting and linting the harnesses. Stable toolchain:
# RUSTC_BOOTSTRAP enables cargo-fuzz's flags. The fuzz builds (sanitizer
# flags, their own workspace) share nothing with the others, so they keep
# their own build directory and never wait for another build's lock.
#
# Each target names its sanitizer. The byte-level targets hand arbitrary
# bytes to serde_json and the settings parser, where AddressSanitizer
# watches the dependencies' unsafe code. mutated_objects checks the policy's
# logic (invariants::fuzz_oracles::check_allowed, idempotence) on well-formed JSON; the
# policy's own code is safe Rust (`unsafe_code = "deny"`), and ASan's
# bookkeeping of every allocation makes that target 4.6x slower
# (fuzz/README.md has the profile).
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := validate_bytes:address settings_bytes:address mutated_objects:none
CARGO_FUZZ_VERSION := 0.13.2
FUZZ_BUILD_DIR ?= $(CACHE_DIR)/fuzz
fuzz:
	@[ "$$($(CARGO) fuzz --version 2>/dev/null)" = "cargo-fuzz $(CARGO_FUZZ_VERSION)" ] || \
	  { echo "cargo install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked"; exit 1; }
	cd fuzz && export CARGO_BUILD_BUILD_DIR=$(FUZZ_BUILD_DIR) RUSTC_BOOTSTRAP=1 && \
	$(CARGO) fmt --check && $(CARGO) clippy --locked --all-targets -- -D warnings && \
	for ts in $(FUZZ_TARGETS); do \
	  t=$${ts%%:*}; s=$${ts##*:}; \
	  if [ -d regressions/$$t ]; then $(CARGO) fuzz run -O -s $$s $$t regressions/$$t/* || exit 1; fi; \
	  $(CARGO) fuzz run -O -s $$s $$t -- -max_total_time=$(FUZZ_SECONDS) || exit 1; \
	done

# A fuzzing campaign, not part of `check`: FUZZ_CAMPAIGN_SECONDS (default
# 1800) per target on every core, or until FUZZ_CAMPAIGN_RUNS executions,
# each finding minimised and kept under fuzz/regressions/<target>/, the
# executions and coverage per target printed and written into
# docs/development.md's table (scripts/fuzz_campaign.sh; docs/development.md,
# "Fuzz campaigns").
.PHONY: fuzz-campaign
fuzz-campaign:
	@[ "$$($(CARGO) fuzz --version 2>/dev/null)" = "cargo-fuzz $(CARGO_FUZZ_VERSION)" ] || \
	  { echo "cargo install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked"; exit 1; }
	CARGO=$(CARGO) CARGO_BUILD_BUILD_DIR=$(FUZZ_BUILD_DIR) FUZZ_TARGETS='$(FUZZ_TARGETS)' \
	  FUZZ_CAMPAIGN_SECONDS=$(FUZZ_CAMPAIGN_SECONDS) scripts/fuzz_campaign.sh

print-cargo-fuzz-version:
	@echo $(CARGO_FUZZ_VERSION)

# For scripts/bench.sh: the floors go through the policy's wasm-opt pass.
print-wasm-opt-features:
	@echo $(WASM_OPT_FEATURES)

.PHONY: print-wasm-opt print-cargo-cyclonedx
print-wasm-opt:
	@echo $(WASM_OPT)

print-cargo-cyclonedx:
	@echo $(CARGO_CYCLONEDX)

print-module:
	@echo $(MODULE)

.PHONY: print-dist-runner
print-dist-runner:
	@echo $(DIST_RUNNER)

# The checkout whose sources the shared cache was last built from (see
# CACHE_DIR); running any target makes it this one.
cache-owner:
	@cat '$(CACHE_DIR)/checkout'

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm

# The shared build cache (CACHE_DIR, several GB) outlives the clone: this
# removes it. The next build of any checkout starts cold.
.PHONY: clean-cache
clean-cache:
	@du -sh '$(CACHE_DIR)' 2>/dev/null || true
	rm -rf '$(CACHE_DIR)'

# Times the policy against the floor modules (accept, echo, look-up) on
# every scenario in test_data/bench and prints a markdown table and the
# module sizes (BENCHMARKS.md). ITERATIONS / WARMUP tune the run.
.PHONY: bench profile bench-compare
bench:
	@CARGO=$(CARGO) scripts/bench.sh

# This checkout's policy against an earlier revision's, scenario by
# scenario, the two taking turns in one run: `make bench-compare BASE=<rev>`.
bench-compare:
	@CARGO=$(CARGO) BASE=$(BASE) scripts/bench-compare.sh

# What each piece of performance machinery saves against its plain form
# (test_data/bench/pieces/*.patch), in callgrind instructions per fresh
# evaluation, on every scenario but the two 10,000-gate ones.
.PHONY: bench-pieces
bench-pieces:
	@CARGO=$(CARGO) scripts/bench-pieces.sh

# How long `policy-runner audit` takes on the bundled 10,000-object dump
# (test_data/dumps/scale), per output format: median of RUNS (default 10)
# runs, with hyperfine when it is installed (BENCHMARKS.md, "Audit at scale").
.PHONY: audit-bench
audit-bench: $(RUNNER)
	@RUNNER=$(RUNNER) scripts/audit_scale.sh

# What `policy-runner audit --cluster` and `--fix` cost at a real control
# plane's size against the test bed (BENCHMARKS.md, "Live audit and --fix"):
# a live audit of 10,000, 50,000 and 100,000 objects (wall time, requests by
# verb, peak memory, each within its bound), then --fix of 10,000 deviating
# objects at --qps 100 (scripts/bench-live-audit.sh). Starts the test bed
# when none runs, and stops it afterwards.
.PHONY: bench-live-audit
bench-live-audit: annotated-policy.wasm $(RUNNER)
	@RUNNER=$(RUNNER) scripts/bench-live-audit.sh

# Where each scenario's time goes, phase by phase, natively (after bench).
profile:
	@scripts/profile.sh

# Where one scenario's instructions go in the wasm module, function by
# function (scripts/wasm-profile.py: callgrind over the runner, the guest's
# functions named by wasmtime's perf map): `make wasm-profile
# SCENARIO=xr-aws-50`. Builds the module with its names kept, apart from
# the shipped one (target/wasm-profile).
SCENARIO ?= xr-aws-50
.PHONY: wasm-profile
wasm-profile: $(RUNNER)
	CARGO_PROFILE_RELEASE_STRIP=false CARGO_TARGET_DIR=target/wasm-profile \
	  $(CARGO) rustc --target=wasm32-wasip1 --release --locked -p metadata-propagation-policy --lib --crate-type cdylib
	$(RUNNER) annotate -m policy-metadata.yml -o target/wasm-profile/annotated.wasm \
	  target/wasm-profile/wasm32-wasip1/release/metadata_propagation_policy.wasm
	@args=$$(awk -F'\t' -v s='$(SCENARIO)' '$$1 == s { print $$2, $$3, $$4 }' test_data/bench/scenarios.tsv); \
	  [ -n "$$args" ] || { echo "no scenario $(SCENARIO) in test_data/bench/scenarios.tsv" >&2; exit 1; }; \
	  scripts/wasm-profile.py $(RUNNER) target/wasm-profile/annotated.wasm $$args

# The static explain page (web/): the policy core compiled to
# wasm32-unknown-unknown and bound with wasm-bindgen into web/pkg/ (needs
# `cargo install wasm-bindgen-cli --version <crates/web's wasm-bindgen> --locked`),
# and its end-to-end test in headless Chromium (Debian's chromium and
# chromium-driver) against the page served from 127.0.0.1. The layer's
# native unit tests are part of `unit-tests`.
.PHONY: web web-test
web:
	@CARGO=$(CARGO) scripts/web.sh build

web-test: web
	@scripts/web.sh test

# Distribution (docs/releasing.md).
#
# `make push REGISTRY=host[:port]/repository [TAG=vX.Y.Z]` pushes
# annotated-policy.wasm (or PUSH_MODULE, a release folder's) as an OCI
# artifact, with kwctl when KWCTL is a real kwctl (`kwctl push -o json`), else
# with the runner, and prints the immutable reference (…@sha256:…).
# Credentials come from the Docker config (`docker login`). A loopback
# registry (127.*, localhost) is reached over plain HTTP through a kwctl
# sources file; anything else over HTTPS.
POLICY_VERSION := $(shell sed -n 's/^ *io\.kubewarden\.policy\.version: *//p' policy-metadata.yml)
TAG ?= v$(POLICY_VERSION)
PUSH_MODULE ?= annotated-policy.wasm
PUSH_TOOL := $(if $(filter kwctl,$(notdir $(KWCTL))),$(KWCTL),$(RUNNER))
PUSH_DEP := $(if $(filter $(RUNNER),$(PUSH_TOOL)),$(RUNNER),)

.PHONY: push
push: $(PUSH_MODULE) $(PUSH_DEP)
	@test -n "$(REGISTRY)" || { echo "usage: make push REGISTRY=host[:port]/repository [TAG=$(TAG)] [PUSH_MODULE=file]" >&2; exit 2; }
	@set -euo pipefail; \
	uri="$(REGISTRY):$(TAG)"; uri="$${uri#registry://}"; host="$${uri%%/*}"; \
	sources=$$(mktemp); trap 'rm -f "$$sources"' EXIT; flags=(); \
	case "$$host" in 127.*|localhost|localhost:*) \
	  printf 'insecure_sources:\n  - "%s"\n' "$$host" >"$$sources"; flags=(--sources-path "$$sources");; \
	esac; \
	out=$$($(PUSH_TOOL) push "$${flags[@]}" -o json $(PUSH_MODULE) "registry://$$uri"); \
	jq -r .immutable_ref <<<"$$out"

# `make push-runner-image REGISTRY=host[:port]/repository [TAG=vX.Y.Z]` pushes
# the runner's image (PUSH_IMAGE: by default the one `make runner-image`
# writes, or a release folder's) with `cosign load`, which uploads an OCI
# image layout as it is, so the registry holds the manifest whose digest the
# layout names (the release notes print it): the registry's answer for the
# tag is checked against it (`cosign triangulate`, deprecated for cosign 4 but
# in the pinned 3.1.3, names the signature tag of the digest the registry
# resolves). Then it prints the immutable reference.
# Credentials and loopback registries as for `make push`.
PUSH_IMAGE ?= $(RUNNER_IMAGE)
.PHONY: push-runner-image
push-runner-image: $(PUSH_IMAGE)
	@test -n "$(REGISTRY)" || { echo "usage: make push-runner-image REGISTRY=host[:port]/repository [TAG=$(TAG)] [PUSH_IMAGE=file]" >&2; exit 2; }
	@set -euo pipefail; cosign='$(COSIGN_BIN)'; \
	uri="$(REGISTRY):$(TAG)"; uri="$${uri#registry://}"; host="$${uri%%/*}"; flags=(); \
	case "$$host" in 127.*|localhost|localhost:*) flags=(--allow-http-registry);; esac; \
	layout=$$(mktemp -d); trap 'rm -rf "$$layout"' EXIT; \
	tar -xf '$(PUSH_IMAGE)' -C "$$layout"; \
	digest=$$(jq -r '.manifests[0].digest' "$$layout/index.json"); \
	"$$cosign" load "$${flags[@]}" --dir "$$layout" "$$uri" >&2; \
	sig=$$("$$cosign" triangulate "$${flags[@]}" "$$uri" 2> >(grep -v '^Command "triangulate" is deprecated' >&2)); \
	[ "$${sig##*:}" = "sha256-$${digest#sha256:}.sig" ] || \
	  { echo "make push-runner-image: the registry's $$uri is $${sig##*:}, not the layout's $$digest" >&2; exit 1; }; \
	echo "$${uri%:*}@$$digest"

# `make release VERSION=x.y.z`: the release folder RELEASE_DIR
# (target/release-x.y.z/): the annotated module, policy.wasm, their SBOM
# (CycloneDX), artifacthub-pkg.yml at the version with the module's digest,
# the static runner with its SBOM and its image (make static-runner),
# SHA256SUMS, the release notes from CHANGELOG.md with the digests to pin, and
# build-info.txt (scripts/release.sh says what each holds). It refuses, before
# building anything, a version CHANGELOG.md lacks, one Cargo.toml and
# policy-metadata.yml do not carry, and a working tree with uncommitted changes.
RELEASE_DIR ?= target/release-$(VERSION)
.PHONY: release
release:
	@scripts/release.sh preflight '$(VERSION)'
	@$(MAKE) --no-print-directory policy.wasm $(RUNNER) $(CARGO_CYCLONEDX) $(DIST_RUNNER)
	@RUNNER=$(RUNNER) WASM_OPT=$(WASM_OPT) CARGO_CYCLONEDX=$(CARGO_CYCLONEDX) CARGO=$(CARGO) \
	  DIST_RUNNER=$(DIST_RUNNER) DIST_TARGET=$(DIST_TARGET) \
	  $(ARTIFACTHUB_ENV) scripts/release.sh assemble '$(VERSION)' '$(RELEASE_DIR)'

# Two builds of the committed HEAD, each `make release` in a fresh clone in
# its own directory with empty cargo build and target directories, agree
# byte for byte (scripts/check_reproducible.sh). Not in `check`: two cold
# builds of the module take minutes; .ci/run runs it in its side lane.
.PHONY: check-reproducible
check-reproducible: $(RUNNER) $(WASM_OPT) $(CARGO_CYCLONEDX)
	scripts/check_reproducible.sh

# `make sign REF=<registry/repository@sha256:…> [SBOM=file] [COSIGN_KEY=file]`
# signs a pushed module (or the runner's image) with cosign (built from cluster/components/cosign)
# and attaches SBOM as a signed CycloneDX attestation, both in cosign's
# classic form (the `sha256-<digest>.sig` and `.att` tags), which kwctl and
# policy-server read, as Kubewarden signs its own policies; cosign 3's
# Sigstore bundles (OCI referrers) are not read by them yet. With COSIGN_KEY
# (its password in COSIGN_PASSWORD): a key pair and no transparency log, as
# the offline tests sign. Without: keyless, through Fulcio and Rekor with the
# CI's OIDC identity (the release workflow).
COSIGN_BIN = $(shell cluster/components/build.sh cosign)/cosign
COSIGN_FLAGS = --yes --new-bundle-format=false --use-signing-config=false \
  $(if $(COSIGN_KEY),--key '$(COSIGN_KEY)' --tlog-upload=false) \
  $(if $(filter 127.% localhost localhost:%,$(firstword $(subst /, ,$(REF)))),--allow-http-registry)
.PHONY: sign
sign:
	@test -n "$(REF)" || { echo "usage: make sign REF=<registry/repository@sha256:…> [SBOM=sbom.cdx.json] [COSIGN_KEY=cosign.key]" >&2; exit 2; }
	@case '$(REF)' in *@sha256:*) ;; *) echo "make sign: REF must name a digest (…@sha256:…), as make push prints it" >&2; exit 2;; esac
	@set -euo pipefail; cosign='$(COSIGN_BIN)'; ref='$(REF)'; ref=$${ref#registry://}; \
	{ "$$cosign" sign $(COSIGN_FLAGS) "$$ref" && \
	  if [ -n '$(SBOM)' ]; then "$$cosign" attest $(COSIGN_FLAGS) --type cyclonedx --predicate '$(SBOM)' "$$ref"; fi; \
	} 2> >(grep -v -e '^Flag --[a-z-]* has been deprecated' >&2)

# artifacthub-pkg.yml, generated from policy-metadata.yml and
# questions-ui.yml (`--questions-path`, as kwctl takes it) by the runner's
# `scaffold artifacthub`, which writes what kwctl 1.35 writes. createdAt is
# SOURCE_DATE_EPOCH, by default the committer date of the last commit that
# touched either file, so regenerating gives the same bytes; check-artifacthub ignores
# createdAt (as Kubewarden's check-artifacthub action does) and fails when
# anything else in the committed file is stale.
ARTIFACTHUB_EPOCH = $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct -- policy-metadata.yml questions-ui.yml 2>/dev/null))
ARTIFACTHUB_ENV = $(if $(ARTIFACTHUB_EPOCH),SOURCE_DATE_EPOCH=$(ARTIFACTHUB_EPOCH))
ARTIFACTHUB = $(ARTIFACTHUB_ENV) \
  $(RUNNER) scaffold artifacthub --metadata-path policy-metadata.yml --questions-path questions-ui.yml

.PHONY: artifacthub-pkg.yml check-artifacthub
artifacthub-pkg.yml: $(RUNNER)
	$(ARTIFACTHUB) --output $@

check-artifacthub: $(RUNNER)
	@set -euo pipefail; tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	$(ARTIFACTHUB) --output "$$tmp"; \
	if ! diff -u --ignore-matching-lines='^createdAt: ' artifacthub-pkg.yml "$$tmp"; then \
	  echo "artifacthub-pkg.yml is stale (the diff shows what policy-metadata.yml now gives): run 'make artifacthub-pkg.yml' and commit it" >&2; \
	  exit 1; \
	fi; \
	echo "artifacthub-pkg.yml is up to date"
