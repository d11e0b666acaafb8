//! `--fix` over the whole audit: which objects are written and in what
//! order (tree order, each once, a child that deviates from its parent's
//! write after it), and what each write is judged by (every policy that
//! found the object deviating, [`super::verdicts`]).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::Scope;

use cluster_audit::live::Parents;
use cluster_audit::tree::Identity;
use cluster_audit::{Audited, Status};
use serde_json::Value;

use super::api::{Api, Failure, Resource};
use super::cluster_reads::Cluster;
use super::deployed::Audit;
use super::fix::{self, Done, FixRun, Fixer, Judgement};
use super::listing::Discovery;
use super::preflight::{self, Access};
use super::progress::Progress;
use super::signals::Stop;
use super::verdicts::{hint, judge};
use super::window::{self, Rolling};
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

/// The object a target was audited as (or as written since): kept whole,
/// as every object that fails is.
fn object_of(audited: &Audited) -> Value {
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
/// active and registered, or nothing is written. The first writes go
/// through a rolling window ([`window`]) of `--burst` (at most
/// [`IN_FLIGHT`]) writes in flight, each at its turn of the pace, and are
/// judged in target order.
pub(super) fn fix_all(
    cluster: Cluster,
    audits: &mut [Audit],
    parents: &mut Parents,
    live: &LiveArgs,
    stop: &Stop,
) -> FixRun {
    let Cluster { api, discovery, .. } = cluster;
    let (targets, at) = deviating(audits);
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
        if let Ok((resource, namespace)) = place(api, discovery, &object) {
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
    let progress = Progress::new(targets.len());
    let (sender, receiver) = channel();
    let (targets, done) = std::thread::scope(|scope| {
        let mut fixing = Fixing {
            scope,
            cluster,
            live,
            stop,
            audits,
            parents,
            targets,
            at,
            whole,
            access,
            progress,
            done: Vec::with_capacity(found),
            sent: 0,
            answers: HashMap::new(),
            sender,
            receiver,
        };
        window::roll(live.burst.min(IN_FLIGHT) as usize, &mut fixing);
        fixing.progress.finish();
        (fixing.targets, fixing.done)
    });
    FixRun {
        deviating: found,
        after_parent: targets.len() - found,
        done,
        refused: Vec::new(),
    }
}

/// One run of `--fix`'s writes: the targets, where the audits keep them,
/// and what was done so far.
struct Fixing<'s, 'a> {
    scope: &'s Scope<'s, 'a>,
    cluster: Cluster<'a>,
    live: &'a LiveArgs,
    stop: &'a Stop,
    audits: &'a mut [Audit],
    parents: &'a mut Parents,
    targets: Targets,
    /// Where each target is in `targets`.
    at: BTreeMap<Identity, usize>,
    whole: Whole,
    access: Access,
    progress: Progress,
    /// Each target's ending, in target order.
    done: Vec<Done>,
    /// First writes sent.
    sent: usize,
    /// The answers to first writes not judged yet, by target.
    answers: HashMap<usize, Answer>,
    /// Each write's thread sends its target's answer.
    sender: Sender<(usize, Answer)>,
    receiver: Receiver<(usize, Answer)>,
}

/// The answer to a first write.
type Answer = Result<Value, Failure>;

/// A target started: where it is written, or why it is not written.
type Started = Result<Resource, Done>;

impl Rolling for Fixing<'_, '_> {
    type Started = Started;

    fn target(&self, t: usize) -> Option<(&Identity, Option<&Identity>)> {
        let (identity, flagged) = self.targets.get(t)?;
        let report = &self.audits[flagged[0]].report;
        let index = place_in(&self.whole, flagged, identity);
        let parent = (report.tree.parent(index)).map(|p| &report.objects[p].identity);
        Some((identity, parent))
    }

    fn start(&mut self, t: usize) -> (Started, bool) {
        let (identity, flagged) = &self.targets[t];
        let target = audited(self.audits, &self.whole, flagged, identity);
        let (object, id) = (object_of(target), target.reference().to_string());
        let not_now = match self.stop.requested() {
            Some(signal) => Some(format!("interrupted ({signal}) before its write")),
            None if (self.live.max_objects).is_some_and(|max| self.sent >= max) => {
                Some("--max-objects reached before its write".to_owned())
            }
            None => None,
        };
        let api = self.cluster.api;
        let placed = match not_now {
            Some(why) => Err(Done::unwritten(id, fix::Outcome::NotAttempted, why)),
            None => match place(api, self.cluster.discovery, &object) {
                Err(message) => Err(Done::unwritten(id, fix::Outcome::Error, message)),
                Ok((resource, namespace)) => match self.access.may_patch(api, &resource, namespace)
                {
                    Err(message) => Err(Done::unwritten(id, fix::Outcome::Forbidden, message)),
                    Ok(()) => Ok(resource),
                },
            },
        };
        let resource = match placed {
            Ok(resource) => resource,
            Err(done) => return (Err(done), false),
        };
        self.sent += 1;
        let (dry_run, written) = (self.live.dry_run, resource.clone());
        let answers = self.sender.clone();
        // The write needs nothing but the API: it goes from a thread of
        // its own, and the pace spaces it from the others in flight.
        (self.scope).spawn(move || {
            let answer = fix::first_write(api, dry_run, &written, &object);
            // Received: the run judges every write it sends before it ends.
            let _ = answers.send((t, answer));
        });
        (Ok(resource), true)
    }

    fn answered(&self, t: usize) -> bool {
        self.answers.contains_key(&t)
    }

    fn wait(&mut self) {
        let (t, answer) = (self.receiver.recv()).expect("the run holds a sender itself");
        self.answers.insert(t, answer);
    }

    fn judge(&mut self, t: usize, started: Started) {
        let (identity, flagged) = self.targets[t].clone();
        let done = match started {
            Err(done) => done,
            Ok(resource) => {
                let first = (self.answers.remove(&t)).expect("a write is judged once answered");
                let target = audited(self.audits, &self.whole, &flagged, &identity);
                let (object, id) = (object_of(target), target.reference().to_string());
                let (shared, seen, cluster): (&[Audit], &Parents, _) =
                    (self.audits, self.parents, self.cluster);
                let judge = |now: &Value| judge(shared, &flagged, now, cluster, seen);
                let hint = |resource: &Resource| hint(shared, &flagged, resource);
                let fixer = Fixer {
                    api: cluster.api,
                    dry_run: self.live.dry_run,
                    judge: &judge,
                    hint: &hint,
                };
                fixer.fix(id, &resource, &object, first)
            }
        };
        self.follow(&identity, done);
    }
}

impl Fixing<'_, '_> {
    /// Keeps `done`, and, when its write changed the object `identity`,
    /// the object as written. A child is judged against its parent as it
    /// is now; one that deviates only now (from what admission wrote on its
    /// parent) is written in this run too, after its parent.
    fn follow(&mut self, identity: &Identity, mut done: Done) {
        let wrote = done.changes.as_array().is_some_and(|c| !c.is_empty());
        // The object as written is kept once, in the report.
        let after = done.after.take();
        if let Some(after) = after.filter(|_| !self.live.dry_run && wrote) {
            self.parents.keep(&after);
            let mut children: Vec<(Identity, usize)> = Vec::new();
            for &(p, i) in self
                .whole
                .get(identity)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let report = &mut self.audits[p].report;
                report.objects[i].replace_object(&after);
                let objects = &report.objects;
                children
                    .extend((report.tree.children(i)).map(|c| (objects[c].identity.clone(), p)));
            }
            let before = self.targets.len();
            for (child, p) in children {
                if self.at.contains_key(&child) {
                    continue;
                }
                // Under an object that failed, every object is kept whole.
                let Some(&(_, c)) = (self.whole.get(&child))
                    .and_then(|places| places.iter().find(|(q, _)| *q == p))
                else {
                    continue;
                };
                let now = object_of(&self.audits[p].report.objects[c]);
                let judged = judge(self.audits, &[p], &now, self.cluster, self.parents);
                if let Judgement::Deviates(_) = judged {
                    self.at.insert(child.clone(), self.targets.len());
                    self.targets.push((child, vec![p]));
                }
            }
            self.progress.grow(&done.id, self.targets.len() - before);
        }
        self.progress.record(&done);
        self.done.push(done);
    }
}
