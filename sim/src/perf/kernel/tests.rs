//! The kernel model on toy tables: alone is alone, GPU-bound jobs split the GPU, the memo
//! answers repeated sets, order does not matter, and the table reader never panics.
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::hardware;

fn toy_trace(point: &str, dur_ns: u32, blocks: u32, host_ns: u32) -> KernelTrace {
    let n = 8;
    let mut t = KernelTrace {
        point: point.into(),
        iterations: 1,
        samples_per_iteration: 1,
        unprofiled_samples_per_s: 1.0,
        anchor_samples_per_s: None,
        profiled_samples_per_s: 1.0,
        peak_reserved_mib: 1024.0,
        host_scale: 1.0,
        dur_scale: 1.0,
        dur_ns: vec![dur_ns; n],
        host_ns: vec![host_ns; n],
        blocks: vec![blocks; n],
        resident: vec![1; n],
        memory_bound: vec![0; n],
        dram_bytes: Vec::new(),
    };
    // Alone: the GPU part or the host part, whichever is longer, per kernel.
    let cycle_s = f64::from(dur_ns.max(host_ns)) * 1e-9 * n as f64;
    t.unprofiled_samples_per_s = 1.0 / cycle_s;
    t
}

fn tables() -> KernelTables {
    KernelTables {
        transferred_from: None,
        format: TABLES_FORMAT.into(),
        version: TABLES_VERSION,
        gpu: "h200".into(),
        sm_count: 132,
        source: "toy".into(),
        traces: vec![
            toy_trace("big:1:1", 100_000, 1_000, 0),
            toy_trace("small:1:1", 10_000, 20, 0),
            toy_trace("launchy:1:1", 5_000, 20, 40_000),
        ],
    }
}

fn model() -> KernelModel {
    KernelModel::with_tables(Arc::new(ProfileSet::default()), vec![tables()])
}

fn rates(m: &KernelModel, mode: ShareMode, keys: &[&str], budget: Option<f64>) -> Vec<f64> {
    let gpu = hardware::gpu("h200").unwrap();
    rates_in(m, mode, &Partition::whole(gpu), keys, budget)
}

/// One single-GPU tenant per class, each under `budget`.
fn one_gpu_tenants(classes: &[JobClass], budget: Option<f64>) -> Vec<Tenant<'_>> {
    classes
        .iter()
        .map(|c| Tenant {
            class: c,
            sm_budget: budget,
            gpus: 1,
        })
        .collect()
}

/// Each job's fraction of its alone speed sharing `partition` of the H200 in `mode`.
fn rates_in(
    m: &KernelModel,
    mode: ShareMode,
    partition: &Partition,
    keys: &[&str],
    budget: Option<f64>,
) -> Vec<f64> {
    let gpu = hardware::gpu("h200").unwrap();
    let classes: Vec<JobClass> = keys
        .iter()
        .map(|k| m.class(gpu, &k.parse().unwrap()).unwrap())
        .collect();
    let tenants = one_gpu_tenants(&classes, budget);
    let mut out = vec![0.0; tenants.len()];
    m.rates(
        &CoRun {
            gpu,
            mode,
            partition,
            tenants: &tenants,
        },
        &mut out,
    );
    out.iter()
        .zip(&classes)
        .map(|(r, c)| r / c.solo_rate)
        .collect()
}

#[test]
fn a_traced_point_without_a_profile_entry_is_known_from_its_trace() {
    let m = model();
    let gpu = hardware::gpu("h200").unwrap();
    let class = m.class(gpu, &"big:1:1".parse().unwrap()).unwrap();
    assert_eq!(class.origin, Origin::Measured);
    assert!((class.memory_gib - 1.0).abs() < 1e-12);
    assert!(m.class(gpu, &"unknown:1:1".parse().unwrap()).is_err());
}

#[test]
fn alone_is_alone_and_gpu_bound_jobs_split_the_gpu() {
    let m = model();
    assert_eq!(
        rates(&m, ShareMode::Exclusive, &["big:1:1"], None),
        vec![1.0]
    );
    let mps = rates(&m, ShareMode::Mps, &["big:1:1", "big:1:1"], None);
    // Each about half; together a little over 1, no more than the SMs each kernel's last wave
    // leaves idle (8 waves, the last 58% full), which the other's kernel fills.
    let sum: f64 = mps.iter().sum();
    assert!(mps.iter().all(|f| (f - 0.5).abs() < 0.03), "{mps:?}");
    assert!((1.0..=1.0 + 0.42 / 8.0).contains(&sum), "{mps:?}");
    let ts = rates(&m, ShareMode::Timeslice, &["big:1:1", "big:1:1"], None);
    assert!(ts.iter().all(|f| (f - 0.5).abs() < 1e-9), "{ts:?}");
}

