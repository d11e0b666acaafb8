//! End-to-end: the `policy-runner` binary against a tiny waPC guest.
//!
//! The guest (tests/data/wapc_guest.wat) accepts only `{}` settings, logs one
//! record and answers `validate` by looking up MachineDeployment md-0 and
//! returning it as the mutated object (an object named `no-lookup` it
//! accepts without the look-up), so every host path is exercised:
//! settings refusal, logging, the allow-list, replay success, replay error,
//! replay mismatch, patch building, and `annotate`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

const RUNNER: &str = env!("CARGO_BIN_EXE_policy-runner");

const DENIED: &str = "internal server error: Guest call failure: Policy has not been granted access to Kubernetes cluster.x-k8s.io/v1beta1/MachineDeployment resources. The violation has been reported.";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh scratch directory per call, so tests can run in parallel.
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "e2e-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The guest compiled to a binary module, unannotated.
fn guest(dir: &Path) -> PathBuf {
    let module = wat::parse_file(data("wapc_guest.wat")).unwrap();
    let path = dir.join("policy.wasm");
    std::fs::write(&path, module).unwrap();
    path
}

fn runner(args: &[&str]) -> Output {
    Command::new(RUNNER).args(args).output().unwrap()
}

/// The guest annotated by `policy-runner annotate` with tests/data/metadata.yml.
fn annotated_guest(dir: &Path) -> PathBuf {
    let policy = guest(dir);
    let annotated = dir.join("annotated-policy.wasm");
    let output = runner(&[
        "annotate",
        "--metadata-path",
        data("metadata.yml").to_str().unwrap(),
        "--output-path",
        annotated.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    annotated
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Runs `run` and returns the single JSON line printed on stdout.
fn run_ok(extra: &[&str], policy: &Path) -> (Value, String) {
    let output = run_output(extra, policy);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = stdout(&output);
    assert_eq!(out.lines().count(), 1, "stdout must be one line: {out}");
    (serde_json::from_str(&out).unwrap(), stderr(&output))
}

/// `run` on tests/data/machinedeployment_create.json with `extra` flags.
fn run_output(extra: &[&str], policy: &Path) -> Output {
    let request = data("machinedeployment_create.json");
    let mut args = vec!["run", "--request-path", request.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push(policy.to_str().unwrap());
    runner(&args)
}

/// `run` with context-aware access and the session `replay` (in tests/data).
fn run_replayed(replay: &str, policy: &Path) -> (Value, String) {
    let replay = data(replay);
    let replay = replay.to_str().unwrap();
    let flags = [
        "--allow-context-aware",
        "--replay-host-capabilities-interactions",
        replay,
    ];
    run_ok(&flags, policy)
}

#[test]
fn run_annotated_guest_mutates_from_replay() {
    let dir = scratch();
    let policy = annotated_guest(&dir);

    let (response, err) = run_replayed("replay_md0_found.yml", &policy);

    let patch = STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "a"}}])
    );
    assert_eq!(
        response["uid"],
        json!("1299d386-525b-4032-98ae-1949f69f9cfc")
    );
    assert_eq!(response["allowed"], json!(true));
    assert_eq!(response["patchType"], json!("JSONPatch"));
    assert_eq!(response["auditAnnotations"], Value::Null);
    assert_eq!(response["warnings"], Value::Null);
    assert!(response.get("status").is_none());
    assert!(
        err.contains(r#"INFO policy_log: guest says hello {"policy":"test-guest"}"#),
        "{err}"
    );
}

#[test]
fn run_unannotated_guest_is_denied_lookup_with_allow_flag() {
    let dir = scratch();
    let policy = guest(&dir);

    let (response, err) = run_replayed("replay_md0_found.yml", &policy);

    assert_eq!(
        response,
        json!({
            "uid": "1299d386-525b-4032-98ae-1949f69f9cfc",
            "allowed": false,
            "status": {"message": DENIED, "code": 500},
            "auditAnnotations": null,
            "warnings": null
        })
    );
    assert!(err.contains("Policy is not annotated"), "{err}");
}

