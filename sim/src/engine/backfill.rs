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
use std::collections::{BTreeSet, HashMap};

/// A queue entry: (policy key, arrival rank), as in the engine's queue.
pub(super) type Entry = (u64, u32);

/// Waiting jobs per request class, and the first waiting job of every class.
#[derive(Debug, Default)]
pub(super) struct BackfillIndex {
    /// Per job, its request class.
    class_of: Vec<u32>,
    /// Per class, its waiting jobs in queue order.
    members: Vec<BTreeSet<Entry>>,
    /// The first waiting job of every class with one, as (key, rank, class), in queue order,
    /// less the classes parked in the current pass.
    heads: BTreeSet<(u64, u32, u32)>,
    /// Heads of classes that could not start in the current pass.
    parked: Vec<(u64, u32, u32)>,
}

impl BackfillIndex {
    /// An index for jobs whose request signatures `signature(job)` yields, in job order.
    pub(super) fn new(jobs: usize, mut signature: impl FnMut(usize, &mut Vec<u64>)) -> Self {
        let mut ids: HashMap<Box<[u64]>, u32> = HashMap::new();
        let mut buf = Vec::new();
        let class_of = (0..jobs)
            .map(|job| {
                buf.clear();
                signature(job, &mut buf);
                if let Some(&id) = ids.get(buf.as_slice()) {
                    return id;
                }
                let id = ids.len() as u32;
                ids.insert(buf.clone().into_boxed_slice(), id);
                id
            })
            .collect();
        BackfillIndex {
            class_of,
            members: vec![BTreeSet::new(); ids.len()],
            heads: BTreeSet::new(),
            parked: Vec::new(),
        }
    }

    /// Number of distinct request classes.
    #[cfg(test)]
    pub(super) fn classes(&self) -> usize {
        self.members.len()
    }

    /// A job joins the queue.
    pub(super) fn insert(&mut self, job: u32, entry: Entry) {
        let class = self.class_of[job as usize];
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

    /// A job leaves the queue (it started). Its class must not be parked.
    pub(super) fn remove(&mut self, job: u32, entry: Entry) {
        let class = self.class_of[job as usize];
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

    fn index(classes: &[u64]) -> BackfillIndex {
        BackfillIndex::new(classes.len(), |job, buf| buf.push(classes[job]))
    }

    #[test]
    fn same_signature_same_class() {
        let ix = index(&[1, 2, 1, 3, 2]);
        assert_eq!(ix.classes(), 3);
        assert_eq!(ix.class_of, vec![0, 1, 0, 2, 1]);
    }

    #[test]
    fn heads_follow_queue_order_and_parking() {
        // Jobs 0..4: classes a, b, a, b.
        let mut ix = index(&[7, 9, 7, 9]);
        for (job, rank) in [(2u32, 2u32), (0, 0), (3, 3), (1, 1)] {
            ix.insert(job, (0, rank));
        }
        assert_eq!(ix.first(), Some((0, 0, 0)));
        ix.remove(0, (0, 0));
        assert_eq!(ix.first(), Some((0, 1, 1)));
        ix.park((0, 1, 1));
        assert_eq!(ix.first(), Some((0, 2, 0)));
        ix.remove(2, (0, 2));
        assert_eq!(ix.first(), None, "class b is parked, class a is empty");
        ix.end_pass();
        assert_eq!(ix.first(), Some((0, 1, 1)));
        // A removal that is not a head leaves the heads alone.
        ix.remove(3, (0, 3));
        assert_eq!(ix.first(), Some((0, 1, 1)));
        ix.remove(1, (0, 1));
        assert_eq!(ix.first(), None);
    }

    #[test]
    fn keys_order_before_ranks() {
        let mut ix = index(&[1, 2]);
        ix.insert(0, (5, 0));
        ix.insert(1, (3, 1));
        assert_eq!(ix.first(), Some((3, 1, 1)));
    }
}
