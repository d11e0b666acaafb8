//! `policy-runner profile`: where one evaluation's time goes, phase by
//! phase. The runner's wasmtime has no profiling feature (it would double
//! the build), so the module's own `validate` runs natively
//! (`edge::validate_stepped`, the core's `steps` feature, reports each
//! step as it ends), its look-ups answered as the host answers them (from
//! the replay session or the
//! `--parents` objects, the host's own [`Lookups`]) and timed on both sides
//! of the call. A second pass decides with settings prepared
//! beforehand; the difference is what preparing them costs. Native code is
//! faster than wasm, so the shares matter, not the numbers (`bench` gives
//! those); `--module` adds what a fresh instance of a module costs.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::lookup::{Lookup, LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::wire::{self as edge, Step};
use metadata_propagation_policy::host_lookup::{classify_host_error, get_resource_request};
use serde_json::Value;

use crate::cli::ProfileArgs;
use crate::commands::bench::stats::{Stats, nanos};
use crate::commands::input::{core_settings, read_lookups, read_request, read_settings};
use crate::commands::load::warn_leftovers;
use crate::host::callback::CALLBACK_FAILURE_PREFIX;
use crate::host::lookups::Lookups;
use crate::host::policy;
use crate::host::replay::GetResourceRequest;
use crate::host::request::AdmissionRequest;
use crate::host::response::PolicyResponse;

/// The phases, in the order one evaluation runs them; the last is the
/// second pass, apart from the total.
const PHASES: [&str; 9] = [
    "decode the payload (the object scanned)",
    "parse the settings",
    "decode the object's projection",
    "look-ups: host side (answer found, masks applied)",
    "look-ups: guest decode (projection)",
    "decide (incl. settings preparation)",
    "encode the reply",
    "host: decode the reply, diff the JSONPatch",
    "decide with settings prepared beforehand",
];

