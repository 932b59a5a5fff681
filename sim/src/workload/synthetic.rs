//! Synthetic workloads: Poisson arrivals, log-normal durations, a weighted model mix.
//!
//! Durations are drawn as the job's exclusive run time on a reference GPU and turned into work
//! with that GPU's exclusive throughput, so a job alone there takes exactly its drawn time.
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::weighted::WeightedIndex;
use rand_distr::{Distribution, Exp, LogNormal};
use thiserror::Error;

use super::stream::{Drawn, Draws, JobSource, SourceKind, index_name};
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
/// gives the same jobs on every machine): every job of [`Generator::new`]'s draws, in order.
pub fn generate(plan: &SyntheticPlan, seed: u64) -> Result<Vec<Job>, SyntheticError> {
    let generator = Generator::new(plan.clone(), seed)?;
    Ok(generator.jobs().collect())
}

/// A synthetic workload checked once and drawn as often as asked: the engine draws its jobs as
/// the clock reaches them ([`Generator::draws`], in arrival order), so no job is kept before it
/// arrives. [`Generator::new`] draws every job once without keeping it, to refuse a plan whose
/// draws leave the accepted ranges before anything runs, and notes which (model, GPUs) pairs
/// the draws use and the first job of each.
#[derive(Clone, Debug, PartialEq)]
pub struct Generator {
    plan: SyntheticPlan,
    seed: u64,
    gpu_choices: Vec<(u32, f64)>,
    /// Per (mix entry, GPU choice), `entry * gpu_choices + choice`: its kind (`u32::MAX`:
    /// never drawn).
    kind_of: Vec<u32>,
    /// The (mix entry, GPU choice) pairs drawn, in the order of their first jobs.
    kinds: Vec<SourceKind>,
}

/// The draws of one generator, in order: arrival gap, model, GPUs, duration per job.
struct Sampler {
    rng: Xoshiro256PlusPlus,
    model_pick: WeightedIndex<f64>,
    gpu_pick: WeightedIndex<f64>,
    gaps: Exp<f64>,
    durations: LogNormal<f64>,
    now: f64,
}

impl Sampler {
    /// The next job's (arrival, mix entry, GPU choice, duration).
    fn next(&mut self) -> (f64, usize, usize, f64) {
        self.now += self.gaps.sample(&mut self.rng);
        let entry = self.model_pick.sample(&mut self.rng);
        let choice = self.gpu_pick.sample(&mut self.rng);
        let duration = self.durations.sample(&mut self.rng);
        (self.now, entry, choice, duration)
    }
}

impl Generator {
    /// Checks `plan`'s parameters and every job it draws with `seed` (arrival and duration in
    /// the accepted ranges, finite work), in job order: the first job out of range is the
    /// error, as it would be had every job been built.
    pub fn new(plan: SyntheticPlan, seed: u64) -> Result<Self, SyntheticError> {
        let gpu_choices = if plan.gpus.is_empty() {
            vec![(1, 1.0)]
        } else {
            plan.gpus.clone()
        };
        let mut generator = Generator {
            kind_of: vec![u32::MAX; plan.mix.len() * gpu_choices.len()],
            kinds: Vec::new(),
            plan,
            seed,
            gpu_choices,
        };
        let mut sampler = generator.sampler()?;
        let choices = generator.gpu_choices.len();
        for idx in 0..generator.plan.jobs {
            let (now, entry, choice, duration) = sampler.next();
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
            let samples = generator.samples(entry, choice, duration);
            if !(samples.is_finite() && samples > 0.0) {
                return Err(SyntheticError::Range(format!(
                    "job j{idx} is out of range: its work of {samples} samples must be a finite \
                     number > 0; lower the model's rate or the job's duration"
                )));
            }
            let kind = &mut generator.kind_of[entry * choices + choice];
            if *kind == u32::MAX {
                *kind = generator.kinds.len() as u32;
                let mix = &generator.plan.mix[entry];
                generator.kinds.push(SourceKind {
                    model: mix.model.clone(),
                    gpus: generator.gpus(choice),
                    min_speed: mix.min_speed,
                    first: idx,
                    first_name: index_name(idx),
                });
            }
        }
        Ok(generator)
    }

