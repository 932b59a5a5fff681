//! Fluid replay of co-located jobs' alone kernel traces (see the perf README, "The kernel model").
//!
//! Each job issues its kernels in trace order on one stream: kernel k is ready once the previous
//! one has ended and the job's host has launched it (host time between launches as traced, times
//! the trace's host scale). The SMs of the partition go to ready kernels in the order they became
//! ready; each takes at most the share of SMs its grid fills (and at most its job's SM budget).
//! A kernel given less than it fills runs slower; kernels of other jobs running beside it slow it
//! by the overlap factor. A job's speed is how far it gets through its own alone timeline per
//! second of replay.
use super::table::KernelTrace;

/// Largest set the replay takes (MPS allows 48 clients; colo's sets stay far below).
pub const MAX_JOBS: usize = 48;

/// The GPU-wide numbers of one replay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayParams {
    /// SMs of the whole GPU.
    pub sm_count: u32,
    /// Fraction of the GPU's SMs the partition holds (1 for a whole GPU).
    pub capacity: f64,
    /// Slowdown per unit of co-runners' SM share while kernels of several jobs overlap.
    pub overlap: f64,
    /// How a kernel's time grows with its waves on fewer SMs: 1 = in proportion to its waves,
    /// 0 = not at all (memory-bound).
    pub wave_exponent: f64,
    /// Extra host time per kernel launch while two or more jobs share, seconds.
    pub launch_cost_s: f64,
    /// Where a bandwidth-bound kernel's memory system saturates: the SMs it fills alone over
    /// the SMs that already draw all the bandwidth it uses (0: never saturated, its time grows
    /// in proportion to its SMs; see the perf README, "SM budgets").
    pub memory_knee: f64,
    /// How the knee moves with the kernel's waves alone: `memory_knee / waves^this` (kernels of
    /// many waves stream longer and need more SMs to saturate).
    pub memory_knee_waves: f64,
    /// Host time of an MPS client relative to a plain process (MPS changes launch cost).
    pub host_factor: f64,
    /// Slowdown of a compute-bound kernel per unit of co-runners' bandwidth draw (their
    /// traffic through L2 and HBM slows its loads too; 0: compute kernels never slow).
    pub compute_overlap: f64,
    /// DRAM bandwidth the running kernels of the whole GPU share, bytes/s: the fitted
    /// efficiency times the datasheet peak (0: no bandwidth stage). Only kernels with measured
    /// bytes (`KernelTrace::dram_bytes`) draw on it (see `bandwidth_shares`).
    pub dram_bytes_per_s: f64,
    /// Share of that bandwidth the partition has: 1 for a whole GPU (MPS clients, SM budgets and
    /// emulated MIG slices all share one memory system), a MIG slice's memory slices over the
    /// GPU's (from the catalog: never measured here).
    pub dram_share: f64,
}

/// One job in a replay.
#[derive(Clone, Copy, Debug)]
pub struct ReplayJob<'a> {
    /// Its alone trace.
    pub trace: &'a KernelTrace,
    /// Its host scale (see [`host_scale`]).
    pub host_scale: f64,
    /// Its kernel-time scale (1 unless the profiled kernels alone were slower than unprofiled).
    pub dur_scale: f64,
    /// Fraction of the GPU's SMs it may use (its budget, at most the partition).
    pub cap: f64,
    /// Its alone timeline on the whole GPU (positions that speeds are measured in).
    pub alone: &'a AloneTimeline,
}

/// A job's alone replay on the whole GPU, in steady state.
#[derive(Clone, Debug, PartialEq)]
pub struct AloneTimeline {
    /// End of kernel k measured from the end of the cycle's last kernel before it, seconds;
    /// increasing, the last entry equals `cycle_s`.
    pub end_s: Vec<f64>,
    /// One cycle (all traced iterations), seconds.
    pub cycle_s: f64,
    /// GPU busy time per cycle, seconds.
    pub busy_s: f64,
    /// Idle-to-busy transitions of the GPU per cycle.
    pub bursts: u32,
    /// Mean time left of the kernel running at a random instant of GPU busy time, seconds
    /// (sum of squared kernel times over twice their sum): how long a co-runner that wants
    /// the GPU waits, on average, for one of this job's kernels to end (time-slicing).
    pub residual_kernel_s: f64,
}

impl AloneTimeline {
    /// A timeline with no positions, for replaying a job alone to compute its own timeline
    /// (the alone replay never measures positions).
    pub fn placeholder() -> Self {
        Self {
            end_s: Vec::new(),
            cycle_s: 1.0,
            busy_s: 0.0,
            bursts: 0,
            residual_kernel_s: 0.0,
        }
    }

    /// Fraction of wall time the GPU runs this job's kernels alone.
    pub fn busy_fraction(&self) -> f64 {
        self.busy_s / self.cycle_s
    }

    /// Idle-to-busy transitions per second alone.
    pub fn bursts_per_s(&self) -> f64 {
        f64::from(self.bursts) / self.cycle_s
    }
}

/// Slowdown of kernel `k` of `job` (its time relative to alone on the whole GPU) when it holds
/// `share` of the GPU's SMs where alone it would fill `fill`.
/// `waves` is its waves alone on the whole GPU.
fn stretch(memory_bound: bool, share: f64, fill: f64, waves: f64, p: &ReplayParams) -> f64 {
    if share >= fill {
        return 1.0;
    }
    if memory_bound {
        // Bandwidth-bound kernels slow far less than their SMs shrink: traced at 14 of 132 SMs
        // (an MPS client at 12%), their time grew 1.2x (grids under a quarter wave) to 6.2x (16+
        // waves), time-weighted, against 9.4x for SM-proportional (perf README, "SM budgets").
        // A smooth roofline fits it: the kernel's bandwidth grows with its SMs up to a knee
        // and then saturates, time = sqrt(1 + (knee / SMs)^2) relative to its alone time.
        let knee = p.memory_knee / waves.max(1.0).powf(p.memory_knee_waves);
        let ratio = fill / share;
        ratio * ((1.0 + (knee / ratio).powi(2)) / (1.0 + knee * knee)).sqrt()
    } else {
        1.0 + p.wave_exponent * (fill / share - 1.0)
    }
}

