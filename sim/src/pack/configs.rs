//! One GPU: every configuration of a job set, scored with the performance model; the best
//! feasible configuration of each family is kept.
use super::{FULL_BUDGET_GRID_MAX, Family, GpuConfig, GpuPlan, PlacedJob};
use crate::hardware::{GpuSpec, MigLayout};
use crate::perf::{CoRun, JobClass, Partition, PerfModel, Tenant};

/// SM budgets of the per-job grid, as fractions.
const BUDGET_GRID: [f64; 4] = [0.25, 0.5, 0.75, 1.0];
/// Uniform SM budgets tried on sets too large for the grid.
const UNIFORM_BUDGETS: [f64; 3] = [0.25, 0.5, 0.75];
/// Rounding slack when comparing a fraction with a job's minimum.
const MIN_SLACK: f64 = 1e-12;

/// What every GPU evaluation reads.
pub(super) struct Ctx<'a> {
    pub model: &'a dyn PerfModel,
    pub gpu: &'static GpuSpec,
    pub classes: Vec<JobClass>,
    pub mins: Vec<f64>,
    /// Valid MIG layouts, indexed by slice count (index 0 unused).
    pub layouts_by_slices: Vec<Vec<MigLayout>>,
    /// Distinct assignments of k groups to the slices of every k-slice layout, indexed by k.
    pub assignments_by_slices: Vec<u64>,
}

impl<'a> Ctx<'a> {
    pub fn new(
        model: &'a dyn PerfModel,
        gpu: &'static GpuSpec,
        classes: Vec<JobClass>,
        mins: Vec<f64>,
    ) -> Self {
        let mut layouts_by_slices: Vec<Vec<MigLayout>> = Vec::new();
        for layout in gpu.enumerate_mig_layouts() {
            let k = layout.slices.len();
            if layouts_by_slices.len() <= k {
                layouts_by_slices.resize(k + 1, Vec::new());
            }
            layouts_by_slices[k].push(layout);
        }
        let assignments_by_slices = layouts_by_slices
            .iter()
            .enumerate()
            .map(|(k, layouts)| {
                let mut count = 0u64;
                for layout in layouts {
                    for_each_assignment(layout, k, &mut |_| count += 1);
                }
                count
            })
            .collect();
        Self {
            model,
            gpu,
            classes,
            mins,
            layouts_by_slices,
            assignments_by_slices,
        }
    }
}

/// The best feasible configuration of one family for a job set, with its total fraction.
#[derive(Clone, Debug)]
pub(super) struct Scored {
    pub total: f64,
    pub config: GpuConfig,
}

/// Best configuration per family (indexed by `Family as usize`) and how many were scored.
#[derive(Clone, Debug, Default)]
pub(super) struct SetBest {
    pub per_family: [Option<Scored>; 6],
    pub evaluated: u64,
}

impl SetBest {
    /// The best total among `families`, if any is feasible.
    pub fn best_in(&self, families: &[Family]) -> Option<&Scored> {
        families
            .iter()
            .filter_map(|f| self.per_family[f.index()].as_ref())
            .fold(None, |best: Option<&Scored>, s| match best {
                Some(b) if b.total >= s.total => Some(b),
                _ => Some(s),
            })
    }

    fn offer(&mut self, config: GpuConfig, total: Option<f64>) {
        self.evaluated += 1;
        let Some(total) = total else { return };
        let slot = &mut self.per_family[config.family().index()];
        if slot.as_ref().is_none_or(|s| total > s.total) {
            *slot = Some(Scored { total, config });
        }
    }
}

/// Scores every configuration of the jobs `members` (request indices, ascending).
pub(super) fn best_per_family(ctx: &Ctx<'_>, members: &[usize]) -> SetBest {
    best_per_family_within(ctx, members, u64::MAX)
}

/// Like [`best_per_family`] while the set has at most `max_configs` configurations
/// ([`configs_per_set`]); a larger set tries one grouping of its jobs per MIG slice count
/// instead of every set partition ([`round_robin_groups`]), on every layout and assignment.
pub(super) fn best_per_family_within(
    ctx: &Ctx<'_>,
    members: &[usize],
    max_configs: u64,
) -> SetBest {
    let mut best = SetBest::default();
    let mut offer = |config: GpuConfig| {
        let total = evaluate(ctx, members, &config).map(|p| p.total_fraction);
        best.offer(config, total);
    };
    if members.len() == 1 {
        offer(GpuConfig::Exclusive);
    }
    offer(GpuConfig::Timeslice);
    offer(GpuConfig::Mps);
    for budgets in budget_options(ctx, members) {
        offer(GpuConfig::MpsBudgets(budgets));
    }
    if configs_per_set(ctx, members.len()) <= max_configs {
        for_each_mig_config(ctx, members, &mut offer);
    } else {
        for_each_round_robin_mig_config(ctx, members, &mut offer);
    }
    best
}