#[test]
fn run_annotated_guest_is_denied_lookup_without_allow_flag() {
    let dir = scratch();
    let policy = annotated_guest(&dir);

    let (response, err) = run_ok(&[], &policy);

    assert_eq!(response["status"]["message"], json!(DENIED));
    assert!(err.contains("--allow-context-aware"), "{err}");
}

/// tests/data/machinedeployment_create.json with the object renamed
/// `no-lookup`, which the guest accepts without a look-up.
fn no_lookup_request(dir: &Path) -> PathBuf {
    let mut request: Value = serde_json::from_str(
        &std::fs::read_to_string(data("machinedeployment_create.json")).unwrap(),
    )
    .unwrap();
    request["object"]["metadata"]["name"] = json!("no-lookup");
    let path = dir.join("no_lookup.json");
    std::fs::write(&path, request.to_string()).unwrap();
    path
}

#[test]
fn run_warns_that_lookups_are_denied_only_when_one_was() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let no_lookup = no_lookup_request(&dir);
    let no_lookup = no_lookup.to_str().unwrap();

    // the annotated module without --allow-context-aware: the look-up is
    // denied, and kwctl's notices say why and what to do, after the
    // host's error naming the resource
    let (denied, err) = run_ok(&[], &policy);
    assert_eq!(denied["status"]["message"], json!(DENIED));
    let refused = err
        .find(
            "ERROR policy-runner: policy tried to access cluster.x-k8s.io/v1beta1/MachineDeployment, which is not in its allow-list",
        )
        .unwrap_or_else(|| panic!("{err}"));
    let warned = err
        .find(
            "WARN policy-runner: Policy requires access to Kubernetes resources at evaluation time. During this execution the access to Kubernetes resources is denied.",
        )
        .unwrap_or_else(|| panic!("{err}"));
    assert!(refused < warned, "{err}");
    assert!(
        err.contains("with the `--allow-context-aware` flag"),
        "{err}"
    );

    // the same module on a request it answers without a look-up: nothing
    // was denied, nothing to warn about
    let output = runner(&["run", "--request-path", no_lookup, policy.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let response: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(response["allowed"], json!(true), "{response}");
    assert!(
        !stderr(&output).contains("policy-runner"),
        "{}",
        stderr(&output)
    );

    // --allow-context-aware on an unannotated module: said only when the
    // look-up it did not grant was made
    let unannotated = guest(&dir);
    let (_, err) = run_ok(&["--allow-context-aware"], &unannotated);
    assert!(
        err.contains("WARN policy-runner: Policy is not annotated"),
        "{err}"
    );
    let output = runner(&[
        "run",
        "--allow-context-aware",
        "--request-path",
        no_lookup,
        unannotated.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("policy-runner"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn run_replay_error_reaches_guest_with_callback_prefix() {
    let dir = scratch();
    let policy = annotated_guest(&dir);

    let (response, _) = run_replayed("replay_md0_not_found.yml", &policy);

    assert_eq!(
        response["status"],
        json!({
            "message": "internal server error: Guest call failure: Callback evaluation failure: Cannot find cluster.x-k8s.io/v1beta1/MachineDeployment named 'md-0' inside of namespace 'Some(\"default\")'",
            "code": 500
        })
    );
}

#[test]
fn run_replay_mismatch_names_expected_and_received() {
    let dir = scratch();
    let policy = annotated_guest(&dir);

    let (response, err) = run_replayed("replay_md1_found.yml", &policy);

    // stderr names both whole, masks included, whatever the policy does
    // with the message it gets
    assert!(
        err.contains(
            "ERROR policy-runner: Replay error: unexpected request. Was expecting \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-1 in namespace default \
             (disable_cache: false, field_masks: none), got \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-0 in namespace default \
             (disable_cache: false, field_masks: none) instead"
        ),
        "{err}"
    );
    assert_eq!(
        response["status"]["message"],
        json!(
            "internal server error: Guest call failure: Callback evaluation failure: \
             Replay error: unexpected request. Was expecting \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-1 in namespace default \
             (disable_cache: false, field_masks: none), got \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-0 in namespace default \
             (disable_cache: false, field_masks: none) instead"
        )
    );
}

/// `run` with context-aware access and `extra` flags; the raw output.
fn run_raw(extra: &[&str], policy: &Path) -> Output {
    run_output(&[&["--allow-context-aware"], extra].concat(), policy)
}

/// `run` with context-aware access, look-ups answered from `parents`.
fn run_with_parents(parents: &Path, policy: &Path) -> (Value, String) {
    let flags = [
        "--allow-context-aware",
        "--parents",
        parents.to_str().unwrap(),
    ];
    run_ok(&flags, policy)
}

#[test]
fn run_parents_answers_lookups_from_objects_and_reports_the_unasked() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let parents = data("parents_md0_md1.yaml");

    let (from_parents, err) = run_with_parents(&parents, &policy);
    let (from_replay, _) = run_replayed("replay_md0_found.yml", &policy);

    assert_eq!(from_parents, from_replay);
    assert_eq!(from_parents["patchType"], json!("JSONPatch"));
    assert!(
        err.contains(
            "WARN policy-runner: --parents object cluster.x-k8s.io/v1beta1/MachineDeployment \
             default/md-1 ("
        ),
        "{err}"
    );
    assert!(!err.contains("default/md-0 ("), "{err}");
}

#[test]
fn run_parents_without_the_object_answers_the_hosts_not_found() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let only_md1 = dir.join("md1.yaml");
    let parents = std::fs::read_to_string(data("parents_md0_md1.yaml")).unwrap();
    let list: Value = serde_norway::from_str(&parents).unwrap();
    std::fs::write(&only_md1, serde_json::to_string(&list["items"][1]).unwrap()).unwrap();

    let (response, _) = run_with_parents(&only_md1, &policy);
    let (replayed, _) = run_replayed("replay_md0_not_found.yml", &policy);

    assert_eq!(response, replayed);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .ends_with("Cannot find cluster.x-k8s.io/v1beta1/MachineDeployment named 'md-0' inside of namespace 'Some(\"default\")'"),
        "{response}"
    );
}

#[test]
fn run_record_session_replays_to_the_same_response() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let parents = data("parents_md0_md1.yaml");
    let session = dir.join("session.yml");

    let recorded = run_raw(
        &[
            "--parents",
            parents.to_str().unwrap(),
            "--record-session",
            session.to_str().unwrap(),
        ],
        &policy,
    );
    let replayed = run_raw(
        &[
            "--replay-host-capabilities-interactions",
            session.to_str().unwrap(),
        ],
        &policy,
    );

    assert!(recorded.status.success(), "{}", stderr(&recorded));
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    assert_eq!(stdout(&recorded), stdout(&replayed));
    let session = std::fs::read_to_string(&session).unwrap();
    assert!(
        session.starts_with(
            "- type: Exchange\n  request: |\n    !KubernetesGetResource\n    \
             api_version: cluster.x-k8s.io/v1beta1\n    kind: MachineDeployment\n    name: md-0\n"
        ),
        "{session}"
    );
    assert_eq!(session.matches("type: Exchange").count(), 1, "{session}");
    assert!(!stderr(&replayed).contains("WARN"), "{}", stderr(&replayed));
}

#[test]
fn run_refuses_parents_and_a_replay_session_together() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let parents = data("parents_md0_md1.yaml");
    let replay = data("replay_md0_found.yml");

    let output = run_raw(
        &[
            "--parents",
            parents.to_str().unwrap(),
            "--replay-host-capabilities-interactions",
            replay.to_str().unwrap(),
        ],
        &policy,
    );

    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("cannot be used with"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn run_invalid_settings_exits_1_with_policy_message() {
    let dir = scratch();
    let policy = guest(&dir);
    let request = data("machinedeployment_create.json");

    let output = runner(&[
        "run",
        "--request-path",
        request.to_str().unwrap(),
        "--settings-json",
        r#"{"unexpected": true}"#,
        policy.to_str().unwrap(),
    ]);

    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "");
    assert_eq!(
        stderr(&output),
        "Error: Provided settings are not valid: only {} is accepted\n"
    );
}

#[test]
fn run_accepts_admission_review_and_yaml_settings_file() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let request: Value = serde_json::from_str(
        &std::fs::read_to_string(data("machinedeployment_create.json")).unwrap(),
    )
    .unwrap();
    let review = dir.join("review.json");
    std::fs::write(
        &review,
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
            .to_string(),
    )
    .unwrap();
    let settings = dir.join("settings.yml");
    std::fs::write(&settings, "# no settings\n").unwrap();
    let replay = data("replay_md0_found.yml");

    let output = runner(&[
        "run",
        "--request-path",
        review.to_str().unwrap(),
        "--settings-path",
        settings.to_str().unwrap(),
        "--allow-context-aware",
        "--replay-host-capabilities-interactions",
        replay.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);

    assert!(output.status.success(), "{}", stderr(&output));
    let response: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(response["allowed"], json!(true));
    assert_eq!(response["patchType"], json!("JSONPatch"));
}

#[test]
fn run_conflicting_settings_flags_is_a_usage_error() {
    let output = runner(&[
        "run",
        "--request-path",
        "r.json",
        "--settings-json",
        "{}",
        "--settings-path",
        "s.yml",
        "p.wasm",
    ]);

    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(
        err.contains("--settings-json") && err.contains("--settings-path"),
        "{err}"
    );
}

#[test]
fn annotate_embeds_metadata_and_refuses_a_second_time() {
    let dir = scratch();
    let policy = annotated_guest(&dir);

    let output = runner(&[
        "annotate",
        "--metadata-path",
        data("metadata.yml").to_str().unwrap(),
        "--output-path",
        dir.join("twice.wasm").to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);

    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "Error: {} is already annotated: it has a `io.kubewarden.metadata` custom section\n",
            policy.display()
        )
    );
}

