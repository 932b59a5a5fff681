//! What a policy sees of the cluster: free memory and job counts per slot, with indexes that
//! answer "first / best / least-loaded slot with room for X MiB" in O(log n).
use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::ops::Bound::{self, Excluded, Included, Unbounded};

use super::PlacementRule;

/// The shape of one group's GPUs.
#[derive(Clone, Debug, PartialEq)]
pub enum GroupKind {
    /// Whole GPUs; up to `max_jobs` jobs share one (1 for exclusive mode).
    Whole {
        /// Memory of one GPU, MiB.
        memory_mib: u64,
        /// Most jobs per GPU.
        max_jobs: u32,
    },
    /// Every GPU cut into the same MIG slices; up to `max_jobs` jobs share one slice.
    Mig {
        /// Memory of each slice, MiB, in layout order.
        slice_memory_mib: Vec<u64>,
        /// SMs of each slice, in layout order (tie-break for best-fit).
        slice_sms: Vec<u32>,
        /// Most jobs per slice.
        max_jobs: u32,
    },
}

/// One partition: a whole GPU (slot 0) or one MIG slice of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotRef {
    /// Group index.
    pub group: u32,
    /// Global GPU index.
    pub gpu: u32,
    /// Slice index within the GPU's layout (0 for a whole GPU).
    pub slot: u32,
}

#[derive(Debug)]
pub(super) struct GroupIndex {
    pub(super) first_gpu: u32,
    pub(super) count: u32,
    pub(super) kind: GroupKind,
    /// Idle, unlocked GPUs (global indices).
    pub(super) idle: GpuSet,
    /// First-fit on whole GPUs: max free MiB over eligible GPUs (local indices).
    pub(super) max_free: Option<MaxTree>,
    /// Best-fit on whole GPUs: (free MiB, global GPU) of eligible GPUs.
    pub(super) by_free: Option<BTreeSet<(u64, u32)>>,
    /// The key each GPU has in `by_free` (local indices), so it can be removed in O(log n).
    by_free_key: Vec<Option<u64>>,
    /// MIG: per slice position, the GPUs whose slice there has room for one more job.
    pub(super) open_slices: Vec<BTreeSet<u32>>,
    /// MIG best-fit: slice positions by (memory, SMs, position).
    pub(super) slices_small_first: Vec<usize>,
    /// Spread and least-slowdown: every slot with room for one more job, by load.
    by_load: Option<BTreeSet<LoadKey>>,
    /// Least-slowdown on whole GPUs: the load order groups slots by the set they hold (its
    /// members' [`ClusterView::occupy`] keys summed), so a decision asks once per distinct set.
    by_set: bool,
}

/// A slot's place in the load order: (jobs in the slot, jobs on its GPU, the set it holds (0
/// unless the group is indexed by set), most free memory first, GPU, slot). On a whole GPU the
/// two counts are equal.
type LoadKey = (u32, u32, u64, Reverse<u64>, u32, u32);

/// One slot with room, as the load index holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Load {
    pub(super) slot: SlotRef,
    /// Jobs in the slot.
    pub(super) jobs: u32,
    /// Jobs on its GPU, every slot together.
    pub(super) gpu_jobs: u32,
    /// Free memory of the slot, MiB.
    pub(super) free_mib: u64,
    /// The set it holds, as the load order groups it (0 unless the group is indexed by set).
    pub(super) set: u64,
}

/// The open slots of a group that hold at least `memory_mib` more, in load order. Within one
/// load class (the same two job counts and set) free memory only falls, so the walk leaves a
/// class at its first slot that is too small: each step is `O(log S)` and a walk that stops
/// early costs `O(c log S)` for `c` classes passed.
pub(super) struct LoadWalk<'v> {
    set: &'v BTreeSet<LoadKey>,
    group: u32,
    memory_mib: u64,
    from: Bound<LoadKey>,
}

