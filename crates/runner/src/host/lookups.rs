//! Where `get_resource` is answered from: nothing (no cluster to ask), a
//! kwctl replay session (recorded exchanges, strictly in order), plain
//! objects (`--parents`: whatever the policy asks for, found by name), or a
//! real API server (`serve`).

#[cfg(feature = "network")]
use crate::host::cluster::Cluster;
use crate::host::parents::Parents;
use crate::host::replay::{GetResourceRequest, Replay, ReplayError};

/// The look-up error when there is nothing to answer from.
pub const NO_CLUSTER: &str = "no Kubernetes cluster to query: policy-runner answers \
    kubernetes/get_resource only from --parents objects or a \
    --replay-host-capabilities-interactions session";

/// The source of the host's answers.
#[derive(Debug, Default)]
pub enum Lookups {
    /// No cluster: every look-up fails with [`NO_CLUSTER`].
    #[default]
    None,
    /// A kwctl session, replayed in order.
    Replay(Replay),
    /// The objects of a cluster, found by name.
    Parents(Parents),
    /// A real API server, asked as policy-server asks it.
    #[cfg(feature = "network")]
    Cluster(Cluster),
}

/// A look-up the host did not answer with an object.
#[derive(Debug, PartialEq, Eq)]
pub enum Unanswered {
    /// The host's error, as a cluster gives it (NotFound, a recorded
    /// error): what the policy is tested against.
    Host(String),
    /// The test's own set-up cannot answer (a replay session that recorded
    /// another request, or ran out): a broken test, not a cluster's answer.
    Session(String),
}

impl Unanswered {
    /// The text the guest receives (after policy-evaluator's prefix).
    pub fn message(&self) -> &str {
        match self {
            Unanswered::Host(message) | Unanswered::Session(message) => message,
        }
    }
}

impl Lookups {
    /// Answers `request`: the payload handed to the guest, or why not.
    pub fn answer(&mut self, request: &GetResourceRequest) -> Result<Vec<u8>, Unanswered> {
        match self {
            Lookups::None => Err(Unanswered::Session(NO_CLUSTER.to_owned())),
            Lookups::Replay(replay) => replay.answer(request).map_err(|e| match e {
                ReplayError::Recorded(message) => Unanswered::Host(message),
                other => Unanswered::Session(other.to_string()),
            }),
            Lookups::Parents(parents) => parents.answer(request).map_err(|not_found| {
                for near in parents.near_misses(request) {
                    eprintln!(
                        "WARN policy-runner: {not_found}; --parents holds {near}, which the \
                         runner cannot convert to the apiVersion or move to the namespace asked for"
                    );
                }
                Unanswered::Host(not_found)
            }),
            // whatever the API server says is the cluster's answer
            #[cfg(feature = "network")]
            Lookups::Cluster(cluster) => cluster.answer(request).map_err(Unanswered::Host),
        }
    }

    /// How many look-ups were answered since the start (or the last rewind).
    pub fn answered(&self) -> usize {
        match self {
            Lookups::None => 0,
            #[cfg(feature = "network")]
            Lookups::Cluster(_) => 0,
            Lookups::Replay(replay) => replay.replayed(),
            Lookups::Parents(parents) => parents.asked(),
        }
    }

    /// What the policy did not ask for, one line each: the replay entries
    /// left over, or the `--parents` objects no look-up named.
    pub fn leftovers(&self) -> Vec<String> {
        match self {
            Lookups::None => Vec::new(),
            #[cfg(feature = "network")]
            Lookups::Cluster(_) => Vec::new(),
            Lookups::Replay(replay) => match replay.remaining() {
                0 => Vec::new(),
                n => vec![format!(
                    "{n} of the recorded exchanges have not been replayed"
                )],
            },
            Lookups::Parents(parents) => parents
                .unasked()
                .into_iter()
                .map(|object| format!("--parents object {object} was not looked up"))
                .collect(),
        }
    }

    /// How many of the answers on offer were not asked for.
    pub fn unasked(&self) -> usize {
        match self {
            Lookups::None => 0,
            #[cfg(feature = "network")]
            Lookups::Cluster(_) => 0,
            Lookups::Replay(replay) => replay.remaining(),
            Lookups::Parents(parents) => parents.unasked().len(),
        }
    }

    /// Starts over, so the next evaluation is answered as the first one was.
    pub fn rewind(&mut self) {
        match self {
            Lookups::None => {}
            #[cfg(feature = "network")]
            Lookups::Cluster(_) => {}
            Lookups::Replay(replay) => replay.rewind(),
            Lookups::Parents(parents) => parents.rewind(),
        }
    }
}
