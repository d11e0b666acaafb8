//! `policy-runner bench`: what one admission request costs the host.
//!
//! Two shapes (the README's "A fresh instance per request", BENCHMARKS.md):
//!
//! - **fresh** (the default): every evaluation gets a new instance of the
//!   once-compiled module, as policy-server's `rehydrate` does per request.
//!   Timed: instantiation and `wapc_init`, the `validate` call with its host
//!   callbacks, the host's handling of the reply (decode, and the
//!   `json_patch::diff` of a mutated object against the request's), and
//!   dropping the instance. Nothing the guest keeps in memory survives.
//! - **warm** (`--reuse-instance`): every evaluation runs on the one instance
//!   that validated the settings, as `kwctl bench` does. Timed: the
//!   `validate` call and the host's handling of the reply.
//!
//! The settings are validated once, on the first instance, as policy-server
//! does when it loads a policy. The same request is evaluated `warmup` times
//! untimed and `iterations` times timed. Before every evaluation the replay
//! session is rewound, so each one makes the same look-ups and gets the same
//! answers; a look-up the session does not answer fails the benchmark. The
//! payload is serialised once beforehand. Every reply must be
//! byte-identical to the first; a policy whose answer drifts fails the
//! benchmark.
//!
//! Three floors can be measured in the same run and shape
//! (`--accept-floor`, `--echo-floor`, `--lookup-floor`): modules that decode
//! the payload and accept, or return the request's object unchanged as
//! `mutated_object`, or first make the policy's look-ups and decode their
//! answers, then return the object. The modules take turns, one evaluation
//! each, so a burst of load on the machine slows them alike. The report's
//! ratio is the policy's median over the echo floor's when the policy
//! mutates, over the accept floor's otherwise; its look-up ratio is the
//! policy's median over the look-up floor's, what the policy costs beyond
//! the look-ups it cannot avoid.

mod answer;
mod report;
pub mod stats;
mod subject;

use anyhow::Result;

use crate::cli::{BenchArgs, OutputFormat};
use crate::commands::bench::answer::plural;
use crate::commands::bench::report::Report;
use crate::commands::bench::subject::{Inputs, Shape, Subject};
use crate::commands::input::{read_request, read_settings};
use crate::host::policy;

/// Runs `args` and prints the report on stdout.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let request = read_request(&args.run.request_path)?;
    let settings = read_settings(&args.run.settings.source())?;
    let payload = policy::validate_payload(&request, &settings);
    let shape = if args.run.reuse_instance {
        Shape::Warm
    } else {
        Shape::Fresh
    };

    let inputs = Inputs {
        // Same hosting and session for the floors; only the look-up floor
        // asks the session anything.
        run: &args.run,
        settings: &settings,
        payload: &payload,
        request: &request,
        shape,
    };
    let mut subjects = vec![Subject::load(&args.run.policy, &inputs)?];
    let floors = [&args.accept_floor, &args.echo_floor, &args.lookup_floor];
    for floor in floors.into_iter().flatten() {
        subjects.push(Subject::load(floor, &inputs)?);
    }
    if subjects[0].answer.unreplayed > 0 {
        eprintln!(
            "WARN policy-runner: {} of the recorded exchanges have not been replayed",
            subjects[0].answer.unreplayed
        );
    }
    // A look-up floor that asks for less than the policy does would make
    // the policy look dearer than it is; the replay session has already
    // refused any look-up it does not hold, in order.
    if let Some(floor) = subjects.last().filter(|_| args.lookup_floor.is_some())
        && floor.answer.lookups != subjects[0].answer.lookups
    {
        eprintln!(
            "WARN policy-runner: the look-up floor {} made {}, the policy {}",
            floor.module,
            plural(floor.answer.lookups, "look-up"),
            plural(subjects[0].answer.lookups, "look-up")
        );
    }
    for round in 1..=args.warmup + args.iterations {
        for subject in &mut subjects {
            subject.evaluate(&inputs, round, round > args.warmup)?;
        }
    }
    let mut measured = subjects.into_iter().map(Subject::finish);
    let policy = measured.next().expect("the policy is always measured");
    let accept_floor = args.accept_floor.as_ref().and_then(|_| measured.next());
    let echo_floor = args.echo_floor.as_ref().and_then(|_| measured.next());
    let lookup_floor = args.lookup_floor.as_ref().and_then(|_| measured.next());

    let mutates = policy.answer.mutated;
    let reference = if mutates { &echo_floor } else { &accept_floor };
    let report = Report {
        request: args.run.request_path.display().to_string(),
        instance: shape,
        warmup: args.warmup,
        iterations: args.iterations,
        payload_bytes: payload.len(),
        mutates,
        ratio: reference
            .as_ref()
            .map(|floor| policy.stats.median_us / floor.stats.median_us),
        ratio_to: reference.as_ref().map(|_| {
            if mutates {
                "echo floor"
            } else {
                "accept floor"
            }
        }),
        lookup_ratio: lookup_floor
            .as_ref()
            .map(|floor| policy.stats.median_us / floor.stats.median_us),
        policy,
        accept_floor,
        echo_floor,
        lookup_floor,
    };
    match args.output {
        OutputFormat::Text => print!("{}", report.text()),
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string(&report).expect("reports always serialise")
        ),
    }
    Ok(())
}