#[test]
fn annotate_records_protocol_version_and_usage() {
    let dir = scratch();
    let policy = guest(&dir);
    let readme = dir.join("README.md");
    std::fs::write(&readme, "Usage text").unwrap();
    let annotated = dir.join("annotated-policy.wasm");

    let output = runner(&[
        "annotate",
        "--metadata-path",
        data("metadata.yml").to_str().unwrap(),
        "--usage-path",
        readme.to_str().unwrap(),
        "--output-path",
        annotated.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);

    assert!(output.status.success(), "{}", stderr(&output));
    let original = std::fs::read(&policy).unwrap();
    let bytes = std::fs::read(&annotated).unwrap();
    assert_eq!(&bytes[..original.len()], &original[..]);
    let appended = String::from_utf8_lossy(&bytes[original.len()..]);
    for expected in [
        "io.kubewarden.metadata",
        r#""protocolVersion":"v1""#,
        r#""io.kubewarden.policy.usage":"Usage text""#,
        r#""contextAwareResources":[{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment"}]"#,
    ] {
        assert!(appended.contains(expected), "{expected} not in {appended}");
    }
}

/// `bench` of the annotated guest on the md-0 request and session, 5
/// timed evaluations, with `extra` flags before the module.
fn bench_md0(extra: impl Fn(&str) -> Vec<String>) -> Output {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let request = data("machinedeployment_create.json");
    let replay = data("replay_md0_found.yml");
    let policy = policy.to_str().unwrap();
    let mut args: Vec<String> = [
        "bench",
        "--request-path",
        request.to_str().unwrap(),
        "--allow-context-aware",
        "--replay-host-capabilities-interactions",
        replay.to_str().unwrap(),
        "--iterations",
        "5",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(extra(policy));
    args.push(policy.to_owned());
    runner(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn bench_replays_the_session_on_every_evaluation_and_compares_with_floor() {
    // Without a rewind the second evaluation would find the one-entry
    // session exhausted, answer differently and fail the determinism check.
    let output = bench_md0(|policy| {
        [
            "--warmup",
            "2",
            "--accept-floor",
            policy,
            "--echo-floor",
            policy,
            "--output",
            "json",
        ]
        .map(str::to_owned)
        .to_vec()
    });

    // The guest answers one validate per instance: 7 evaluations succeed
    // only on a fresh instance each.
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["instance"], json!("fresh"));
    assert_eq!(report["iterations"], json!(5));
    assert_eq!(report["policy"]["stats"]["samples"], json!(5));
    assert_eq!(
        report["policy"]["answer"]["accepted"],
        json!(true),
        "{report}"
    );
    assert_eq!(report["policy"]["answer"]["mutated"], json!(true));
    assert_eq!(report["policy"]["answer"]["lookups"], json!(1));
    assert_eq!(report["policy"]["answer"]["unreplayed"], json!(0));
    // the floors are given the same session (here: the same guest)
    assert_eq!(report["accept_floor"]["answer"]["lookups"], json!(1));
    assert_eq!(report["echo_floor"]["answer"]["lookups"], json!(1));
    // the guest mutates: the ratio is to the echo floor
    assert_eq!(report["mutates"], json!(true));
    assert_eq!(report["ratio_to"], json!("echo floor"));
    assert!(report["ratio"].as_f64().unwrap() > 0.0, "{report}");
    let stats = &report["policy"]["stats"];
    assert!(stats["min_us"].as_f64() <= stats["median_us"].as_f64());
    assert!(stats["median_us"].as_f64() <= stats["p99_us"].as_f64());
}

#[test]
fn bench_reuse_instance_evaluates_on_the_instance_that_validated_the_settings() {
    let output = bench_md0(|_| vec!["--reuse-instance".to_owned()]);

    // validate_settings does not count; the second validate on the one
    // instance is refused by the guest.
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("instance reused"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn run_evaluates_on_a_fresh_instance_or_on_the_settings_instance() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let request = data("machinedeployment_create.json");
    let replay = data("replay_md0_found.yml");
    for reuse in [false, true] {
        let mut args = vec![
            "run",
            "--request-path",
            request.to_str().unwrap(),
            "--allow-context-aware",
            "--replay-host-capabilities-interactions",
            replay.to_str().unwrap(),
        ];
        if reuse {
            args.push("--reuse-instance");
        }
        args.push(policy.to_str().unwrap());

        let output = runner(&args);

        // Either way the instance has answered no validate before this one.
        assert!(output.status.success(), "{}", stderr(&output));
        let response: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(
            response["allowed"],
            json!(true),
            "reuse {reuse}: {response}"
        );
    }
}

#[test]
fn bench_refuses_invalid_settings_like_run() {
    let dir = scratch();
    let policy = guest(&dir);
    let request = data("machinedeployment_create.json");

    let output = runner(&[
        "bench",
        "--request-path",
        request.to_str().unwrap(),
        "--settings-json",
        "{\"unexpected\": true}",
        policy.to_str().unwrap(),
    ]);

    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("Provided settings are not valid"),
        "{}",
        stderr(&output)
    );
}

/// `args` with stdout a pipe whose reader is already closed, as `… | head`
/// leaves it once `head` has read enough.
fn into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(RUNNER)
        .args(args)
        .stdout(writer)
        .output()
        .unwrap()
}

#[test]
fn a_closed_pipe_ends_explain_and_run_quietly_as_coreutils_do() {
    let request = data("machinedeployment_create.json");
    let explained = into_closed_pipe(&["explain", "-r", request.to_str().unwrap()]);
    assert_eq!(stderr(&explained), "");
    assert_eq!(explained.status.code(), Some(141));

    let dir = scratch();
    let policy = guest(&dir);
    let ran = into_closed_pipe(&[
        "run",
        "-r",
        request.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);
    assert!(!stderr(&ran).contains("panicked"), "{}", stderr(&ran));
    assert_eq!(ran.status.code(), Some(141));
}

/// The object of tests/data/machinedeployment_create.json, alone, as YAML
/// in `dir` (what `kubectl get -o yaml` gives), with `labels` unless null.
fn bare_md0(dir: &Path, name: &str, labels: Value) -> PathBuf {
    let request: Value = serde_json::from_str(
        &std::fs::read_to_string(data("machinedeployment_create.json")).unwrap(),
    )
    .unwrap();
    let mut object = request["object"].clone();
    if !labels.is_null() {
        object["metadata"]["labels"] = labels;
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_norway::to_string(&object).unwrap()).unwrap();
    path
}

/// `run` on `request` with context-aware access, look-ups answered from
/// tests/data/parents_md0_md1.yaml, and `extra` flags.
fn run_on(request: &Path, extra: &[&str], policy: &Path) -> Output {
    let parents = data("parents_md0_md1.yaml");
    let mut args = vec![
        "run",
        "--allow-context-aware",
        "--parents",
        parents.to_str().unwrap(),
        "--request-path",
        request.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push(policy.to_str().unwrap());
    runner(&args)
}

#[test]
fn run_names_every_missing_or_wrong_envelope_field_at_once() {
    let dir = scratch();
    let policy = guest(&dir);
    let request = dir.join("request.json");
    let envelope = json!({"kind": "MachineDeployment", "operation": "CREATE", "userInfo": [],
                          "object": {"metadata": {"name": "md-0"}}});
    std::fs::write(&request, envelope.to_string()).unwrap();

    let output = runner(&[
        "run",
        "-r",
        request.to_str().unwrap(),
        policy.to_str().unwrap(),
    ]);

    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        format!(
            "Error: invalid request file {}: cannot build AdmissionRequest object from given \
             input: `uid` is missing (it must be a string); `kind` must be an object, not a \
             string; `resource` is missing (it must be an object); `userInfo` must be an \
             object, not an array\n",
            request.display()
        )
    );
}

#[test]
fn run_without_operation_refuses_a_bare_object_and_suggests_it() {
    let dir = scratch();
    let policy = guest(&dir);
    let object = bare_md0(&dir, "md-0.yaml", json!({}));

    let output = run_on(&object, &[], &policy);

    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(
        err.contains("this is a MachineDeployment object, not an AdmissionRequest"),
        "{err}"
    );
    assert!(err.contains("Add `--operation CREATE`"), "{err}");
}

#[test]
fn run_builds_a_create_around_a_bare_object_and_says_so() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let object = bare_md0(&dir, "md-0.yaml", Value::Null);

    let output = run_on(&object, &["--operation", "CREATE"], &policy);

    assert!(output.status.success(), "{}", stderr(&output));
    let response: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let (from_request, _) = run_with_parents(&data("parents_md0_md1.yaml"), &policy);
    assert_eq!(response["patch"], from_request["patch"]);
    assert_eq!(
        response["uid"],
        json!("00000000-0000-0000-0000-000000000000")
    );
    let err = stderr(&output);
    assert!(
        err.contains(&format!(
            "INFO policy-runner: {} holds a bare object: built the AdmissionRequest around it: \
             CREATE of cluster.x-k8s.io/v1beta1/MachineDeployment default/md-0, resource \
             machinedeployments, uid 00000000-0000-0000-0000-000000000000, userInfo \
             policy-runner\n",
            object.display()
        )),
        "{err}"
    );
}

#[test]
fn run_builds_an_update_around_a_bare_object_and_its_old_object() {
    let dir = scratch();
    let policy = annotated_guest(&dir);
    let object = bare_md0(&dir, "md-0.yaml", json!({"team": "b"}));
    let old = bare_md0(&dir, "md-0.old.yaml", json!({}));

    let output = run_on(
        &object,
        &[
            "--operation",
            "UPDATE",
            "--old-object",
            old.to_str().unwrap(),
        ],
        &policy,
    );

    assert!(output.status.success(), "{}", stderr(&output));
    let response: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let patch = STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "replace", "path": "/metadata/labels/team", "value": "a"}])
    );
    let err = stderr(&output);
    assert!(
        err.contains(&format!(
            "built the AdmissionRequest around it: UPDATE of \
             cluster.x-k8s.io/v1beta1/MachineDeployment default/md-0, resource \
             machinedeployments, uid 00000000-0000-0000-0000-000000000000, userInfo \
             policy-runner, oldObject {}\n",
            old.display()
        )),
        "{err}"
    );
}

