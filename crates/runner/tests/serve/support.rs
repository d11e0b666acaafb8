//! What the `serve` tests share: the annotated test guest, a
//! `policy-runner serve` process on free loopback ports, an HTTP(S)
//! client, and a fake API server (discovery and one MachineDeployment)
//! that a kubeconfig points the runner's kube client at.

use std::convert::Infallible;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

pub const RUNNER: &str = env!("CARGO_BIN_EXE_policy-runner");

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh scratch directory per call, so tests can run in parallel.
pub fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "serve-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// tests/data/wapc_guest.wat compiled, and annotated by the runner with
/// tests/data/metadata.yml (policy-server refuses unannotated modules).
pub fn annotated_guest(dir: &Path) -> PathBuf {
    let policy = dir.join("policy.wasm");
    std::fs::write(&policy, wat::parse_file(data("wapc_guest.wat")).unwrap()).unwrap();
    let annotated = dir.join("annotated-policy.wasm");
    let status = Command::new(RUNNER)
        .args(["annotate", "-m"])
        .args([data("metadata.yml"), "-o".into(), annotated.clone(), policy])
        .status()
        .unwrap();
    assert!(status.success());
    annotated
}

/// A running `policy-runner serve`.
pub struct Serve {
    child: Child,
    pub port: u16,
    pub readiness_port: u16,
    stderr: PathBuf,
}

impl Serve {
    /// Starts `serve` on `policies` (YAML text) with `extra` flags and the
    /// kubeconfig at `kubeconfig`, on ports the system picks (port 0): a
    /// port chosen here and bound later could be taken in between by any
    /// outgoing connection. [`Serve::ready`] reads the ports it got.
    pub fn start(dir: &Path, policies: &str, kubeconfig: &Path, extra: &[&str]) -> Serve {
        let file = dir.join("policies.yml");
        std::fs::write(&file, policies).unwrap();
        let stderr = dir.join("serve.stderr");
        let child = Command::new(RUNNER)
            .arg("serve")
            .arg("--policies")
            .arg(&file)
            .args(["--addr", "127.0.0.1", "--port", "0"])
            .args(["--readiness-probe-port", "0"])
            .args(extra)
            .env("KUBECONFIG", kubeconfig)
            .stdout(Stdio::null())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Serve {
            child,
            port: 0,
            readiness_port: 0,
            stderr,
        }
    }

    /// The webhook and readiness ports of serve's "serving …" line, once
    /// it has printed it.
    fn bound_ports(&self) -> Option<(u16, u16)> {
        let stderr = self.stderr();
        let line = stderr.lines().find(|l| l.contains(" policies on "))?;
        let port_after = |marker: &str| -> Option<u16> {
            let rest = &line[line.find(marker)? + marker.len()..];
            let end = rest.find('/').unwrap_or(rest.len());
            rest[..end].parse().ok()
        };
        Some((
            port_after("://127.0.0.1:")?,
            port_after("readiness on http://127.0.0.1:")?,
        ))
    }