/// The steps `edge::validate_stepped` reports, each ending one of the first
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
    let lookup = TimedLookup::new(read_lookups(
        args.replay_host_capabilities_interactions.as_deref(),
        &args.parents,
        true,
    )?);
    let prepared = core_settings(&settings)?;

    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); PHASES.len()];
    for round in 0..args.warmup + args.iterations {
        let times = lookup.evaluate_once(&payload, &request, &prepared)?;
        if round == 0 {
            warn_leftovers(lookup.lookups.borrow().leftovers());
        }
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

/// [`Lookup`] answered from [`Lookups`] the way the host answers, with the
/// time spent on each side of the call accumulated.
struct TimedLookup {
    lookups: RefCell<Lookups>,
    host: Cell<Duration>,
    guest: Cell<Duration>,
}

impl TimedLookup {
    fn new(lookups: Lookups) -> TimedLookup {
        TimedLookup {
            lookups: RefCell::new(lookups),
            host: Cell::new(Duration::ZERO),
            guest: Cell::new(Duration::ZERO),
        }
    }

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
        let reply = edge::validate_stepped(payload, self, &mut |step| {
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
        /// The payload's request, decoded whole: the decision reads the
        /// same fields of it as of the policy's projection.
        #[derive(serde::Deserialize)]
        struct Validate {
            request: metadata_propagation_core::request::AdmissionRequest,
        }
        let Validate { request } = serde_json::from_slice(payload)?;
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
        self.lookups.borrow_mut().rewind();
    }
}

impl Lookup for TimedLookup {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        // The guest's request, as the host decodes it from the host call.
        let message = serde_json::to_vec(&get_resource_request(object, projection))
            .map_err(|e| LookupError::Failed(e.to_string()))?;
        let started = Instant::now();
        let answer = match serde_json::from_slice::<GetResourceRequest>(&message) {
            Ok(request) => (self.lookups.borrow_mut().answer(&request))
                .map_err(|unanswered| unanswered.message().to_owned()),
            Err(e) => Err(e.to_string()),
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use clap::Parser;
    use clap::error::ErrorKind;
    use serde_json::json;

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::host::parents::Parents;

    fn profile_args(args: &[&str]) -> Result<ProfileArgs, clap::Error> {
        let cli = Cli::try_parse_from(["policy-runner", "profile"].iter().chain(args))?;
        let Command::Profile(profile) = cli.command else {
            panic!("expected profile");
        };
        Ok(profile)
    }

    fn bench_file(name: &str) -> String {
        let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../../test_data/bench", name]
            .iter()
            .collect();
        path.display().to_string()
    }

    fn machine_deployment() -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
               "metadata": {"name": "md-0", "namespace": "default", "labels": {"team": "a"}},
               "spec": {"clusterName": "c", "replicas": 2}})
    }

    fn md_ref(name: &str) -> ObjectRef {
        ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta2".to_owned(),
            kind: "MachineDeployment".to_owned(),
            name: name.to_owned(),
            namespace: Some("default".to_owned()),
        }
    }

    #[test]
    fn parents_are_repeatable_and_conflict_with_a_replay_session() {
        let args = profile_args(&[
            "-r",
            "req.json",
            "--parents",
            "a.yaml",
            "--parents",
            "b.yaml",
        ])
        .unwrap();
        assert_eq!(
            args.parents,
            [Path::new("a.yaml"), Path::new("b.yaml")].map(Path::to_path_buf)
        );
        assert_eq!(args.replay_host_capabilities_interactions, None);

        let err = profile_args(&[
            "-r",
            "req.json",
            "--parents",
            "a.yaml",
            "--replay-host-capabilities-interactions",
            "session.yml",
        ])
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn parents_answer_pruned_by_the_masks_or_not_found_as_the_host_does() {
        let parents = Parents::new([("p.yaml document 1".to_owned(), machine_deployment())]);
        let lookup = TimedLookup::new(Lookups::Parents(parents.unwrap()));
        let labels = Projection::of(&[&["metadata", "labels"]]);

        let found = lookup.get(&md_ref("md-0"), &labels).unwrap();
        let missing = lookup.get(&md_ref("md-9"), &labels);

        assert_eq!(found["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(found.get("spec"), None);
        assert_eq!(missing, Err(LookupError::NotFound));
        assert_eq!(lookup.lookups.borrow().answered(), 1);

        let nothing = TimedLookup::new(Lookups::None);
        assert!(matches!(
            nothing.get(&md_ref("md-0"), &labels),
            Err(LookupError::Failed(_))
        ));
    }

    #[test]
    fn a_bench_scenarios_parents_answer_every_look_up() {
        let (request, settings, parents) = (
            bench_file("topology-kcp.request.json"),
            bench_file("topology-kcp.settings.json"),
            bench_file("topology-kcp.parents.yaml"),
        );
        let args = profile_args(&[
            "-r",
            &request,
            "--settings-path",
            &settings,
            "--parents",
            &parents,
        ])
        .unwrap();
        let request = read_request(&args.request_path).unwrap();
        let settings = read_settings(&args.settings).unwrap();
        let payload = policy::validate_payload(&request, &settings);
        let lookup = TimedLookup::new(
            read_lookups(
                args.replay_host_capabilities_interactions.as_deref(),
                &args.parents,
                true,
            )
            .unwrap(),
        );

        lookup
            .evaluate_once(&payload, &request, &core_settings(&settings).unwrap())
            .unwrap();
        let reply = edge::validate_with(&payload, &lookup);

        // the Cluster and its ClusterClass, both found: the topology's
        // metadata reaches the KubeadmControlPlane
        let lookups = lookup.lookups.borrow();
        assert!(matches!(*lookups, Lookups::Parents(_)));
        assert_eq!(lookups.answered(), 2);
        assert_eq!(lookups.leftovers(), Vec::<String>::new());
        let response: PolicyResponse = serde_json::from_slice(&reply).unwrap();
        assert!(response.mutated_object.is_some());
    }
}
