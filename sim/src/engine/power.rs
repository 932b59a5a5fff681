//! Energy metering: each GPU's board power, constant between changes of its set's rates,
//! integrated over time, and each job's share of it (the rule is in
//! [`crate::metrics::energy`]).
//!
//! Cost: one power evaluation per re-rate of a GPU ([`Simulation::meter_set_power`], `O(k)` for
//! `k` tenants, no allocation; it also brings each tenant's energy up to date at its old share,
//! since shares change only there), one `O(1)` integration step of that GPU before its set
//! changes ([`Simulation::meter_flush`]), and one `O(1)` step for a job that leaves
//! ([`Simulation::meter_leave`]). Other GPUs are never touched.
use std::collections::BTreeSet;

use super::{GroupState, Simulation};
use crate::metrics::energy::{GpuEnergy, PowerFit, RunEnergy};
use crate::perf::profile::{PowerForm, PowerMember, PowerParams};
use crate::perf::{JobClass, MeasuredMode, ProfileSet, ShareMode};

/// The profile's power mode whose coefficients a group in `mode` uses: its measured mode
/// ([`ShareMode::measured_as`]), except that `Exclusive` groups use `timeslice`'s for their
/// idle power only (plain processes, no MPS server; a busy exclusive GPU holds one job, which
/// draws its measured power alone).
pub fn power_mode(mode: ShareMode) -> MeasuredMode {
    match mode {
        ShareMode::Exclusive => MeasuredMode::Timeslice,
        other => other.measured_as(),
    }
}

/// The coefficients of one group.
#[derive(Clone, Copy, Debug)]
struct GroupPower {
    form: PowerForm,
    idle_w: f64,
    slope: f64,
    max_w: f64,
}

/// One GPU's meter.
#[derive(Clone, Copy, Debug, Default)]
struct GpuMeter {
    /// Power while busy, W, valid when `known`.
    power_w: f64,
    known: bool,
    /// Time of the last integration step.
    since: f64,
    busy_s: f64,
    busy_j: f64,
    unknown_s: f64,
}

/// One job's meter, kept in its state (so only while it is live). Its share is constant between
/// the re-rates of its GPU, so its energy is brought up to date only there and when it leaves.
#[derive(Clone, Copy, Debug)]
pub(super) struct JobMeter {
    /// Its current share of its GPUs' power (summed over a multi-GPU job's GPUs), W.
    share_w: f64,
    /// Whether that share is known (its GPU's power is).
    share_known: bool,
    /// Time its energy was last brought up to date.
    since: f64,
    /// Energy up to `since`, J.
    energy_j: f64,
    /// Some of its run had unknown power.
    unknown: bool,
}

impl Default for JobMeter {
    fn default() -> Self {
        JobMeter {
            share_w: 0.0,
            share_known: true,
            since: 0.0,
            energy_j: 0.0,
            unknown: false,
        }
    }
}

impl JobMeter {
    /// Adds its share over `since..now`.
    fn advance(&mut self, now: f64) {
        let dt = now - self.since;
        if dt > 0.0 {
            if self.share_known {
                self.energy_j += self.share_w * dt;
            } else {
                self.unknown = true;
            }
        }
        self.since = now;
    }
}

/// The engine's energy bookkeeping.
pub(super) struct Meter {
    /// Per group: its coefficients, or why it has none.
    groups: Vec<Result<GroupPower, String>>,
    /// Per class: measured power alone, W (NaN if the profile has none).
    alone_w: Vec<f64>,
    /// Per class: its profile has a power section without the class's power alone (a missing
    /// power section is reported once, per group).
    lacks_alone: Vec<bool>,
    /// Per (class, group), at `class * groups + group`: the class's activity term per unit of
    /// `rate / gpus` in the group's power model (activity is linear in the fraction of alone
    /// speed, so `activity = coef * rate / gpus`); NaN when unknown.
    coef: Vec<f64>,
    /// Per class: its GPU type's name (for messages).
    class_gpu: Vec<&'static str>,
    gpus: Vec<GpuMeter>,
    /// Classes without measured power alone that ran.
    missing: BTreeSet<u32>,
    fits: Vec<PowerFit>,
    /// Activity terms of the GPU being re-rated (reused).
    scratch: Vec<f64>,
    /// Some group has a power model. Without one no GPU's power is ever known, and nothing
    /// reads the GPUs' integrals (the summary's energy figures are all unknown), so they are
    /// not kept: only the jobs' meters run, which say which jobs' energy is unknown.
    any_model: bool,
}

