//! Time-slicing from alone traces: the GPU runs one context at a time, so each job needs its
//! alone busy fraction `u` of the GPU's time to run at full speed. The time left after switching
//! costs is shared max-min fairly (water-filling): a job asking less than the fair level gets all
//! it asks; the rest split what remains. Switching costs: a fixed overhead while two or more jobs
//! share, plus a cost per idle-to-busy burst of each job (a launch-bound job's every burst takes
//! the GPU from its co-runner and gives it back). And a wait per burst: a job whose kernel is
//! ready while a co-runner's kernel runs waits for it to end (the co-runners' mean residual
//! kernel time, weighted by how busy they keep the GPU, times a fitted factor), so a light,
//! launch-bound job slows beside long kernels even when its share of GPU time is free (issue 32:
//! resnet18:128:32 kept 0.74-0.81 of alone beside convnext_tiny, 0.98 beside resnet50).
//! And a gap per kernel: a GPU runs one context's kernels back to back with a short gap
//! between them that a kernel trace does not count as kernel time. Alone, a launch-bound job's
//! anchor puts that gap in its host time; once the GPU is saturated it is GPU time the other
//! contexts cannot use, so each job asks for `(busy + gap x kernels) / cycle` of the GPU
//! (issue 32: with native H100 traces, 7 time-sliced copies of launch-bound jobs were
//! predicted 9.8% too fast without it).
use super::replay::AloneTimeline;

/// The time-slicing globals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimesliceParams {
    /// GPU time lost per burst, seconds.
    pub switch_s: f64,
    /// Fraction of GPU time lost while two or more jobs share.
    pub overhead: f64,
    /// Part of the co-runners' mean residual kernel time a burst waits (0: no wait).
    pub wait: f64,
    /// GPU time between two of a context's back-to-back kernels, seconds (0: none).
    pub kernel_gap_s: f64,
}

/// Each job's speed as a fraction of alone (same order as `alone`).
pub fn timeslice_shares(alone: &[&AloneTimeline], p: TimesliceParams) -> Vec<f64> {
    let n = alone.len();
    let demand: Vec<f64> = alone
        .iter()
        .map(|a| {
            let gaps = p.kernel_gap_s * a.end_s.len() as f64;
            ((a.busy_s + gaps) / a.cycle_s).clamp(1e-6, 1.0)
        })
        .collect();
    let mut speed = vec![1.0; n];
    if n < 2 {
        return speed;
    }
    // Capacity depends on the speeds (bursts happen at the rate a job runs): a contraction for
    // any sane cost, iterated to a fixed point.
    for _ in 0..60 {
        let switching: f64 = alone
            .iter()
            .zip(&speed)
            .map(|(a, f)| a.bursts_per_s() * f)
            .sum();
        let capacity = (1.0 - p.overhead - p.switch_s * switching).max(0.02);
        let level = water_level(&demand, capacity);
        // GPU time co-runners' kernels hold, times how long one holds it on average.
        let held: f64 = alone
            .iter()
            .zip(&speed)
            .zip(&demand)
            .map(|((a, f), u)| f * u * a.residual_kernel_s)
            .sum();
        let next: Vec<f64> = demand
            .iter()
            .zip(alone)
            .zip(&speed)
            .map(|((&u, a), f)| {
                let wait = p.wait * (held - f * u * a.residual_kernel_s).max(0.0);
                (level / u).min(1.0 / (1.0 + a.bursts_per_s() * wait))
            })
            .collect();
        let change = next
            .iter()
            .zip(&speed)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        speed = next;
        if change < 1e-12 {
            break;
        }
    }
    speed
}

