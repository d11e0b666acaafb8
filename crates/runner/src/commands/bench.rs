//! `policy-runner bench`: what one admission request costs the host, in the
//! shapes and against the floors BENCHMARKS.md describes.
//!
//! **fresh** (the default): each evaluation gets a new instance, as
//! policy-server's `rehydrate` does; timed are instantiation and
//! `wapc_init`, `validate` with its host calls, the host's decode and
//! `json_patch::diff` of the reply, and the drop. **warm**
//! (`--reuse-instance`): every evaluation runs on the instance that
//! validated the settings, as `kwctl bench` does. The replay session is
//! rewound before each evaluation, and every reply must repeat the first
//! byte for byte. The floors take turns with the policy, one evaluation
//! each, so a burst of load slows them alike.

mod answer;
mod report;
pub mod stats;
mod subject;

use anyhow::{Context, Result, bail};

use crate::cli::{BenchArgs, OutputFormat};
use crate::commands::bench::answer::plural;
use crate::commands::bench::report::Report;
use crate::commands::bench::subject::{Inputs, Measurement, Shape, Subject};
use crate::commands::input::{read_settings, run_request};
use crate::host::policy;

/// Runs `args` and prints the report on stdout.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let request = run_request(&args.run)?;
    let settings = read_settings(&args.run.settings)?;
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
    if let Some(path) = &args.save_reply {
        std::fs::write(path, subjects[0].reply())
            .with_context(|| format!("cannot write the reply to {}", path.display()))?;
    }
    let floors = [
        &args.accept_floor,
        &args.echo_floor,
        &args.lookup_floor,
        &args.result_floor,
    ];
    for floor in floors.into_iter().flatten() {
        subjects.push(Subject::load(floor, &inputs)?);
    }
    if subjects[0].answer.unreplayed > 0 {
        eprintln!(
            "WARN policy-runner: {} of the answers on offer (recorded exchanges or --parents \
             objects) were not asked for",
            subjects[0].answer.unreplayed
        );
    }
    // A look-up floor that asks for less than the policy does would make
    // the policy look dearer than it is; the replay session has already
    // refused any look-up it does not hold, in order.
    let lookup_at =
        1 + usize::from(args.accept_floor.is_some()) + usize::from(args.echo_floor.is_some());
    if let Some(floor) = subjects
        .get(lookup_at)
        .filter(|_| args.lookup_floor.is_some())
        && floor.answer.lookups != subjects[0].answer.lookups
    {
        eprintln!(
            "WARN policy-runner: the look-up floor {} made {}, the policy {}",
            floor.module,
            plural(floor.answer.lookups, "look-up"),
            plural(subjects[0].answer.lookups, "look-up")
        );
    }
    // A result floor answers what it was built with: the policy's reply to
    // this request, or it measures something else.
    if let Some(floor) = subjects.last().filter(|_| args.result_floor.is_some())
        && floor.reply() != subjects[0].reply()
    {
        bail!(
            "the result floor {} does not answer the policy's reply to this request (built for \
             another scenario?)",
            floor.module
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
    let result_floor = args.result_floor.as_ref().and_then(|_| measured.next());

    let mutates = policy.answer.mutated;
    let (reference, ratio_to) = if mutates {
        (&echo_floor, "echo floor")
    } else {
        (&accept_floor, "accept floor")
    };
    let ratio = |floor: &Option<Measurement>| {
        (floor.as_ref()).map(|floor| policy.stats.median_us / floor.stats.median_us)
    };
    let report = Report {
        request: args.run.request_path.display().to_string(),
        instance: shape,
        warmup: args.warmup,
        iterations: args.iterations,
        payload_bytes: payload.len(),
        mutates,
        ratio: ratio(reference),
        ratio_to: reference.as_ref().map(|_| ratio_to),
        lookup_ratio: ratio(&lookup_floor),
        result_ratio: ratio(&result_floor),
        policy,
        accept_floor,
        echo_floor,
        lookup_floor,
        result_floor,
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