#[test]
fn a_lone_job_on_a_whole_gpu_runs_at_its_alone_rate_in_every_mode() {
    // A host factor below 1 shortens MPS clients' host time in co-runs; alone it must not make
    // a job faster than alone (launchy is host-bound, so it would).
    let mut m = model();
    let gpu = hardware::gpu("h200").unwrap();
    m.set_globals(
        gpu,
        KernelGlobals {
            mps_host_factor: 0.5,
            ..KernelGlobals::ALONE_ONLY
        },
    );
    for mode in [ShareMode::Exclusive, ShareMode::Timeslice, ShareMode::Mps] {
        assert_eq!(rates(&m, mode, &["launchy:1:1"], None), vec![1.0], "{mode}");
    }
    // Beside another client the factor applies: launchy loses less than half.
    let pair = rates(&m, ShareMode::Mps, &["launchy:1:1", "launchy:1:1"], None);
    assert!(pair[0] > 0.5, "{pair:?}");
}

#[test]
fn issue_37_a_lone_client_under_a_budget_pays_no_launch_cost_and_never_beats_alone() {
    // launchy: 8 kernels of 5 us on 20 SMs, 40 us of host before each: host-bound, alone at
    // one kernel per 40 us. Under a 50% budget its kernels still fit (20 of 66 SMs).
    let gpu = hardware::gpu("h200").unwrap();
    let with = |globals: KernelGlobals| {
        let mut m = model();
        m.set_globals(gpu, globals);
        m
    };
    // A launch cost of 10 us is charged only beside another client: alone it is 1.0; two
    // launchy clients launch every 50 us, 40 / 50 = 0.8 of alone.
    let launch = with(KernelGlobals {
        mps_launch_s: 10e-6,
        ..KernelGlobals::ALONE_ONLY
    });
    let lone = rates(&launch, ShareMode::Mps, &["launchy:1:1"], Some(0.5));
    assert!((lone[0] - 1.0).abs() < 1e-9, "{lone:?}");
    let pair = rates(
        &launch,
        ShareMode::Mps,
        &["launchy:1:1", "launchy:1:1"],
        None,
    );
    assert!(pair.iter().all(|f| (f - 0.8).abs() < 1e-6), "{pair:?}");
    // A host factor of 0.5 would halve its host time (2x alone speed): answers cap at 1.0,
    // while the uncapped replay the fit uses shows the 2x.
    let fast = KernelGlobals {
        mps_host_factor: 0.5,
        ..KernelGlobals::ALONE_ONLY
    };
    let capped = rates(&with(fast), ShareMode::Mps, &["launchy:1:1"], Some(0.5));
    assert_eq!(capped, vec![1.0]);
    let mut raw = model().uncapped();
    raw.set_globals(gpu, fast);
    let uncapped = rates(&raw, ShareMode::Mps, &["launchy:1:1"], Some(0.5));
    assert!((uncapped[0] - 2.0).abs() < 1e-6, "{uncapped:?}");
    // A lone MPS client on the whole GPU: answers give it its alone speed, the raw replay
    // (`colo predict --model kernel-raw`) replays it with the host factor; a lone time-sliced
    // process has no MPS host factor in either.
    let whole = rates(&with(fast), ShareMode::Mps, &["launchy:1:1"], None);
    assert_eq!(whole, vec![1.0]);
    let whole_raw = rates(&raw, ShareMode::Mps, &["launchy:1:1"], None);
    assert!((whole_raw[0] - 2.0).abs() < 1e-6, "{whole_raw:?}");
    let sliced_raw = rates(&raw, ShareMode::Timeslice, &["launchy:1:1"], None);
    assert_eq!(sliced_raw, vec![1.0]);
    assert_eq!((raw.name(), model().name()), ("kernel-raw", "kernel"));
}

#[test]
fn a_small_kernel_job_keeps_most_of_its_speed_beside_a_light_one() {
    let m = model();
    let f = rates(&m, ShareMode::Mps, &["small:1:1", "launchy:1:1"], None);
    // 20 blocks each on 132 SMs: both fit side by side.
    assert!(f.iter().all(|x| *x > 0.95), "{f:?}");
}