/// The level `l` with `sum(min(d, l)) = capacity` (infinite when all demands fit).
pub(super) fn water_level(demand: &[f64], capacity: f64) -> f64 {
    if demand.iter().sum::<f64>() <= capacity {
        return f64::INFINITY;
    }
    let mut sorted = demand.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut left = capacity;
    for (i, &d) in sorted.iter().enumerate() {
        let rest = (sorted.len() - i) as f64;
        if d * rest >= left {
            return left / rest;
        }
        left -= d;
    }
    f64::INFINITY
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No switching cost, no wait, no gap: shares alone.
    fn no_costs() -> TimesliceParams {
        TimesliceParams {
            switch_s: 0.0,
            overhead: 0.0,
            wait: 0.0,
            kernel_gap_s: 0.0,
        }
    }

    fn job(busy: f64, bursts: u32) -> AloneTimeline {
        AloneTimeline {
            end_s: vec![1.0],
            cycle_s: 1.0,
            busy_s: busy,
            bursts,
            residual_kernel_s: 0.0,
        }
    }

    #[test]
    fn issue_32_a_light_job_waits_per_burst_for_its_co_runners_long_kernels() {
        let p = TimesliceParams {
            wait: 1.0,
            ..no_costs()
        };
        // A light job (busy 0.2, 1,000 bursts/s) beside one busy 0.5 of the time with kernels
        // whose mean residual is 1 ms. Both fit (0.7 of the GPU): shares alone give 1 and 1.
        // Each burst of the light one waits 1.0 * 0.5 * 1 ms = 0.5 ms, so a second of its alone
        // work takes 1 + 1,000 * 0.5e-3 = 1.5 s: 2/3 of alone. Its bursts are the other's only
        // wait, but its kernels have no residual: the other keeps 1.
        let light = job(0.2, 1_000);
        let long = AloneTimeline {
            residual_kernel_s: 1e-3,
            ..job(0.5, 10)
        };
        let f = timeslice_shares(&[&light, &long], p);
        assert!((f[0] - 2.0 / 3.0).abs() < 1e-9 && f[1] == 1.0, "{f:?}");
        // Without the wait both keep their speed; beside short kernels (10 us) it barely waits:
        // 1 / (1 + 1,000 * 0.5 * 1e-5) = 0.995.
        let f = timeslice_shares(&[&light, &long], TimesliceParams { wait: 0.0, ..p });
        assert_eq!(f, vec![1.0, 1.0]);
        let short = AloneTimeline {
            residual_kernel_s: 1e-5,
            ..job(0.5, 10)
        };
        let f = timeslice_shares(&[&light, &short], p);
        assert!((f[0] - 1.0 / 1.005).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn issue_32_a_job_waits_for_its_co_runners_kernels_not_its_own() {
        // Two copies busy 0.25 of the time (they fit), 100 bursts/s alone, kernels of mean
        // residual 1 ms, wait factor 1. Each waits only for the other's kernels: f x 0.25 x 1 ms
        // a burst at the other's speed f, so f = 1 / (1 + 100 x 0.25e-3 f), i.e.
        // 0.025 f^2 + f - 1 = 0: f = (sqrt(1.1) - 1) / 0.05 = 0.976177 (by hand).
        let copy = AloneTimeline {
            residual_kernel_s: 1e-3,
            ..job(0.25, 100)
        };
        let p = TimesliceParams {
            wait: 1.0,
            ..no_costs()
        };
        let f = timeslice_shares(&[&copy, &copy], p);
        assert!(f.iter().all(|x| (x - 0.976177).abs() < 1e-6), "{f:?}");
        // Alone it waits for nobody.
        assert_eq!(timeslice_shares(&[&copy], p), vec![1.0]);
    }

    #[test]
    fn issue_32_the_kernel_gap_counts_only_once_the_gpu_is_saturated() {
        // Three copies busy 0.3 of a 1 s cycle with 100,000 kernels each: alone they fit (0.9
        // of the GPU) and keep their speed. With a 1 us gap after every kernel each asks 0.3 +
        // 0.1 = 0.4; 1.2 does not fit, so each gets a third of the GPU: (1/3) / 0.4 = 0.8333.
        let copy = AloneTimeline {
            end_s: vec![0.0; 100_000],
            ..job(0.3, 0)
        };
        let p = no_costs();
        assert_eq!(timeslice_shares(&[&copy, &copy, &copy], p), vec![1.0; 3]);
        let gap = TimesliceParams {
            kernel_gap_s: 1e-6,
            ..p
        };
        let f = timeslice_shares(&[&copy, &copy, &copy], gap);
        assert!(f.iter().all(|x| (x - 1.0 / 1.2).abs() < 1e-12), "{f:?}");
        // Two of them fit even with the gap (0.8): no change.
        assert_eq!(timeslice_shares(&[&copy, &copy], gap), vec![1.0; 2]);
        // A GPU-bound job asks for the whole GPU either way: beside one copy it gets 1 - 0.4.
        let f = timeslice_shares(&[&job(1.0, 0), &copy], gap);
        assert!((f[0] - 0.6).abs() < 1e-12 && f[1] == 1.0, "{f:?}");
    }

    #[test]
    fn gpu_bound_jobs_split_the_gpu_and_a_light_one_keeps_its_speed() {
        let free = no_costs();
        let (a, b, c) = (job(1.0, 0), job(1.0, 0), job(0.2, 0));
        let f = timeslice_shares(&[&a, &b], free);
        assert!((f[0] - 0.5).abs() < 1e-12 && (f[1] - 0.5).abs() < 1e-12);
        let f = timeslice_shares(&[&a, &c], free);
        assert!(
            (f[0] - 0.8).abs() < 1e-12 && (f[1] - 1.0).abs() < 1e-12,
            "{f:?}"
        );
    }

    #[test]
    fn issue_37_the_overhead_takes_its_share_of_the_gpu_only_from_a_shared_one() {
        let p = TimesliceParams {
            overhead: 0.1,
            ..no_costs()
        };
        let (a, b, c) = (job(1.0, 0), job(1.0, 0), job(0.2, 0));
        // Two GPU-bound jobs split the 0.9 left: 0.45 each.
        let f = timeslice_shares(&[&a, &b], p);
        assert!(
            (f[0] - 0.45).abs() < 1e-12 && (f[1] - 0.45).abs() < 1e-12,
            "{f:?}"
        );
        // A light one (0.2) keeps its speed; the GPU-bound one gets 0.9 - 0.2 = 0.7.
        let f = timeslice_shares(&[&a, &c], p);
        assert!((f[0] - 0.7).abs() < 1e-12 && f[1] == 1.0, "{f:?}");
        // Alone there is no switching.
        assert_eq!(timeslice_shares(&[&a], p), vec![1.0]);
        // Three: 0.3 each.
        let f = timeslice_shares(&[&a, &b, &job(1.0, 0)], p);
        assert!(f.iter().all(|x| (x - 0.3).abs() < 1e-12), "{f:?}");
    }

    #[test]
    fn bursts_cost_gpu_time() {
        let p = TimesliceParams {
            switch_s: 1e-6,
            ..no_costs()
        };
        let (a, c) = (job(1.0, 0), job(0.2, 50_000));
        let f = timeslice_shares(&[&a, &c], p);
        // 50k bursts/s at full speed cost 5% of the GPU: 0.75 left for the GPU-bound job.
        assert!((f[0] - 0.75).abs() < 1e-9 && f[1] == 1.0, "{f:?}");
    }

    #[test]
    fn issue_37_bursts_cost_in_proportion_to_the_speed_they_happen_at() {
        // A GPU-bound job beside one busy 0.6 of the time with 50k bursts/s alone; 1 us a
        // burst. Both are slowed, so the bursts happen at the light job's speed f_c, and the
        // capacity 1 - 0.05 f_c depends on the answer: a fixed point. Worked by hand: both
        // demands exceed the level, 2 l = cap, f_c = l / 0.6, so cap = 1 - 0.05 cap / 1.2,
        // cap = 0.96, l = 0.48: f_a = 0.48, f_c = 0.8.
        let p = TimesliceParams {
            switch_s: 1e-6,
            ..no_costs()
        };
        let (a, c) = (job(1.0, 0), job(0.6, 50_000));
        let f = timeslice_shares(&[&a, &c], p);
        assert!((f[0] - 0.48).abs() < 1e-9, "{f:?}");
        assert!((f[1] - 0.8).abs() < 1e-9, "{f:?}");
    }
}
