//! The event heap's key: `(time, seq)`, compared with `f64::total_cmp`, so same-time events
//! pop first in, first out and a run is deterministic.
use std::cmp::Ordering;

/// A GPU's next completion, valid while the GPU's version is unchanged.
#[derive(Clone, Copy, Debug)]
pub(super) struct Event {
    pub(super) time: f64,
    pub(super) seq: u64,
    pub(super) gpu: u32,
    pub(super) version: u32,
    /// A dynamic-MIG re-cut to this layout (index into the group's layouts), never stale;
    /// `None` for a completion.
    pub(super) recut: Option<u16>,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.time
            .total_cmp(&other.time)
            .then(self.seq.cmp(&other.seq))
    }
}
