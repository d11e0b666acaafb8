//! `policy-runner profile`: where one evaluation's time goes, phase by
//! phase, with the policy's core linked natively.
//!
//! The runner's wasmtime is built without its profiling feature (the guest
//! profiler, perf and VTune hooks), which would double its build. Instead
//! this runs the same steps
//! the module's `validate` runs (`edge::validate`, which answers a request
//! it does not act on right after decoding it), natively, with a timer
//! around each: decoding the payload, parsing the settings, the look-ups
//! (the host's side, answered from the replay session and pruned by the
//! field masks, and the guest's projection decode, timed apart), deciding
//! (with whatever settings preparation the request needs), encoding the
//! reply, and the host's handling of it (decode and JSONPatch diff). A
//! second pass decides with settings prepared beforehand, so the difference
//! is what preparing the settings costs this request. Native code runs
//! faster than the same code in wasm, so the shares matter more than the
//! absolute numbers; `bench` gives those. `--module` adds what a fresh
//! instance of a module costs by itself (instantiation, `wapc_init`, drop).

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use metadata_propagation_policy::edge::{self, Payload};
use metadata_propagation_policy::evaluate::{acts_on, evaluate, not_acted_on};
use metadata_propagation_policy::lookup::{
    Lookup, LookupError, ObjectRef, classify_host_error, get_resource_request,
};
use metadata_propagation_policy::projection::Projection;
use metadata_propagation_policy::settings::Settings;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::bench::median;
use crate::cli::ProfileArgs;
use crate::host::CALLBACK_FAILURE_PREFIX;
use crate::policy;
use crate::replay::{GetResourceRequest, Replay};
use crate::response::{AdmissionResponse, PolicyResponse};
use crate::run;

/// The phases, in the order one evaluation runs them.
const PHASES: [&str; 8] = [
    "decode the payload",
    "parse the settings",
    "look-ups: host side (replay answer, masks applied)",
    "look-ups: guest decode (projection)",
    "decide (incl. settings preparation)",
    "encode the reply",
    "host: decode the reply, diff the JSONPatch",
    "decide with settings prepared beforehand",
];

/// Runs `args` and prints the profile on stdout.
pub fn profile(args: &ProfileArgs) -> Result<()> {
    let request = run::read_request(&args.request_path)?;
    let settings = run::read_settings(&args.settings.source())?;
    let payload = policy::validate_payload(&request, &settings);
    let replay = match &args.replay_host_capabilities_interactions {
        Some(path) => Some(run::read_replay(path)?),
        None => None,
    };
    let lookup = ReplayLookup {
        replay: RefCell::new(replay),
        host: Cell::new(Duration::ZERO),
        guest: Cell::new(Duration::ZERO),
    };
    let prepared = Settings::from_json(settings.to_string().as_bytes())
        .map_err(|e| anyhow!("Provided settings are not valid: {e}"))?;

    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); PHASES.len()];
    for round in 0..args.warmup + args.iterations {
        let times = lookup.evaluate_once(&payload, &request, &prepared)?;
        if round >= args.warmup {
            for (phase, time) in samples.iter_mut().zip(times) {
                phase.push(time);
            }
        }
    }

    let medians: Vec<f64> = samples
        .into_iter()
        .map(|mut s| {
            s.sort_unstable();
            median(&s) / 1_000.0
        })
        .collect();
    let total: f64 = medians[..7].iter().sum();
    println!(
        "{}: native, {} evaluations after {} warm-up, medians per phase",
        args.request_path.display(),
        args.iterations,
        args.warmup
    );
    for (phase, us) in PHASES[..7].iter().zip(&medians) {
        println!("  {us:8.1} µs {:5.1} %  {phase}", us / total * 100.0);
    }
    println!("  {total:8.1} µs  total");
    let preparation = (medians[4] - medians[7]).max(0.0);
    println!(
        "  of which settings preparation: {preparation:.1} µs (decide {:.1} µs − {:.1} µs with \
         settings prepared beforehand)",
        medians[4], medians[7]
    );
    for module in &args.modules {
        let us = instantiation_median_us(module, args.warmup, args.iterations)?;
        println!(
            "  {us:8.1} µs  a fresh instance of {} (instantiate, wapc_init, drop; in wasm)",
            module.display()
        );
    }
    Ok(())
}