#[test]
fn a_budget_slows_a_full_gpu_job_alone() {
    let m = model();
    let f = rates(&m, ShareMode::Mps, &["big:1:1"], Some(0.5));
    assert!((f[0] - 0.5).abs() < 0.02, "{f:?}");
}

#[test]
fn the_memo_answers_a_set_once_in_any_order() {
    let m = model();
    assert_eq!(m.memo_stats(), (0, 0));
    let a = rates(&m, ShareMode::Mps, &["big:1:1", "small:1:1"], None);
    assert_eq!(m.memo_stats(), (0, 1));
    assert_eq!(m.memo_lookups(), Some((0, 1)));
    let b = rates(&m, ShareMode::Mps, &["small:1:1", "big:1:1"], None);
    assert_eq!(a, vec![b[1], b[0]]);
    assert_eq!(m.memo_stats(), (1, 1));
    // What bench and the summaries report: the model's name and its memo's (hits, misses).
    assert_eq!(m.name(), "kernel");
    assert_eq!(m.memo_lookups(), Some((1, 1)));
}

#[test]
fn issue_37_fractions_over_a_horizon_are_the_replays_without_the_memo() {
    let m = model();
    let gpu = hardware::gpu("h200").unwrap();
    let big = m.class(gpu, &"big:1:1".parse().unwrap()).unwrap();
    let classes = [big.clone(), big];
    let tenants = one_gpu_tenants(&classes, None);
    // Two GPU-bound jobs time-sliced: half each, worked by hand (no switching costs).
    let ts = m
        .fractions_over(gpu, ShareMode::Timeslice, &tenants, Horizon::default())
        .unwrap();
    assert_eq!(ts, vec![0.5, 0.5]);
    // Under MPS the same numbers as the memoised answer, and the memo is left alone.
    let mps = m
        .fractions_over(gpu, ShareMode::Mps, &tenants, Horizon::default())
        .unwrap();
    assert_eq!(
        mps,
        rates(&m, ShareMode::Mps, &["big:1:1", "big:1:1"], None)
    );
    assert_eq!(m.memo_stats(), (0, 1));
    // A job without a trace: no answer.
    let small = m.class(gpu, &"small:1:1".parse().unwrap()).unwrap();
    let mut untraced = small.clone();
    untraced.key = "unknown:1:1".parse().unwrap();
    let lone = [Tenant {
        class: &untraced,
        sm_budget: None,
        gpus: 1,
    }];
    assert!(
        m.fractions_over(gpu, ShareMode::Mps, &lone, Horizon::default())
            .is_none()
    );
}

#[test]
fn tables_round_trip_and_bad_tables_are_refused() {
    let t = tables();
    let json = serde_json::to_vec(&t).unwrap();
    let back = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap();
    assert_eq!(back, t);
    let mut bad = t.clone();
    bad.traces[0].host_ns.pop();
    let json = serde_json::to_vec(&bad).unwrap();
    let err = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap_err();
    assert!(err.to_string().contains("equal length"), "{err}");
    // DRAM bytes: absent is fine and not written; one per kernel round-trips; a wrong length
    // or a negative count is refused.
    assert!(
        !String::from_utf8(serde_json::to_vec(&t).unwrap())
            .unwrap()
            .contains("dram_bytes")
    );
    let mut measured = t.clone();
    measured.traces[0].dram_bytes = vec![1e6; measured.traces[0].len()];
    let json = serde_json::to_vec(&measured).unwrap();
    assert_eq!(
        KernelTables::from_bytes(&json, Path::new("t.json")).unwrap(),
        measured
    );
    for wrong in [vec![1e6; 3], vec![-1.0; measured.traces[0].len()]] {
        let mut bad = measured.clone();
        bad.traces[0].dram_bytes = wrong;
        let json = serde_json::to_vec(&bad).unwrap();
        let err = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap_err();
        assert!(err.to_string().contains("dram_bytes"), "{err}");
    }
    let mut anchored = t.clone();
    anchored.traces[0].anchor_samples_per_s = Some(2.0);
    let json = serde_json::to_vec(&anchored).unwrap();
    let back = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap();
    assert_eq!(back.traces[0].alone_samples_per_s(), 2.0);
    for wrong in [0.0, -1.0] {
        let mut bad = t.clone();
        bad.traces[0].anchor_samples_per_s = Some(wrong);
        let json = serde_json::to_vec(&bad).unwrap();
        let err = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap_err();
        assert!(err.to_string().contains("anchor"), "{err}");
    }
    let mut old = t;
    old.version = 99;
    let json = serde_json::to_vec(&old).unwrap();
    let err = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap_err();
    assert!(err.to_string().contains("version 99"), "{err}");
}