/// Duration (s) and SM share (fraction of the whole GPU) of kernel `k` for a job capped at
/// `cap` of the SMs.
fn kernel_at(job: &ReplayJob<'_>, k: usize, p: &ReplayParams) -> (f64, f64) {
    let t = job.trace;
    let dur = f64::from(t.dur_ns[k]) * 1e-9 * job.dur_scale;
    let blocks = f64::from(t.blocks[k]);
    if blocks == 0.0 {
        // Copies and memsets: one SM's worth, never slowed by a budget.
        return (dur, 1.0 / f64::from(p.sm_count));
    }
    let sms = f64::from(p.sm_count);
    // A compute-bound block keeps its SM's pipes busy: it fills a whole SM whatever its
    // occupancy. A bandwidth-bound kernel fills SMs by resident blocks.
    let resident = if t.memory_bound[k] != 0 {
        f64::from(t.resident[k].max(1))
    } else {
        1.0
    };
    let waves_alone = blocks / (sms * resident);
    let fill = waves_alone.min(1.0);
    if job.cap >= 1.0 || fill <= job.cap {
        return (dur, fill);
    }
    // Fewer SMs than the grid fills: the kernel runs in more waves.
    // Caps are whole SMs (see `KernelModel::rates`); rounding undoes the division.
    let cap_sms = (job.cap * sms).round().max(1.0);
    let waves_cap = (blocks / (cap_sms * resident)).ceil();
    let effective_share = fill * waves_alone.ceil() / waves_cap;
    let memory_bound = t.memory_bound[k] != 0;
    (
        dur * stretch(memory_bound, effective_share, fill, waves_alone, p),
        job.cap,
    )
}

/// SM share (fraction of the whole GPU) kernel `k` holds on average in its last wave, and the
/// part of its time that wave takes, for a kernel of two or more waves on the SMs its job may
/// use (`None` for one wave); `demand` is its share before. The block scheduler dispatches a
/// later kernel's blocks only once every block of an earlier kernel is dispatched, so a
/// co-runner's kernel gets in during the last wave, on the SMs that wave leaves free.
fn last_wave(job: &ReplayJob<'_>, k: usize, demand: f64, p: &ReplayParams) -> Option<(f64, f64)> {
    let t = job.trace;
    let blocks = f64::from(t.blocks[k]);
    if blocks == 0.0 {
        return None;
    }
    let sms = (job.cap.min(1.0) * f64::from(p.sm_count)).round().max(1.0);
    let resident = f64::from(t.resident[k].max(1));
    let waves = (blocks / (sms * resident)).ceil();
    if waves < 2.0 {
        return None;
    }
    let rest = blocks - (waves - 1.0) * sms * resident;
    let used = if t.memory_bound[k] != 0 {
        rest / resident
    } else {
        rest.min(sms)
    };
    // The blocks of the wave before finish spread over the last wave, so the SMs it leaves
    // free come gradually: the fluid replay holds the mean of a linear drain.
    let last = used / f64::from(p.sm_count);
    Some((0.5 * (last + demand), 1.0 / waves))
}

/// Host time before launch `k`, seconds.
fn host_at(job: &ReplayJob<'_>, k: usize, factor: f64, extra_s: f64) -> f64 {
    f64::from(job.trace.host_ns[k]) * 1e-9 * job.host_scale * factor + extra_s
}

/// Replays one job alone for `cycles` cycles; returns each kernel's end time of the last cycle
/// relative to the end of the cycle before, the last cycle's length, busy time and bursts.
fn replay_alone(job: &ReplayJob<'_>, p: &ReplayParams, cycles: usize) -> AloneTimeline {
    let n = job.trace.len();
    let (mut host_t, mut prev_end) = (0.0_f64, 0.0_f64);
    let mut end_s = vec![0.0; n];
    let (mut busy, mut bursts, mut cycle_start) = (0.0, 0u32, 0.0);
    let mut busy_squared = 0.0;
    for c in 0..cycles {
        let last = c + 1 == cycles;
        if last {
            cycle_start = prev_end;
        }
        for (k, end) in end_s.iter_mut().enumerate() {
            host_t += host_at(job, k, p.host_factor, 0.0);
            let ready = host_t.max(prev_end);
            let (dur, _) = kernel_at(job, k, p);
            if last {
                busy += dur;
                busy_squared += dur * dur;
                if ready > prev_end + 1e-9 {
                    bursts += 1;
                }
                *end = ready + dur - cycle_start;
            }
            prev_end = ready + dur;
        }
    }
    let cycle_s = prev_end - cycle_start;
    AloneTimeline {
        end_s,
        cycle_s,
        busy_s: busy,
        bursts,
        residual_kernel_s: if busy > 0.0 {
            busy_squared / (2.0 * busy)
        } else {
            0.0
        },
    }
}

/// Steady-state alone timeline of `job` (three cycles, the last kept).
pub fn alone_timeline(job: &ReplayJob<'_>, p: &ReplayParams) -> AloneTimeline {
    replay_alone(job, p, 3)
}

/// Host and kernel scales that make the alone replay on the whole GPU reproduce the trace's
/// unprofiled speed: the host time is scaled (the profiler slows the host); when even no host
/// time is too slow, the kernels are scaled instead. Returns (host_scale, dur_scale).
pub fn host_scale(trace: &KernelTrace, sm_count: u32) -> (f64, f64) {
    let target = f64::from(trace.iterations) * f64::from(trace.samples_per_iteration)
        / trace.alone_samples_per_s();
    let cycle = |host_scale: f64| alone_cycle_s(trace, host_scale, 1.0, sm_count);
    let floor = cycle(0.0);
    if floor >= target {
        return (0.0, target / floor);
    }
    let mut hi = 1.0;
    while cycle(hi) < target && hi < 1e6 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if cycle(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi), 1.0)
}

impl ReplayParams {
    /// A whole GPU of `sm_count` SMs with no sharing parameter: kernels in proportion to their
    /// waves, nothing slowed by co-runners (what an alone replay needs).
    pub fn alone_only(sm_count: u32) -> Self {
        ReplayParams {
            sm_count,
            capacity: 1.0,
            overlap: 0.0,
            wave_exponent: 1.0,
            launch_cost_s: 0.0,
            memory_knee: 0.0,
            memory_knee_waves: 0.0,
            host_factor: 1.0,
            compute_overlap: 0.0,
            dram_bytes_per_s: 0.0,
            dram_share: 1.0,
        }
    }
}

