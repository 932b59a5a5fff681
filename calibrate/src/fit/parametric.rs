//! Fitting the parametric model's parameters to co-run measurements.
//!
//! Unknowns, four per class (in this order in the fit vector): the time demand `u` and space
//! demand `s` (kept in (0, 1) through a logistic transform), the log of the exclusive rate
//! (fitted only where [`ClassSpec::fit_solo_rate`] says so, otherwise the measured rate is held
//! fixed), and the contention demand (logistic, tied loosely to the space demand). After the
//! classes come the four globals ([`Globals`], in this order): the time-slicing switch overhead
//! (logistic), MPS interference, MIG efficiency and MPS launch queueing (positive, through a log
//! transform); [`FitGlobals`] says which of them are fitted, the others keep their start values.
//! Residuals are `ln(predicted / measured)` of every job of every co-run, so a 10% miss weighs
//! the same for a fast and a slow model. Parameters no observation constrains keep their start
//! values (a weak prior pulls them there).
use std::path::PathBuf;
use std::sync::Arc;

use colo_sim::hardware::GpuSpec;
use colo_sim::perf::profile::{
    MemoryParams, MigParams, ModelEntry, MpsParams, PROFILE_VERSION, Profile, Provenance,
    TimeSliceParams,
};
use colo_sim::perf::{
    CoRun, JobClass, Origin, Parametric, Partition, PerfModel, ProfileSet, ShareMode, Tenant,
};
use colo_sim::workload::ModelKey;
use nalgebra::{DMatrix, DVector};

use super::lm::{LmConfig, minimise_with};

/// One job class: its key and what was measured of it alone.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassSpec {
    /// Model, batch, image.
    pub key: ModelKey,
    /// Exclusive rate (samples or steps per second), measured.
    pub solo_rate: f64,
    /// Peak memory, GiB (0 when unknown).
    pub memory_gib: f64,
    /// Start value of the time demand.
    pub time_demand_start: f64,
    /// Start value of the space demand.
    pub space_demand_start: f64,
    /// Whether the exclusive rate is fitted too (when no whole-GPU run exists, e.g. MIG-only
    /// data); otherwise `solo_rate` is held fixed.
    pub fit_solo_rate: bool,
}

/// A class's fitted numbers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClassFit {
    /// Time demand.
    pub time_demand: f64,
    /// Space demand (SM budget and MIG slowdown).
    pub space_demand: f64,
    /// Contention demand (SMs contended for under MPS).
    pub contention_demand: f64,
    /// Exclusive rate (the measured one unless fitted).
    pub solo_rate: f64,
}

/// One job of a measured co-run.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Index into the classes.
    pub class: usize,
    /// MPS SM budget (fraction), if set.
    pub sm_budget: Option<f64>,
    /// Measured rate, same unit as the class's solo rate.
    pub measured: f64,
}

/// A measured co-run: jobs sharing one partition in one mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// How they shared.
    pub mode: ShareMode,
    /// The whole GPU or a (real or emulated) MIG slice.
    pub partition: Partition,
    /// The jobs.
    pub members: Vec<Member>,
}

impl Observation {
    /// Each member's rate as `model` predicts it, one GPU per job; `classes` indexed by
    /// [`Member::class`].
    pub fn rates(&self, model: &dyn PerfModel, gpu: &GpuSpec, classes: &[JobClass]) -> Vec<f64> {
        let tenants: Vec<Tenant<'_>> = self
            .members
            .iter()
            .map(|m| Tenant {
                class: &classes[m.class],
                sm_budget: m.sm_budget,
                gpus: 1,
            })
            .collect();
        let mut rates = vec![0.0; tenants.len()];
        model.rates(
            &CoRun {
                gpu,
                mode: self.mode,
                partition: &self.partition,
                tenants: &tenants,
            },
            &mut rates,
        );
        rates
    }
}

/// The global parameters, and which of them to fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Globals {
    /// Time-slicing switch overhead.
    pub switch_overhead: f64,
    /// MPS interference.
    pub interference: f64,
    /// MIG efficiency.
    pub mig_efficiency: f64,
    /// MPS launch queueing.
    pub queueing: f64,
}