#[test]
fn run_operation_refuses_an_old_object_on_create_and_a_request_file() {
    let dir = scratch();
    let policy = guest(&dir);
    let object = bare_md0(&dir, "md-0.yaml", json!({}));

    let create_with_old = run_on(
        &object,
        &[
            "--operation",
            "CREATE",
            "--old-object",
            object.to_str().unwrap(),
        ],
        &policy,
    );
    assert_eq!(create_with_old.status.code(), Some(1));
    assert!(
        stderr(&create_with_old).contains("is for an UPDATE"),
        "{}",
        stderr(&create_with_old)
    );

    let request = data("machinedeployment_create.json");
    let on_request = run_on(&request, &["--operation", "UPDATE"], &policy);
    assert_eq!(on_request.status.code(), Some(1));
    assert!(
        stderr(&on_request).contains(
            "--operation builds a request around a bare object, but this is already an \
             AdmissionRequest: leave --operation out"
        ),
        "{}",
        stderr(&on_request)
    );
}

#[test]
fn explain_names_the_operation_and_where_it_comes_from() {
    let dir = scratch();
    let object = bare_md0(&dir, "md-0.yaml", json!({}));
    let request = data("machinedeployment_create.json");
    let first_line = |args: &[&str]| {
        let output = runner(args);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output).lines().next().unwrap().to_owned()
    };
    let (object, request) = (object.to_str().unwrap(), request.to_str().unwrap());

    assert_eq!(
        first_line(&["explain", "-r", object]),
        "operation: UPDATE (assumed for a bare object; --operation CREATE explains a CREATE)"
    );
    assert_eq!(
        first_line(&["explain", "-r", object, "--operation", "CREATE"]),
        "operation: CREATE (--operation)"
    );
    assert_eq!(
        first_line(&["explain", "-r", request]),
        "operation: CREATE (the request's)"
    );
    let json = runner(&["explain", "-r", object, "-o", "json"]);
    let json: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(
        (&json["operation"], &json["operationAssumed"]),
        (&json!("UPDATE"), &json!(true))
    );
}

