//! CAPI's three node timeouts, which every Machine-creating edge carries:
//! written once here, placed by each flow table.

use super::contract::*;

/// A node timeout: a v1beta1 duration at `v1beta1`, v1beta2 seconds at `v1beta2`.
pub(super) const fn timeout(
    v1beta1: &'static [&'static str],
    v1beta2: &'static [&'static str],
) -> ByVersion {
    ByVersion {
        v1beta1: at(v1beta1, Unit::Duration),
        v1beta2: at(v1beta2, Unit::Seconds),
    }
}

/// CAPI's three node timeouts as field flows, in CAPI's order: draining
/// the Node, waiting for its volumes to detach, deleting it. Each is a
/// v1beta1 duration `<name>` and a v1beta2 `<name>Seconds`; a table names
/// only the paths the three sit under, in the parent (`from`) and the child
/// (`to`), v1beta1 first:
/// `node_timeouts!(from: [v1beta1 …] [v1beta2 …], to: [v1beta1 …] [v1beta2 …])`.
macro_rules! node_timeouts {
    (from: $from:tt $from_seconds:tt, to: $to:tt $to_seconds:tt $(,)?) => {
        [
            node_timeouts!(@one nodeDrainTimeout, $from $from_seconds, $to $to_seconds),
            node_timeouts!(@one nodeVolumeDetachTimeout, $from $from_seconds, $to $to_seconds),
            node_timeouts!(@one nodeDeletionTimeout, $from $from_seconds, $to $to_seconds),
        ]
    };
    (@one $name:ident,
        [$($from:literal),*] [$($from_seconds:literal),*],
        [$($to:literal),*] [$($to_seconds:literal),*]) => {
        field(
            stringify!($name),
            timeout(
                &[$($from,)* stringify!($name)],
                &[$($from_seconds,)* concat!(stringify!($name), "Seconds")],
            ),
            timeout(
                &[$($to,)* stringify!($name)],
                &[$($to_seconds,)* concat!(stringify!($name), "Seconds")],
            ),
        )
    };
}
pub(super) use node_timeouts;

/// A flow table: `before`, then the [`node_timeouts!`], then `after`, in
/// that order (the order of the patch and of an explanation). `N`, the
/// table's length, is checked when the table is built.
pub(super) const fn with_node_timeouts<const BEFORE: usize, const AFTER: usize, const N: usize>(
    before: [Flow; BEFORE],
    timeouts: [Flow; 3],
    after: [Flow; AFTER],
) -> [Flow; N] {
    assert!(BEFORE + timeouts.len() + AFTER == N);
    let mut table = [timeouts[0]; N];
    let mut i = 0;
    while i < N {
        table[i] = if i < BEFORE {
            before[i]
        } else if i < BEFORE + 3 {
            timeouts[i - BEFORE]
        } else {
            after[i - BEFORE - 3]
        };
        i += 1;
    }
    table
}