    /// What the server printed on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// Waits until `/readiness` answers 200; panics with stderr if the
    /// server exits first or takes over a minute.
    pub async fn ready(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("serve exited with {status}: {}", self.stderr());
            }
            if let Some((port, readiness_port)) = self.bound_ports() {
                (self.port, self.readiness_port) = (port, readiness_port);
                if answers_ok(readiness_port).await {
                    return;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends SIGTERM and waits (10 s at most) for the exit status.
    pub fn terminate(mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
                panic!("serve did not exit on SIGTERM: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (a minute at most) for a server expected to stop by itself.
    pub fn exits(mut self) -> (ExitStatus, String) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("serve kept running: {}", self.stderr());
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `/readiness` on `port` answers 200.
async fn answers_ok(port: u16) -> bool {
    let Ok(tcp) = TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request = Request::get("/readiness")
        .header("host", "127.0.0.1")
        .body(Full::new(Bytes::new()))
        .unwrap();
    send(TokioIo::new(tcp), request).await.0 == StatusCode::OK
}

/// Sends `request` on a new HTTP/1.1 connection over `io`.
pub async fn send<I>(io: I, request: Request<Full<Bytes>>) -> (StatusCode, Vec<u8>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
    tokio::spawn(connection);
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, body.to_vec())
}

/// A POST of `body` to `path` with `content_type`.
pub fn post(path: &str, content_type: &str, body: &Value) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", "127.0.0.1")
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// POSTs `body` as JSON to `path` of the plain-HTTP webhook on `port`.
pub async fn post_http(port: u16, path: &str, body: &Value) -> (StatusCode, Value) {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (status, body) = send(TokioIo::new(tcp), post(path, "application/json", body)).await;
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// POSTs `body` as JSON to `path` of the HTTPS webhook on `port`,
/// trusting only tests/data/tls/ca.crt.
pub async fn post_https(port: u16, path: &str, body: &Value) -> (StatusCode, Value) {
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_file(data("tls/ca.crt")).unwrap();
    roots.add(ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector.connect(name, tcp).await.unwrap();
    let (status, body) = send(TokioIo::new(tls), post(path, "application/json", body)).await;
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// The AdmissionReview tests/data/machinedeployment_create.json makes.
pub fn review() -> Value {
    let request = std::fs::read_to_string(data("machinedeployment_create.json")).unwrap();
    let request: Value = serde_json::from_str(&request).unwrap();
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// How the fake API server answers the GET of MachineDeployment md-0.
#[derive(Debug, Clone, Copy)]
pub enum Md0 {
    /// The object of [`review`], labelled `team: a`.
    Found,
    /// 403, as RBAC refuses a service account.
    Forbidden,
}

const MD0: &str = "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinedeployments/md-0";

fn fake_answer(path: &str, md0: Md0) -> (StatusCode, Value) {
    match (path, md0) {
        ("/apis/cluster.x-k8s.io/v1beta1", _) => (
            StatusCode::OK,
            json!({"kind": "APIResourceList", "apiVersion": "v1",
                   "groupVersion": "cluster.x-k8s.io/v1beta1",
                   "resources": [{"name": "machinedeployments", "singularName": "machinedeployment",
                                  "namespaced": true, "kind": "MachineDeployment", "verbs": ["get"]}]}),
        ),
        (MD0, Md0::Found) => {
            let mut md0 = review()["request"]["object"].clone();
            md0["metadata"]["labels"] = json!({"team": "a"});
            (StatusCode::OK, md0)
        }
        (MD0, Md0::Forbidden) => (
            StatusCode::FORBIDDEN,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "machinedeployments.cluster.x-k8s.io \"md-0\" is forbidden",
                   "reason": "Forbidden", "code": 403,
                   "details": {"name": "md-0", "group": "cluster.x-k8s.io",
                               "kind": "machinedeployments"}}),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            json!({"kind": "Status", "code": 404}),
        ),
    }
}

/// Starts the fake API server on a free loopback port (it runs until the
/// test's runtime ends) and writes a kubeconfig for it into `dir`.
pub async fn fake_api_server(dir: &Path, md0: Md0) -> PathBuf {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let service =
                hyper::service::service_fn(move |request: Request<Incoming>| async move {
                    let (status, body) = fake_answer(request.uri().path(), md0);
                    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
                    *response.status_mut() = status;
                    Ok::<_, Infallible>(response)
                });
            tokio::spawn(async move {
                let http = hyper::server::conn::http1::Builder::new();
                let _ = http.serve_connection(TokioIo::new(tcp), service).await;
            });
        }
    });
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
             clusters: [{{name: fake, cluster: {{server: \"http://{addr}\"}}}}]\n\
             users: [{{name: fake, user: {{}}}}]\n\
             contexts: [{{name: fake, context: {{cluster: fake, user: fake, namespace: default}}}}]\n"
        ),
    )
    .unwrap();
    kubeconfig
}