#[test]
fn patch_reads_a_yaml_object_as_run_does_and_patches_it_as_its_json() {
    let dir = scratch();
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "cm", "labels": {"a/b": "1", "drop": "x"}},
                        "data": {"replicas": "3", "enabled": "true"}});
    let as_json = dir.join("object.json");
    std::fs::write(&as_json, object.to_string()).unwrap();
    let as_yaml = dir.join("object.yaml");
    std::fs::write(&as_yaml, serde_norway::to_string(&object).unwrap()).unwrap();
    let patch = dir.join("patch.json");
    std::fs::write(
        &patch,
        json!([
            {"op": "add", "path": "/metadata/labels/c~1d", "value": "2"},
            {"op": "remove", "path": "/metadata/labels/drop"}
        ])
        .to_string(),
    )
    .unwrap();
    let patched = |object: &Path| {
        let output = runner(&[
            "patch",
            "--object",
            object.to_str().unwrap(),
            "--patch",
            patch.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };

    let (from_json, from_yaml) = (patched(&as_json), patched(&as_yaml));

    assert_eq!(from_yaml, from_json);
    let mut expected = object;
    expected["metadata"]["labels"] = json!({"a/b": "1", "c/d": "2"});
    assert_eq!(serde_json::from_str::<Value>(&from_yaml).unwrap(), expected);
}
