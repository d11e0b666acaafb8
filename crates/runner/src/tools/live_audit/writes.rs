//! `--fix` over the whole audit: which objects are written and in what
//! order (tree order, each once, a child that deviates from its parent's
//! write after it), and what each write is judged by (every policy that
//! found the object deviating).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use cluster_audit::live::{Parents, evaluate};
use cluster_audit::tree::Identity;
use cluster_audit::{Audited, Status};
use metadata_propagation_core::outcome::Verdict;
use serde_json::Value;

use super::api::{Api, Failure, Resource};
use super::cluster_reads::{Cluster, ClusterReads};
use super::deployed::Audit;
use super::fix::{self, Done, FixRun, Fixer, Judgement};
use super::listing::Discovery;
use super::preflight::{self, Access};
use super::progress::Progress;
use super::signals::Stop;
use crate::cli::LiveArgs;

/// Objects to write, each with the policies (their place in the audits)
/// that found it deviating.
type Targets = Vec<(Identity, Vec<usize>)>;

/// The first writes in flight at once at most (fewer when `--burst` is
/// lower): enough to keep the pace when the admission chain takes longer
/// than a turn of it.
const IN_FLIGHT: u32 = 16;

/// Each deviating object once, in the first policy's tree order that
/// names it, with every policy that found it deviating, and where each is
/// in that list. Its length is the run's one count of deviating objects.
pub(super) fn deviating(audits: &[Audit]) -> (Targets, BTreeMap<Identity, usize>) {
    let mut targets: Targets = Vec::new();
    let mut at: BTreeMap<Identity, usize> = BTreeMap::new();
    for (p, audit) in audits.iter().enumerate() {
        for (index, _) in audit.report.tree.walk() {
            let object = &audit.report.objects[index];
            if object.status() != Status::Deviates {
                continue;
            }
            match at.get(&object.identity) {
                Some(&t) => targets[t].1.push(p),
                None => {
                    at.insert(object.identity.clone(), targets.len());
                    targets.push((object.identity.clone(), vec![p]));
                }
            }
        }
    }
    (targets, at)
}

/// Where each object kept whole is in each policy's report: the only
/// objects `--fix` writes or judges again.
type Whole = HashMap<Identity, Vec<(usize, usize)>>;

fn whole(audits: &[Audit]) -> Whole {
    let mut whole: Whole = HashMap::new();
    for (p, audit) in audits.iter().enumerate() {
        for (i, object) in audit.report.objects.iter().enumerate() {
            if object.whole() {
                whole
                    .entry(object.identity.clone())
                    .or_default()
                    .push((p, i));
            }
        }
    }
    whole
}

/// Where the first of `flagged` keeps the target `identity` in its report.
fn place_in(whole: &Whole, flagged: &[usize], identity: &Identity) -> usize {
    let places = whole.get(identity).map(Vec::as_slice).unwrap_or_default();
    let found = places.iter().find(|(p, _)| *p == flagged[0]);
    found
        .expect("a target is an object its report keeps whole")
        .1
}

/// The object `identity` as the first of `flagged` audited it.
fn audited<'a>(
    audits: &'a [Audit],
    whole: &Whole,
    flagged: &[usize],
    identity: &Identity,
) -> &'a Audited {
    &audits[flagged[0]].report.objects[place_in(whole, flagged, identity)]
}

/// The object a target was audited as: kept whole, as every object that
/// fails is.
fn object_of(audited: &Audited) -> &Value {
    audited
        .object()
        .expect("an object that fails is kept whole")
}

/// Where `object` is written: its resource, as discovery serves its
/// kind, and its namespace (`None` when cluster-scoped).
fn place<'a>(
    api: &Api,
    discovery: &RefCell<Discovery>,
    object: &'a Value,
) -> Result<(Resource, Option<&'a str>), String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let resource = discovery.borrow_mut().kind(api, api_version, kind)?;
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .filter(|ns| !ns.is_empty());
    Ok((resource, namespace))
}