/// The meter for a simulation, or `None` without profiles. `job_class[row * groups + group]` is
/// the class on the group (`u32::MAX`: none) of the jobs of each class row.
pub(super) fn meter(
    profiles: Option<&ProfileSet>,
    groups: &[GroupState],
    n_gpus: usize,
    classes: &[JobClass],
    job_class: &[u32],
) -> Option<Meter> {
    let profiles = profiles?;
    let mut fits: Vec<PowerFit> = Vec::new();
    let group_power: Vec<Result<GroupPower, String>> = groups
        .iter()
        .map(|g| {
            let (profile, path) = profiles
                .get(g.spec)
                .map_err(|_| format!("no profile for {} to read power from", g.spec.name))?;
            let params: &PowerParams = profile.power.as_ref().ok_or_else(|| {
                format!(
                    "{}: the {} profile has no power section (written before the power model, or from data without NVML power)",
                    path.display(),
                    g.spec.name
                )
            })?;
            let name = power_mode(g.mode);
            let m = params
                .modes
                .iter()
                .find(|m| m.mode == name)
                .ok_or_else(|| {
                    format!(
                        "{}: the {} power model has no coefficients for mode {name}",
                        path.display(),
                        g.spec.name
                    )
                })?;
            let fit = PowerFit {
                gpu: g.spec.name.to_owned(),
                mode: g.mode.to_string(),
                coefficients: name.label().to_owned(),
                form: params.form.to_string(),
                origin: params.origin.to_string(),
                idle_w: m.idle_w,
                held_out_mape_pct: m.held_out_mape_pct,
                sets: m.sets,
            };
            if !fits.contains(&fit) {
                fits.push(fit);
            }
            Ok(GroupPower {
                form: params.form,
                idle_w: m.idle_w,
                slope: m.slope,
                max_w: m.max_w.unwrap_or(f64::INFINITY),
            })
        })
        .collect();
    let n_groups = groups.len();
    let mut alone_w = vec![f64::NAN; classes.len()];
    let mut lacks_alone = vec![false; classes.len()];
    let mut coef = vec![f64::NAN; classes.len() * n_groups];
    let mut class_gpu = vec![""; classes.len()];
    let mut seen = vec![false; classes.len() * n_groups];
    for (idx, &c) in job_class.iter().enumerate() {
        let g = idx % n_groups;
        if c == u32::MAX || seen[c as usize * n_groups + g] {
            continue;
        }
        seen[c as usize * n_groups + g] = true;
        let class = &classes[c as usize];
        let spec = groups[g].spec;
        class_gpu[c as usize] = spec.name;
        let params = profiles.get(spec).ok().and_then(|(p, _)| p.power.as_ref());
        let alone = params.and_then(|params| params.alone(&class.key));
        let Some(alone) = alone else {
            lacks_alone[c as usize] = params.is_some();
            continue;
        };
        alone_w[c as usize] = alone.power_w;
        if let Ok(model) = &group_power[g] {
            let at_full_speed = PowerMember {
                alone_w: alone.power_w,
                util: alone.util,
                fraction: 1.0,
            };
            coef[c as usize * n_groups + g] =
                model.form.activity(model.idle_w, &at_full_speed) / class.solo_rate;
        }
    }
    let gpus = vec![GpuMeter::default(); n_gpus];
    let any_model = group_power.iter().any(Result::is_ok);
    Some(Meter {
        any_model,
        groups: group_power,
        alone_w,
        lacks_alone,
        coef,
        class_gpu,
        gpus,
        missing: BTreeSet::new(),
        fits,
        scratch: Vec::new(),
    })
}

