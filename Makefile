# Targets as in Kubewarden's own Rust policies (policies/Makefile.rust), plus
# the project's own host: `policy-runner`, a kwctl-compatible subset built
# on wapc + wasmtime, used wherever kwctl is not installed.
SHELL := /bin/bash
CARGO ?= cargo
RUNNER := target/host/policy-runner
# e2e tests and annotation use a real kwctl when given: `make e2e-tests KWCTL=kwctl`.
KWCTL ?= $(RUNNER)
RUNNER_DEP := $(if $(filter $(RUNNER),$(KWCTL)),$(RUNNER),)

POLICY_SOURCES := $(shell find src -name '*.rs') Cargo.toml Cargo.lock
RUNNER_SOURCES := $(shell find crates/runner/src -name '*.rs') crates/runner/Cargo.toml Cargo.lock

.PHONY: all demo check test fmt lint unit-tests e2e-tests fuzz clean

all: annotated-policy.wasm

policy.wasm: $(POLICY_SOURCES)
	@rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1 || rustup target add wasm32-wasip1
	# `cargo rustc --crate-type cdylib`: with crate-type ["cdylib", "rlib"] in
	# Cargo.toml a plain `cargo build` silently skips LTO (rust-lang/cargo#9672),
	# costing 23-40% per evaluation and ~80 KB of module size.
	$(CARGO) rustc --target=wasm32-wasip1 --release --locked -p metadata-propagation-policy --lib --crate-type cdylib
	cp target/wasm32-wasip1/release/metadata_propagation_policy.wasm policy.wasm

$(RUNNER): $(RUNNER_SOURCES)
	$(CARGO) build --locked -p policy-runner --profile host

annotated-policy.wasm: policy.wasm policy-metadata.yml README.md $(RUNNER_DEP)
	rm -f annotated-policy.wasm
	$(KWCTL) annotate -m policy-metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

# Runs the policy on the bundled example objects and prints what it decided.
demo: annotated-policy.wasm $(RUNNER_DEP)
	KWCTL=$(KWCTL) POLICY=annotated-policy.wasm scripts/demo.sh

fmt:
	$(CARGO) fmt --all -- --check

lint:
	$(CARGO) clippy --locked --all-targets -- -D warnings
	$(CARGO) clippy --locked -p policy-runner --all-targets --profile host -- -D warnings

unit-tests:
	$(CARGO) test --locked
	$(CARGO) test --locked -p policy-runner --profile host

test: fmt lint unit-tests

# The mutate suites run through record-kwctl, which logs every invocation;
# validate_mode.bats then replays them all in validate mode (issue 4's
# invariants).
E2E_TMP := e2e-tests/.tmp
e2e-tests: annotated-policy.wasm $(RUNNER_DEP)
	rm -rf $(E2E_TMP) && mkdir -p $(E2E_TMP)
	KWCTL=e2e-tests/record-kwctl KWCTL_REAL=$(KWCTL) KWCTL_RECORD=$(E2E_TMP)/invocations.jsonl \
	  POLICY=annotated-policy.wasm bats e2e-tests/capi.bats e2e-tests/xr.bats
	KWCTL=$(KWCTL) POLICY=annotated-policy.wasm INVOCATIONS=$(E2E_TMP)/invocations.jsonl \
	  bats e2e-tests/validate_mode.bats e2e-tests/robustness.bats

# Everything CI runs: the README's test command.
check: test e2e-tests

# Bounded fuzzing (CI): replay the regression inputs, then FUZZ_SECONDS per
# target. Stable toolchain: RUSTC_BOOTSTRAP enables cargo-fuzz's flags.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := validate_bytes settings_bytes mutated_objects
fuzz:
	@command -v cargo-fuzz >/dev/null || { echo "cargo install cargo-fuzz --locked"; exit 1; }
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  if [ -d regressions/$$t ]; then RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run -O $$t regressions/$$t/* || exit 1; fi; \
	  RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run -O $$t -- -max_total_time=$(FUZZ_SECONDS) || exit 1; \
	done

clean:
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm

# Times the policy against the floor module on every scenario in
# test_data/bench and prints a markdown table and the module sizes
# (BENCHMARKS.md). ITERATIONS / WARMUP tune the run.
.PHONY: bench
bench:
	@CARGO=$(CARGO) scripts/bench.sh
