//! `--fix`'s writes as a rolling window: up to a number of first writes in
//! flight (sent, not answered yet) at once, started in target order; as
//! soon as one is answered the next target's write goes, and as soon as
//! the oldest is answered it is judged. The pace never waits on the
//! slowest write of a batch, nor on a slow oldest one. Judging in target
//! order keeps the report the same from run to run, whatever order the
//! answers come in. A target whose parent is still in the window waits
//! for its parent's judgement: the parent's write changes what the child
//! is judged against, and may make a child a target.

use std::collections::VecDeque;

use cluster_audit::tree::Identity;

/// The targets a window runs through, in order; judging one may add more.
pub(super) trait Rolling {
    /// A started target: its write in flight, or why it is not written.
    type Started;

    /// Target `t`'s identity and its parent's, `None` past the last.
    fn target(&self, t: usize) -> Option<(&Identity, Option<&Identity>)>;

    /// Starts target `t`; `true` when a write went out.
    fn start(&mut self, t: usize) -> (Self::Started, bool);

    /// Whether target `t`'s write (started, and sent) is answered.
    fn answered(&self, t: usize) -> bool;

    /// Waits until one more write is answered.
    fn wait(&mut self);

    /// Judges target `t` from what its start sent.
    fn judge(&mut self, t: usize, started: Self::Started);
}

/// A started target, not judged yet.
struct Slot<S> {
    target: usize,
    identity: Identity,
    started: S,
    writes: bool,
}

/// Answered writes that wait for an older one to be judged, per write in
/// flight at most: what a slow write holds back is bounded.
const HELD: usize = 4;

