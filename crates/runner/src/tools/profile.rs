//! `policy-runner profile`: where one evaluation's time goes, phase by
//! phase. The runner's wasmtime has no profiling feature (it would double
//! the build), so the module's own `validate` runs natively
//! (`edge::validate_with` reports each step as it ends), its look-ups
//! answered from the replay session as the host answers them and timed on
//! both sides of the call. A second pass decides with settings prepared
//! beforehand; the difference is what preparing them costs. Native code is
//! faster than wasm, so the shares matter, not the numbers (`bench` gives
//! those); `--module` adds what a fresh instance of a module costs.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use metadata_propagation_core::evaluate::{Route, evaluate, object_projection, route};
use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::wire::{self as edge, Payload, Request, Step};
use metadata_propagation_policy::host_lookup::{classify_host_error, get_resource_request};
use serde_json::Value;

use crate::cli::ProfileArgs;
use crate::commands::bench::stats::{Stats, nanos};
use crate::commands::input::{core_settings, read_replay, read_request, read_settings};
use crate::host::callback::CALLBACK_FAILURE_PREFIX;
use crate::host::lookups::NO_CLUSTER;
use crate::host::policy;
use crate::host::replay::{GetResourceRequest, Replay};
use crate::host::request::AdmissionRequest;
use crate::host::response::PolicyResponse;

/// The phases, in the order one evaluation runs them; the last is the
/// second pass, apart from the total.
const PHASES: [&str; 9] = [
    "decode the payload (the object scanned)",
    "parse the settings",
    "decode the object's projection",
    "look-ups: host side (replay answer, masks applied)",
    "look-ups: guest decode (projection)",
    "decide (incl. settings preparation)",
    "encode the reply",
    "host: decode the reply, diff the JSONPatch",
    "decide with settings prepared beforehand",
];

/// The steps `edge::validate_with` reports, each ending one of the first
/// [`PHASES`] (the look-ups are carved out of deciding).
const STEPS: [(Step, usize); 5] = [
    (Step::Payload, 0),
    (Step::Settings, 1),
    (Step::Object, 2),
    (Step::Decided, DECIDE),
    (Step::Encoded, 6),
];
const LOOKUP_HOST: usize = 3;
const LOOKUP_GUEST: usize = 4;
const DECIDE: usize = 5;
const HOST: usize = 7;
const PREPARED: usize = 8;

/// Runs `args` and prints the profile on stdout.
pub fn profile(args: &ProfileArgs) -> Result<()> {
    let request = read_request(&args.request_path)?;
    let settings = read_settings(&args.settings)?;
    let payload = policy::validate_payload(&request, &settings);
    let replay = args
        .replay_host_capabilities_interactions
        .as_deref()
        .map(read_replay)
        .transpose()?;
    let lookup = ReplayLookup {
        replay: RefCell::new(replay),
        host: Cell::new(Duration::ZERO),
        guest: Cell::new(Duration::ZERO),
    };
    let prepared = core_settings(&settings)?;

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
        .map(|s| Stats::from_samples(s).median_us)
        .collect();
    let total: f64 = medians[..PREPARED].iter().sum();
    println!(
        "{}: native, {} evaluations after {} warm-up, medians per phase",
        args.request_path.display(),
        args.iterations,
        args.warmup
    );
    for (phase, us) in PHASES[..PREPARED].iter().zip(&medians) {
        println!("  {us:8.1} µs {:5.1} %  {phase}", us / total * 100.0);
    }
    println!("  {total:8.1} µs  total");
    let preparation = (medians[DECIDE] - medians[PREPARED]).max(0.0);
    println!(
        "  of which settings preparation: {preparation:.1} µs (decide {:.1} µs − {:.1} µs with \
         settings prepared beforehand)",
        medians[DECIDE], medians[PREPARED]
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
            samples.push(nanos(start.elapsed()));
        }
    }
    Ok(Stats::from_samples(samples).median_us)
}

/// [`Lookup`] answered from a replay session the way the host answers, with
/// the time spent on each side of the call accumulated.
struct ReplayLookup {
    replay: RefCell<Option<Replay>>,
    host: Cell<Duration>,
    guest: Cell<Duration>,
}

impl ReplayLookup {
    /// One evaluation as the module's `validate` runs it, then the host's
    /// side; the duration of every phase, in nanoseconds, in [`PHASES`]
    /// order (zero for a step a request does not take).
    fn evaluate_once(
        &self,
        payload: &[u8],
        request: &AdmissionRequest,
        prepared: &Settings,
    ) -> Result<[u64; PHASES.len()]> {
        let mut times = [0; PHASES.len()];
        self.rewind();
        let mut ends = Vec::with_capacity(STEPS.len());
        let start = Instant::now();
        let reply = edge::validate_with(payload, self, &mut |step| {
            ends.push((step, Instant::now()));
        });
        let encoded_at = Instant::now();
        let response: PolicyResponse =
            serde_json::from_slice(&reply).context("the policy's reply does not decode")?;
        std::hint::black_box(request.respond(response));
        times[HOST] = nanos(encoded_at.elapsed());
        let mut last = start;
        for (step, at) in ends {
            if let Some((_, phase)) = STEPS.iter().find(|(s, _)| *s == step) {
                times[*phase] = nanos(at - last);
                last = at;
            }
        }
        let (host, guest) = (self.host.take(), self.guest.take());
        times[LOOKUP_HOST] = nanos(host);
        times[LOOKUP_GUEST] = nanos(guest);
        times[DECIDE] = times[DECIDE].saturating_sub(nanos(host + guest));
        times[PREPARED] = self.decide_prepared(payload, prepared)?;
        Ok(times)
    }

    /// The decision alone, with every setting prepared up front, for a
    /// request the policy acts on: nanoseconds, look-ups excluded.
    fn decide_prepared(&self, payload: &[u8], prepared: &Settings) -> Result<u64> {
        let Payload {
            request: Request {
                mut request,
                object,
            },
            ..
        } = Payload::decode(payload).map_err(|e| anyhow!(e))?;
        let route = route(&request.kind, &request.operation);
        if route == Route::NotActedOn {
            return Ok(0);
        }
        if let Some(text) = object {
            let projection = object_projection(&request.kind, route, prepared);
            request.object = projection.split(text.get().as_bytes())?.0;
        }
        self.rewind();
        let start = Instant::now();
        std::hint::black_box(evaluate(&request, prepared, self));
        Ok(nanos(
            start
                .elapsed()
                .saturating_sub(self.host.take() + self.guest.take()),
        ))
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
            (None, _) => Err(NO_CLUSTER.to_owned()),
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