impl Globals {
    /// Where a fit starts the globals: 5% switch overhead, MPS interference 0.3, MIG at full
    /// efficiency, no queueing.
    pub const START: Globals = Globals {
        switch_overhead: 0.05,
        interference: 0.3,
        mig_efficiency: 1.0,
        queueing: 0.0,
    };
}

/// What to fit.
#[derive(Clone, Debug)]
pub struct FitProblem {
    /// The GPU.
    pub gpu: &'static GpuSpec,
    /// Job classes.
    pub classes: Vec<ClassSpec>,
    /// Measurements.
    pub observations: Vec<Observation>,
    /// Start values of the globals.
    pub globals: Globals,
    /// Which globals to fit; the others keep their start values.
    pub fit_globals: FitGlobals,
}

/// Which of the [`Globals`] a fit moves (one flag per field, same names); a global not fitted
/// keeps its start value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FitGlobals {
    /// Time-slicing switch overhead.
    pub switch_overhead: bool,
    /// MPS interference.
    pub interference: bool,
    /// MIG efficiency.
    pub mig_efficiency: bool,
    /// MPS launch queueing.
    pub queueing: bool,
}

impl FitGlobals {
    /// Fit none of them.
    pub const NONE: FitGlobals = FitGlobals {
        switch_overhead: false,
        interference: false,
        mig_efficiency: false,
        queueing: false,
    };
}

/// A fitted parameter set.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// Per class.
    pub classes: Vec<ClassFit>,
    /// The globals.
    pub globals: Globals,
    /// Sum of squared log-residuals.
    pub cost: f64,
    /// LM iterations.
    pub iterations: usize,
    /// Whether LM converged.
    pub converged: bool,
}

impl Fitted {
    /// The fitted profile of `problem`, its provenance left for the caller to write.
    pub fn profile(&self, problem: &FitProblem) -> Profile {
        profile_of(problem, &self.classes, &self.globals, Origin::Fitted, "")
    }
}

const PRIOR_WEIGHT: f64 = 1e-3;

/// Parameters per class in the fit vector: time, space, log rate, contention (see
/// [`Slot`]).
const PER_CLASS: usize = 4;

/// Number of globals after the classes in the fit vector (see [`Slot`]).
const GLOBALS: usize = 4;

/// Where each parameter sits in the fit vector: class `i`'s four at `PER_CLASS * i ..`, then
/// the globals.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Number of classes.
    classes: usize,
}

impl Slot {
    /// Length of the fit vector.
    fn len(self) -> usize {
        PER_CLASS * self.classes + GLOBALS
    }
    /// Class `i`'s time demand (log-odds).
    fn time_demand(i: usize) -> usize {
        PER_CLASS * i
    }
    /// Class `i`'s space demand (log-odds).
    fn space_demand(i: usize) -> usize {
        PER_CLASS * i + 1
    }
    /// Class `i`'s exclusive rate (log).
    fn solo_rate(i: usize) -> usize {
        PER_CLASS * i + 2
    }
    /// Class `i`'s contention demand (log-odds).
    fn contention_demand(i: usize) -> usize {
        PER_CLASS * i + 3
    }
    /// The time-slicing switch overhead (log-odds).
    fn switch_overhead(self) -> usize {
        PER_CLASS * self.classes
    }
    /// MPS interference (log).
    fn interference(self) -> usize {
        PER_CLASS * self.classes + 1
    }
    /// MIG efficiency (log).
    fn mig_efficiency(self) -> usize {
        PER_CLASS * self.classes + 2
    }
    /// MPS launch queueing (log).
    fn queueing(self) -> usize {
        PER_CLASS * self.classes + 3
    }
}

/// Pull of each class's contention demand towards its space demand (on the log-odds scale):
/// without it, one noisy pair can drive a contention demand to zero (a job that "costs its
/// co-runners nothing"), which no other measurement then corrects.
const CONTENTION_TIE: f64 = 0.1;

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn logit(p: f64) -> f64 {
    let p = p.clamp(1e-6, 1.0 - 1e-6);
    (p / (1.0 - p)).ln()
}

impl FitProblem {
    fn slots(&self) -> Slot {
        Slot {
            classes: self.classes.len(),
        }
    }