/// Runs every target of `targets` through a window of `size` writes in
/// flight (at least one).
pub(super) fn roll<R: Rolling>(size: usize, targets: &mut R) {
    let size = size.max(1);
    let mut window: VecDeque<Slot<R::Started>> = VecDeque::new();
    let mut next = 0;
    loop {
        while let Some((identity, parent)) = targets.target(next) {
            let in_flight = (window.iter())
                .filter(|slot| slot.writes && !targets.answered(slot.target))
                .count();
            let waits = parent.is_some_and(|p| window.iter().any(|slot| slot.identity == *p));
            if in_flight >= size || window.len() >= size * HELD || waits {
                break;
            }
            let identity = identity.clone();
            let (started, writes) = targets.start(next);
            window.push_back(Slot {
                target: next,
                identity,
                started,
                writes,
            });
            next += 1;
        }
        // Nothing in the window: every target has started (none waits on
        // a window that is empty), and every one is judged.
        let Some(oldest) = window.front() else {
            break;
        };
        if oldest.writes && !targets.answered(oldest.target) {
            targets.wait();
            continue;
        }
        let oldest = window.pop_front().expect("the window has a front");
        targets.judge(oldest.target, oldest.started);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Targets by name, each with its parent's; judging `grows` adds
    /// `child` (under it) as a target. Writes are answered in the order
    /// `answers` names them, then in the order they were sent. Records
    /// what happened, in order.
    struct Recorded {
        targets: Vec<(Identity, Option<Identity>)>,
        unwritten: Vec<&'static str>,
        grows: Option<(&'static str, &'static str)>,
        answers: Vec<&'static str>,
        sent: Vec<String>,
        answered: Vec<String>,
        events: Vec<String>,
        most_in_flight: usize,
    }

    fn id(name: &str) -> Identity {
        Identity::of(
            &json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "namespace": "default"}}),
        )
    }

    fn recorded(targets: &[(&'static str, Option<&'static str>)]) -> Recorded {
        Recorded {
            targets: (targets.iter())
                .map(|(name, parent)| (id(name), parent.map(id)))
                .collect(),
            unwritten: Vec::new(),
            grows: None,
            answers: Vec::new(),
            sent: Vec::new(),
            answered: Vec::new(),
            events: Vec::new(),
            most_in_flight: 0,
        }
    }

    impl Rolling for Recorded {
        type Started = bool;

        fn target(&self, t: usize) -> Option<(&Identity, Option<&Identity>)> {
            let (identity, parent) = self.targets.get(t)?;
            Some((identity, parent.as_ref()))
        }

        fn start(&mut self, t: usize) -> (bool, bool) {
            let name = self.targets[t].0.name().to_owned();
            let writes = !self.unwritten.contains(&name.as_str());
            if writes {
                self.sent.push(name.clone());
                let in_flight = self.sent.len() - self.answered.len();
                self.most_in_flight = self.most_in_flight.max(in_flight);
            }
            self.events.push(format!("start {name}"));
            (writes, writes)
        }

        fn answered(&self, t: usize) -> bool {
            self.answered.iter().any(|a| a == self.targets[t].0.name())
        }

        fn wait(&mut self) {
            let unanswered = |name: &str| {
                self.sent.iter().any(|s| s == name) && !self.answered.iter().any(|a| a == name)
            };
            let scripted = self.answers.iter().find(|name| unanswered(name));
            let next = match scripted {
                Some(name) => (*name).to_owned(),
                None => (self.sent.iter().find(|name| unanswered(name)))
                    .expect("a write to wait for")
                    .clone(),
            };
            self.events.push(format!("answer {next}"));
            self.answered.push(next);
        }

        fn judge(&mut self, t: usize, writes: bool) {
            let name = self.targets[t].0.name().to_owned();
            assert!(
                !writes || self.answered(t),
                "{name} judged before its answer"
            );
            self.events.push(format!("judge {name}"));
            if let Some((parent, child)) = self.grows.filter(|(parent, _)| *parent == name) {
                self.targets.push((id(child), Some(id(parent))));
            }
        }
    }

    #[test]
    fn the_oldest_is_judged_first_and_the_next_target_takes_its_place() {
        let mut targets = recorded(&[("a", None), ("b", None), ("c", None), ("d", None)]);
        roll(2, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a", "start b", "answer a", "start c", "judge a", "answer b", "start d",
                "judge b", "answer c", "judge c", "answer d", "judge d"
            ]
        );
        assert_eq!(targets.most_in_flight, 2);
    }

    /// A slow oldest write holds back its judgement, not the next write.
    #[test]
    fn an_answer_frees_its_place_at_once_and_judging_keeps_the_target_order() {
        let mut targets = recorded(&[("a", None), ("b", None), ("c", None)]);
        targets.answers = vec!["b", "a", "c"];
        roll(2, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a", "start b", "answer b", "start c", "answer a", "judge a", "judge b",
                "answer c", "judge c"
            ]
        );
        assert_eq!(targets.most_in_flight, 2);
    }

    #[test]
    fn a_target_waits_for_its_parents_judgement_and_the_targets_after_it_wait_too() {
        let mut targets = recorded(&[("a", None), ("c", Some("a")), ("b", None)]);
        roll(3, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a", "answer a", "judge a", "start c", "start b", "answer c", "judge c",
                "answer b", "judge b"
            ]
        );
        // A parent judged before does not hold its child back.
        let mut targets = recorded(&[("a", None), ("b", None), ("c", None), ("x", Some("a"))]);
        roll(2, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a", "start b", "answer a", "start c", "judge a", "answer b", "start x",
                "judge b", "answer c", "judge c", "answer x", "judge x"
            ]
        );
    }

    #[test]
    fn a_target_its_parents_judgement_adds_is_judged_last_and_unwritten_ones_take_no_write() {
        let mut targets = recorded(&[("a", None), ("b", None), ("c", None)]);
        targets.grows = Some(("a", "a-child"));
        targets.unwritten = vec!["b"];
        roll(1, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a",
                "answer a",
                "start b",
                "start c",
                "judge a",
                "judge b",
                "answer c",
                "start a-child",
                "judge c",
                "answer a-child",
                "judge a-child"
            ]
        );
        assert_eq!(targets.most_in_flight, 1);
        // A window of none is a window of one.
        let mut targets = recorded(&[("a", None), ("b", None)]);
        roll(0, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a", "answer a", "start b", "judge a", "answer b", "judge b"
            ]
        );
    }
}