/// Seconds one cycle of `trace` takes alone on the whole GPU of `sm_count` SMs, with its host
/// time scaled by `host_scale` and its kernels by `dur_scale`.
pub fn alone_cycle_s(trace: &KernelTrace, host_scale: f64, dur_scale: f64, sm_count: u32) -> f64 {
    let p = ReplayParams::alone_only(sm_count);
    let job = ReplayJob {
        trace,
        host_scale,
        dur_scale,
        cap: 1.0,
        alone: &AloneTimeline::placeholder(),
    };
    alone_timeline(&job, &p).cycle_s
}

/// Kernel k of one job as the replay needs it, computed once per replay (a job's kernels
/// start many times: every cycle it runs).
#[derive(Clone, Copy, Debug)]
struct Step {
    /// Duration at its full share, s.
    dur: f64,
    /// SM share it holds before its last wave.
    demand: f64,
    /// Work left when its last wave starts (negative: no last-wave share), and the share then.
    tail_left: f64,
    tail_demand: f64,
    /// Host time before its launch, s.
    host_s: f64,
    memory_bound: bool,
    /// Memory bandwidth it draws per unit of SM share, relative to alone on the whole GPU.
    draw: f64,
    /// DRAM bandwidth it draws at full speed, as a fraction of the partition's (0: unmeasured
    /// or no bandwidth stage).
    dram: f64,
}

/// DRAM bandwidth kernel `k` of `job` draws over `dur` seconds, as a fraction of the partition's.
/// Measured bytes over a profiler's kernel time can exceed what the GPU delivers (Nsight Compute
/// counts bytes with a cold L2): a kernel never draws more than the whole GPU's bandwidth, so a
/// job alone on a whole GPU is never throttled by the stage.
fn dram_demand(job: &ReplayJob<'_>, k: usize, dur: f64, p: &ReplayParams) -> f64 {
    let Some(&bytes) = job.trace.dram_bytes.get(k) else {
        return 0.0;
    };
    if p.dram_bytes_per_s <= 0.0 || dur <= 0.0 || p.dram_share <= 0.0 {
        return 0.0;
    }
    (f64::from(bytes) / dur / p.dram_bytes_per_s).min(1.0) / p.dram_share
}

/// Max-min fair shares of the partition's DRAM bandwidth (1) among kernels drawing `demand`
/// (fractions of it, at their speeds before this stage): when they ask for more than there is,
/// every kernel gets the same level L, or its demand if less, with the shares summing to 1.
/// Returns each kernel's speed factor, min(1, L / demand); all 1 while the demand fits.
fn bandwidth_shares(demand: &[f64], factor: &mut [f64]) {
    let level = super::timeslice::water_level(demand, 1.0);
    for (f, &d) in factor.iter_mut().zip(demand) {
        *f = (level / d).min(1.0);
    }
}

/// Every kernel of `job` as a [`Step`], with `launch_extra_s` added to each launch's host time.
fn steps(job: &ReplayJob<'_>, p: &ReplayParams, launch_extra_s: f64) -> Vec<Step> {
    (0..job.trace.len())
        .map(|k| {
            let (dur, demand) = kernel_at(job, k, p);
            // A bandwidth-bound kernel under a budget keeps more bandwidth per SM than alone
            // (it slows less than its SMs shrink), so it presses harder on co-runners in other
            // slices: overlap counts its bandwidth, not its SMs. This took emulated-MIG layouts
            // from 11.1% to 7.7% (fitted; zoo layouts 9.6% -> 9.8%, MPS zoo 7.1% -> 7.2%).
            // Only a bandwidth-bound kernel under a budget draws other than 1 (and only
            // bandwidth-bound draws are read), so only it pays for a second, uncapped lookup.
            let memory_bound = job.trace.memory_bound[k] != 0;
            let draw = if memory_bound && job.cap < 1.0 && dur > 0.0 && demand > 0.0 {
                let (full_dur, fill) = kernel_at(&ReplayJob { cap: 1.0, ..*job }, k, p);
                fill * full_dur / dur / demand
            } else {
                1.0
            };
            let (tail_left, tail_demand) = match last_wave(job, k, demand, p) {
                Some((share, part)) if share < demand => (dur * part, share),
                _ => (-1.0, demand),
            };
            Step {
                dur,
                demand,
                tail_left,
                tail_demand,
                host_s: host_at(job, k, p.host_factor, launch_extra_s),
                memory_bound,
                draw,
                dram: dram_demand(job, k, dur, p),
            }
        })
        .collect()
}

/// Where one job stands in a replay.
#[derive(Clone, Copy, Debug, Default)]
struct JobState {
    k: usize,
    cycles: u64,
    host_t: f64,
    ready_t: f64,
    left: f64,
    full: f64,
    demand: f64,
    memory_bound: bool,
    draw: f64,
    dram: f64,
    /// Time, kernel and cycle of the job's first kernel end after the warm-up; and the time of
    /// the last end of that same kernel since, with the whole cycles between.
    first_end: Option<(f64, usize, u64)>,
    last_end: (f64, u64),
    /// Work left (in `left`'s units) when the last wave starts, and the share it holds then.
    tail_left: f64,
    tail_demand: f64,
    speed: f64,
}

impl JobState {
    /// Starts kernel `k`.
    fn start(&mut self, step: &Step, k: usize) {
        self.k = k;
        (self.left, self.full, self.demand) = (step.dur, step.dur, step.demand);
        (self.tail_left, self.tail_demand) = (step.tail_left, step.tail_demand);
        self.memory_bound = step.memory_bound;
        self.draw = step.draw;
        self.dram = step.dram;
    }

    /// Work left before its next event: its last wave's start, else its end.
    fn work_to_event(&self) -> f64 {
        if self.left > self.tail_left && self.tail_left >= 0.0 {
            self.left - self.tail_left
        } else {
            self.left
        }
    }

    /// SM share the kernel holds now.
    fn holds(&self) -> f64 {
        if self.left <= self.tail_left {
            self.tail_demand
        } else {
            self.demand
        }
    }
}

