//! Baselines kept beside the parametric model for honesty: they need no fitted parameters.
use std::sync::Arc;

use super::{JobClass, Origin, Partition, PerfError, PerfModel, ProfileSet, ShareMode, Tenant};
use crate::hardware::GpuSpec;
use crate::workload::ModelKey;

/// Every job runs as if alone on its partition (no interference at all); in a MIG slice its
/// rate scales with the slice's share of SMs. An optimistic bound.
#[derive(Clone, Debug)]
pub struct Exclusive {
    profiles: Arc<ProfileSet>,
}

/// Each of n jobs sharing a partition gets 1/n of its alone rate.
#[derive(Clone, Debug)]
pub struct EqualShare {
    profiles: Arc<ProfileSet>,
}

/// Each of n co-located jobs runs at its alone rate divided by `1 + per_corunner * (n - 1)`,
/// as some schedulers assume (0.15 by default).
#[derive(Clone, Debug)]
pub struct FixedSlowdown {
    profiles: Arc<ProfileSet>,
    per_corunner: f64,
}

impl Exclusive {
    /// The model over `profiles`.
    pub fn new(profiles: Arc<ProfileSet>) -> Self {
        Self { profiles }
    }
}

impl EqualShare {
    /// The model over `profiles`.
    pub fn new(profiles: Arc<ProfileSet>) -> Self {
        Self { profiles }
    }
}

impl FixedSlowdown {
    /// The slowdown schedulers commonly assume per co-runner.
    pub const DEFAULT_PER_CORUNNER: f64 = 0.15;

    /// The model over `profiles` with `per_corunner` slowdown.
    pub fn new(profiles: Arc<ProfileSet>, per_corunner: f64) -> Self {
        Self {
            profiles,
            per_corunner,
        }
    }
}

/// Shared plumbing of the baselines: everything but the divisor comes from the profile.
macro_rules! profile_backed {
    ($ty:ty, $name:literal, |$self_:ident, $n:ident| $divisor:expr) => {
        impl PerfModel for $ty {
            fn name(&self) -> &'static str {
                $name
            }

            fn class(&self, gpu: &GpuSpec, key: &ModelKey) -> Result<JobClass, PerfError> {
                self.profiles.class(gpu, key)
            }

            fn origin(&self, gpu: &GpuSpec) -> Origin {
                self.profiles.origin(gpu)
            }

            fn footprint_gib(&self, gpu: &GpuSpec, mode: ShareMode, class: &JobClass) -> f64 {
                self.profiles.footprint_gib(gpu, mode, class)
            }

            fn rates(
                &self,
                _gpu: &GpuSpec,
                _mode: ShareMode,
                partition: &Partition,
                tenants: &[Tenant<'_>],
                out: &mut [f64],
            ) {
                let $self_ = self;
                let $n = tenants.len() as f64;
                let divisor: f64 = $divisor;
                for (rate, t) in out.iter_mut().zip(tenants) {
                    *rate = t.class.solo_rate * f64::from(t.gpus) * partition.sm_fraction / divisor;
                }
            }
        }
    };
}

profile_backed!(Exclusive, "exclusive", |_model, _n| 1.0);
profile_backed!(EqualShare, "equal-share", |_model, n| n.max(1.0));
profile_backed!(FixedSlowdown, "fixed-slowdown", |model, n| 1.0
    + model.per_corunner * (n - 1.0).max(0.0));
