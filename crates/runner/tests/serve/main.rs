//! End-to-end: `policy-runner serve` as a process, its webhook called over
//! plain HTTP and HTTPS, its look-ups answered by a fake API server through
//! a kubeconfig, and its refusals to start. The guest
//! (tests/data/wapc_guest.wat) looks up MachineDeployment md-0 and answers
//! with it as the mutated object, so a found md-0 labelled `team: a` is a
//! patch, and a failed look-up is a guest error carrying the host's text.

mod support;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hyper::StatusCode;
use serde_json::{Value, json};

use support::{
    Md0, Serve, annotated_guest, fake_api_server, post_http, post_https, review, scratch,
};

const UID: &str = "1299d386-525b-4032-98ae-1949f69f9cfc";

const GRANTED: &str =
    "\n  contextAwareResources: [{apiVersion: cluster.x-k8s.io/v1beta1, kind: MachineDeployment}]";

/// A policies.yml entry for the guest at `module`, with `fields`.
fn entry(id: &str, module: &std::path::Path, fields: &str) -> String {
    format!(
        "{id}:\n  module: file://{}{GRANTED}{fields}\n",
        module.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_reviews_shaped_as_policy_server_answers_them() {
    let dir = scratch();
    let module = annotated_guest(&dir);
    let kubeconfig = fake_api_server(&dir, Md0::Found).await;
    let policies = [
        entry(
            "mutating",
            &module,
            "\n  allowedToMutate: true\n  hostCapabilities: [kubernetes/get_resource]",
        ),
        entry(
            "validating",
            &module,
            "\n  hostCapabilities: [\"kubernetes/*\"]",
        ),
        entry(
            "monitored",
            &module,
            "\n  policyMode: monitor\n  hostCapabilities: [\"*\"]",
        ),
        entry(
            "no-capabilities",
            &module,
            "\n  message: ask the platform team",
        ),
    ]
    .concat();
    let mut serve = Serve::start(&dir, &policies, &kubeconfig, &[]);
    serve.ready().await;
    let port = serve.port;
    let validate = move |id: &'static str| async move {
        post_http(port, &format!("/validate/{id}"), &review()).await
    };

    let (status, answer) = validate("mutating").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
    let response = &answer["response"];
    assert_eq!(
        (&response["uid"], &response["allowed"]),
        (&json!(UID), &json!(true))
    );
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/metadata/labels", "value": {"team": "a"}}])
    );

    let (_, validating) = validate("validating").await;
    assert_eq!(
        validating["response"],
        json!({"uid": UID, "allowed": false,
               "status": {"message": "Request rejected by policy validating. The policy attempted \
                                      to mutate the request, but it is currently configured to \
                                      not allow mutations."},
               "auditAnnotations": null, "warnings": null})
    );

    let (_, monitored) = validate("monitored").await;
    assert_eq!(
        monitored["response"],
        json!({"uid": UID, "allowed": true, "auditAnnotations": null, "warnings": null})
    );

    let (_, denied) = validate("no-capabilities").await;
    assert_eq!(
        denied["response"]["status"],
        json!({"message": "ask the platform team",
               "details": {"causes": [{"reason": null, "field": null,
                   "message": "internal server error: Guest call failure: Policy has not been \
                               granted access to the 'kubernetes/get_resource' host capability. \
                               The violation has been reported."}]},
               "code": 500})
    );

    assert_eq!(
        validate("nope").await,
        (
            StatusCode::NOT_FOUND,
            json!({"message": "unknown policy: nope", "status": 404})
        )
    );
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", serve.port))
        .await
        .unwrap();
    let as_text = support::post("/validate/mutating", "text/plain", &review());
    let (status, _) = support::send(hyper_util::rt::TokioIo::new(tcp), as_text).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let stderr = serve.stderr();
    assert!(serve.terminate().success());
    assert!(
        stderr.contains("WARN policy-runner: POST /validate/nope: 404 Not Found"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "policy=mutating uid={UID} allowed=true mutated=true"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "policy=monitored uid={UID} allowed=true (monitor mode: the policy answered \
             allowed=true mutated=true)"
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_over_https_passes_a_403_to_the_policy_as_an_api_error() {
    let dir = scratch();
    let module = annotated_guest(&dir);
    let kubeconfig = fake_api_server(&dir, Md0::Forbidden).await;
    let policies = entry("p", &module, "\n  hostCapabilities: [\"*\"]");
    let tls = support::data("tls");
    let (cert, key) = (tls.join("serve.crt"), tls.join("serve.key"));
    let flags = [
        "--cert-file",
        cert.to_str().unwrap(),
        "--key-file",
        key.to_str().unwrap(),
    ];
    let mut serve = Serve::start(&dir, &policies, &kubeconfig, &flags);
    serve.ready().await;

    let (status, answer) = post_https(serve.port, "/validate/p", &review()).await;
    assert_eq!(status, StatusCode::OK);
    let status = &answer["response"]["status"];
    assert_eq!(status["code"], 500);
    let message = status["message"].as_str().unwrap();
    let forbidden = "machinedeployments.cluster.x-k8s.io \"md-0\" is forbidden";
    assert!(
        message.starts_with(&format!(
            "internal server error: Guest call failure: Callback evaluation failure: \
             ApiError: {forbidden}: Forbidden (Status {{"
        )),
        "{message}"
    );
    assert!(
        message.ends_with(&format!("\n\nCaused by:\n    {forbidden}: Forbidden")),
        "{message}"
    );
    assert!(serve.terminate().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_without_a_cluster_starts_only_when_told_and_look_ups_then_fail() {
    let dir = scratch();
    let module = annotated_guest(&dir);
    let missing = dir.join("no-kubeconfig");
    let policies = entry("p", &module, "\n  hostCapabilities: [\"*\"]");

    let (status, stderr) = Serve::start(&dir, &policies, &missing, &[]).exits();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "Error: Cannot connect to Kubernetes, context aware policies would not work properly"
        ),
        "{stderr}"
    );

    let flag = ["--ignore-kubernetes-connection-failure"];
    let mut serve = Serve::start(&dir, &policies, &missing, &flag);
    serve.ready().await;
    let (_, answer) = post_http(serve.port, "/validate/p", &review()).await;
    assert_eq!(
        answer["response"]["status"]["message"],
        "internal server error: Guest call failure: Callback evaluation failure: kube::Client \
         was not initialized properly"
    );
    assert!(serve.terminate().success());
}

#[test]
fn serve_refuses_invalid_settings_and_unannotated_modules_as_policy_server_does() {
    let dir = scratch();
    let module = annotated_guest(&dir);
    let missing = dir.join("no-kubeconfig");
    let flag = ["--ignore-kubernetes-connection-failure"];

    let policies = entry("p", &module, "\n  settings: {a: 1}");
    let (status, stderr) = Serve::start(&dir, &policies, &missing, &flag).exits();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Error: policy p: Policy settings are invalid: only {} is accepted"),
        "{stderr}"
    );

    let unannotated = dir.join("policy.wasm");
    let policies = format!("p:\n  module: file://{}\n", unannotated.display());
    let (status, stderr) = Serve::start(&dir, &policies, &missing, &flag).exits();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Policy is missing protocol version"),
        "{stderr}"
    );
}