/// The grouping of `members` into `k` groups that deals the jobs, in decreasing order of GPU
/// occupancy (`time_demand × space_demand`, ties by request order), round-robin: each group
/// gets a share of heavy and light jobs. `group_of[p]` is the group of `members[p]`.
pub(super) fn round_robin_groups(ctx: &Ctx<'_>, members: &[usize], k: usize) -> Vec<usize> {
    let occupancy = |j: usize| ctx.classes[j].time_demand * ctx.classes[j].space_demand;
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| {
        occupancy(members[b])
            .total_cmp(&occupancy(members[a]))
            .then(a.cmp(&b))
    });
    let mut group_of = vec![0; members.len()];
    for (rank, &p) in order.iter().enumerate() {
        group_of[p] = rank % k;
    }
    group_of
}

/// MIG configurations of a large set: for each slice count k, the [`round_robin_groups`] on
/// every k-slice layout with every distinct assignment of groups to slices.
fn for_each_round_robin_mig_config(
    ctx: &Ctx<'_>,
    members: &[usize],
    offer: &mut dyn FnMut(GpuConfig),
) {
    for (k, layouts) in ctx.layouts_by_slices.iter().enumerate() {
        if k == 0 || k > members.len() {
            continue;
        }
        let group_of = round_robin_groups(ctx, members, k);
        offer_on_layouts(layouts, &group_of, k, offer);
    }
}

/// How many configurations [`best_per_family`] scores for a set of `m` jobs, without scoring
/// them (saturating at `u64::MAX`).
pub(super) fn configs_per_set(ctx: &Ctx<'_>, m: usize) -> u64 {
    let exclusive = u64::from(m == 1);
    let proportional = u64::from(m >= 2);
    let grid = if m <= FULL_BUDGET_GRID_MAX {
        (BUDGET_GRID.len() as u64).pow(m as u32)
    } else {
        UNIFORM_BUDGETS.len() as u64
    };
    let mig = (1..=m)
        .filter_map(|k| {
            let assignments = *ctx.assignments_by_slices.get(k)?;
            Some(stirling2(m, k).saturating_mul(assignments))
        })
        .fold(0u64, u64::saturating_add);
    (exclusive + 2 + proportional + grid).saturating_add(mig)
}

/// Ways to split `n` items into `k` non-empty groups (Stirling number of the second kind),
/// saturating at `u64::MAX`.
pub(super) fn stirling2(n: usize, k: usize) -> u64 {
    // Row by row: S(i, j) = j S(i-1, j) + S(i-1, j-1).
    let mut row = vec![0u64; k + 1];
    row[0] = 1;
    for _ in 0..n {
        for j in (1..=k).rev() {
            row[j] = (j as u64).saturating_mul(row[j]).saturating_add(row[j - 1]);
        }
        row[0] = 0;
    }
    row[k]
}

/// SM budget vectors to try: space-demand-proportional, then the grid or uniform budgets.
fn budget_options(ctx: &Ctx<'_>, members: &[usize]) -> Vec<Vec<f64>> {
    let n = members.len();
    let mut options = Vec::new();
    if n >= 2 {
        let total: f64 = members.iter().map(|&j| ctx.classes[j].space_demand).sum();
        let proportional = members
            .iter()
            .map(|&j| {
                (ctx.classes[j].space_demand / total * 100.0)
                    .round()
                    .clamp(1.0, 100.0)
                    / 100.0
            })
            .collect();
        options.push(proportional);
    }
    if n <= FULL_BUDGET_GRID_MAX {
        let combos = BUDGET_GRID.len().pow(n as u32);
        for mut code in 0..combos {
            let budgets = (0..n)
                .map(|_| {
                    let b = BUDGET_GRID[code % BUDGET_GRID.len()];
                    code /= BUDGET_GRID.len();
                    b
                })
                .collect();
            options.push(budgets);
        }
    } else {
        options.extend(UNIFORM_BUDGETS.iter().map(|&b| vec![b; n]));
    }
    options
}

/// Every MIG configuration of `members`: each set partition of them into k groups, on each
/// layout with exactly k slices, with each distinct assignment of groups to slices.
fn for_each_mig_config(ctx: &Ctx<'_>, members: &[usize], offer: &mut dyn FnMut(GpuConfig)) {
    let mut group_of = vec![0usize; members.len()];
    set_partitions(&mut group_of, 0, 0, &mut |group_of, k| {
        if let Some(layouts) = ctx.layouts_by_slices.get(k) {
            offer_on_layouts(layouts, group_of, k, offer);
        }
    });
}

/// Offers the `k` groups of `group_of` (the group of each member) on each of `layouts` (`k`
/// slices each), in each distinct assignment of groups to slices.
fn offer_on_layouts(
    layouts: &[MigLayout],
    group_of: &[usize],
    k: usize,
    offer: &mut dyn FnMut(GpuConfig),
) {
    for layout in layouts {
        for_each_assignment(layout, k, &mut |slice_of_group| {
            let slice_of = group_of.iter().map(|&g| slice_of_group[g]).collect();
            offer(GpuConfig::Mig {
                layout: layout.clone(),
                slice_of,
            });
        });
    }
}