impl LoadWalk<'_> {
    /// Passes over the rest of the class of `load` (every slot with its two job counts).
    pub(super) fn skip_class(&mut self, load: &Load) {
        self.from = Included(class_start(load.jobs, load.gpu_jobs.saturating_add(1)));
    }

    /// Passes over the rest of the slots that hold the same set as `load` (in a group indexed
    /// by set: they differ only in GPU, and the walk met the lowest first).
    pub(super) fn skip_set(&mut self, load: &Load) {
        self.from = Included(set_start(load.jobs, load.gpu_jobs, load.set));
    }
}

fn class_start(jobs: u32, gpu_jobs: u32) -> LoadKey {
    (jobs, gpu_jobs, 0, Reverse(u64::MAX), 0, 0)
}

/// Where the slots after set `set` of a load class begin.
fn set_start(jobs: u32, gpu_jobs: u32, set: u64) -> LoadKey {
    match set.checked_add(1) {
        Some(next) => (jobs, gpu_jobs, next, Reverse(u64::MAX), 0, 0),
        None => class_start(jobs, gpu_jobs.saturating_add(1)),
    }
}

impl Iterator for LoadWalk<'_> {
    type Item = Load;

    fn next(&mut self) -> Option<Load> {
        loop {
            let &key = self.set.range((self.from, Unbounded)).next()?;
            let (jobs, gpu_jobs, set, Reverse(free_mib), gpu, slot) = key;
            if free_mib >= self.memory_mib {
                self.from = Excluded(key);
                return Some(Load {
                    slot: SlotRef {
                        group: self.group,
                        gpu,
                        slot,
                    },
                    jobs,
                    gpu_jobs,
                    free_mib,
                    set,
                });
            }
            self.from = Included(set_start(jobs, gpu_jobs, set));
        }
    }
}

/// The cluster as policies see it. The engine keeps it current with [`ClusterView::occupy`],
/// [`ClusterView::release`] and [`ClusterView::set_locked`].
#[derive(Debug)]
pub struct ClusterView {
    pub(super) groups: Vec<GroupIndex>,
    gpu_group: Vec<u32>,
    slot_base: Vec<u32>,
    slot_capacity: Vec<u64>,
    slot_free: Vec<u64>,
    slot_jobs: Vec<u32>,
    gpu_jobs: Vec<u32>,
    gpu_locked: Vec<bool>,
    /// The key each slot has in its group's `by_load` (slot ids), so it can be removed.
    load_key: Vec<Option<LoadKey>>,
    /// The set each slot holds: its members' occupy keys, summed (wrapping).
    slot_set: Vec<u64>,
}

impl ClusterView {
    /// A view of empty groups (`(kind, GPU count)` each) indexed for `rule`.
    pub fn new(groups: &[(GroupKind, u32)], rule: PlacementRule) -> Self {
        let mut view = ClusterView {
            groups: Vec::with_capacity(groups.len()),
            gpu_group: Vec::new(),
            slot_base: Vec::new(),
            slot_capacity: Vec::new(),
            slot_free: Vec::new(),
            slot_jobs: Vec::new(),
            gpu_jobs: Vec::new(),
            gpu_locked: Vec::new(),
            load_key: Vec::new(),
            slot_set: Vec::new(),
        };
        for (group_idx, (kind, count)) in groups.iter().enumerate() {
            view.add_group(group_idx as u32, kind.clone(), *count, rule);
        }
        view
    }