    fn start(&self) -> DVector<f64> {
        let at = self.slots();
        let mut theta = DVector::zeros(at.len());
        for (i, c) in self.classes.iter().enumerate() {
            theta[Slot::time_demand(i)] = logit(c.time_demand_start);
            theta[Slot::space_demand(i)] = logit(c.space_demand_start);
            theta[Slot::solo_rate(i)] = c.solo_rate.max(f64::MIN_POSITIVE).ln();
            theta[Slot::contention_demand(i)] = logit(c.space_demand_start);
        }
        let g = &self.globals;
        theta[at.switch_overhead()] = logit(g.switch_overhead);
        theta[at.interference()] = g.interference.max(1e-6).ln();
        theta[at.mig_efficiency()] = g.mig_efficiency.max(1e-6).ln();
        theta[at.queueing()] = g.queueing.max(1e-6).ln();
        theta
    }

    fn decode(&self, theta: &DVector<f64>) -> (Vec<ClassFit>, Globals) {
        let at = self.slots();
        let classes = (0..self.classes.len())
            .map(|i| self.decode_class(theta, i))
            .collect();
        let pick = |fit: bool, fitted: f64, start: f64| if fit { fitted } else { start };
        let (g, f) = (&self.globals, &self.fit_globals);
        let globals = Globals {
            switch_overhead: pick(
                f.switch_overhead,
                logistic(theta[at.switch_overhead()]),
                g.switch_overhead,
            ),
            interference: pick(
                f.interference,
                theta[at.interference()].exp(),
                g.interference,
            ),
            mig_efficiency: pick(
                f.mig_efficiency,
                theta[at.mig_efficiency()].exp(),
                g.mig_efficiency,
            ),
            queueing: pick(f.queueing, theta[at.queueing()].exp(), g.queueing),
        };
        (classes, globals)
    }

    /// Class `i`'s fit at `theta` (what [`FitProblem::decode`] gives it).
    fn decode_class(&self, theta: &DVector<f64>, i: usize) -> ClassFit {
        let c = &self.classes[i];
        ClassFit {
            time_demand: logistic(theta[Slot::time_demand(i)]),
            space_demand: logistic(theta[Slot::space_demand(i)]).max(1e-4),
            solo_rate: if c.fit_solo_rate {
                theta[Slot::solo_rate(i)].exp()
            } else {
                c.solo_rate
            },
            contention_demand: logistic(theta[Slot::contention_demand(i)]).max(1e-4),
        }
    }

    /// Log-residuals of every job of every observation under `classes` and `globals`.
    pub fn residuals(&self, classes: &[ClassFit], globals: &Globals) -> Vec<f64> {
        predictions(self, classes, globals)
            .into_iter()
            .map(|(predicted, measured)| (predicted / measured).ln())
            .collect()
    }
}

/// The parametric model over one (fitted) profile, for predictions on its GPU.
pub fn model_of(profile: Profile) -> Parametric {
    let mut set = ProfileSet::default();
    set.insert(profile, PathBuf::from("fit"));
    Parametric::new(Arc::new(set))
}

/// (predicted, measured) for every job of every observation.
pub fn predictions(problem: &FitProblem, fits: &[ClassFit], globals: &Globals) -> Vec<(f64, f64)> {
    let profile = profile_of(problem, fits, globals, Origin::Fitted, "fit in progress");
    let model = model_of(profile);
    let classes = job_classes(problem, fits);
    let mut out = Vec::new();
    for obs in &problem.observations {
        let rates = obs.rates(&model, problem.gpu, &classes);
        out.extend(
            rates
                .into_iter()
                .zip(obs.members.iter().map(|m| m.measured)),
        );
    }
    out
}

fn job_classes(problem: &FitProblem, fits: &[ClassFit]) -> Vec<JobClass> {
    problem
        .classes
        .iter()
        .zip(fits)
        .map(|(c, f)| JobClass {
            key: c.key.clone(),
            solo_rate: f.solo_rate,
            time_demand: f.time_demand,
            space_demand: f.space_demand,
            contention_demand: f.contention_demand,
            memory_gib: c.memory_gib,
            spread: None,
            origin: Origin::Fitted,
        })
        .collect()
}