proptest! {
    #[test]
    fn the_table_reader_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = KernelTables::from_bytes(&bytes, Path::new("fuzz.json.gz"));
        let mut gz = vec![0x1f, 0x8b];
        gz.extend(&bytes);
        let _ = KernelTables::from_bytes(&gz, Path::new("fuzz.json.gz"));
    }

    #[test]
    fn the_table_reader_never_panics_on_mutated_tables(edits in crate::fuzzing::edits()) {
        let json = serde_json::to_vec(&tables()).unwrap();
        let bytes = crate::fuzzing::mutate(&json, &edits);
        let _ = KernelTables::from_bytes(&bytes, Path::new("fuzz.json"));
    }

    #[test]
    fn replay_speeds_are_fractions_and_deterministic(n in 1usize..5, budget in 0.1f64..1.0) {
        let m = model();
        let keys: Vec<&str> = ["big:1:1", "small:1:1", "launchy:1:1", "big:1:1"][..n].to_vec();
        let a = rates(&m, ShareMode::Mps, &keys, Some(budget));
        let fresh = model();
        let b = rates(&fresh, ShareMode::Mps, &keys, Some(budget));
        prop_assert_eq!(&a, &b);
        // No job runs faster than alone, up to the window's truncation: a job is timed over
        // as few as one whole cycle of its own, and launches a co-runner held up before that
        // cycle run back to back within it (up to 5% on these 8-kernel toy cycles).
        for f in a {
            prop_assert!(f > 0.0 && f <= 1.05, "{}", f);
        }
    }
}

#[test]
fn issue_37_a_trace_without_kernels_is_empty_a_table_counting_zero_is_refused_and_points_are_found_by_name()
 {
    let mut t = toy_trace("big:1:1", 100_000, 1_000, 0);
    assert!(!t.is_empty());
    for column in [&mut t.dur_ns, &mut t.host_ns, &mut t.blocks] {
        column.clear();
    }
    assert!(t.is_empty());
    // Iterations are what a cycle's samples are counted over: 0 would divide by zero later.
    for zero in 0..2 {
        let mut bad = tables();
        match zero {
            0 => bad.traces[0].iterations = 0,
            _ => bad.traces[0].samples_per_iteration = 0,
        }
        let json = serde_json::to_vec(&bad).unwrap();
        let err = KernelTables::from_bytes(&json, Path::new("t.json")).unwrap_err();
        assert!(err.to_string().contains("samples_per_iteration"), "{err}");
    }
    // A point's trace is found by its name, and no other's.
    let t = tables();
    let small = t.trace(&"small:1:1".parse().unwrap()).expect("traced");
    assert_eq!(small.point, "small:1:1");
    assert!(t.trace(&"unknown:1:1".parse().unwrap()).is_none());
}

#[test]
fn issue_37_a_lone_job_over_two_gpus_is_replayed_at_twice_its_rate_and_a_set_with_one_is_not() {
    let m = model();
    let gpu = hardware::gpu("h200").unwrap();
    let class = m.class(gpu, &"big:1:1".parse().unwrap()).unwrap();
    let wide = Tenant {
        class: &class,
        sm_budget: None,
        gpus: 2,
    };
    // Alone: the kernel model answers (no fallback), at its alone rate on each GPU.
    assert_eq!(m.answering(gpu, &[wide]), "kernel");
    let rate_of = |t: Tenant<'_>| {
        let mut out = [0.0];
        let partition = Partition::whole(gpu);
        let tenants = [t];
        let mode = ShareMode::Mps;
        m.rates(
            &CoRun {
                gpu,
                mode,
                partition: &partition,
                tenants: &tenants,
            },
            &mut out,
        );
        out[0]
    };
    assert_eq!(rate_of(wide), 2.0 * class.solo_rate);
    // Under an SM budget it is replayed, and still runs on both GPUs: twice one GPU's rate.
    let budgeted = |t: Tenant<'_>| {
        rate_of(Tenant {
            sm_budget: Some(0.5),
            ..t
        })
    };
    let narrow = Tenant { gpus: 1, ..wide };
    let (two, one) = (budgeted(wide), budgeted(narrow));
    assert!(
        one < class.solo_rate && (two / one - 2.0).abs() < 1e-12,
        "{two} {one}"
    );
    // Beside another job it goes to the fallback, which says so.
    assert_ne!(m.answering(gpu, &[wide, narrow]), "kernel");
}