    fn sampler(&self) -> Result<Sampler, SyntheticError> {
        let plan = &self.plan;
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
        if let Some((gpus, _)) = self
            .gpu_choices
            .iter()
            .find(|(gpus, _)| !(1..=limits::MAX_GPUS).contains(gpus))
        {
            return Err(SyntheticError::Range(format!(
                "a job of {gpus} GPUs must have 1 to {} GPUs",
                limits::MAX_GPUS
            )));
        }
        let model_pick = WeightedIndex::new(plan.mix.iter().map(|m| m.weight))
            .map_err(|e| SyntheticError::Range(format!("mix weights: {e}")))?;
        let gpu_pick = WeightedIndex::new(self.gpu_choices.iter().map(|g| g.1))
            .map_err(|e| SyntheticError::Range(format!("gpus weights: {e}")))?;
        let gaps = Exp::new(plan.arrivals_per_hour / 3600.0)
            .map_err(|e| SyntheticError::Range(format!("arrivals: {e}")))?;
        let durations = LogNormal::new(plan.median_s.ln(), plan.sigma)
            .map_err(|e| SyntheticError::Range(format!("durations: {e}")))?;
        Ok(Sampler {
            rng: Xoshiro256PlusPlus::seed_from_u64(self.seed),
            model_pick,
            gpu_pick,
            gaps,
            durations,
            now: 0.0,
        })
    }

    fn samples(&self, entry: usize, choice: usize, duration: f64) -> f64 {
        let gpus = self.gpus(choice);
        duration * self.plan.mix[entry].solo_rate * f64::from(gpus)
    }

    /// The plan.
    pub fn plan(&self) -> &SyntheticPlan {
        &self.plan
    }

    /// GPUs of a job drawn with GPU choice `choice` (at least 1: [`Generator::new`] checks).
    fn gpus(&self, choice: usize) -> u32 {
        self.gpu_choices[choice].0
    }

    /// Every job, in order (the order of arrival), drawn anew from the seed: the jobs
    /// [`generate`] gives.
    pub fn jobs(&self) -> impl Iterator<Item = Job> + '_ {
        self.draws_named(true).map(|d| d.job)
    }

    fn draws_named(&self, named: bool) -> impl Iterator<Item = Drawn> + '_ {
        // `new` built a sampler from the same plan, so this one cannot fail.
        let mut sampler = self.sampler().ok();
        (0..self.plan.jobs).map_while(move |idx| {
            let (now, entry, choice, duration) = sampler.as_mut()?.next();
            let mix = &self.plan.mix[entry];
            Some(Drawn {
                kind: self.kind_of[entry * self.gpu_choices.len() + choice],
                job: Job {
                    name: if named {
                        index_name(idx)
                    } else {
                        String::new()
                    },
                    model: mix.model.clone(),
                    arrival_s: now,
                    samples: self.samples(entry, choice, duration),
                    gpus: self.gpus(choice),
                    min_speed: mix.min_speed,
                },
            })
        })
    }
}

impl JobSource for Generator {
    fn len(&self) -> u32 {
        self.plan.jobs
    }

    fn kinds(&self) -> &[SourceKind] {
        &self.kinds
    }

    fn draws(&self, named: bool) -> Draws<'_> {
        Box::new(self.draws_named(named).map(Ok))
    }
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
    fn kinds_are_the_pairs_drawn_in_first_job_order() {
        let mut plan = plan();
        plan.gpus = vec![(1, 5.0), (4, 1.0), (8, 0.0)];
        let generator = Generator::new(plan, 3).unwrap();
        let kinds = generator.kinds();
        // Two models, two GPU counts drawn (8 has no weight).
        assert_eq!(kinds.len(), 4);
        assert!(kinds.windows(2).all(|w| w[0].first < w[1].first));
        for (idx, drawn) in generator.draws(true).enumerate() {
            let drawn = drawn.unwrap();
            let kind = &kinds[drawn.kind as usize];
            assert_eq!((&kind.model, kind.gpus), (&drawn.job.model, drawn.job.gpus));
            assert!(kind.first <= idx as u32);
            if kind.first == idx as u32 {
                assert_eq!(kind.first_name, drawn.job.name);
            }
        }
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
