//! The parametric model: time and space demand per job, a few global parameters per mode.
//! The algorithm and why it is shaped so are in this folder's README.
use std::sync::Arc;

use super::{ClassLookup, CoRun, Partition, PerfModel, ProfileSet, ShareMode, Tenant};

/// Demand-based model of time-slicing, MPS and MIG, with parameters from the profile.
#[derive(Clone, Debug)]
pub struct Parametric {
    profiles: Arc<ProfileSet>,
}

impl Parametric {
    /// The model over `profiles`.
    pub fn new(profiles: Arc<ProfileSet>) -> Self {
        Self { profiles }
    }
}

/// Most tenants one partition can hold in the allocation-free fast path.
const MAX_INLINE_TENANTS: usize = 16;

impl PerfModel for Parametric {
    fn name(&self) -> &'static str {
        "parametric"
    }

    fn lookup(&self) -> &dyn ClassLookup {
        &*self.profiles
    }

    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]) {
        debug_assert_eq!(set.tenants.len(), out.len());
        let Ok((profile, _)) = self.profiles.get(set.gpu) else {
            out.fill(0.0);
            return;
        };
        let (mode, partition, tenants) = (set.mode, set.partition, set.tenants);
        let n = tenants.len();
        if n > MAX_INLINE_TENANTS {
            let mut demands = vec![Demand::default(); n];
            share(profile, mode, partition, tenants, &mut demands, out);
        } else {
            let mut demands = [Demand::default(); MAX_INLINE_TENANTS];
            share(profile, mode, partition, tenants, &mut demands[..n], out);
        }
    }
}

/// One tenant's demand on the partition's shared resource: at full speed (its alone speed
/// under the same SM budget and interference, `max_speed`) it occupies `max_speed * weight` of
/// the resource (GPU time for time-slicing, SM-time for MPS).
#[derive(Clone, Copy, Debug, Default)]
struct Demand {
    max_speed: f64,
    weight: f64,
    /// Host part and (stretched) GPU part of the job's normalised iteration: under a common
    /// congestion factor `λ` its speed is `1 / (host + gpu * λ)` (MPS).
    host: f64,
    gpu: f64,
}

impl Demand {
    fn speed(&self, congestion: f64) -> f64 {
        1.0 / (self.host + self.gpu * congestion)
    }
}

/// Co-runner stretch factors of MPS tenants: GPU time per unit of the co-runners' SM occupancy
/// (`interference`) and host (launch) time per unit of it (`queueing`).
#[derive(Clone, Copy, Debug)]
struct MpsStretch {
    interference: f64,
    queueing: f64,
}