impl Simulation<'_> {
    /// Integrates `gpu`'s power from its last step to now. Called before its set of jobs
    /// changes and before a re-rate, so the power integrated is the one that held.
    pub(super) fn meter_flush(&mut self, gpu: u32) {
        let range = self.part_range(gpu);
        let Some(meter) = self.meter.as_mut().filter(|m| m.any_model) else {
            return;
        };
        let g = &mut meter.gpus[gpu as usize];
        let dt = self.now - g.since;
        g.since = self.now;
        if dt <= 0.0 || self.parts[range].iter().all(|p| p.tenants.is_empty()) {
            return;
        }
        g.busy_s += dt;
        if g.known {
            g.busy_j += g.power_w * dt;
        } else {
            g.unknown_s += dt;
        }
    }

    /// `job` leaves `gpu`, or stops computing on it (a preemption's checkpoint starts): the
    /// GPU's power is integrated and the job's energy brought up to now; it takes no share until
    /// a re-rate gives it one again, so a checkpoint, a restore and the wait between runs add
    /// nothing to its energy (a GPU holding only a checkpointing job meters as idle).
    pub(super) fn meter_leave(&mut self, job: u32, gpu: u32) {
        self.meter_flush(gpu);
        let now = self.now;
        if self.meter.is_some() {
            let j = &mut self.state.cold_mut(job).meter;
            j.advance(now);
            j.share_w = 0.0;
            j.share_known = true;
        }
    }

    /// Sets `gpu`'s power and its tenants' shares from their current rates (after a re-rate),
    /// first bringing each tenant's energy up to date at its old share. A multi-GPU job's other
    /// GPUs take the same power: it is alone on each.
    pub(super) fn meter_set_power(&mut self, gpu: u32) {
        let range = self.part_range(gpu);
        let group_idx = self.gpus[gpu as usize].group as usize;
        let n_groups = self.groups.len();
        let now = self.now;
        let Some(meter) = self.meter.as_mut() else {
            return;
        };
        let parts = &self.parts[range];
        let tenants = || parts.iter().flat_map(|p| &p.tenants);
        let (kinds, rows) = (&self.kinds, &self.rows_class);
        let kind_of = |state: &super::States, job: u32| &kinds[state[job as usize].kind as usize];
        if !meter.any_model {
            // What the general path below does when the group has no model: every tenant's
            // energy up to now, then an unknown share.
            for &job in tenants() {
                let j = &mut self.state.cold_mut(job).meter;
                j.advance(now);
                j.share_w = 0.0;
                j.share_known = false;
                let c =
                    rows[kind_of(&self.state, job).row as usize * n_groups + group_idx] as usize;
                if meter.lacks_alone[c] {
                    meter.missing.insert(c as u32);
                }
            }
            return;
        }
        let model = meter.groups[group_idx].as_ref().ok().copied();
        // One pass: each tenant's energy up to now, and its activity term (its measured power
        // and fraction of alone speed); unknown if any lacks its power alone.
        let mut scratch = std::mem::take(&mut meter.scratch);
        scratch.clear();
        let mut known = model.is_some();
        let mut alone_w = 0.0;
        for &job in tenants() {
            self.state.cold_mut(job).meter.advance(now);
            let kind = kind_of(&self.state, job);
            let c = rows[kind.row as usize * n_groups + group_idx] as usize;
            let coef = meter.coef[c * n_groups + group_idx];
            if coef.is_nan() {
                if meter.lacks_alone[c] {
                    meter.missing.insert(c as u32);
                }
                known = false;
                continue;
            }
            alone_w = meter.alone_w[c];
            let rate = self.state[job as usize].rate / f64::from(kind.gpus);
            scratch.push(coef * rate);
        }
        let n = scratch.len();
        let (Some(model), true, false) = (model, known, n == 0) else {
            for &job in tenants() {
                let j = &mut self.state.cold_mut(job).meter;
                j.share_w = 0.0;
                j.share_known = false;
            }
            meter.gpus[gpu as usize].known = false;
            meter.scratch = scratch;
            return;
        };
        let lone = n == 1
            && !parts[0].partition.is_mig_slice
            && self.groups[group_idx].sm_budget.is_none();
        if lone {
            // Alone on a whole GPU: its measured power alone, on each GPU of a multi-GPU job.
            let job = parts[0].tenants[0];
            let (s, cold) = self.state.both_mut(job);
            cold.meter.share_w = alone_w * s.gpus.len().max(1) as f64;
            cold.meter.share_known = true;
            for &g in s.gpus.iter().chain(std::iter::once(&gpu)) {
                let m = &mut meter.gpus[g as usize];
                m.power_w = alone_w;
                m.known = true;
            }
            meter.scratch = scratch;
            return;
        }
        let x: f64 = scratch.iter().sum();
        let power = model
            .form
            .of_activity(model.idle_w, model.slope, model.max_w, x);
        let idle_share = model.idle_w / n as f64;
        let above = power - model.idle_w;
        for (&job, &xj) in tenants().zip(&scratch) {
            let part_above = if x != 0.0 {
                above * xj / x
            } else {
                above / n as f64
            };
            let j = &mut self.state.cold_mut(job).meter;
            j.share_w = idle_share + part_above;
            j.share_known = true;
        }
        meter.scratch = scratch;
        let m = &mut meter.gpus[gpu as usize];
        m.power_w = power;
        m.known = true;
        // Alone but not at its measured power (in a slice or under an SM budget): a multi-GPU
        // job draws this power on each of its GPUs, as on the lone path above.
        if let (1, Some(&job)) = (n, tenants().next()) {
            let (s, cold) = self.state.both_mut(job);
            cold.meter.share_w = power * s.gpus.len().max(1) as f64;
            for &g in &s.gpus {
                let m = &mut meter.gpus[g as usize];
                m.power_w = power;
                m.known = true;
            }
        }
    }

    /// The energy, J, of the job whose meter `j` is, if it is known.
    pub(super) fn meter_job_energy(&self, j: &JobMeter) -> Option<f64> {
        self.meter.as_ref()?;
        (!j.unknown).then_some(j.energy_j)
    }

    /// What the meter integrated, for the run record.
    pub(super) fn meter_record(&self) -> Option<RunEnergy> {
        let meter = self.meter.as_ref()?;
        let gpus = meter
            .gpus
            .iter()
            .zip(&self.gpus)
            .map(|(m, g)| GpuEnergy {
                idle_w: meter.groups[g.group as usize]
                    .as_ref()
                    .ok()
                    .map(|p| p.idle_w),
                busy_s: m.busy_s,
                busy_j: m.busy_j,
                unknown_s: m.unknown_s,
            })
            .collect();
        let mut unknown: Vec<String> = Vec::new();
        for why in meter.groups.iter().filter_map(|g| g.as_ref().err()) {
            if !unknown.contains(why) {
                unknown.push(why.clone());
            }
        }
        if !meter.missing.is_empty() {
            let keys: Vec<String> = meter
                .missing
                .iter()
                .map(|&c| {
                    format!(
                        "{} on {}",
                        self.classes[c as usize].key, meter.class_gpu[c as usize]
                    )
                })
                .collect();
            unknown.push(format!(
                "no measured power alone for {} (the power model needs each job's)",
                keys.join(", ")
            ));
        }
        Some(RunEnergy {
            gpus,
            power_models: meter.fits.clone(),
            unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::JobMeter;

    #[test]
    fn issue_37_no_time_at_an_unknown_share_leaves_a_jobs_energy_known() {
        // A re-rate at the instant the share became unknown adds no time: energy stays known.
        let mut meter = JobMeter {
            share_known: false,
            since: 5.0,
            ..JobMeter::default()
        };
        meter.advance(5.0);
        assert!(!meter.unknown);
        meter.advance(6.0);
        assert!(meter.unknown);
        // Known: share x time.
        let mut meter = JobMeter {
            share_w: 300.0,
            ..JobMeter::default()
        };
        meter.advance(2.0);
        assert_eq!((meter.energy_j, meter.unknown), (600.0, false));
    }
}
