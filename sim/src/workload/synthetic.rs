//! Synthetic workloads: Poisson arrivals, log-normal durations, a weighted model mix.
//!
//! Durations are drawn as the job's exclusive run time on a reference GPU and turned into work
//! with that GPU's exclusive throughput, so a job alone there takes exactly its drawn time.
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::weighted::WeightedIndex;
use rand_distr::{Distribution, Exp, LogNormal};
use thiserror::Error;

use super::{Job, MinSpeed, ModelKey, limits};

/// One model of the mix with its weight and its exclusive rate on the reference GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct MixEntry {
    /// What the job trains.
    pub model: ModelKey,
    /// Relative weight.
    pub weight: f64,
    /// Samples/s alone on one reference GPU.
    pub solo_rate: f64,
    /// Least speed its jobs accept, if any.
    pub min_speed: Option<MinSpeed>,
}

/// Parameters of a synthetic workload.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticPlan {
    /// Number of jobs.
    pub jobs: u32,
    /// Mean arrivals per hour.
    pub arrivals_per_hour: f64,
    /// Median exclusive duration, seconds.
    pub median_s: f64,
    /// Sigma of the log-normal duration.
    pub sigma: f64,
    /// The model mix.
    pub mix: Vec<MixEntry>,
    /// GPUs per job with weights.
    pub gpus: Vec<(u32, f64)>,
}

/// A synthetic plan's parameters are out of range. Fatal.
#[derive(Debug, Error, PartialEq)]
pub enum SyntheticError {
    /// A parameter is out of range.
    #[error("synthetic workload: {0}")]
    Range(String),
}

/// Generates the jobs of `plan` with a generator seeded by `seed` (Xoshiro256++: the same seed
/// gives the same jobs on every machine).
pub fn generate(plan: &SyntheticPlan, seed: u64) -> Result<Vec<Job>, SyntheticError> {
    let range = |ok: bool, what: String| {
        if ok {
            Ok(())
        } else {
            Err(SyntheticError::Range(what))
        }
    };
    range(
        plan.arrivals_per_hour > 0.0,
        format!("arrivals_per_hour = {} must be > 0", plan.arrivals_per_hour),
    )?;
    range(
        plan.median_s > 0.0,
        format!("median duration {} s must be > 0", plan.median_s),
    )?;
    range(
        plan.sigma >= 0.0 && plan.sigma.is_finite(),
        format!("sigma = {} must be >= 0", plan.sigma),
    )?;
    range(
        !plan.mix.is_empty(),
        "the model mix is empty; list at least one model".into(),
    )?;
    let model_pick = WeightedIndex::new(plan.mix.iter().map(|m| m.weight))
        .map_err(|e| SyntheticError::Range(format!("mix weights: {e}")))?;
    let gpu_choices = if plan.gpus.is_empty() {
        vec![(1, 1.0)]
    } else {
        plan.gpus.clone()
    };
    let gpu_pick = WeightedIndex::new(gpu_choices.iter().map(|g| g.1))
        .map_err(|e| SyntheticError::Range(format!("gpus weights: {e}")))?;
    let gaps = Exp::new(plan.arrivals_per_hour / 3600.0)
        .map_err(|e| SyntheticError::Range(format!("arrivals: {e}")))?;
    let durations = LogNormal::new(plan.median_s.ln(), plan.sigma)
        .map_err(|e| SyntheticError::Range(format!("durations: {e}")))?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut now = 0.0;
    let mut jobs = Vec::with_capacity(plan.jobs as usize);
    for idx in 0..plan.jobs {
        now += gaps.sample(&mut rng);
        let entry = &plan.mix[model_pick.sample(&mut rng)];
        let gpus = gpu_choices[gpu_pick.sample(&mut rng)].0.max(1);
        let duration = durations.sample(&mut rng);
        limits::arrival(now).map_err(|e| {
            SyntheticError::Range(format!(
                "job j{idx} is out of range: the {e}; raise arrivals_per_hour or lower jobs"
            ))
        })?;
        limits::duration(duration).map_err(|e| {
            SyntheticError::Range(format!(
                "job j{idx} is out of range: the {e}; bring median_minutes or sigma nearer it"
            ))
        })?;
        jobs.push(Job {
            name: format!("j{idx}"),
            model: entry.model.clone(),
            arrival_s: now,
            samples: duration * entry.solo_rate * f64::from(gpus),
            gpus,
            min_speed: entry.min_speed,
        });
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> SyntheticPlan {
        SyntheticPlan {
            jobs: 2000,
            arrivals_per_hour: 60.0,
            median_s: 600.0,
            sigma: 0.5,
            mix: vec![
                MixEntry {
                    model: ModelKey::new("a", 1, 1),
                    weight: 3.0,
                    solo_rate: 100.0,
                    min_speed: None,
                },
                MixEntry {
                    model: ModelKey::new("b", 1, 1),
                    weight: 1.0,
                    solo_rate: 10.0,
                    min_speed: None,
                },
            ],
            gpus: vec![],
        }
    }

    #[test]
    fn same_seed_same_jobs_other_seed_other_jobs() {
        assert_eq!(generate(&plan(), 7).unwrap(), generate(&plan(), 7).unwrap());
        assert_ne!(generate(&plan(), 7).unwrap(), generate(&plan(), 8).unwrap());
    }

    #[test]
    fn draws_follow_the_plan() {
        let jobs = generate(&plan(), 1).unwrap();
        let share_a =
            jobs.iter().filter(|j| j.model.model == "a").count() as f64 / jobs.len() as f64;
        assert!((share_a - 0.75).abs() < 0.04, "{share_a}");
        let span_h = jobs.last().unwrap().arrival_s / 3600.0;
        assert!((span_h - 2000.0 / 60.0).abs() < 3.0, "{span_h}");
        let mut durations: Vec<f64> = jobs
            .iter()
            .map(|j| j.samples / if j.model.model == "a" { 100.0 } else { 10.0 })
            .collect();
        durations.sort_by(f64::total_cmp);
        let median = durations[durations.len() / 2];
        assert!((median / 600.0 - 1.0).abs() < 0.08, "{median}");
        assert!(jobs.windows(2).all(|w| w[0].arrival_s <= w[1].arrival_s));
    }

    #[test]
    fn empty_mix_is_an_error() {
        let mut bad = plan();
        bad.mix.clear();
        assert!(
            generate(&bad, 1)
                .unwrap_err()
                .to_string()
                .contains("mix is empty")
        );
    }
}