    fn add_group(&mut self, group_idx: u32, kind: GroupKind, count: u32, rule: PlacementRule) {
        let first_gpu = self.gpu_group.len() as u32;
        let capacities = kind.slot_capacities();
        for _ in 0..count {
            self.gpu_group.push(group_idx);
            self.slot_base.push(self.slot_capacity.len() as u32);
            self.slot_capacity.extend_from_slice(&capacities);
            self.slot_free.extend_from_slice(&capacities);
            self.slot_jobs.extend(capacities.iter().map(|_| 0));
            self.load_key.extend(capacities.iter().map(|_| None));
            self.slot_set.extend(capacities.iter().map(|_| 0));
            self.gpu_jobs.push(0);
            self.gpu_locked.push(false);
        }
        let all: BTreeSet<u32> = (first_gpu..first_gpu + count).collect();
        let packs = matches!(kind, GroupKind::Whole { max_jobs, .. } if max_jobs > 1);
        let whole_memory = capacities[0];
        let mut index = GroupIndex {
            first_gpu,
            count,
            max_free: (packs && rule == PlacementRule::FirstFit)
                .then(|| MaxTree::filled(count as usize, whole_memory as i64)),
            by_free: (packs && rule == PlacementRule::BestFit)
                .then(|| all.iter().map(|&g| (whole_memory, g)).collect()),
            by_free_key: vec![Some(whole_memory); count as usize],
            open_slices: Vec::new(),
            slices_small_first: Vec::new(),
            by_load: matches!(rule, PlacementRule::Spread | PlacementRule::LeastSlowdown)
                .then(BTreeSet::new),
            by_set: rule == PlacementRule::LeastSlowdown && matches!(kind, GroupKind::Whole { .. }),
            idle: GpuSet::full(first_gpu, count),
            kind,
        };
        if let GroupKind::Mig {
            slice_memory_mib,
            slice_sms,
            ..
        } = &index.kind
        {
            index.open_slices = vec![all; slice_memory_mib.len()];
            let mut order: Vec<usize> = (0..slice_memory_mib.len()).collect();
            order.sort_by_key(|&i| (slice_memory_mib[i], slice_sms[i], i));
            index.slices_small_first = order;
        }
        self.groups.push(index);
        for gpu in first_gpu..first_gpu + count {
            self.reindex_load(group_idx, gpu);
        }
    }