/// The kernel ceiling is the trace's samples over its kernels back to back, host time left
/// out (by hand: launchy's 8 kernels of 5 us, 2 iterations of 3 samples each: 6 / 40 us),
/// and none where the point has no trace on the GPU.
#[test]
fn the_kernel_ceiling_is_the_samples_over_the_kernel_time_alone() {
    let mut t = tables();
    t.traces[2].iterations = 2;
    t.traces[2].samples_per_iteration = 3;
    let m = KernelModel::with_tables(Arc::new(ProfileSet::default()), vec![t]);
    let gpu = hardware::gpu("h200").unwrap();
    let key = |k: &str| -> ModelKey { k.parse().unwrap() };
    let ceiling = m
        .kernel_ceiling_samples_per_s(gpu, &key("launchy:1:1"))
        .unwrap();
    assert!((ceiling - 6.0 / 40e-6).abs() < 1e-6 * ceiling, "{ceiling}");
    assert_eq!(m.kernel_ceiling_samples_per_s(gpu, &key("extra:1:1")), None);
    let other = hardware::gpu("a100-40gb").unwrap();
    assert_eq!(
        m.kernel_ceiling_samples_per_s(other, &key("launchy:1:1")),
        None
    );
}

#[test]
fn issue_37_user_traces_are_added_anchored_and_carried_into_a_reanchored_model() {
    // launchy alone: 8 launches 40 us apart, each kernel 5 us: a 320 us cycle, busy 40 us.
    let mut m = model();
    let gpu = hardware::gpu("h200").unwrap();
    let other = hardware::gpu("a100-40gb").unwrap();
    let key = |k: &str| -> ModelKey { k.parse().unwrap() };
    assert!(m.is_traced(gpu, &key("big:1:1")));
    assert!(!m.is_traced(gpu, &key("extra:1:1")) && !m.is_traced(other, &key("big:1:1")));
    let busy = m.alone_busy_fraction(gpu, &key("launchy:1:1")).unwrap();
    assert!((busy - 40.0 / 320.0).abs() < 1e-9, "{busy}");
    assert_eq!(m.alone_busy_fraction(gpu, &key("extra:1:1")), None);

    // A user's folder: a new point and a new trace of `small`, which replaces the old one.
    let mut user = tables();
    user.traces = vec![
        toy_trace("extra:1:1", 50_000, 1_000, 0),
        toy_trace("small:1:1", 20_000, 20, 0),
    ];
    let added = m.add_traces(user);
    assert_eq!(added, vec![key("extra:1:1"), key("small:1:1")]);
    assert!(m.is_user_traced(&key("extra:1:1")) && !m.is_user_traced(&key("big:1:1")));
    let points = m.traced_points(gpu);
    assert_eq!(points.len(), 4, "{points:?}");
    assert!(points.contains(&key("big:1:1")) && points.contains(&key("launchy:1:1")));
    let small = m.class(gpu, &key("small:1:1")).unwrap();
    assert!(
        (small.solo_rate - 1.0 / (8.0 * 20e-6)).abs() < 1e-6,
        "{}",
        small.solo_rate
    );

    // Anchored to twice its speed, launchy's host time halves: a 160 us cycle, busy 40 us.
    let fast = 2.0 / (8.0 * 40e-6);
    assert!(m.anchor(gpu, &key("launchy:1:1"), fast));
    let busy = m.alone_busy_fraction(gpu, &key("launchy:1:1")).unwrap();
    assert!((busy - 0.25).abs() < 1e-6, "{busy}");
    assert!(!m.anchor(gpu, &key("extra:9:9"), fast));

    // A model of only the points asked for, each once, re-anchored where a speed is given.
    let anchors = [
        (key("launchy:1:1"), Some(fast / 2.0)),
        (key("big:1:1"), None),
        (key("big:1:1"), None),
    ];
    let r = m.reanchored(gpu, &anchors).expect("all traced");
    assert_eq!(
        r.traced_points(gpu),
        vec![key("launchy:1:1"), key("big:1:1")]
    );
    let busy = r.alone_busy_fraction(gpu, &key("launchy:1:1")).unwrap();
    assert!((busy - 0.125).abs() < 1e-6, "{busy}");
    assert!(r.is_user_traced(&key("extra:1:1")));
    assert!(m.reanchored(gpu, &[(key("extra:9:9"), None)]).is_none());
    assert_eq!(m.source(gpu), Some("toy; user traces: toy"));
    assert_eq!(m.source(other), None);
}

