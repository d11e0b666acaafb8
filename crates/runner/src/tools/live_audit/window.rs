//! `--fix`'s writes as a rolling window: up to a number of first writes in
//! flight at once, started in target order; the oldest is judged as soon
//! as its answer is in, and the next target starts in its place, so the
//! pace never waits on the slowest write of a batch. Judging in target
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

/// Runs every target of `targets` through a window of `size` writes in
/// flight (at least one).
pub(super) fn roll<R: Rolling>(size: usize, targets: &mut R) {
    let size = size.max(1);
    let mut window: VecDeque<Slot<R::Started>> = VecDeque::new();
    let mut next = 0;
    loop {
        while let Some((identity, parent)) = targets.target(next) {
            let writing = window.iter().filter(|slot| slot.writes).count();
            let waits = parent.is_some_and(|p| window.iter().any(|slot| slot.identity == *p));
            if writing >= size || waits {
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
        let Some(oldest) = window.pop_front() else {
            break;
        };
        targets.judge(oldest.target, oldest.started);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Targets by name, each with its parent's; judging `grows` adds
    /// `child` (under it) as a target. Records what happened, in order.
    struct Recorded {
        targets: Vec<(Identity, Option<Identity>)>,
        unwritten: Vec<&'static str>,
        grows: Option<(&'static str, &'static str)>,
        events: Vec<String>,
        in_flight: usize,
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
            events: Vec::new(),
            in_flight: 0,
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
                self.in_flight += 1;
                self.most_in_flight = self.most_in_flight.max(self.in_flight);
            }
            self.events.push(format!("start {name}"));
            (writes, writes)
        }

        fn judge(&mut self, t: usize, writes: bool) {
            let name = self.targets[t].0.name().to_owned();
            if writes {
                self.in_flight -= 1;
            }
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
                "start a", "start b", "judge a", "start c", "judge b", "start d", "judge c",
                "judge d"
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
                "start a", "judge a", "start c", "start b", "judge c", "judge b"
            ]
        );
        // A parent judged long before does not hold its child back.
        let mut targets = recorded(&[("a", None), ("b", None), ("c", None), ("x", Some("a"))]);
        roll(2, &mut targets);
        assert_eq!(
            targets.events,
            [
                "start a", "start b", "judge a", "start c", "judge b", "start x", "judge c",
                "judge x"
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
                "judge a",
                "start b",
                "start c",
                "judge b",
                "judge c",
                "start a-child",
                "judge a-child"
            ]
        );
        assert_eq!(targets.most_in_flight, 1);
        // A window of none is a window of one.
        let mut targets = recorded(&[("a", None), ("b", None)]);
        roll(0, &mut targets);
        assert_eq!(targets.events, ["start a", "judge a", "start b", "judge b"]);
    }
}