    /// The group's open slots holding at least `memory_mib` more, in load order (fewest jobs
    /// in the slot, then on its GPU, then most free memory, then lowest GPU and slot); `None`
    /// unless the view was built for a rule that keeps the load index (spread, least-slowdown).
    pub(super) fn load_walk(&self, group: usize, memory_mib: u64) -> Option<LoadWalk<'_>> {
        Some(LoadWalk {
            set: self.groups[group].by_load.as_ref()?,
            group: group as u32,
            memory_mib,
            from: Unbounded,
        })
    }

    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// The group's shape.
    pub fn group_kind(&self, group: usize) -> &GroupKind {
        &self.groups[group].kind
    }

    /// Global indices of the group's GPUs.
    pub fn group_gpus(&self, group: usize) -> std::ops::Range<u32> {
        let g = &self.groups[group];
        g.first_gpu..g.first_gpu + g.count
    }

    /// Group of a GPU.
    pub fn gpu_group(&self, gpu: u32) -> u32 {
        self.gpu_group[gpu as usize]
    }

    /// Free memory of a slot, MiB.
    pub fn free_mib(&self, slot: SlotRef) -> u64 {
        self.slot_free[self.slot_id(slot)]
    }

    /// Memory of a slot, MiB.
    pub fn capacity_mib(&self, slot: SlotRef) -> u64 {
        self.slot_capacity[self.slot_id(slot)]
    }

    /// The slots at position `slot` of MIG group `group` that have room open, by GPU index.
    pub(super) fn open_slots(&self, group: usize, slot: usize) -> impl Iterator<Item = SlotRef> {
        self.groups[group].open_slices[slot]
            .iter()
            .map(move |&gpu| SlotRef {
                group: group as u32,
                gpu,
                slot: slot as u32,
            })
    }

    /// Jobs in a slot.
    pub fn jobs_in(&self, slot: SlotRef) -> u32 {
        self.slot_jobs[self.slot_id(slot)]
    }

    /// Jobs on a GPU, all slots together.
    pub fn jobs_on_gpu(&self, gpu: u32) -> u32 {
        self.gpu_jobs[gpu as usize]
    }

    /// Whether a GPU is held whole by a multi-GPU job.
    pub fn is_locked(&self, gpu: u32) -> bool {
        self.gpu_locked[gpu as usize]
    }

    /// Most jobs a slot of this group may hold.
    pub fn max_jobs(&self, group: usize) -> u32 {
        match self.groups[group].kind {
            GroupKind::Whole { max_jobs, .. } | GroupKind::Mig { max_jobs, .. } => max_jobs,
        }
    }

    /// Whether a slot can take one more job of `memory_mib`.
    pub fn has_room(&self, slot: SlotRef, memory_mib: u64) -> bool {
        let id = self.slot_id(slot);
        !self.gpu_locked[slot.gpu as usize]
            && self.slot_jobs[id] < self.max_jobs(slot.group as usize)
            && self.slot_free[id] >= memory_mib
    }

    /// Records a job of `memory_mib` entering `slot`; `member` is the same for jobs that are the
    /// same to the performance model (class, GPUs and minimum speed: [`member_key`] of the
    /// engine's job kind), so that slots holding the same set can be told apart from the rest.
    pub fn occupy(&mut self, slot: SlotRef, memory_mib: u64, member: u64) {
        let id = self.slot_id(slot);
        self.slot_set[id] = self.slot_set[id].wrapping_add(member);
        debug_assert!(
            self.slot_free[id] >= memory_mib,
            "engine placed past memory"
        );
        self.slot_free[id] -= memory_mib;
        self.slot_jobs[id] += 1;
        self.gpu_jobs[slot.gpu as usize] += 1;
        self.reindex(slot);
    }

    /// Records a job of `memory_mib` leaving `slot` (`member` as it entered).
    pub fn release(&mut self, slot: SlotRef, memory_mib: u64, member: u64) {
        let id = self.slot_id(slot);
        self.slot_set[id] = self.slot_set[id].wrapping_sub(member);
        self.slot_free[id] += memory_mib;
        self.slot_jobs[id] -= 1;
        self.gpu_jobs[slot.gpu as usize] -= 1;
        self.reindex(slot);
    }

    /// Marks a GPU as held whole by a multi-GPU job or a MIG re-cut (or frees it).
    pub fn set_locked(&mut self, gpu: u32, locked: bool) {
        self.gpu_locked[gpu as usize] = locked;
        let group = self.gpu_group[gpu as usize];
        for slot in 0..self.slot_count(gpu) {
            self.reindex(SlotRef { group, gpu, slot });
        }
    }

    /// Slots (whole GPU or slice positions) of a GPU.
    pub fn slot_count(&self, gpu: u32) -> u32 {
        let end = self
            .slot_base
            .get(gpu as usize + 1)
            .copied()
            .unwrap_or(self.slot_capacity.len() as u32);
        end - self.slot_base[gpu as usize]
    }

    /// Sets the memory of an empty slot (a MIG re-cut; 0 = no slice at this position).
    pub fn set_capacity(&mut self, slot: SlotRef, capacity_mib: u64) {
        let id = self.slot_id(slot);
        debug_assert_eq!(self.slot_jobs[id], 0, "re-cut under a running job");
        self.slot_capacity[id] = capacity_mib;
        self.slot_free[id] = capacity_mib;
        self.reindex(slot);
    }

    /// Idle, unlocked GPUs of a group.
    pub fn idle_count(&self, group: usize) -> usize {
        self.groups[group].idle.len()
    }

    /// The lowest-numbered idle, unlocked GPU of a group.
    pub fn first_idle(&self, group: usize) -> Option<u32> {
        self.groups[group].idle.first()
    }

    fn slot_id(&self, slot: SlotRef) -> usize {
        (self.slot_base[slot.gpu as usize] + slot.slot) as usize
    }

    /// Brings every index of the slot's group up to date for this slot.
    fn reindex(&mut self, slot: SlotRef) {
        let id = self.slot_id(slot);
        let gpu = slot.gpu;
        let idle = self.gpu_jobs[gpu as usize] == 0 && !self.gpu_locked[gpu as usize];
        let capacity = self.slot_capacity[id];
        let has_space = !self.gpu_locked[gpu as usize]
            && capacity > 0
            && self.slot_jobs[id] < self.max_jobs(slot.group as usize);
        let free = self.slot_free[id];
        let index = &mut self.groups[slot.group as usize];
        index.idle.set(gpu, idle);
        let local = (gpu - index.first_gpu) as usize;
        if let Some(tree) = &mut index.max_free {
            tree.set(local, if has_space { free as i64 } else { -1 });
        }
        if let Some(by_free) = &mut index.by_free {
            if let Some(old) = index.by_free_key[local].take() {
                by_free.remove(&(old, gpu));
            }
            if has_space {
                by_free.insert((free, gpu));
                index.by_free_key[local] = Some(free);
            }
        }
        if let Some(open) = index.open_slices.get_mut(slot.slot as usize) {
            set_member(open, gpu, has_space);
        }
        debug_assert!(free <= capacity);
        self.reindex_load(slot.group, gpu);
    }

    /// Brings the load keys of every slot of `gpu` up to date (its job count is in each).
    fn reindex_load(&mut self, group: u32, gpu: u32) {
        let max_jobs = self.max_jobs(group as usize);
        let by_set = self.groups[group as usize].by_set;
        let Some(by_load) = &mut self.groups[group as usize].by_load else {
            return;
        };
        let base = self.slot_base[gpu as usize] as usize;
        let end = self
            .slot_base
            .get(gpu as usize + 1)
            .map_or(self.slot_capacity.len(), |&b| b as usize);
        let locked = self.gpu_locked[gpu as usize];
        let gpu_jobs = self.gpu_jobs[gpu as usize];
        for id in base..end {
            let jobs = self.slot_jobs[id];
            let has_space = !locked && self.slot_capacity[id] > 0 && jobs < max_jobs;
            let key = has_space.then_some((
                jobs,
                gpu_jobs,
                if by_set { self.slot_set[id] } else { 0 },
                Reverse(self.slot_free[id]),
                gpu,
                (id - base) as u32,
            ));
            if self.load_key[id] == key {
                continue;
            }
            if let Some(old) = self.load_key[id].take() {
                by_load.remove(&old);
            }
            if let Some(new) = key {
                by_load.insert(new);
            }
            self.load_key[id] = key;
        }
    }
}