/// Brings each deviating object into line, in tree order, one write each,
/// after the pre-flight: every policy whose webhook is to write must be
/// active and registered, or nothing is written. Objects that do not wait
/// on one another (none is the parent of another) have their first writes
/// sent together, up to `--burst` (at most [`IN_FLIGHT`]) at once, each at
/// its turn of the pace; each is then judged in order.
pub(super) fn fix_all(
    cluster: Cluster,
    audits: &mut [Audit],
    parents: &mut Parents,
    live: &LiveArgs,
    stop: &Stop,
) -> FixRun {
    let Cluster { api, discovery, .. } = cluster;
    let (mut targets, mut at) = deviating(audits);
    let found = targets.len();
    let refused: Vec<String> = audits
        .iter_mut()
        .filter_map(|audit| preflight::active(api, &mut audit.policy))
        .collect();
    if !refused.is_empty() {
        for why in &refused {
            eprintln!("fix: nothing written: {why}");
        }
        return FixRun {
            deviating: found,
            refused,
            ..FixRun::default()
        };
    }
    let whole = whole(audits);
    // Pre-flight, before the first write: whether the runner may patch
    // each kind (and namespace) to be written.
    let mut access = Access::default();
    for (identity, flagged) in &targets {
        if stop.requested().is_some() {
            break;
        }
        let object = object_of(audited(audits, &whole, flagged, identity));
        if let Ok((resource, namespace)) = place(api, discovery, object) {
            let _ = access.may_patch(api, &resource, namespace);
        }
    }
    match targets.len() {
        0 => eprintln!("fix: nothing deviates; nothing to write"),
        n => eprintln!(
            "fix: writing {n} {}{}",
            if n == 1 { "object" } else { "objects" },
            if live.dry_run {
                " (server-side dry run: nothing is stored)"
            } else {
                ""
            }
        ),
    }
    let in_flight = live.burst.min(IN_FLIGHT) as usize;
    let mut progress = Progress::new(targets.len());
    let mut results = Vec::with_capacity(targets.len());
    let mut written = 0;
    let mut next = 0;
    while next < targets.len() {
        // The next objects that do not wait on one another, each with
        // where it is written or why it is not.
        let mut batch: Vec<(usize, Result<Resource, Done>)> = Vec::new();
        let mut in_batch: Vec<&Identity> = Vec::new();
        while let Some((identity, flagged)) = targets.get(next) {
            let report = &audits[flagged[0]].report;
            let index = place_in(&whole, flagged, identity);
            let target = &report.objects[index];
            let parent = (report.tree.parent(index)).map(|p| &report.objects[p].identity);
            let waits = parent.is_some_and(|parent| in_batch.contains(&parent));
            let attempted = batch.iter().filter(|(_, b)| b.is_ok()).count();
            if waits || batch.len() == in_flight.max(1) {
                break;
            }
            let (object, id) = (object_of(target), target.reference().to_string());
            let not_now = match stop.requested() {
                Some(signal) => Some(format!("interrupted ({signal}) before its write")),
                None if live
                    .max_objects
                    .is_some_and(|max| written + attempted >= max) =>
                {
                    Some("--max-objects reached before its write".to_owned())
                }
                None => None,
            };
            let placed = match not_now {
                Some(why) => Err(Done::unwritten(id, fix::Outcome::NotAttempted, why)),
                None => match place(api, discovery, object) {
                    Err(message) => Err(Done::unwritten(id, fix::Outcome::Error, message)),
                    Ok((resource, namespace)) => {
                        match access.may_patch(api, &resource, namespace) {
                            Err(message) => {
                                Err(Done::unwritten(id, fix::Outcome::Forbidden, message))
                            }
                            Ok(()) => Ok(resource),
                        }
                    }
                },
            };
            in_batch.push(identity);
            batch.push((next, placed));
            next += 1;
        }
        // The first writes, together: the pace spaces them.
        let firsts: Vec<Option<Result<Value, Failure>>> = std::thread::scope(|scope| {
            let sent: Vec<_> = (batch.iter())
                .map(|(t, placed)| {
                    let (identity, flagged) = &targets[*t];
                    let object = object_of(audited(audits, &whole, flagged, identity));
                    placed.as_ref().ok().map(|resource| {
                        scope.spawn(move || fix::first_write(api, live.dry_run, resource, object))
                    })
                })
                .collect();
            let answers = sent
                .into_iter()
                .map(|handle| handle.map(|h| h.join().expect("a write never panics")));
            answers.collect()
        });
        for ((t, placed), first) in batch.into_iter().zip(firsts) {
            let (identity, flagged) = targets[t].clone();
            let (identity, flagged) = (&identity, &flagged);
            let done = match (placed, first) {
                (Err(done), _) => done,
                (Ok(resource), Some(first)) => {
                    let target = audited(audits, &whole, flagged, identity);
                    let (object, id) = (object_of(target), target.reference().to_string());
                    let shared: &[Audit] = audits;
                    let seen: &Parents = parents;
                    let judge = |now: &Value| judge(shared, flagged, now, cluster, seen);
                    let hint = |resource: &Resource| hint(shared, flagged, resource);
                    let fixer = Fixer {
                        api,
                        dry_run: live.dry_run,
                        judge: &judge,
                        hint: &hint,
                    };
                    fixer.fix(id, &resource, object, first)
                }
                (Ok(_), None) => unreachable!("every placed object's first write was sent"),
            };
            if done.attempts > 0 {
                written += 1;
            }
            // A child is judged against its parent as it is now; one that
            // deviates only now (from what admission wrote on its parent) is
            // written in this run too, after its parent.
            let wrote = done.changes.as_array().is_some_and(|c| !c.is_empty());
            if let Some(after) = done.after.as_ref().filter(|_| !live.dry_run && wrote) {
                parents.keep(after);
                let mut children: Vec<(Identity, usize)> = Vec::new();
                for &(p, i) in whole.get(identity).map(Vec::as_slice).unwrap_or_default() {
                    let report = &mut audits[p].report;
                    report.objects[i].replace_object(after.clone());
                    let objects = &report.objects;
                    children.extend(
                        (report.tree.children(i)).map(|c| (objects[c].identity.clone(), p)),
                    );
                }
                let before = targets.len();
                for (child, p) in children {
                    if at.contains_key(&child) {
                        continue;
                    }
                    // Under an object that failed, every object is kept whole.
                    let Some(&(_, c)) = whole
                        .get(&child)
                        .and_then(|places| places.iter().find(|(q, _)| *q == p))
                    else {
                        continue;
                    };
                    let now = object_of(&audits[p].report.objects[c]);
                    if let Judgement::Deviates(_) = judge(audits, &[p], now, cluster, parents) {
                        at.insert(child.clone(), targets.len());
                        targets.push((child, vec![p]));
                    }
                }
                progress.grow(&done.id, targets.len() - before);
            }
            progress.record(&done);
            results.push(done);
        }
    }
    progress.finish();
    FixRun {
        deviating: found,
        after_parent: targets.len() - found,
        done: results,
        refused: Vec::new(),
    }
}