/// A profile holding `fits` and `globals`.
pub fn profile_of(
    problem: &FitProblem,
    fits: &[ClassFit],
    globals: &Globals,
    origin: Origin,
    source: &str,
) -> Profile {
    Profile {
        version: PROFILE_VERSION,
        gpu: problem.gpu.name.to_owned(),
        origin,
        provenance: Provenance {
            source: source.to_owned(),
            data: vec![],
            created: String::new(),
            driver: None,
        },
        memory: MemoryParams {
            context_gib: 0.5,
            mps_context_gib: 0.3,
        },
        timeslice: TimeSliceParams {
            switch_overhead: globals.switch_overhead.min(0.999),
            origin: None,
        },
        mps: MpsParams {
            interference: globals.interference.min(10.0),
            queueing: globals.queueing.min(50.0),
            origin: None,
        },
        mig: MigParams {
            efficiency: globals.mig_efficiency.clamp(1e-3, 2.0),
            origin: None,
        },
        models: problem
            .classes
            .iter()
            .zip(fits)
            .map(|(c, f)| ModelEntry {
                model: c.key.model.clone(),
                batch: c.key.batch,
                image: c.key.image,
                samples_per_s: f.solo_rate,
                time_demand: f.time_demand,
                space_demand: f.space_demand,
                contention_demand: Some(f.contention_demand),
                memory_gib: c.memory_gib,
                spread: None,
                origin: None,
            })
            .collect(),
        kernel: None,
        held_out_error: Vec::new(),
        power: None,
    }
}

/// Fits the problem's free parameters by Levenberg–Marquardt on log-residuals.
pub fn fit(problem: &FitProblem, config: &LmConfig) -> Fitted {
    let start = problem.start();
    let prior = start.clone();
    let residuals = |theta: &DVector<f64>| fit_residuals(problem, &prior, theta);
    let jacobian = |theta: &DVector<f64>, r: &DVector<f64>| {
        sparse_jacobian(problem, &prior, theta, r, config.step, &residuals)
    };
    let result = minimise_with(&residuals, &jacobian, start, config);
    let (classes, globals) = problem.decode(&result.theta);
    Fitted {
        classes,
        globals,
        cost: result.cost,
        iterations: result.iterations,
        converged: result.converged,
    }
}

/// [`fit`]'s residuals at `theta`: each job's log of predicted over measured rate, one prior row
/// per parameter (its distance from `prior`), one tie row per class (see [`CONTENTION_TIE`]);
/// a non-finite residual counts as 1,000.
fn fit_residuals(problem: &FitProblem, prior: &DVector<f64>, theta: &DVector<f64>) -> DVector<f64> {
    let (classes, globals) = problem.decode(theta);
    let mut r = problem.residuals(&classes, &globals);
    r.extend((theta - prior).iter().map(|d| d * PRIOR_WEIGHT));
    r.extend((0..problem.classes.len()).map(|i| {
        (theta[Slot::contention_demand(i)] - theta[Slot::space_demand(i)]) * CONTENTION_TIE
    }));
    DVector::from_vec(
        r.into_iter()
            .map(|x| if x.is_finite() { x } else { 1e3 })
            .collect(),
    )
}