/// A kernel model over the shipped profiles `profiles` (file stems in calibrate/profiles/) with
/// the test tables carried to `gpu` from `from`.
fn carried_model(profiles: &[&str], gpu: &str, from: &str) -> KernelModel {
    let mut set = ProfileSet::default();
    for name in profiles {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../calibrate/profiles/{name}.ron"));
        set.insert(crate::perf::Profile::load(&path).unwrap(), path);
    }
    let mut m = KernelModel::with_tables(Arc::new(set), Vec::new());
    let mut carried = tables();
    carried.gpu = gpu.into();
    carried.transferred_from = Some(from.into());
    m.add_traces(carried);
    m
}

#[test]
fn issue_37_sharing_origins_follow_the_globals_used_and_alone_the_profiles() {
    // The shipped H200 profile has fitted kernel globals: traces carried there from an H100
    // (no globals of its own) use them, labelled fitted, not transferred.
    let m = carried_model(&["h200"], "h200", "h100-80gb");
    let gpu = hardware::gpu("h200").unwrap();
    assert_eq!(m.mode_origin(gpu, ShareMode::Mps), Origin::Fitted);
    assert_eq!(m.mode_origin(gpu, ShareMode::Timeslice), Origin::Fitted);
    // MIG never ran here: the fitted globals answer it as emulated.
    assert_eq!(m.mode_origin(gpu, ShareMode::Mig), Origin::Emulated);
    // Alone, no sharing parameter is used: the profile's own origin.
    let lookup = m.lookup().mode_origin(gpu, ShareMode::Exclusive);
    assert_eq!(m.mode_origin(gpu, ShareMode::Exclusive), lookup);
    // Without a profile, the toy model's globals are provisional in every sharing mode, MIG too.
    let toy = model();
    for mode in [ShareMode::Mps, ShareMode::Mig] {
        assert_eq!(toy.mode_origin(gpu, mode), Origin::Provisional, "{mode}");
    }
    // Traces carried to the A100 (its profile fitted, no kernel globals of its own) borrow the
    // H200's, labelled transferred, for sharing; alone the A100 profile's origin stands.
    let m = carried_model(&["h200", "a100-40gb"], "a100-40gb", "h200");
    let a100 = hardware::gpu("a100-40gb").unwrap();
    assert_eq!(m.mode_origin(a100, ShareMode::Mps), Origin::Transferred);
    assert_eq!(m.mode_origin(a100, ShareMode::Mig), Origin::Transferred);
    assert_eq!(m.mode_origin(a100, ShareMode::Exclusive), Origin::Fitted);
}

#[test]
fn issue_37_a_lone_job_in_a_mig_slice_runs_on_the_slices_sms_only() {
    // big: kernels of 1,000 one-SM blocks, 8 waves on 132 SMs; in 3g.71gb's 60 SMs, 17 waves.
    // Wave exponent 1 (no profile): time x 17 / 8, so 8/17 of alone.
    let gpu = hardware::gpu("h200").unwrap();
    let slice = Partition::slice(gpu, gpu.mig_profile("3g.71gb").unwrap());
    let f = rates_in(&model(), ShareMode::Mig, &slice, &["big:1:1"], None)[0];
    assert!((f - 8.0 / 17.0).abs() < 1e-9, "{f}");
}