/// Restricted-growth enumeration of set partitions: `group_of[i]` is the group of item i and
/// `groups` the groups used so far; `visit(group_of, groups)` at each complete partition.
pub(super) fn set_partitions(
    group_of: &mut [usize],
    item: usize,
    groups: usize,
    visit: &mut dyn FnMut(&[usize], usize),
) {
    if item == group_of.len() {
        visit(group_of, groups);
        return;
    }
    for g in 0..=groups {
        group_of[item] = g;
        set_partitions(group_of, item + 1, groups.max(g + 1), visit);
    }
}

/// Each bijection of `k` groups onto the layout's `k` slices, once per arrangement: slices of
/// the same profile sit side by side in an enumerated layout, and such neighbours must take
/// groups in increasing order.
pub(super) fn for_each_assignment(layout: &MigLayout, k: usize, visit: &mut dyn FnMut(&[usize])) {
    let mut slice_of_group = vec![usize::MAX; k];
    let mut group_in_slice = vec![usize::MAX; k];
    assign_slice(layout, 0, &mut slice_of_group, &mut group_in_slice, visit);
}

fn assign_slice(
    layout: &MigLayout,
    slice: usize,
    slice_of_group: &mut [usize],
    group_in_slice: &mut [usize],
    visit: &mut dyn FnMut(&[usize]),
) {
    if slice == group_in_slice.len() {
        visit(slice_of_group);
        return;
    }
    let same_as_previous = slice > 0
        && std::ptr::eq(
            layout.slices[slice].profile,
            layout.slices[slice - 1].profile,
        );
    for group in 0..slice_of_group.len() {
        let taken = slice_of_group[group] != usize::MAX;
        if taken || (same_as_previous && group < group_in_slice[slice - 1]) {
            continue;
        }
        slice_of_group[group] = slice;
        group_in_slice[slice] = group;
        assign_slice(layout, slice + 1, slice_of_group, group_in_slice, visit);
        slice_of_group[group] = usize::MAX;
    }
}

/// Predicts `members` on one GPU in `config`; `None` when a partition overflows its memory or
/// a job falls below its minimum.
pub(super) fn evaluate(ctx: &Ctx<'_>, members: &[usize], config: &GpuConfig) -> Option<GpuPlan> {
    let mode = config.mode();
    let mut jobs: Vec<Option<PlacedJob>> = vec![None; members.len()];
    for (partition, positions, slice_label) in partitions(ctx.gpu, members.len(), config) {
        let budget = |p: usize| match config {
            GpuConfig::MpsBudgets(b) => Some(b[p]),
            _ => None,
        };
        let tenants: Vec<Tenant<'_>> = positions
            .iter()
            .map(|&p| Tenant {
                class: &ctx.classes[members[p]],
                sm_budget: budget(p),
                gpus: 1,
            })
            .collect();
        let prediction = ctx.model.predict(&CoRun {
            gpu: ctx.gpu,
            mode,
            partition: &partition,
            tenants: &tenants,
        });
        if !prediction.fits_memory() {
            return None;
        }
        for (&p, &rate) in positions.iter().zip(&prediction.rates) {
            let job = members[p];
            let class = &ctx.classes[job];
            let fraction = rate / class.solo_rate;
            if fraction + MIN_SLACK < ctx.mins[job] {
                return None;
            }
            let place = match (&slice_label, budget(p)) {
                (Some(label), _) => label.clone(),
                (None, Some(b)) => format!("{:.0}% SMs", b * 100.0),
                (None, None) => "whole GPU".to_owned(),
            };
            jobs[p] = Some(PlacedJob {
                job,
                samples_per_s: rate,
                fraction,
                memory_gib: ctx.model.footprint_gib(ctx.gpu, mode, class),
                place,
            });
        }
    }
    let jobs: Vec<PlacedJob> = jobs.into_iter().collect::<Option<_>>()?;
    Some(GpuPlan {
        config: config.clone(),
        total_fraction: jobs.iter().map(|j| j.fraction).sum(),
        samples_per_s: jobs.iter().map(|j| j.samples_per_s).sum(),
        jobs,
    })
}

/// The partitions of one GPU in `config`, each with the positions of its jobs and, for a MIG
/// slice, its label (`3g.71gb@0`).
fn partitions(
    gpu: &GpuSpec,
    n_jobs: usize,
    config: &GpuConfig,
) -> Vec<(Partition, Vec<usize>, Option<String>)> {
    let GpuConfig::Mig { layout, slice_of } = config else {
        return vec![(Partition::whole(gpu), (0..n_jobs).collect(), None)];
    };
    layout
        .slices
        .iter()
        .enumerate()
        .map(|(idx, slice)| {
            let partition = Partition::slice(gpu, slice.profile);
            let positions = (0..n_jobs).filter(|&p| slice_of[p] == idx).collect();
            let label = format!("{}@{}", slice.profile.name, slice.start);
            (partition, positions, Some(label))
        })
        .collect()
}
