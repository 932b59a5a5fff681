//! Energy: what the engine integrated ([`RunEnergy`]: each GPU's board power over its busy
//! time, each job's share) and the summary's figures ([`EnergySummary`]).
//!
//! # The rule
//!
//! - A GPU's board power is constant between changes of its set's rates. A busy GPU draws the
//!   profile's fitted power model of its mode (`PowerForm::power`: idle power plus a part that
//!   grows with the set's activity, each job's activity being what it does alone times its
//!   fraction of alone speed); a MIG GPU the `mig-emulated` coefficients over the tenants of
//!   all its slices; one job alone on a whole GPU without an SM budget (every job of an
//!   `Exclusive` group, each GPU of a multi-GPU job) its measured board power alone, as
//!   `colo predict` does.
//! - An idle GPU draws the idle power of its group's mode (`Exclusive` groups: the `timeslice`
//!   coefficients' idle power, plain processes without an MPS server).
//! - A job's energy is its share of its GPUs' energy while it ran: at every instant the set's
//!   idle power is split equally among the GPU's tenants and the power above idle in
//!   proportion to each tenant's activity term. The shares sum to the GPU's power, so the
//!   jobs' energies sum to the GPUs' busy energy.
//! - The cluster's energy is every GPU's, busy or idle, from time 0 to the makespan.
//!
//! A GPU type whose profile has no `power` section (or no coefficients for the group's mode),
//! or a job whose model has no measured power alone, makes the figures it touches unknown:
//! empty in `jobs.csv`, `null` in `summary.json`, with the reason and a count there. Never 0.
use serde::{Deserialize, Serialize};

/// Joules in one kilowatt-hour.
pub const JOULES_PER_KWH: f64 = 3.6e6;

/// One GPU's energy over a run. When no group of the run has a power model its busy figures
/// are not integrated (all zero): every energy figure is unknown then and none reads them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuEnergy {
    /// Board power with no job, W; `None` when its group has no power model.
    pub idle_w: Option<f64>,
    /// Seconds with at least one job.
    pub busy_s: f64,
    /// Energy while busy, J, over the busy seconds whose power was known.
    pub busy_j: f64,
    /// Busy seconds whose power is unknown (a tenant without measured power alone, or no
    /// power model for the group).
    pub unknown_s: f64,
}

/// The power model one GPU group used (one entry per GPU type and mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PowerFit {
    /// GPU catalog name.
    pub gpu: String,
    /// The group's sharing mode.
    pub mode: String,
    /// The profile's coefficients used (`timeslice`, `mps`, `mig-emulated`); for `exclusive`,
    /// only their idle power.
    pub coefficients: String,
    /// The power model's form (`util`, `alone`, `alone-saturating`).
    pub form: String,
    /// Where the coefficients came from (`fitted`, or `fake` for the fake runner's data).
    pub origin: String,
    /// Idle power of those coefficients, W.
    pub idle_w: f64,
    /// Mean absolute percentage error of a set's power on measured sets held out one at a time.
    pub held_out_mape_pct: f64,
    /// Measured sets the coefficients were fitted on.
    pub sets: usize,
}

/// What the engine integrated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEnergy {
    /// Per GPU, in global order.
    pub gpus: Vec<GpuEnergy>,
    /// The power models used, per GPU type and mode.
    pub power_models: Vec<PowerFit>,
    /// Why some power is unknown (groups without a power model, models without measured power
    /// alone that ran); empty when every figure is known.
    pub unknown: Vec<String>,
}

/// `summary.json`'s `energy`: the cluster's and the jobs' energy, and where they come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnergySummary {
    /// Every GPU of the cluster, busy or idle, from 0 to the makespan, kWh; `null` when unknown.
    pub energy_kwh: Option<f64>,
    /// The jobs' part (the sum of `jobs.csv` `energy_j`), kWh; `null` when a job's is unknown.
    pub jobs_energy_kwh: Option<f64>,
    /// The GPUs' idle time at idle power, kWh; `null` when a group has no power model.
    pub idle_energy_kwh: Option<f64>,
    /// Samples of completed jobs per joule of `energy_kwh`; `null` when that is unknown.
    pub samples_per_joule: Option<f64>,
    /// Where the figures come from, or why they are unknown.
    pub figures_are: String,
    /// The power models used, with their held-out error.
    pub power_models: Vec<PowerFit>,
    /// Completed jobs whose energy is unknown.
    pub jobs_without_energy: u64,
    /// Why figures are `null`, when some are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_because: Option<String>,
}