#[test]
fn issue_37_the_mig_efficiency_scales_slices_only() {
    // The same traces under a profile whose MIG efficiency is 0.9 and under one of 1: a job in
    // a slice runs at 0.9 of the other's speed; a pair sharing a whole GPU does not change.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../calibrate/profiles/h200.ron");
    let model_with = |efficiency: f64| {
        let mut profile = crate::perf::Profile::load(&path).unwrap();
        profile.mig.efficiency = efficiency;
        let mut profiles = ProfileSet::default();
        profiles.insert(profile, path.clone());
        KernelModel::with_tables(Arc::new(profiles), vec![tables()])
    };
    let (slow, plain) = (model_with(0.9), model_with(1.0));
    let gpu = hardware::gpu("h200").unwrap();
    let slice = Partition::slice(gpu, gpu.mig_profile("3g.71gb").unwrap());
    let in_slice = |m| rates_in(m, ShareMode::Mig, &slice, &["big:1:1"], None)[0];
    assert!((in_slice(&slow) / in_slice(&plain) - 0.9).abs() < 1e-12);
    let whole = Partition::whole(gpu);
    let pair = |m| rates_in(m, ShareMode::Mps, &whole, &["big:1:1", "small:1:1"], None);
    assert_eq!(pair(&slow), pair(&plain));
}

/// A user's trace folder with nothing usable in it is an error naming the folder, and why each
/// file in it was not used.
#[test]
fn issue_37_a_trace_folder_with_nothing_usable_is_an_error_saying_why() {
    let gpu = hardware::gpu("h200").unwrap();
    let mut m = model();
    let empty = tempfile::tempdir().unwrap();
    let err = super::raw::add_user_traces_of(&mut m, &[empty.path().to_owned()], &[gpu], None)
        .unwrap_err();
    assert!(
        matches!(err, super::raw::TracesError::Empty { .. }),
        "{err}"
    );
    let garbage = tempfile::tempdir().unwrap();
    std::fs::write(garbage.path().join("x.trace.json.gz"), b"not a trace").unwrap();
    let err = super::raw::add_user_traces_of(&mut m, &[garbage.path().to_owned()], &[gpu], None)
        .unwrap_err();
    assert!(
        matches!(&err, super::raw::TracesError::Empty { why, .. } if why.contains("x.trace.json.gz") && why.contains("invalid gzip header")),
        "{err:?}"
    );
}

/// Issue 32: an alone speed the user measured for a profiled point (`--alone-rate` without
/// `--traces`) anchors the replay and replaces the profile's speed, so a rate is the anchored
/// fraction times the measured speed, not times the profile's.
#[test]
fn issue_32_an_anchored_profiled_point_runs_at_the_measured_alone_speed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../calibrate/profiles/h200.ron");
    let mut profiles = ProfileSet::default();
    profiles.insert(crate::perf::Profile::load(&path).unwrap(), path);
    let mut toy = tables();
    // A host-bound toy trace under the name of a profiled point (host 40 us, kernels 5 us).
    toy.traces = vec![toy_trace("resnet18:128:32", 5_000, 20, 40_000)];
    let mut m = KernelModel::with_tables(Arc::new(profiles), vec![toy]);
    let gpu = hardware::gpu("h200").unwrap();
    let key: ModelKey = "resnet18:128:32".parse().unwrap();
    let profiled = m.class(gpu, &key).unwrap();
    assert_eq!(profiled.origin, Origin::Fitted);
    assert!(profiled.solo_rate > 10_000.0, "{}", profiled.solo_rate);
    assert!(m.anchor(gpu, &key, 123.0));
    let anchored = m.class(gpu, &key).unwrap();
    assert_eq!(
        (anchored.solo_rate, anchored.origin, anchored.spread),
        (123.0, Origin::Measured, None)
    );
    // Alone it runs at the measured speed. Two time-sliced copies, each busy 40 us of an
    // 8.1 ms cycle at 123 samples/s, keep it but for the wait of each burst behind the other's
    // 2.5 us residual kernel (2e-7 of it): 123 samples/s each, not the profile's.
    let samples = |keys: &[&str]| {
        let classes: Vec<JobClass> = keys.iter().map(|_| anchored.clone()).collect();
        let tenants = one_gpu_tenants(&classes, None);
        let mut out = vec![0.0; tenants.len()];
        let whole = Partition::whole(gpu);
        m.rates(
            &CoRun {
                gpu,
                mode: ShareMode::Timeslice,
                partition: &whole,
                tenants: &tenants,
            },
            &mut out,
        );
        out
    };
    assert!((samples(&["a"])[0] - 123.0).abs() < 1e-9);
    let two = samples(&["a", "a"]);
    assert!(two.iter().all(|r| (r - 123.0).abs() < 1e-3), "{two:?}");
}