/// The verdict of every policy that found the object deviating on it as it
/// is now.
fn judge(
    audits: &[Audit],
    flagged: &[usize],
    now: &Value,
    cluster: Cluster,
    parents: &Parents,
) -> Judgement {
    let Cluster {
        api,
        discovery,
        read,
    } = cluster;
    let mut deviations = Vec::new();
    for &p in flagged {
        let audit = &audits[p];
        let reads = ClusterReads {
            api,
            discovery,
            granted: &audit.policy.context_aware,
            read,
        };
        let evaluation = evaluate(now, &audit.policy.settings, parents, &reads);
        match Status::of(evaluation.as_ref()) {
            Status::Compliant | Status::NotEvaluated => {}
            Status::Deviates => {
                deviations.extend(evaluation.into_iter().flat_map(|e| e.deviations));
            }
            Status::Rejected => {
                let message = match evaluation.map(|e| e.outcome.verdict) {
                    Some(Verdict::Reject { message, .. }) => message,
                    _ => String::new(),
                };
                return Judgement::Rejected(format!("policy {}: {message}", audit.policy.name));
            }
        }
    }
    match deviations.is_empty() {
        true => Judgement::Compliant,
        false => Judgement::Deviates(deviations),
    }
}

/// What to check when admission left an object of `resource` deviating.
fn hint(audits: &[Audit], flagged: &[usize], resource: &Resource) -> String {
    let checks: Vec<String> = flagged
        .iter()
        .map(|&p| {
            let policy = &audits[p].policy;
            let name = &policy.name;
            if policy.mode != "protect" {
                format!("ClusterAdmissionPolicy {name} is in {} mode, where its patches are not applied", policy.mode)
            } else if !policy.mutating {
                format!("ClusterAdmissionPolicy {name} has spec.mutating false: its patches are refused")
            } else if !policy.rules.iter().any(|rule| rule.sends_updates_of(resource)) {
                format!("the rules of ClusterAdmissionPolicy {name} send no UPDATE of {}", resource.name())
            } else {
                format!(
                    "check that the webhook of ClusterAdmissionPolicy {name} (clusterwide-{name}) is registered and \
                     its policy server serves it, with the settings audited here; policy-server answers a look-up \
                     from what it read in the last 5 s, so a parent changed just before is seen as it was: run again"
                )
            }
        })
        .collect();
    checks.join("; ")
}