/// The key a job enters the view with: a 64-bit mix (splitmix64's finalizer) of `id`, the
/// index of what the performance model sees of it. A slot's set is the wrapping sum of its
/// members' keys, so two slots hold the same set when their sums agree; different sets agree
/// only by a 64-bit collision (about one in 2^64 per pair of sets).
pub fn member_key(id: u64) -> u64 {
    let mut z = id.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A set of a group's GPUs (global indices in `first..first + count`) as a bitmap with a
/// summary word per 64 words: insert and remove are O(1) and the lowest member is two word
/// scans away. It replaced a `BTreeSet` of idle GPUs, whose insert and remove at every start and
/// end were a tenth of a large exclusive replay.
#[derive(Clone, Debug)]
pub(super) struct GpuSet {
    first: u32,
    len: usize,
    /// Bit `i % 64` of word `i / 64`: local GPU `i` is a member.
    words: Vec<u64>,
    /// Bit `w % 64` of summary word `w / 64`: word `w` is not zero.
    summary: Vec<u64>,
}

impl GpuSet {
    /// Every GPU of `first..first + count`.
    fn full(first: u32, count: u32) -> Self {
        let mut set = GpuSet {
            first,
            len: 0,
            words: vec![0; (count as usize).div_ceil(64)],
            summary: vec![0; (count as usize).div_ceil(64 * 64)],
        };
        for gpu in first..first + count {
            set.insert(gpu);
        }
        set
    }

    fn insert(&mut self, gpu: u32) {
        let local = (gpu - self.first) as usize;
        let (w, bit) = (local / 64, 1u64 << (local % 64));
        if self.words[w] & bit == 0 {
            self.words[w] |= bit;
            self.summary[w / 64] |= 1 << (w % 64);
            self.len += 1;
        }
    }

    fn remove(&mut self, gpu: u32) {
        let local = (gpu - self.first) as usize;
        let (w, bit) = (local / 64, 1u64 << (local % 64));
        if self.words[w] & bit != 0 {
            self.words[w] &= !bit;
            if self.words[w] == 0 {
                self.summary[w / 64] &= !(1 << (w % 64));
            }
            self.len -= 1;
        }
    }

    /// Members.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The lowest member.
    pub(super) fn first(&self) -> Option<u32> {
        let (s, summary) = self
            .summary
            .iter()
            .enumerate()
            .find(|(_, word)| **word != 0)?;
        let w = s * 64 + summary.trailing_zeros() as usize;
        let local = w * 64 + self.words[w].trailing_zeros() as usize;
        Some(self.first + local as u32)
    }

    /// Members, lowest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let start = self
            .first()
            .map_or(self.words.len(), |g| (g - self.first) as usize / 64);
        self.words[start..]
            .iter()
            .enumerate()
            .flat_map(move |(i, &word)| {
                let base = self.first + ((start + i) * 64) as u32;
                std::iter::successors((word != 0).then_some(word), |&w| {
                    let rest = w & (w - 1);
                    (rest != 0).then_some(rest)
                })
                .map(move |w| base + w.trailing_zeros())
            })
    }

    fn set(&mut self, gpu: u32, member: bool) {
        if member {
            self.insert(gpu);
        } else {
            self.remove(gpu);
        }
    }
}