/// The forward-difference Jacobian of [`fit`]'s residuals, the same numbers `lm::minimise` takes:
/// a class's parameter moves only the jobs of the observations that hold it (a job's rate
/// depends on its set's classes and the globals alone), its prior row and its tie row, so its
/// column re-evaluates those observations and not the whole problem. Globals' columns
/// re-evaluate everything. Residual rows: every observation's jobs in order, then one prior row
/// per parameter, then one tie row per class.
fn sparse_jacobian(
    problem: &FitProblem,
    prior: &DVector<f64>,
    theta: &DVector<f64>,
    r: &DVector<f64>,
    step: f64,
    residuals: &dyn Fn(&DVector<f64>) -> DVector<f64>,
) -> DMatrix<f64> {
    let at = problem.slots();
    let n_classes = problem.classes.len();
    let mut first_row = Vec::with_capacity(problem.observations.len());
    let mut holding: Vec<Vec<usize>> = vec![Vec::new(); n_classes];
    let mut jobs = 0;
    for (o, obs) in problem.observations.iter().enumerate() {
        first_row.push(jobs);
        jobs += obs.members.len();
        for m in &obs.members {
            if holding[m.class].last() != Some(&o) {
                holding[m.class].push(o);
            }
        }
    }
    let finite = |x: f64| if x.is_finite() { x } else { 1e3 };
    let mut jacobian = DMatrix::zeros(r.len(), theta.len());
    let (fits, globals) = problem.decode(theta);
    let model = model_of(profile_of(
        problem,
        &fits,
        &globals,
        Origin::Fitted,
        "fit in progress",
    ));
    let mut classes = job_classes(problem, &fits);
    for i in 0..n_classes {
        let kept = classes[i].clone();
        for j in PER_CLASS * i..PER_CLASS * (i + 1) {
            let mut shifted = theta.clone();
            let h = super::lm::step_of(theta[j], step);
            shifted[j] += h;
            let moved = problem.decode_class(&shifted, i);
            classes[i].time_demand = moved.time_demand;
            classes[i].space_demand = moved.space_demand;
            classes[i].solo_rate = moved.solo_rate;
            classes[i].contention_demand = moved.contention_demand;
            for &o in &holding[i] {
                let obs = &problem.observations[o];
                let rates = obs.rates(&model, problem.gpu, &classes);
                for (k, (rate, m)) in rates.into_iter().zip(&obs.members).enumerate() {
                    let row = first_row[o] + k;
                    jacobian[(row, j)] = (finite((rate / m.measured).ln()) - r[row]) / h;
                }
            }
            let prior_row = jobs + j;
            jacobian[(prior_row, j)] =
                (finite((shifted[j] - prior[j]) * PRIOR_WEIGHT) - r[prior_row]) / h;
            let tie_row = jobs + theta.len() + i;
            let tie = (shifted[Slot::contention_demand(i)] - shifted[Slot::space_demand(i)])
                * CONTENTION_TIE;
            jacobian[(tie_row, j)] = (finite(tie) - r[tie_row]) / h;
        }
        classes[i] = kept;
    }
    for j in PER_CLASS * n_classes..at.len() {
        let mut shifted = theta.clone();
        let h = super::lm::step_of(theta[j], step);
        shifted[j] += h;
        let column = (residuals(&shifted) - r) / h;
        jacobian.set_column(j, &column);
    }
    jacobian
}

