//! The parametric model: time and space demand per job, a few global parameters per mode.
//! The algorithm and why it is shaped so are in this folder's README.
use std::sync::Arc;

use super::{JobClass, Origin, Partition, PerfError, PerfModel, ProfileSet, ShareMode, Tenant};
use crate::hardware::GpuSpec;
use crate::workload::ModelKey;

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

    fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
        self.profiles.class(gpu, key)
    }

    fn origin(&self, gpu: &GpuSpec) -> Origin {
        self.profiles.origin(gpu)
    }

    fn mode_origin(&self, gpu: &GpuSpec, mode: ShareMode) -> Origin {
        self.profiles.mode_origin(gpu, mode)
    }

    fn footprint_gib(&self, gpu: &GpuSpec, mode: ShareMode, class: &JobClass) -> f64 {
        self.profiles.footprint_gib(gpu, mode, class)
    }

    fn rates(
        &self,
        gpu: &GpuSpec,
        mode: ShareMode,
        partition: &Partition,
        tenants: &[Tenant<'_>],
        out: &mut [f64],
    ) {
        debug_assert_eq!(tenants.len(), out.len());
        let Ok((profile, _)) = self.profiles.get(gpu) else {
            out.fill(0.0);
            return;
        };
        let n = tenants.len();
        if n > MAX_INLINE_TENANTS {
            let mut phases = vec![Phase::default(); n];
            share(profile, mode, partition, tenants, &mut phases, out);
        } else {
            let mut phases = [Phase::default(); MAX_INLINE_TENANTS];
            share(profile, mode, partition, tenants, &mut phases[..n], out);
        }
    }
}

/// One tenant's iteration, normalised to its alone time on the whole GPU: a host part
/// `1 - u` and a GPU part `u * stretch * congestion`, where the GPU part occupies `weight` of
/// the partition's shared resource per unit of speed.
#[derive(Clone, Copy, Debug, Default)]
struct Phase {
    host: f64,
    gpu: f64,
    weight: f64,
}

impl Phase {
    fn speed(&self, congestion: f64) -> f64 {
        1.0 / (self.host + self.gpu * congestion)
    }
}

fn share(
    profile: &super::Profile,
    mode: ShareMode,
    partition: &Partition,
    tenants: &[Tenant<'_>],
    phases: &mut [Phase],
    out: &mut [f64],
) {
    let capacity = match mode {
        ShareMode::Exclusive | ShareMode::Timeslice => {
            timeslice_phases(partition, tenants, phases);
            let busy = tenants.len().saturating_sub(1) as f64;
            1.0 / (1.0 + profile.timeslice.switch_overhead * busy)
        }
        ShareMode::Mps | ShareMode::Mig => {
            mps_phases(profile.mps.interference, partition, tenants, phases);
            partition.sm_fraction
        }
    };
    let congestion = solve_congestion(phases, capacity);
    let mig = if partition.is_mig_slice {
        profile.mig.efficiency
    } else {
        1.0
    };
    for ((rate, phase), tenant) in out.iter_mut().zip(phases.iter()).zip(tenants) {
        *rate = tenant.class.solo_rate * f64::from(tenant.gpus) * phase.speed(congestion) * mig;
    }
}

/// Time-slicing: kernels of one context at a time, each on the whole partition; the shared
/// resource is GPU time.
fn timeslice_phases(partition: &Partition, tenants: &[Tenant<'_>], phases: &mut [Phase]) {
    for (phase, tenant) in phases.iter_mut().zip(tenants) {
        let c = tenant.class;
        let stretch = (c.space_demand / partition.sm_fraction).max(1.0);
        let gpu = c.time_demand * stretch;
        *phase = Phase {
            host: 1.0 - c.time_demand,
            gpu,
            weight: gpu,
        };
    }
}

/// MPS (and MPS inside a MIG slice): kernels of all tenants share the SMs. A tenant's GPU part
/// stretches when its SM budget is below its space demand, and with its co-runners' SM
/// occupancy (caches, memory bandwidth); the shared resource is SM-time.
fn mps_phases(
    interference: f64,
    partition: &Partition,
    tenants: &[Tenant<'_>],
    phases: &mut [Phase],
) {
    let cap = |t: &Tenant<'_>| t.sm_budget.unwrap_or(1.0).min(partition.sm_fraction);
    let occupancy = |t: &Tenant<'_>| t.class.time_demand * t.class.space_demand.min(cap(t));
    let total: f64 = tenants.iter().map(occupancy).sum();
    for (phase, tenant) in phases.iter_mut().zip(tenants) {
        let c = tenant.class;
        let budget_stretch = (c.space_demand / cap(tenant)).max(1.0);
        let others = (total - occupancy(tenant)).max(0.0);
        let interference_stretch = 1.0 + interference * others;
        *phase = Phase {
            host: 1.0 - c.time_demand,
            gpu: c.time_demand * budget_stretch * interference_stretch,
            weight: c.time_demand * c.space_demand * interference_stretch,
        };
    }
}

/// Finds the congestion factor `λ >= 1` at which the tenants' demand on the shared resource,
/// `g(λ) = Σ weight_i * speed_i(λ)`, equals `capacity` (or 1 when it already fits). `g` is
/// convex and decreasing, so Newton's method from λ = 1 climbs to the root without overshoot.
fn solve_congestion(phases: &[Phase], capacity: f64) -> f64 {
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
