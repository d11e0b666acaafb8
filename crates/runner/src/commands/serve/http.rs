//! `serve`'s two listeners on hyper (HTTP/1.1): the webhook, `POST
//! /validate/<id>` over TLS or plain HTTP, and the plain-HTTP readiness
//! probe, `GET /readiness`. Routing and refusals answer as policy-server's
//! axum router does: an unknown route is a bare 404, a wrong method 405, a
//! body without `Content-Type: application/json` 415, an unknown policy
//! 404 and a failed instance 500, the last three with policy-server's
//! `{"message", "status"}` body. Every connection is its own task and
//! every evaluation runs on a blocking thread, so requests do not wait on
//! each other.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::commands::serve::evaluate::{Failure, State};
use crate::commands::serve::review;

type Answer = Response<Full<Bytes>>;

/// Serves the webhook on `listener` (TLS when `tls` is given) until the
/// process ends.
pub async fn webhook(listener: TcpListener, tls: Option<TlsAcceptor>, state: Arc<State>) {
    loop {
        let Some(stream) = accept(&listener).await else {
            continue;
        };
        let (tls, state) = (tls.clone(), Arc::clone(&state));
        tokio::spawn(async move {
            let service = service_fn(move |request| validate(Arc::clone(&state), request));
            let http = hyper::server::conn::http1::Builder::new();
            let served = match tls {
                None => http.serve_connection(TokioIo::new(stream), service).await,
                Some(tls) => match tls.accept(stream).await {
                    Ok(stream) => http.serve_connection(TokioIo::new(stream), service).await,
                    Err(e) => {
                        eprintln!("WARN policy-runner: TLS handshake failed: {e}");
                        return;
                    }
                },
            };
            // a client that hung up mid-request needs no word
            if let Err(e) = served
                && !e.is_incomplete_message()
            {
                eprintln!("WARN policy-runner: webhook connection: {e}");
            }
        });
    }
}

/// Serves `GET /readiness` on `listener` until the process ends.
pub async fn readiness(listener: TcpListener) {
    loop {
        let Some(stream) = accept(&listener).await else {
            continue;
        };
        tokio::spawn(async move {
            let service = service_fn(|request: Request<Incoming>| async move {
                let status = match (request.uri().path(), request.method()) {
                    ("/readiness", &Method::GET) => StatusCode::OK,
                    ("/readiness", _) => StatusCode::METHOD_NOT_ALLOWED,
                    _ => StatusCode::NOT_FOUND,
                };
                Ok::<_, Infallible>(empty(status))
            });
            let http = hyper::server::conn::http1::Builder::new();
            let _ = http.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// The next connection; `None` after an error (said on stderr, and a
/// pause, so running out of file descriptors does not spin).
async fn accept(listener: &TcpListener) -> Option<tokio::net::TcpStream> {
    match listener.accept().await {
        Ok((stream, _)) => Some(stream),
        Err(e) => {
            eprintln!("WARN policy-runner: accepting a connection failed: {e}");
            tokio::time::sleep(Duration::from_millis(100)).await;
            None
        }
    }
}

/// The webhook's routes; what is not an AdmissionReview answer is said on
/// stderr.
async fn validate(state: Arc<State>, request: Request<Incoming>) -> Result<Answer, Infallible> {
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let answer = route(state, request).await;
    if answer.status() != StatusCode::OK {
        eprintln!("WARN policy-runner: {method} {path}: {}", answer.status());
    }
    Ok(answer)
}

async fn route(state: Arc<State>, request: Request<Incoming>) -> Answer {
    let path = request.uri().path();
    let Some(id) = path
        .strip_prefix("/validate/")
        .filter(|id| !id.is_empty() && !id.contains('/'))
        .map(str::to_owned)
    else {
        return empty(StatusCode::NOT_FOUND);
    };
    if request.method() != Method::POST {
        return empty(StatusCode::METHOD_NOT_ALLOWED);
    }
    if !is_json(request.headers().get(CONTENT_TYPE)) {
        let message = "Expected request with `Content-Type: application/json`";
        return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, message);
    }
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            let message = format!("Failed to buffer the request body: {e}");
            return error(StatusCode::BAD_REQUEST, &message);
        }
    };
    let admission = match review::parse(&body) {
        Ok(admission) => admission,
        Err(bad) => {
            let status = StatusCode::from_u16(bad.status).unwrap_or(StatusCode::BAD_REQUEST);
            return error(status, &bad.message);
        }
    };
    let evaluated = tokio::task::spawn_blocking(move || state.evaluate(&id, &admission)).await;
    match evaluated {
        Ok(Ok(response)) => json(StatusCode::OK, review::review_json(&response)),
        Ok(Err(Failure::UnknownPolicy(id))) => {
            error(StatusCode::NOT_FOUND, &format!("unknown policy: {id}"))
        }
        Ok(Err(Failure::Instance(_))) => {
            error(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong")
        }
        Err(panicked) => {
            eprintln!("ERROR policy-runner: the evaluation panicked: {panicked}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong")
        }
    }
}

/// Whether the content type is JSON, as axum's `Json` extractor judges it
/// (`application/json` or `application/…+json`, parameters ignored).
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(mime) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let essence = essence.to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|subtype| subtype.ends_with("+json"))
}

fn empty(status: StatusCode) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::new()));
    *answer.status_mut() = status;
    answer
}

fn json(status: StatusCode, body: Vec<u8>) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    let json = HeaderValue::from_static("application/json");
    answer.headers_mut().insert(CONTENT_TYPE, json);
    answer
}

fn error(status: StatusCode, message: &str) -> Answer {
    json(status, review::error_json(status.as_u16(), message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types_are_recognised_as_axum_recognises_them() {
        let is = |value: &str| is_json(Some(&HeaderValue::from_str(value).unwrap()));
        assert!(is("application/json"));
        assert!(is("application/json; charset=utf-8"));
        assert!(is("Application/JSON"));
        assert!(is("application/merge-patch+json"));
        assert!(!is("text/plain"));
        assert!(!is("application/yaml"));
        assert!(!is_json(None));
    }
}