impl JobState {
    /// Alone-timeline position reached (cycles and the current kernel's finished part).
    fn position(&self, alone: &AloneTimeline) -> f64 {
        let before = if self.k == 0 {
            0.0
        } else {
            alone.end_s[self.k - 1]
        };
        let span = alone.end_s[self.k] - before;
        let done = if self.full > 0.0 {
            (1.0 - self.left / self.full).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.cycles as f64 * alone.cycle_s + before + span * done
    }
}

/// How long a replay runs: a warm-up, then a measured window that grows until every job has
/// one whole cycle of its own timed, in multiples of the longest alone cycle among the jobs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Horizon {
    /// Warm-up, cycles of the longest job.
    pub warmup_cycles: f64,
    /// Measured window, cycles of the longest job.
    pub window_cycles: f64,
    /// Longest the window may grow, cycles of the longest job, so that every job has one whole
    /// cycle of its own timed.
    pub max_cycles: f64,
}

/// Half a cycle of the longest job to warm up, then at least half a cycle, then on until every
/// job has one whole cycle of its own timed (at most 8 cycles of the longest). Chosen with
/// `colo bench --case kernel`, which compares it with a window four times as long: on its 24
/// sets of 7 traced jobs under MPS, position-timed windows of 2 cycles were off by 3.1% on
/// average (up to 31% for jobs slowed to a twentieth), whole-cycle timing by 0.8%; the minimum
/// window barely matters once every job is timed over whole cycles.
impl Default for Horizon {
    fn default() -> Self {
        Self {
            warmup_cycles: 0.5,
            window_cycles: 0.5,
            max_cycles: 8.0,
        }
    }
}

