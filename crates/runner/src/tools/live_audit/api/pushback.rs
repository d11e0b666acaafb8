//! An API server that pushes back: 429 (API Priority and Fairness, or a
//! rate limit in front) or a 5xx with `Retry-After` (an aggregated API
//! server starting up) asks the client to wait and send the request again,
//! as client-go does. A 5xx without `Retry-After` is a failure, sent once.

use std::time::Duration;

use http::StatusCode;
use tokio::runtime::Runtime;
use tokio::signal::unix::{SignalKind, signal};

/// Retries of one request at most, after its first try: a server that
/// still pushes back after six tries is overloaded, and the request fails.
pub(super) const RETRIES: u32 = 5;

/// The longest wait before a retry, whatever `Retry-After` says: a run is
/// paced for the API server already, and an operator waiting on it (or a
/// Job's deadline) should not sit through minutes per request.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(60);

/// How long to wait before sending again a request answered `status` with
/// `retry_after` (the header's value), capped at [`MAX_WAIT`]; `None` when
/// the answer is not a push-back. `Retry-After` in seconds only: the API
/// server never sends an HTTP date.
pub(super) fn delay(status: StatusCode, retry_after: Option<&str>) -> Option<Duration> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let seconds: u64 = retry_after?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds).min(MAX_WAIT))
}

/// Sleeps `delay` on `runtime`, unless SIGINT or SIGTERM comes first:
/// whether the wait ran to its end. The run's own watcher
/// (`signals::Stop`) sees the signal too, and stops the run once the
/// request gives up.
pub(super) fn wait(runtime: &Runtime, delay: Duration) -> bool {
    if delay.is_zero() {
        return true;
    }
    runtime.block_on(async {
        let watched = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        );
        let (Ok(mut interrupt), Ok(mut terminate)) = watched else {
            tokio::time::sleep(delay).await;
            return true;
        };
        tokio::select! {
            () = tokio::time::sleep(delay) => true,
            _ = interrupt.recv() => false,
            _ = terminate.recv() => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::super::RETRIED;
    use super::super::fake_api_server::{fake_api, machines, ok, status};
    use super::*;

    fn counts(pairs: &[(&'static str, usize)]) -> BTreeMap<&'static str, usize> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn a_429_with_retry_after_is_waited_out_and_sent_again() {
        let answered = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&answered);
        let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                             "metadata": {"name": "m", "namespace": "default"}});
        let object = machine.clone();
        let (api, log) = fake_api(move |_| match seen.fetch_add(1, Ordering::SeqCst) {
            0 => status(
                429,
                "Too many requests",
                vec![("retry-after", "1".to_owned())],
            ),
            _ => ok(&object),
        });
        let started = std::time::Instant::now();
        let got = api.get(&machines(), Some("default"), "m");
        assert_eq!(got, Ok(machine));
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "waited the Retry-After"
        );
        assert_eq!(log.lock().unwrap().len(), 2);
        assert_eq!(api.counts(), counts(&[("get", 1), (RETRIED, 1)]));
    }

    #[test]
    fn a_server_that_keeps_pushing_back_fails_the_request_after_six_tries() {
        let (api, log) = fake_api(|_| {
            status(
                429,
                "Too many requests",
                vec![("retry-after", "0".to_owned())],
            )
        });
        let failure = api.get(&machines(), Some("default"), "m").unwrap_err();
        assert_eq!(failure.code, Some(429));
        assert!(
            failure
                .message
                .contains("pushed back (429, Retry-After) on each of 6 tries")
                && failure.message.contains("Too many requests"),
            "{failure}"
        );
        assert_eq!(log.lock().unwrap().len(), 6);
        assert_eq!(api.counts(), counts(&[("get", 1), (RETRIED, 5)]));
    }

    #[test]
    fn a_5xx_without_retry_after_fails_at_once_and_with_it_is_retried() {
        let (api, log) = fake_api(|_| status(503, "unavailable", Vec::new()));
        let failure = api
            .touch(&machines(), Some("default"), "m", "7", false)
            .unwrap_err();
        assert_eq!(
            (failure.code, failure.message.as_str()),
            (Some(503), "unavailable")
        );
        assert_eq!(log.lock().unwrap().len(), 1);
        assert_eq!(api.counts(), counts(&[("patch", 1)]));

        let answered = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&answered);
        let (api, _) = fake_api(move |_| match seen.fetch_add(1, Ordering::SeqCst) {
            0 => status(503, "starting", vec![("retry-after", "0".to_owned())]),
            _ => ok(&json!({"kind": "MachineList", "metadata": {}, "items": []})),
        });
        let (items, next) = api.list_page(&machines(), None, None, 500, None).unwrap();
        assert!(items.is_empty() && next.is_none());
        assert_eq!(api.counts(), counts(&[("list", 1), (RETRIED, 1)]));
    }

    #[test]
    fn a_push_back_is_429_or_a_5xx_with_retry_after_in_seconds_capped() {
        let too_many = StatusCode::TOO_MANY_REQUESTS;
        let unavailable = StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(delay(too_many, Some("3")), Some(Duration::from_secs(3)));
        assert_eq!(
            delay(unavailable, Some(" 1 ")),
            Some(Duration::from_secs(1))
        );
        assert_eq!(delay(too_many, Some("3600")), Some(MAX_WAIT));
        assert_eq!(delay(unavailable, None), None);
        assert_eq!(delay(too_many, None), None);
        assert_eq!(delay(too_many, Some("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(delay(StatusCode::CONFLICT, Some("1")), None);
        assert_eq!(delay(StatusCode::OK, Some("1")), None);
    }
}