fn share(
    profile: &super::Profile,
    mode: ShareMode,
    partition: &Partition,
    tenants: &[Tenant<'_>],
    demands: &mut [Demand],
    out: &mut [f64],
) {
    let capacity = match mode {
        ShareMode::Exclusive | ShareMode::Timeslice => {
            timeslice_demands(partition, tenants, demands);
            let sharing = if tenants.len() > 1 {
                profile.timeslice.switch_overhead
            } else {
                0.0
            };
            1.0 - sharing
        }
        ShareMode::Mps | ShareMode::Mig => {
            let stretch = MpsStretch {
                interference: profile.mps.interference,
                queueing: profile.mps.queueing,
            };
            mps_demands(stretch, partition, tenants, demands);
            partition.sm_fraction
        }
    };
    let mig = if partition.is_mig_slice {
        profile.mig.efficiency
    } else {
        1.0
    };
    match mode {
        ShareMode::Exclusive | ShareMode::Timeslice => water_fill(demands, capacity, out),
        ShareMode::Mps | ShareMode::Mig => {
            let congestion = solve_congestion(demands, capacity);
            for (speed, d) in out.iter_mut().zip(demands.iter()) {
                *speed = d.speed(congestion);
            }
        }
    }
    for (rate, tenant) in out.iter_mut().zip(tenants) {
        *rate *= tenant.class.solo_rate * f64::from(tenant.gpus) * mig;
    }
}

/// Time-slicing: one context's kernels at a time, each on the whole partition; a job needs
/// `u * max(1, s / c)` of the GPU's time to run at full speed.
fn timeslice_demands(partition: &Partition, tenants: &[Tenant<'_>], demands: &mut [Demand]) {
    for (demand, tenant) in demands.iter_mut().zip(tenants) {
        let c = tenant.class;
        let stretch = (c.space_demand / partition.sm_fraction).max(1.0);
        let max_speed = 1.0 / ((1.0 - c.time_demand) + c.time_demand * stretch);
        *demand = Demand {
            max_speed,
            weight: c.time_demand * stretch,
            host: 1.0 - c.time_demand,
            gpu: c.time_demand * stretch,
        };
    }
}

/// MPS (and MPS inside a MIG slice): kernels of all tenants share the SMs. A job's GPU time
/// stretches when its SM budget is below its space demand, and with its co-runners' SM
/// occupancy (caches, memory bandwidth); it needs `u * s * stretch` of the SM-time per unit of
/// speed. Its host part stretches with the same occupancy times `queueing`: each of its kernel
/// launches waits behind co-runners' kernels.
fn mps_demands(
    stretch: MpsStretch,
    partition: &Partition,
    tenants: &[Tenant<'_>],
    demands: &mut [Demand],
) {
    let cap = |t: &Tenant<'_>| t.sm_budget.unwrap_or(1.0).min(partition.sm_fraction);
    let occupancy = |t: &Tenant<'_>| t.class.time_demand * t.class.contention_demand.min(cap(t));
    let total: f64 = tenants.iter().map(occupancy).sum();
    for (demand, tenant) in demands.iter_mut().zip(tenants) {
        let c = tenant.class;
        let budget_stretch = (c.space_demand / cap(tenant)).max(1.0);
        let others = (total - occupancy(tenant)).max(0.0);
        let interference_stretch = 1.0 + stretch.interference * others;
        let gpu = c.time_demand * budget_stretch * interference_stretch;
        let host = (1.0 - c.time_demand) * (1.0 + stretch.queueing * others);
        *demand = Demand {
            max_speed: 1.0 / (host + gpu),
            weight: c.time_demand
                * c.contention_demand.min(cap(tenant))
                * budget_stretch
                * interference_stretch,
            host,
            gpu,
        };
    }
}

/// Max-min fair shares of `capacity`: a job whose full-speed demand is below the fair level gets
/// all it asks for; the rest split what is left equally. Writes each job's speed (fraction of
/// alone) into `speeds`. O(n^2) for n jobs, no allocation.
fn water_fill(demands: &[Demand], capacity: f64, speeds: &mut [f64]) {
    let mut satisfied = [false; MAX_INLINE_TENANTS];
    let mut satisfied_heap;
    let satisfied: &mut [bool] = if demands.len() <= MAX_INLINE_TENANTS {
        &mut satisfied[..demands.len()]
    } else {
        satisfied_heap = vec![false; demands.len()];
        &mut satisfied_heap
    };
    let mut left = capacity;
    let mut open = demands.len();
    loop {
        let level = left / open.max(1) as f64;
        let mut changed = false;
        for (i, d) in demands.iter().enumerate() {
            let want = d.max_speed * d.weight;
            if !satisfied[i] && want <= level {
                satisfied[i] = true;
                left -= want;
                open -= 1;
                changed = true;
            }
        }
        if !changed || open == 0 {
            break;
        }
    }
    let level = left / open.max(1) as f64;
    for ((speed, d), done) in speeds.iter_mut().zip(demands).zip(satisfied.iter()) {
        *speed = if *done || d.weight <= 0.0 {
            d.max_speed
        } else {
            (level / d.weight).min(d.max_speed)
        };
    }
}

/// Finds the congestion factor `λ >= 1` at which the tenants' demand on the shared resource,
/// `g(λ) = Σ weight_i * speed_i(λ)`, equals `capacity` (or 1 when it already fits). `g` is
/// convex and decreasing, so Newton's method from λ = 1 climbs to the root without overshoot.
fn solve_congestion(phases: &[Demand], capacity: f64) -> f64 {
    let demand = |l: f64| phases.iter().map(|p| p.weight * p.speed(l)).sum::<f64>();
    let mut congestion = 1.0;
    let mut excess = demand(congestion) - capacity;
    let mut steps = 0;
    while excess > capacity * 1e-13 && steps < 200 {
        let slope: f64 = phases
            .iter()
            .map(|p| p.weight * p.gpu * p.speed(congestion).powi(2))
            .sum();
        if slope <= 0.0 {
            break;
        }
        congestion += excess / slope;
        excess = demand(congestion) - capacity;
        steps += 1;
    }
    congestion
}
