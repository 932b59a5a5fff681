//! Backfill without rescans: waiting jobs indexed by what they ask for.
//!
//! Two waiting jobs with the same request class (GPUs, minimum speed, and per group their job
//! class and memory) get the same answer from a placement rule in the same cluster state: a
//! [`crate::policy::Request`] holds nothing else. Within one scheduling pass the cluster only
//! fills (without preemption or dynamic MIG nothing is freed or re-cut in a pass), so once a job
//! of a class cannot start, no later job of that class can start in the same pass either. An
//! unbounded greedy pass therefore visits, in queue order, only the first waiting job of each
//! class that has not failed yet: it starts exactly the jobs the full scan would, in the same
//! order, at `O(log n)` per job started or class passed over instead of `O(n)` per pass.
use std::collections::BTreeSet;

/// A queue entry: (policy key, arrival rank), as in the engine's queue.
pub(super) type Entry = (u64, u32);

/// Waiting jobs per request class (a job's class is its kind's, given with it), and the first
/// waiting job of every class.
#[derive(Debug, Default)]
pub(super) struct BackfillIndex {
    /// Per class, its waiting jobs in queue order.
    members: Vec<BTreeSet<Entry>>,
    /// The first waiting job of every class with one, as (key, rank, class), in queue order,
    /// less the classes parked in the current pass.
    heads: BTreeSet<(u64, u32, u32)>,
    /// Heads of classes that could not start in the current pass.
    parked: Vec<(u64, u32, u32)>,
}

impl BackfillIndex {
    /// An index of `classes` request classes, with no job waiting.
    pub(super) fn new(classes: usize) -> Self {
        BackfillIndex {
            members: vec![BTreeSet::new(); classes],
            heads: BTreeSet::new(),
            parked: Vec::new(),
        }
    }

    /// A job of request class `class` joins the queue.
    pub(super) fn insert(&mut self, class: u32, entry: Entry) {
        let set = &mut self.members[class as usize];
        match set.first().copied() {
            Some(first) if first < entry => {}
            Some(first) => {
                self.heads.remove(&(first.0, first.1, class));
                self.heads.insert((entry.0, entry.1, class));
            }
            None => {
                self.heads.insert((entry.0, entry.1, class));
            }
        }
        set.insert(entry);
    }

    /// A job of request class `class` leaves the queue (it started). Its class must not be
    /// parked.
    pub(super) fn remove(&mut self, class: u32, entry: Entry) {
        let set = &mut self.members[class as usize];
        let was_first = set.first() == Some(&entry);
        set.remove(&entry);
        if was_first {
            self.heads.remove(&(entry.0, entry.1, class));
            if let Some(&(key, rank)) = set.first() {
                self.heads.insert((key, rank, class));
            }
        }
    }

    /// The first waiting job, in queue order, of a class not parked in this pass.
    pub(super) fn first(&self) -> Option<(u64, u32, u32)> {
        self.heads.first().copied()
    }

    /// The class of `head` (from [`Self::first`]) could not start: pass over it until
    /// [`Self::end_pass`].
    pub(super) fn park(&mut self, head: (u64, u32, u32)) {
        self.heads.remove(&head);
        self.parked.push(head);
    }

    /// The pass is over: every class takes part again.
    pub(super) fn end_pass(&mut self) {
        for head in self.parked.drain(..) {
            self.heads.insert(head);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_follow_queue_order_and_parking() {
        // Jobs 0..4 (rank = job): classes a (0), b (1), a, b.
        let class = [0u32, 1, 0, 1];
        let mut ix = BackfillIndex::new(2);
        for (job, rank) in [(2usize, 2u32), (0, 0), (3, 3), (1, 1)] {
            ix.insert(class[job], (0, rank));
        }
        assert_eq!(ix.first(), Some((0, 0, 0)));
        ix.remove(class[0], (0, 0));
        assert_eq!(ix.first(), Some((0, 1, 1)));
        ix.park((0, 1, 1));
        assert_eq!(ix.first(), Some((0, 2, 0)));
        ix.remove(class[2], (0, 2));
        assert_eq!(ix.first(), None, "class b is parked, class a is empty");
        ix.end_pass();
        assert_eq!(ix.first(), Some((0, 1, 1)));
        // A removal that is not a head leaves the heads alone.
        ix.remove(class[3], (0, 3));
        assert_eq!(ix.first(), Some((0, 1, 1)));
        ix.remove(class[1], (0, 1));
        assert_eq!(ix.first(), None);
    }

    #[test]
    fn keys_order_before_ranks() {
        let mut ix = BackfillIndex::new(2);
        ix.insert(0, (5, 0));
        ix.insert(1, (3, 1));
        assert_eq!(ix.first(), Some((3, 1, 1)));
    }
}