fn set_member(set: &mut BTreeSet<u32>, value: u32, member: bool) {
    if member {
        set.insert(value);
    } else {
        set.remove(&value);
    }
}

impl GroupKind {
    fn slot_capacities(&self) -> Vec<u64> {
        match self {
            GroupKind::Whole { memory_mib, .. } => vec![*memory_mib],
            GroupKind::Mig {
                slice_memory_mib, ..
            } => slice_memory_mib.clone(),
        }
    }
}

/// A max-segment tree over a fixed number of leaves: set a leaf, find the leftmost leaf whose
/// value is at least a bound. Both O(log n).
#[derive(Debug)]
pub(super) struct MaxTree {
    leaves: usize,
    nodes: Vec<i64>,
}

impl MaxTree {
    fn filled(len: usize, value: i64) -> Self {
        let leaves = len.next_power_of_two().max(1);
        let mut nodes = vec![-1; 2 * leaves];
        nodes[leaves..leaves + len].fill(value);
        for i in (1..leaves).rev() {
            nodes[i] = nodes[2 * i].max(nodes[2 * i + 1]);
        }
        Self { leaves, nodes }
    }

    fn set(&mut self, leaf: usize, value: i64) {
        let mut i = leaf + self.leaves;
        self.nodes[i] = value;
        while i > 1 {
            i /= 2;
            self.nodes[i] = self.nodes[2 * i].max(self.nodes[2 * i + 1]);
        }
    }

    /// Leftmost leaf with value >= `bound`.
    pub(super) fn leftmost_at_least(&self, bound: i64) -> Option<usize> {
        if self.nodes[1] < bound {
            return None;
        }
        let mut i = 1;
        while i < self.leaves {
            i = if self.nodes[2 * i] >= bound {
                2 * i
            } else {
                2 * i + 1
            };
        }
        Some(i - self.leaves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The idle bitmap answers as the `BTreeSet` it replaced, over word and summary edges.
        #[test]
        fn gpu_set_matches_btree_set(
            first in 0u32..100,
            count in 1u32..9000,
            start_empty in any::<bool>(),
            ops in proptest::collection::vec((any::<u32>(), any::<bool>()), 0..400),
        ) {
            let mut set = GpuSet::full(first, count);
            let mut reference: BTreeSet<u32> = (first..first + count).collect();
            if start_empty {
                for gpu in first..first + count {
                    set.remove(gpu);
                }
                reference.clear();
            }
            prop_assert_eq!(set.len(), reference.len());
            for (pick, member) in ops {
                let gpu = first + pick % count;
                set.set(gpu, member);
                set_member(&mut reference, gpu, member);
                prop_assert_eq!(set.len(), reference.len());
                prop_assert_eq!(set.first(), reference.first().copied());
            }
            let all: Vec<u32> = set.iter().collect();
            let want: Vec<u32> = reference.iter().copied().collect();
            prop_assert_eq!(all, want);
        }
    }

    #[test]
    fn max_tree_finds_leftmost_fit() {
        let mut tree = MaxTree::filled(5, 10);
        tree.set(0, 3);
        tree.set(1, 7);
        assert_eq!(tree.leftmost_at_least(5), Some(1));
        assert_eq!(tree.leftmost_at_least(10), Some(2));
        tree.set(2, -1);
        tree.set(3, -1);
        tree.set(4, -1);
        assert_eq!(tree.leftmost_at_least(8), None);
    }
}