impl EnergySummary {
    /// The summary of `energy` (none: the engine had no power model) for completed jobs'
    /// energies `job_energy_j` (`None`: unknown), `samples` of completed jobs and the
    /// `makespan_s`.
    pub fn of(
        energy: Option<&RunEnergy>,
        job_energy_j: &[Option<f64>],
        samples: f64,
        makespan_s: f64,
    ) -> Self {
        let without = job_energy_j.iter().filter(|e| e.is_none()).count() as u64;
        let jobs_j: Option<f64> = job_energy_j.iter().copied().sum();
        Self::of_totals(
            energy,
            job_energy_j.len() as u64,
            without,
            jobs_j,
            samples,
            makespan_s,
        )
    }

    /// [`Self::of`] from totals: `completed` jobs, `without` of them without a known energy,
    /// and `jobs_j`, the sum of the others' (`None` when one is unknown).
    pub fn of_totals(
        energy: Option<&RunEnergy>,
        completed: u64,
        without: u64,
        jobs_j: Option<f64>,
        samples: f64,
        makespan_s: f64,
    ) -> Self {
        let Some(energy) = energy else {
            let why = "the simulation was given no profiles to read power from".to_owned();
            return EnergySummary {
                energy_kwh: None,
                jobs_energy_kwh: None,
                idle_energy_kwh: None,
                samples_per_joule: None,
                figures_are: format!("unknown: {why}"),
                power_models: Vec::new(),
                jobs_without_energy: completed,
                unknown_because: Some(why),
            };
        };
        let idle_j: Option<f64> = energy
            .gpus
            .iter()
            .map(|g| Some(g.idle_w? * (makespan_s - g.busy_s).max(0.0)))
            .sum();
        let known_busy = energy.gpus.iter().all(|g| g.unknown_s == 0.0);
        let busy_j: f64 = energy.gpus.iter().map(|g| g.busy_j).sum();
        let total_j = idle_j
            .filter(|_| known_busy && without == 0)
            .map(|i| i + busy_j);
        let unknown_because = (!energy.unknown.is_empty()).then(|| {
            let mut why = energy.unknown.join("; ");
            if without > 0 {
                why.push_str(&format!(" ({without} completed job(s) without energy)"));
            }
            why
        });
        let figures_are = if total_j.is_some() {
            let origins: Vec<&str> = energy
                .power_models
                .iter()
                .map(|p| p.origin.as_str())
                .collect();
            let mut origins = origins;
            origins.sort_unstable();
            origins.dedup();
            format!(
                "emulated: simulated rates through the profile's {} power model (held-out error in power_models; a lone job on a whole GPU draws its measured power alone, an idle GPU its mode's idle power)",
                origins.join("/")
            )
        } else {
            format!(
                "unknown: {}",
                unknown_because.as_deref().unwrap_or("no power model")
            )
        };
        EnergySummary {
            energy_kwh: total_j.map(|j| j / JOULES_PER_KWH),
            jobs_energy_kwh: jobs_j.map(|j| j / JOULES_PER_KWH),
            idle_energy_kwh: idle_j.map(|j| j / JOULES_PER_KWH),
            samples_per_joule: total_j.filter(|&j| j > 0.0).map(|j| samples / j),
            figures_are,
            power_models: energy.power_models.clone(),
            jobs_without_energy: without,
            unknown_because,
        }
    }
}

/// One line on where the energy figures of `summaries` (the variants of a run, or the sizes
/// of a plan) come from: the power models used with their held-out error, or why some figures
/// are unknown.
pub fn provenance<'a>(summaries: impl IntoIterator<Item = &'a EnergySummary>) -> String {
    let mut fits: Vec<&PowerFit> = Vec::new();
    let mut unknown: Vec<&str> = Vec::new();
    for s in summaries {
        for fit in &s.power_models {
            if !fits.contains(&fit) {
                fits.push(fit);
            }
        }
        let why = s.unknown_because.as_deref();
        if let Some(why) = why.filter(|w| s.energy_kwh.is_none() && !unknown.contains(w)) {
            unknown.push(why);
        }
    }
    if !unknown.is_empty() {
        return format!("energy unknown: {}", unknown.join("; "));
    }
    let fits: Vec<String> = fits
        .iter()
        .map(|p| {
            format!(
                "{} {} ({} {} coefficients) {:.1}% over {} measured sets",
                p.gpu, p.mode, p.origin, p.coefficients, p.held_out_mape_pct, p.sets
            )
        })
        .collect();
    format!(
        "energy: simulated rates through the profile's power model; held-out MAPE of a set's power: {}; a lone job on a whole GPU draws its measured power alone, an idle GPU its mode's idle power",
        fits.join(", ")
    )
}