/// The median cost of a fresh instance of the module at `path` that
/// evaluates nothing: what policy-server pays per request before and after
/// `validate`.
fn instantiation_median_us(path: &std::path::Path, warmup: u32, iterations: u32) -> Result<f64> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read module {}", path.display()))?;
    let module = policy::Module::compile(&bytes)?;
    let mut samples = Vec::new();
    for round in 0..warmup + iterations {
        let start = Instant::now();
        drop(module.instantiate(Box::new(|_, _, _, _, _| Ok(Vec::new())))?);
        if round >= warmup {
            samples.push(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
    }
    samples.sort_unstable();
    Ok(median(&samples) / 1_000.0)
}

/// [`Lookup`] answered from a replay session the way the host answers, with
/// the time spent on each side of the call accumulated.
struct ReplayLookup {
    replay: RefCell<Option<Replay>>,
    host: Cell<Duration>,
    guest: Cell<Duration>,
}

impl ReplayLookup {
    /// One evaluation as `edge::validate` runs it, then the host's side;
    /// the duration of every phase, in nanoseconds, in [`PHASES`] order.
    fn evaluate_once(
        &self,
        payload: &[u8],
        request: &crate::input::AdmissionRequest,
        prepared: &Settings,
    ) -> Result<[u64; 8]> {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.rewind();
        let start = Instant::now();
        let decoded = Payload::decode(payload).map_err(|e| anyhow!(e))?;
        let decoded_at = Instant::now();
        if !acts_on(&decoded.request.kind, &decoded.request.operation) {
            // edge::validate answers at once
            let request = &decoded.request;
            let reply = edge::encode(not_acted_on(&request.kind, &request.operation), None);
            let encoded = ns(decoded_at.elapsed());
            std::hint::black_box(reply);
            return Ok([ns(decoded_at - start), 0, 0, 0, 0, encoded, 0, 0]);
        }
        let raw = decoded.settings.map_or("{}", RawValue::get);
        let settings = Settings::parse(raw.as_bytes()).map_err(|e| anyhow!("{e}"))?;
        let parsed_at = Instant::now();
        let outcome = evaluate(&decoded.request, &settings, self);
        let decided_at = Instant::now();
        let reply = edge::encode(outcome, Some(decoded.request.object));
        let encoded_at = Instant::now();
        let response: PolicyResponse =
            serde_json::from_slice(&reply).context("the policy's reply does not decode")?;
        std::hint::black_box(AdmissionResponse::from_policy(
            request.uid(),
            request.object(),
            response,
        ));
        let host_done_at = Instant::now();
        let (host, guest) = (self.host.take(), self.guest.take());

        // The same decision with every setting prepared up front.
        self.rewind();
        let again = Payload::decode(payload).map_err(|e| anyhow!(e))?;
        let prepared_start = Instant::now();
        std::hint::black_box(evaluate(&again.request, prepared, self));
        let prepared_decide = prepared_start.elapsed() - self.host.take() - self.guest.take();

        Ok([
            ns(decoded_at - start),
            ns(parsed_at - decoded_at),
            ns(host),
            ns(guest),
            ns((decided_at - parsed_at).saturating_sub(host + guest)),
            ns(encoded_at - decided_at),
            ns(host_done_at - encoded_at),
            ns(prepared_decide),
        ])
    }

    fn rewind(&self) {
        if let Some(replay) = self.replay.borrow_mut().as_mut() {
            replay.rewind();
        }
    }
}

impl Lookup for ReplayLookup {
    fn get(&self, object: &ObjectRef, projection: &Projection) -> Result<Value, LookupError> {
        // The guest's request, as the host decodes it from the host call.
        let message = serde_json::to_vec(&get_resource_request(object, projection))
            .map_err(|e| LookupError::Failed(e.to_string()))?;
        let started = Instant::now();
        let answer = match (
            self.replay.borrow_mut().as_mut(),
            serde_json::from_slice::<GetResourceRequest>(&message),
        ) {
            (Some(replay), Ok(request)) => replay.answer(&request).map_err(|e| e.to_string()),
            (None, _) => Err(crate::host::NO_CLUSTER.to_owned()),
            (_, Err(e)) => Err(e.to_string()),
        };
        let answered = Instant::now();
        self.host.set(self.host.get() + (answered - started));
        let object = answer
            .map_err(|e| classify_host_error(&format!("{CALLBACK_FAILURE_PREFIX}{e}")))
            .and_then(|bytes| {
                projection
                    .decode(&bytes)
                    .map_err(|e| LookupError::Failed(e.to_string()))
            });
        self.guest.set(self.guest.get() + answered.elapsed());
        object
    }
}