/// Mean absolute percentage error of predicted against measured rates, over every job.
pub fn mape(pairs: &[(f64, f64)]) -> f64 {
    if pairs.is_empty() {
        return f64::NAN;
    }
    pairs.iter().map(|(p, m)| ((p - m) / m).abs()).sum::<f64>() / pairs.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use colo_sim::hardware;

    fn problem(truth: &[(f64, f64)], globals: Globals, contention_scale: f64) -> FitProblem {
        let gpu = hardware::gpu("h200").unwrap();
        let classes: Vec<ClassSpec> = truth
            .iter()
            .enumerate()
            .map(|(i, _)| ClassSpec {
                key: ModelKey::new(&format!("m{i}"), 1, 1),
                solo_rate: 100.0 * (i + 1) as f64,
                memory_gib: 1.0,
                time_demand_start: 0.5,
                space_demand_start: 0.5,
                fit_solo_rate: false,
            })
            .collect();
        let mut observations = Vec::new();
        let whole = Partition::whole(gpu);
        for i in 0..truth.len() {
            for budget in [0.5, 0.25, 0.12] {
                let member = Member {
                    class: i,
                    sm_budget: Some(budget),
                    measured: 0.0,
                };
                observations.push(Observation {
                    mode: ShareMode::Mps,
                    partition: whole,
                    members: vec![member],
                });
            }
            for j in i..truth.len() {
                for mode in [ShareMode::Timeslice, ShareMode::Mps] {
                    let members = [i, j]
                        .iter()
                        .map(|&c| Member {
                            class: c,
                            sm_budget: None,
                            measured: 0.0,
                        })
                        .collect();
                    observations.push(Observation {
                        mode,
                        partition: whole,
                        members,
                    });
                }
            }
        }
        let mut p = FitProblem {
            gpu,
            classes,
            observations,
            globals,
            fit_globals: FitGlobals {
                switch_overhead: true,
                interference: true,
                ..FitGlobals::NONE
            },
        };
        // Noise-free "measurements" from the true parameters.
        let truth: Vec<ClassFit> = truth
            .iter()
            .enumerate()
            .map(|(i, &(u, s))| ClassFit {
                time_demand: u,
                space_demand: s,
                contention_demand: contention_scale * s,
                solo_rate: 100.0 * (i + 1) as f64,
            })
            .collect();
        let measured = predictions(&p, &truth, &globals);
        let mut k = 0;
        for obs in &mut p.observations {
            for m in &mut obs.members {
                m.measured = measured[k].0;
                k += 1;
            }
        }
        p.globals = Globals::START;
        p
    }

    #[test]
    fn fit_on_noise_free_data_recovers_its_parameters() {
        let truth = [(0.3, 0.4), (0.9, 0.8), (0.6, 0.25)];
        let globals = Globals {
            switch_overhead: 0.12,
            interference: 0.7,
            mig_efficiency: 1.0,
            queueing: 0.0,
        };
        let p = problem(&truth, globals, 1.0);
        let fitted = fit(&p, &LmConfig::default());
        for (f, (tu, ts)) in fitted.classes.iter().zip(truth) {
            assert!(
                (f.time_demand - tu).abs() < 1e-3
                    && (f.space_demand - ts).abs() < 1e-3
                    && (f.contention_demand - ts).abs() < 1e-3,
                "{:?} vs {truth:?}",
                fitted.classes
            );
        }
        assert!(
            (fitted.globals.switch_overhead - 0.12).abs() < 1e-3,
            "{:?}",
            fitted.globals
        );
        assert!(
            (fitted.globals.interference - 0.7).abs() < 1e-3,
            "{:?}",
            fitted.globals
        );
        let pairs = predictions(&p, &fitted.classes, &fitted.globals);
        assert!(mape(&pairs) < 1e-4);
    }

    #[test]
    fn issue_37_the_fit_vector_holds_four_numbers_a_class_then_the_four_globals() {
        let at = Slot { classes: 3 };
        assert_eq!(at.len(), 16);
        assert_eq!(
            (
                Slot::time_demand(2),
                Slot::space_demand(2),
                Slot::solo_rate(2),
                Slot::contention_demand(2)
            ),
            (8, 9, 10, 11)
        );
        assert_eq!(
            (
                at.switch_overhead(),
                at.interference(),
                at.mig_efficiency(),
                at.queueing()
            ),
            (12, 13, 14, 15)
        );
    }

    #[test]
    fn issue_37_the_sparse_jacobian_is_the_plain_forward_differences() {
        // lm::minimise's own Jacobian: every column from the whole residual vector, step
        // 1e-6 x max(1, |theta_j|). The sparse one must give the same numbers, at the start
        // and away from it (where the prior and tie rows are not zero).
        let p = problem(
            &[(0.3, 0.4), (0.9, 0.8)],
            Globals {
                switch_overhead: 0.12,
                interference: 0.7,
                mig_efficiency: 1.0,
                queueing: 0.0,
            },
            1.0,
        );
        let prior = p.start();
        let residuals = |t: &DVector<f64>| fit_residuals(&p, &prior, t);
        let step = LmConfig::default().step;
        for theta in [prior.clone(), prior.map(|x| x + 0.3)] {
            let r = residuals(&theta);
            let sparse = sparse_jacobian(&p, &prior, &theta, &r, step, &residuals);
            for j in 0..theta.len() {
                let mut shifted = theta.clone();
                let h = super::super::lm::step_of(theta[j], step);
                shifted[j] += h;
                let column = (residuals(&shifted) - &r) / h;
                for row in 0..r.len() {
                    let (a, b) = (sparse[(row, j)], column[row]);
                    assert!(
                        (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
                        "row {row} col {j}: {a} vs {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn fit_is_deterministic() {
        let p = problem(
            &[(0.4, 0.5), (0.8, 0.9)],
            Globals {
                switch_overhead: 0.1,
                interference: 0.5,
                mig_efficiency: 1.0,
                queueing: 0.0,
            },
            1.0,
        );
        assert_eq!(fit(&p, &LmConfig::default()), fit(&p, &LmConfig::default()));
    }
}
