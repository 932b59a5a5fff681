//! Baselines kept beside the parametric model for honesty: they need no fitted parameters.
use std::fmt;
use std::sync::Arc;

use super::{ClassLookup, CoRun, Origin, PerfModel, ProfileSet, ShareMode};
use crate::hardware::GpuSpec;

/// A baseline: classes and footprints from the profiles; each tenant's alone rate (times its
/// GPUs and its partition's share of SMs) divided by what its `rule` says for n co-runners.
#[derive(Clone, Debug)]
pub struct Baseline<R> {
    profiles: Arc<ProfileSet>,
    rule: R,
}

/// What a baseline divides each of n tenants' alone rate by.
pub trait Divisor: Clone + fmt::Debug + Send + Sync {
    /// The model's name in reports.
    const NAME: &'static str;
    /// The divisor for `n` tenants.
    fn divisor(&self, n: f64) -> f64;
}

/// Every job runs as if alone on its partition (no interference at all); in a MIG slice its
/// rate scales with the slice's share of SMs. An optimistic bound.
pub type Exclusive = Baseline<AsIfAlone>;

/// Each of n jobs sharing a partition gets 1/n of its alone rate.
pub type EqualShare = Baseline<OneNth>;

/// Each of n co-located jobs runs at its alone rate divided by `1 + per_corunner * (n - 1)`,
/// as some schedulers assume (0.15 by default).
pub type FixedSlowdown = Baseline<PerCorunner>;

/// [`Exclusive`]'s rule: divide by 1.
#[derive(Clone, Copy, Debug)]
pub struct AsIfAlone;

/// [`EqualShare`]'s rule: divide by n.
#[derive(Clone, Copy, Debug)]
pub struct OneNth;

/// [`FixedSlowdown`]'s rule: divide by `1 + per_corunner * (n - 1)`.
#[derive(Clone, Copy, Debug)]
pub struct PerCorunner(pub f64);

impl Default for PerCorunner {
    /// [`FixedSlowdown::DEFAULT_PER_CORUNNER`].
    fn default() -> Self {
        Self(FixedSlowdown::DEFAULT_PER_CORUNNER)
    }
}

impl Divisor for AsIfAlone {
    const NAME: &'static str = "exclusive";
    fn divisor(&self, _n: f64) -> f64 {
        1.0
    }
}

impl Divisor for OneNth {
    const NAME: &'static str = "equal-share";
    fn divisor(&self, n: f64) -> f64 {
        n.max(1.0)
    }
}

impl Divisor for PerCorunner {
    const NAME: &'static str = "fixed-slowdown";
    fn divisor(&self, n: f64) -> f64 {
        1.0 + self.0 * (n - 1.0).max(0.0)
    }
}

impl<R> Baseline<R> {
    fn with_rule(profiles: Arc<ProfileSet>, rule: R) -> Self {
        Self { profiles, rule }
    }
}

impl Exclusive {
    /// The model over `profiles`.
    pub fn new(profiles: Arc<ProfileSet>) -> Self {
        Self::with_rule(profiles, AsIfAlone)
    }
}

impl EqualShare {
    /// The model over `profiles`.
    pub fn new(profiles: Arc<ProfileSet>) -> Self {
        Self::with_rule(profiles, OneNth)
    }
}

impl FixedSlowdown {
    /// The slowdown schedulers commonly assume per co-runner.
    pub const DEFAULT_PER_CORUNNER: f64 = 0.15;

    /// The model over `profiles` with `per_corunner` slowdown.
    pub fn new(profiles: Arc<ProfileSet>, per_corunner: f64) -> Self {
        Self::with_rule(profiles, PerCorunner(per_corunner))
    }
}

impl<R: Divisor> PerfModel for Baseline<R> {
    fn name(&self) -> &'static str {
        R::NAME
    }

    fn lookup(&self) -> &dyn ClassLookup {
        &*self.profiles
    }

    // A baseline reads none of the profile's sharing parameters, so its sharing numbers are
    // as good as the profile overall.
    fn mode_origin(&self, gpu: &GpuSpec, _mode: ShareMode) -> Origin {
        self.profiles.origin(gpu)
    }

    fn reads_sharing_parameters(&self) -> bool {
        false
    }

    fn rates(&self, set: &CoRun<'_>, out: &mut [f64]) {
        let divisor = self.rule.divisor(set.tenants.len() as f64);
        for (rate, t) in out.iter_mut().zip(set.tenants) {
            *rate = t.class.solo_rate * f64::from(t.gpus) * set.partition.sm_fraction / divisor;
        }
    }
}