/// The kernel job `j` starts the replay at. Copies of one job (the same trace and budget) start
/// spread over their cycle, copy c of m at c/m of it: started together they would run in
/// lockstep for ever, their bandwidth-heavy phases always coinciding, which real processes,
/// started apart and drifting, do not. Other jobs start at their first kernel.
fn start_kernel(jobs: &[ReplayJob<'_>], j: usize) -> usize {
    let same = |i: usize| std::ptr::eq(jobs[i].trace, jobs[j].trace) && jobs[i].cap == jobs[j].cap;
    let copies = (0..jobs.len()).filter(|&i| same(i)).count();
    let copy = (0..j).filter(|&i| same(i)).count();
    let alone = jobs[j].alone;
    if copy == 0 || alone.end_s.len() != jobs[j].trace.len() {
        return 0;
    }
    let at = alone.cycle_s * copy as f64 / copies as f64;
    alone
        .end_s
        .iter()
        .take_while(|&&end| end <= at)
        .count()
        .min(alone.end_s.len() - 1)
}

/// Jobs in the order they became ready, ties to the lower index.
fn ready_order(states: &[JobState], a: usize, b: usize) -> std::cmp::Ordering {
    states[a]
        .ready_t
        .total_cmp(&states[b].ready_t)
        .then(a.cmp(&b))
}

/// Speed of each job as a fraction of its speed alone on the whole GPU. Deterministic: ties in
/// readiness go to the lower index.
pub fn replay(jobs: &[ReplayJob<'_>], p: &ReplayParams, horizon: Horizon) -> Vec<f64> {
    let n = jobs.len();
    assert!(n <= MAX_JOBS, "replay takes at most {MAX_JOBS} jobs");
    let longest = jobs.iter().map(|j| j.alone.cycle_s).fold(0.0, f64::max);
    let warm_t = horizon.warmup_cycles * longest;
    let end_t = warm_t + horizon.window_cycles * longest;
    // A job is timed over whole cycles of its own (from its first kernel end after the
    // warm-up to the last end of that same kernel): its kernels compete differently in each
    // phase of its iteration, so a partial cycle biases a slowed job's speed. The replay runs on past the window until
    // every job has one whole cycle timed, up to `cap_t`; a job that still has none is timed
    // by its position at the end.
    let cap_t = warm_t + horizon.window_cycles.max(horizon.max_cycles) * longest;
    let launch_extra = if n > 1 { p.launch_cost_s } else { 0.0 };
    let steps: Vec<Vec<Step>> = jobs.iter().map(|j| steps(j, p, launch_extra)).collect();
    let any_dram = steps.iter().flatten().any(|s| s.dram > 0.0);
    let mut states = vec![JobState::default(); n];
    for (j, (s, steps)) in states.iter_mut().zip(&steps).enumerate() {
        let k0 = start_kernel(jobs, j);
        s.host_t = steps[k0].host_s;
        s.ready_t = s.host_t;
        s.start(&steps[k0], k0);
    }
    let mut at_warm: Option<Vec<f64>> = (warm_t <= 0.0).then(|| vec![0.0; n]);
    // Every job by (readiness, index); the ready ones are a prefix. A job re-enters it only
    // when its kernel ends, so the order is kept by moving that job alone.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| ready_order(&states, a, b));
    let mut now = 0.0_f64;
    let mut timed_left = n;
    let mut ended: Vec<usize> = Vec::with_capacity(n);
    while now < cap_t && (now < end_t || timed_left > 0) {
        // SMs go down the ready prefix until none are left; the jobs after that get none, so
        // the passes below skip them (in a saturated set most ready jobs wait).
        let mut left = p.capacity;
        let mut total = 0.0;
        let mut served = 0;
        for &j in &order {
            let s = &mut states[j];
            if s.ready_t > now || left <= 0.0 {
                break;
            }
            served += 1;
            let a = s.holds().min(left).max(0.0);
            left -= a;
            if s.memory_bound {
                total += a * s.draw;
            }
            s.speed = a;
        }
        // Sets are small: a linear scan for the ready prefix beats a binary search here.
        let ready = served
            + order[served..]
                .iter()
                .take_while(|&&j| states[j].ready_t <= now)
                .count();
        // The next event outside the kernels (warm-up end, a launch, the cap): the replay steps
        // onto it exactly, so that rounding never leaves a launch a hair in the future.
        let mut boundary = cap_t;
        if now < warm_t {
            boundary = boundary.min(warm_t);
        }
        if let Some(&next) = order.get(ready) {
            boundary = boundary.min(states[next].ready_t);
        }
        let mut dt = boundary - now;
        for &j in &order[..served] {
            let s = &mut states[j];
            let a = s.speed;
            if a <= 0.0 {
                continue;
            }
            // Its last wave starts before it ends, if it has one still ahead.
            let to_event = s.work_to_event();
            let holds = s.holds();
            // A compute kernel slows when squeezed, or when co-runners' bandwidth draw presses
            // on it (its `stretch` is then 1).
            if s.memory_bound || a < holds || (p.compute_overlap > 0.0 && total > 0.0) {
                // Squeezed by co-runners, a bandwidth-bound kernel slows in proportion: they
                // hold the memory system too, unlike under a budget (`stretch`). On the H200
                // data this took MPS sets of 3+ from 6.9% to 6.5% and zoo co-runs from 7.6% to
                // 7.1% (fitted), emulated-MIG layouts from 9.5% to 11.1%.
                let slow = if s.memory_bound {
                    (holds / a).max(1.0)
                } else {
                    stretch(false, a, holds, 1.0, p)
                };
                let contention = if s.memory_bound {
                    p.overlap * (total - a * s.draw)
                } else {
                    p.compute_overlap * total
                };
                // Time to the event from the slowdown, not from the speed: one division fewer
                // on the path to the step.
                let slowdown = slow * (1.0 + contention);
                s.speed = 1.0 / slowdown;
                let t = to_event * slowdown;
                if t < dt {
                    dt = t;
                }
            } else {
                // A compute kernel given all it holds runs at full speed: no divisions needed.
                s.speed = 1.0;
                if to_event < dt {
                    dt = to_event;
                }
            }
        }
        if any_dram && (served > 1 || p.dram_share < 1.0) {
            // The bandwidth stage: kernels with measured bytes that ask more of the memory
            // system than it delivers get max-min fair shares of it, whatever SMs they hold.
            let mut demand = [0.0_f64; MAX_JOBS];
            let mut factor = [1.0_f64; MAX_JOBS];
            for (d, &j) in demand.iter_mut().zip(&order[..served]) {
                *d = states[j].dram * states[j].speed.max(0.0);
            }
            bandwidth_shares(&demand[..served], &mut factor[..served]);
            if factor[..served].iter().any(|&f| f < 1.0) {
                dt = boundary - now;
                for (&f, &j) in factor.iter().zip(&order[..served]) {
                    let s = &mut states[j];
                    s.speed *= f;
                    if s.speed > 0.0 {
                        dt = dt.min(s.work_to_event() / s.speed);
                    }
                }
            }
        }
        if dt >= boundary - now {
            (dt, now) = (boundary - now, boundary);
        } else {
            now += dt;
        }
        ended.clear();
        for &j in &order[..served] {
            let s = &mut states[j];
            if s.speed <= 0.0 {
                continue;
            }
            s.left -= s.speed * dt;
            let tolerance = 1e-12 * s.full.max(1e-9);
            if s.left > tolerance {
                // A last wave reached up to rounding starts now, not in a step of 1e-16 s.
                if s.left > s.tail_left && s.left <= s.tail_left + tolerance {
                    s.left = s.tail_left;
                }
                continue;
            }
            // The kernel ends: the next one is ready once the host has launched it.
            if now >= warm_t {
                match s.first_end {
                    None => s.first_end = Some((now, s.k, s.cycles)),
                    Some((_, k0, c0)) if k0 == s.k => {
                        if s.cycles == c0 + 1 {
                            timed_left -= 1;
                        }
                        s.last_end = (now, s.cycles - c0);
                    }
                    Some(_) => {}
                }
            }
            let job_steps = &steps[j];
            let mut k = s.k + 1;
            if k == job_steps.len() {
                k = 0;
                s.cycles += 1;
            }
            s.host_t += job_steps[k].host_s;
            s.ready_t = s.host_t.max(now);
            s.start(&job_steps[k], k);
            ended.push(j);
        }
        if !ended.is_empty() {
            // Out first (their positions are stale), then each in at its place.
            for &j in &ended {
                if let Some(at) = order.iter().position(|&o| o == j) {
                    order.remove(at);
                }
            }
            for &j in &ended {
                let to = order
                    .iter()
                    .position(|&o| !ready_order(&states, o, j).is_lt())
                    .unwrap_or(order.len());
                order.insert(to, j);
            }
        }
        if at_warm.is_none() && now >= warm_t {
            at_warm = Some(
                states
                    .iter()
                    .zip(jobs)
                    .map(|(s, j)| s.position(j.alone))
                    .collect(),
            );
        }
    }
    let start = at_warm.unwrap_or_else(|| vec![0.0; n]);
    states
        .iter()
        .zip(jobs)
        .zip(start)
        .map(|((s, j), p0)| match (s.first_end, s.last_end) {
            (Some((t0, _, _)), (t1, cycles)) if cycles > 0 => {
                cycles as f64 * j.alone.cycle_s / (t1 - t0)
            }
            _ => (s.position(j.alone) - p0) / (now - warm_t),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(dur_ns: Vec<u32>, host_ns: Vec<u32>, blocks: Vec<u32>) -> KernelTrace {
        let n = dur_ns.len();
        KernelTrace {
            point: "toy:1:1".into(),
            iterations: 1,
            samples_per_iteration: 1,
            unprofiled_samples_per_s: 1.0,
            anchor_samples_per_s: None,
            profiled_samples_per_s: 1.0,
            peak_reserved_mib: 0.0,
            host_scale: 1.0,
            dur_scale: 1.0,
            dur_ns,
            host_ns,
            blocks,
            resident: vec![1; n],
            memory_bound: vec![0; n],
            dram_bytes: Vec::new(),
        }
    }

    fn params() -> ReplayParams {
        ReplayParams::alone_only(100)
    }

    fn job<'a>(t: &'a KernelTrace, alone: &'a AloneTimeline, cap: f64) -> ReplayJob<'a> {
        ReplayJob {
            trace: t,
            host_scale: 1.0,
            dur_scale: 1.0,
            cap,
            alone,
        }
    }

    fn timeline(t: &KernelTrace) -> AloneTimeline {
        let empty = AloneTimeline::placeholder();
        alone_timeline(&job(t, &empty, 1.0), &params())
    }

    #[test]
    fn a_job_alone_runs_at_its_alone_speed() {
        let t = trace(
            vec![1000, 3000, 500],
            vec![200, 100, 4000],
            vec![100, 50, 400],
        );
        let alone = timeline(&t);
        // Host 4.3 us per cycle, GPU 4.5 us: the host runs ahead except where it waits.
        assert!(
            alone.cycle_s > 4.4e-6 && alone.cycle_s < 8.7e-6,
            "{}",
            alone.cycle_s
        );
        // A 3-kernel cycle: a window of many cycles keeps the partial-kernel truncation small.
        let long = Horizon {
            warmup_cycles: 0.5,
            window_cycles: 50.0,
            max_cycles: 50.0,
        };
        let f = replay(&[job(&t, &alone, 1.0)], &params(), long);
        assert!((f[0] - 1.0).abs() < 1e-3, "{f:?}");
    }

    #[test]
    fn two_full_gpu_jobs_split_the_gpu() {
        let t = trace(vec![1000; 4], vec![0; 4], vec![1000; 4]);
        let alone = timeline(&t);
        let j = job(&t, &alone, 1.0);
        let f = replay(&[j, j], &params(), Horizon::default());
        assert!(
            (f[0] - 0.5).abs() < 0.02 && (f[1] - 0.5).abs() < 0.02,
            "{f:?}"
        );
    }

    #[test]
    fn issue_32_bandwidth_shares_are_max_min_fair_worked_by_hand() {
        let mut f = [0.0; 3];
        // 0.3 + 0.4 fits: nobody slows.
        bandwidth_shares(&[0.3, 0.4], &mut f[..2]);
        assert_eq!(f[..2], [1.0, 1.0]);
        // Two kernels asking 0.8 each share it half and half: 0.5 / 0.8 = 0.625 of their speed.
        bandwidth_shares(&[0.8, 0.8], &mut f[..2]);
        assert_eq!(f[..2], [0.625, 0.625]);
        // A small one keeps its 0.1; the big one gets the 0.9 left.
        bandwidth_shares(&[1.0, 0.1], &mut f[..2]);
        assert!((f[0] - 0.9).abs() < 1e-12 && f[1] == 1.0, "{f:?}");
        // Three: 0.2 kept, then 0.8 / 2 = 0.4 each for the two asking 0.6 and 0.9.
        bandwidth_shares(&[0.6, 0.2, 0.9], &mut f);
        let want = [0.4 / 0.6, 1.0, 0.4 / 0.9];
        for (got, want) in f.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{f:?}");
        }
    }

    #[test]
    fn copies_of_one_job_start_spread_over_their_cycle() {
        // Four kernels of 1 us back to back: the alone cycle ends them at 1, 2, 3 and 4 us.
        let t = trace(vec![1000; 4], vec![0; 4], vec![30; 4]);
        let other = trace(vec![1000; 4], vec![0; 4], vec![30; 4]);
        let alone = timeline(&t);
        let other_alone = timeline(&other);
        let (a, b) = (job(&t, &alone, 1.0), job(&other, &other_alone, 1.0));
        // Two copies of `a`: the second starts half a cycle in, after the kernels ending by
        // 2 us, at kernel 2. Another trace, or the same one under another budget, starts at 0.
        let jobs = [a, b, a];
        let starts: Vec<usize> = (0..3).map(|j| start_kernel(&jobs, j)).collect();
        assert_eq!(starts, [0, 0, 2]);
        let budgeted = [a, job(&t, &alone, 0.5)];
        assert_eq!(start_kernel(&budgeted, 1), 0);
        // Four copies: at 0, 1, 2 and 3 us, kernels 0, 1, 2 and 3.
        let four = [a; 4];
        let starts: Vec<usize> = (0..4).map(|j| start_kernel(&four, j)).collect();
        assert_eq!(starts, [0, 1, 2, 3]);
    }

    /// One kernel of 1 us filling 30 of 100 SMs (two fit side by side), moving `bytes` per launch.
    fn streaming(bytes: f32) -> KernelTrace {
        let mut t = trace(vec![1000], vec![0], vec![30]);
        t.dram_bytes = vec![bytes];
        t
    }

    #[test]
    fn issue_32_two_streaming_jobs_share_the_bandwidth_and_a_lone_one_keeps_its_speed() {
        // Capacity 1e12 bytes/s: 8e5 bytes per 1 us kernel draws 0.8 of it. Side by side the two
        // ask 1.6; max-min fair shares give each 0.5, so each runs at 0.5 / 0.8 = 0.625 of alone.
        let t = streaming(8e5);
        let alone = timeline(&t);
        let j = job(&t, &alone, 1.0);
        let p = ReplayParams {
            dram_bytes_per_s: 1e12,
            ..params()
        };
        let f = replay(&[j, j], &p, Horizon::default());
        assert!(
            (f[0] - 0.625).abs() < 1e-6 && (f[1] - 0.625).abs() < 1e-6,
            "{f:?}"
        );
        // Without the stage they overlap without loss; alone, the stage never binds.
        let off = replay(&[j, j], &params(), Horizon::default());
        assert!((off[0] - 1.0).abs() < 1e-6, "{off:?}");
        let lone = replay(&[j], &p, Horizon::default());
        assert!((lone[0] - 1.0).abs() < 1e-6, "{lone:?}");
        // Bytes over the peak (cold-L2 counts) draw at most the whole GPU: alone still 1.
        let heavy = streaming(5e6);
        let heavy_alone = timeline(&heavy);
        let lone = replay(&[job(&heavy, &heavy_alone, 1.0)], &p, Horizon::default());
        assert!((lone[0] - 1.0).abs() < 1e-6, "{lone:?}");
        // A job with no measured bytes neither draws nor slows: beside a streaming one, both
        // keep their speed.
        let unmeasured = trace(vec![1000], vec![0], vec![30]);
        let f = replay(&[j, job(&unmeasured, &alone, 1.0)], &p, Horizon::default());
        assert!(
            (f[0] - 1.0).abs() < 1e-6 && (f[1] - 1.0).abs() < 1e-6,
            "{f:?}"
        );
    }

    #[test]
    fn issue_32_a_lone_job_in_a_mig_slice_gets_its_slices_bandwidth() {
        // A slice with half the memory slices: half the bandwidth. The kernel draws 0.8 of the
        // whole GPU's, 1.6 of the slice's: it runs at 1 / 1.6 = 0.625 of its speed.
        let t = streaming(8e5);
        let alone = timeline(&t);
        let p = ReplayParams {
            dram_bytes_per_s: 1e12,
            dram_share: 0.5,
            ..params()
        };
        let f = replay(&[job(&t, &alone, 1.0)], &p, Horizon::default());
        assert!((f[0] - 0.625).abs() < 1e-6, "{f:?}");
    }

    #[test]
    fn small_kernels_overlap_without_loss() {
        // Each kernel fills 30 of 100 SMs: two jobs fit side by side.
        let t = trace(vec![1000; 4], vec![0; 4], vec![30; 4]);
        let alone = timeline(&t);
        let j = job(&t, &alone, 1.0);
        let f = replay(&[j, j], &params(), Horizon::default());
        assert!(f.iter().all(|x| (x - 1.0).abs() < 1e-3), "{f:?}");
    }

    #[test]
    fn a_small_kernel_gets_in_during_a_co_runners_last_wave() {
        // Three waves of 100 blocks, the last half full: a 20-block kernel beside it runs on the
        // SMs that wave leaves, instead of waiting for the whole kernel to end.
        let big = trace(vec![3000; 4], vec![0; 4], vec![250; 4]);
        let small = trace(vec![100; 4], vec![0; 4], vec![20; 4]);
        let (big_alone, small_alone) = (timeline(&big), timeline(&small));
        let f = replay(
            &[job(&big, &big_alone, 1.0), job(&small, &small_alone, 1.0)],
            &params(),
            Horizon::default(),
        );
        // Waiting for kernel ends alone would give the small job about one kernel per big
        // kernel: 100 / 3000 of its alone speed.
        assert!(f[1] > 0.2, "{f:?}");
        assert!(f[0] > 0.9, "{f:?}");
    }

    #[test]
    fn a_budget_stretches_multi_wave_kernels() {
        let t = trace(vec![1000; 2], vec![0; 2], vec![400; 2]);
        let alone = timeline(&t);
        let f = replay(&[job(&t, &alone, 0.5)], &params(), Horizon::default());
        assert!((f[0] - 0.5).abs() < 0.01, "{f:?}");
    }

    #[test]
    fn a_bandwidth_knee_bends_the_budget_slowdown_below_proportional() {
        let p = |knee| ReplayParams {
            memory_knee: knee,
            ..params()
        };
        // Knee 0: in proportion to the SMs; a knee: less, never below 1 and never above the
        // SM ratio; more waves move the knee out only when `memory_knee_waves` says so.
        assert!((stretch(true, 0.25, 1.0, 4.0, &p(0.0)) - 4.0).abs() < 1e-12);
        let bent = stretch(true, 0.25, 1.0, 4.0, &p(2.0));
        assert!(bent > 1.0 && bent < 4.0, "{bent}");
        // sqrt((1 + (2 / 4)^2) / (1 + 2^2)) x 4 = 2.0
        assert!((bent - 2.0).abs() < 1e-12, "{bent}");
        assert!((stretch(true, 0.5, 0.25, 1.0, &p(2.0)) - 1.0).abs() < 1e-12);
        let waves = ReplayParams {
            memory_knee_waves: 0.5,
            ..p(2.0)
        };
        assert!(stretch(true, 0.25, 1.0, 4.0, &waves) > bent);
        // Compute-bound kernels ignore the knee.
        assert!((stretch(false, 0.25, 1.0, 4.0, &p(2.0)) - 4.0).abs() < 1e-12);
    }

    #[test]
    fn compute_kernels_slow_beside_bandwidth_bound_ones_only_with_compute_overlap() {
        // Two small kernels that fit side by side: a compute-bound one and a bandwidth-bound one.
        let compute = trace(vec![1000; 2], vec![0; 2], vec![40; 2]);
        let mut memory = trace(vec![1000; 2], vec![0; 2], vec![40; 2]);
        memory.memory_bound = vec![1; 2];
        let (ac, am) = (timeline(&compute), timeline(&memory));
        let jobs = [job(&compute, &ac, 1.0), job(&memory, &am, 1.0)];
        let none = replay(&jobs, &params(), Horizon::default());
        assert!(none[0] > 0.99, "{none:?}");
        let p = ReplayParams {
            compute_overlap: 0.5,
            ..params()
        };
        let some = replay(&jobs, &p, Horizon::default());
        // The bandwidth-bound co-runner draws 0.4 of the GPU: 1 + 0.5 x 0.4 = 1.2x slower.
        assert!((some[0] - 1.0 / 1.2).abs() < 0.02, "{some:?}");
        assert!(some[1] > 0.99, "{some:?}");
    }

    #[test]
    fn issue_37_two_bandwidth_bound_kernels_side_by_side_slow_each_other_by_the_overlap() {
        // Each kernel fills 40 of 100 SMs (bandwidth-bound, one resident block per SM): both
        // fit, so neither is squeezed; each draws 0.4 of the memory system, and with overlap
        // 0.5 each slows by 1 + 0.5 x 0.4 (its co-runner's draw, not its own) = 1.2x. No host
        // time: the kernels run back to back and always overlap.
        let mut t = trace(vec![1000; 2], vec![0; 2], vec![40; 2]);
        t.memory_bound = vec![1; 2];
        let alone = timeline(&t);
        let j = job(&t, &alone, 1.0);
        let p = ReplayParams {
            overlap: 0.5,
            ..params()
        };
        let f = replay(&[j, j], &p, Horizon::default());
        assert!(f.iter().all(|x| (x - 1.0 / 1.2).abs() < 1e-6), "{f:?}");
        // Alone, the same kernel has no co-runner to slow it.
        let lone = replay(&[j], &p, Horizon::default());
        assert!((lone[0] - 1.0).abs() < 1e-6, "{lone:?}");
        // Squeezed as well: 60 + 60 of 100 SMs. The first ready holds 0.6 at full speed but is
        // slowed by the other's draw (0.4 x 1 = 0.4): 1 + 0.5 x 0.4 = 1.2; the second gets 0.4
        // of the 0.6 it fills (1.5x) and is slowed by the first's draw (0.6): 1.5 x 1.3 = 1.95.
        // They alternate who is first, so neither runs at its alone speed.
        let mut wide = trace(vec![1000; 2], vec![0; 2], vec![60; 2]);
        wide.memory_bound = vec![1; 2];
        let wide_alone = timeline(&wide);
        let w = job(&wide, &wide_alone, 1.0);
        let f = replay(&[w, w], &p, Horizon::default());
        let free = replay(&[w, w], &params(), Horizon::default());
        assert!(f.iter().all(|x| *x < 0.9 * free[0]), "{f:?} vs {free:?}");
    }

    #[test]
    fn issue_37_a_bandwidth_bound_kernel_under_a_budget_draws_by_its_uncapped_time() {
        // A: bandwidth-bound kernels of 100 blocks (fill the 100 SMs), capped at 50 SMs: two
        // waves, but with a bandwidth knee of 2 its time grows only by
        // 2 x sqrt((1 + (2 / 2)^2) / (1 + 2^2)) = 2 sqrt(0.4) = 1.265x, so per unit of the 0.5
        // of the SMs it holds it draws 1 / (1.265 x 0.5) = 1.58 of its alone bandwidth.
        // B: bandwidth-bound kernels of 25 blocks under the same cap, which they never reach:
        // draw 1. Both always run (no host time). With overlap 0.5, B slows by
        // 1 + 0.5 x (0.5 x 1.58) = 1.395; A by 1 + 0.5 x 0.25 = 1.125 on top of its budget.
        let mut a = trace(vec![1000; 4], vec![0; 4], vec![100; 4]);
        a.memory_bound = vec![1; 4];
        let mut b = trace(vec![1000; 4], vec![0; 4], vec![25; 4]);
        b.memory_bound = vec![1; 4];
        let (a_alone, b_alone) = (timeline(&a), timeline(&b));
        let p = ReplayParams {
            overlap: 0.5,
            memory_knee: 2.0,
            ..params()
        };
        let f = replay(
            &[job(&a, &a_alone, 0.5), job(&b, &b_alone, 0.5)],
            &p,
            Horizon::default(),
        );
        let stretched = 2.0 * 0.4_f64.sqrt();
        let a_draw = 1.0 / (stretched * 0.5);
        let (a_expected, b_expected) = (
            1.0 / stretched / (1.0 + 0.5 * 0.25),
            1.0 / (1.0 + 0.5 * 0.5 * a_draw),
        );
        assert!((f[0] - a_expected).abs() < 1e-6, "{f:?} vs {a_expected}");
        assert!((f[1] - b_expected).abs() < 1e-6, "{f:?} vs {b_expected}");
    }

    #[test]
    fn issue_37_the_launch_cost_is_charged_only_while_two_or_more_jobs_share() {
        // Host-bound: 4 us of host per 1 us kernel of 20 of 100 SMs (two fit side by side).
        // A launch cost of 1 us makes each launch 5 us apart: 4 / 5 = 0.8 of alone speed,
        // for each of two jobs; a job alone pays nothing.
        let t = trace(vec![1000; 4], vec![4000; 4], vec![20; 4]);
        let alone = timeline(&t);
        let j = job(&t, &alone, 1.0);
        let p = ReplayParams {
            launch_cost_s: 1e-6,
            ..params()
        };
        let lone = replay(&[j], &p, Horizon::default());
        assert!((lone[0] - 1.0).abs() < 1e-9, "{lone:?}");
        let pair = replay(&[j, j], &p, Horizon::default());
        assert!(pair.iter().all(|x| (x - 0.8).abs() < 1e-9), "{pair:?}");
        // A lone job under a budget is still alone.
        let capped = replay(&[job(&t, &alone, 0.5)], &p, Horizon::default());
        assert!((capped[0] - 1.0).abs() < 1e-9, "{capped:?}");
    }

    /// The test trace (6 us a cycle as profiled) measured unprofiled at one cycle in
    /// `unprofiled_cycle_s`: its (host, duration) scales and the alone cycle they replay to.
    fn scaled_to(unprofiled_cycle_s: f64) -> (f64, f64, f64) {
        let mut t = trace(vec![1000, 1000], vec![3000, 3000], vec![100, 100]);
        t.unprofiled_samples_per_s = 1.0 / unprofiled_cycle_s;
        let (h, d) = host_scale(&t, 100);
        let empty = AloneTimeline::placeholder();
        let j = ReplayJob {
            host_scale: h,
            ..job(&t, &empty, 1.0)
        };
        (h, d, alone_timeline(&j, &params()).cycle_s)
    }

    #[test]
    fn host_scale_reproduces_the_unprofiled_speed() {
        // Profiled host: 6 us per cycle; unprofiled speed 1 / 4 us.
        let (h, d, cycle) = scaled_to(4e-6);
        assert_eq!(d, 1.0);
        assert!((cycle - 4e-6).abs() < 1e-12, "{cycle} (scale {h})");
    }

    #[test]
    fn issue_37_a_host_slower_than_the_profiled_one_scales_its_time_up() {
        // Unprofiled at 1 / 20 us: the host time must grow, past the first guess of twice it,
        // until the cycle is 20 us.
        let (h, d, cycle) = scaled_to(20e-6);
        assert!(h > 2.0 && d == 1.0, "{h} {d}");
        assert!((cycle - 20e-6).abs() < 1e-12, "{cycle} (scale {h})");
    }

    #[test]
    fn issue_37_a_job_with_no_whole_cycle_by_the_cap_is_timed_by_its_position() {
        // Kernel 0: 400 blocks (4 waves on 100 SMs, 8 on the 50 of a 0.5 budget: 1 -> 2 us);
        // kernel 1: 30 blocks, fits in 50 SMs (1 us either way). Alone the kernels end at 1 and
        // 2 us; under the budget at 2, 3, 5, 6 us: a whole cycle is 3 us, speed 2 / 3.
        let t = trace(vec![1000, 1000], vec![0, 0], vec![400, 30]);
        let alone = timeline(&t);
        assert!((alone.cycle_s - 2e-6).abs() < 1e-15, "{}", alone.cycle_s);
        let j = job(&t, &alone, 0.5);
        // Warm-up 1.25 cycles of 2 us = 2.5 us, half-way through kernel 1: position 1 + 0.5 x 1
        // = 1.5 us. The first kernel end after it is kernel 1's at 3 us, the next 6 us.
        let capped = Horizon {
            warmup_cycles: 1.25,
            window_cycles: 1.0,
            max_cycles: 1.0,
        };
        // Cap 2.5 + 1 x 2 = 4.5 us, before 6: timed by position. At 4.5 us the job is in its
        // second cycle, 1.5 of kernel 0's 2 us done: 2 + 0.75 x 1 = 2.75 us of the alone
        // timeline. Speed (2.75 - 1.5) / (4.5 - 2.5) = 0.625, not the whole cycle's 2 / 3.
        let f = replay(&[j], &params(), capped);
        assert!((f[0] - 0.625).abs() < 1e-9, "{f:?}");
        // A cap of 2 cycles (2.5 + 2 x 2 = 6.5 us) times the whole cycle ending at 6 us.
        let longer = Horizon {
            max_cycles: 2.0,
            ..capped
        };
        let f = replay(&[j], &params(), longer);
        assert!((f[0] - 2.0 / 3.0).abs() < 1e-9, "{f:?}");
    }
}
