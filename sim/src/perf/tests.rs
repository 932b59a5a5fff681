//! Unit tests of the performance models.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::profile::*;
use super::*;
use crate::hardware;

fn entry(model: &str, rate: f64, u: f64, s: f64, mem: f64) -> ModelEntry {
    ModelEntry {
        model: model.into(),
        batch: 64,
        image: 224,
        samples_per_s: rate,
        time_demand: u,
        space_demand: s,
        contention_demand: None,
        memory_gib: mem,
        spread: None,
        origin: None,
    }
}

pub(crate) fn test_profile() -> Profile {
    Profile {
        version: PROFILE_VERSION,
        gpu: "h200".into(),
        origin: Origin::Provisional,
        provenance: Provenance {
            source: "test".into(),
            data: vec![],
            created: "2026-11-30".into(),
            driver: None,
        },
        memory: MemoryParams {
            context_gib: 0.5,
            mps_context_gib: 0.25,
        },
        timeslice: TimeSliceParams {
            switch_overhead: 0.05,
            origin: None,
        },
        mps: MpsParams {
            interference: 0.3,
            queueing: 0.0,
            origin: None,
        },
        mig: MigParams {
            efficiency: 1.0,
            origin: None,
        },
        models: vec![
            entry("small", 20000.0, 0.3, 0.3, 2.0),
            entry("big", 1000.0, 0.95, 0.9, 30.0),
        ],
        kernel: None,
        held_out_error: Vec::new(),
        power: None,
    }
}

fn profiles() -> Arc<ProfileSet> {
    let mut set = ProfileSet::default();
    set.insert(test_profile(), PathBuf::from("test.ron"));
    Arc::new(set)
}

fn class(model: &str) -> JobClass {
    let gpu = hardware::gpu("h200").unwrap();
    profiles()
        .class(gpu, &ModelKey::new(model, 64, 224))
        .unwrap()
}

fn rates(model: &dyn PerfModel, mode: ShareMode, classes: &[JobClass]) -> Vec<f64> {
    let gpu = hardware::gpu("h200").unwrap();
    let tenants: Vec<Tenant<'_>> = classes
        .iter()
        .map(|c| Tenant::on_one_gpu(c, None))
        .collect();
    model
        .predict(&CoRun {
            gpu,
            mode,
            partition: &Partition::whole(gpu),
            tenants: &tenants,
        })
        .rates
}

#[test]
fn alone_every_model_gives_the_exclusive_rate() {
    let set = profiles();
    let models: [Box<dyn PerfModel>; 4] = [
        Box::new(Parametric::new(set.clone())),
        Box::new(Exclusive::new(set.clone())),
        Box::new(EqualShare::new(set.clone())),
        Box::new(FixedSlowdown::new(set, 0.15)),
    ];
    for model in &models {
        for mode in ShareMode::ALL {
            let got = rates(model.as_ref(), mode, &[class("big")]);
            assert!(
                (got[0] - 1000.0).abs() < 1e-9,
                "{} {mode}: {got:?}",
                model.name()
            );
        }
    }
}

#[test]
fn baselines_follow_their_formulas() {
    let set = profiles();
    let three = [class("big"), class("big"), class("small")];
    let equal = rates(&EqualShare::new(set.clone()), ShareMode::Mps, &three);
    assert!((equal[2] - 20000.0 / 3.0).abs() < 1e-9);
    let fixed = rates(&FixedSlowdown::new(set, 0.15), ShareMode::Mps, &three);
    assert!((fixed[0] - 1000.0 / 1.3).abs() < 1e-9);
}

#[test]
fn launch_bound_jobs_barely_slow_each_other_under_mps() {
    let four = vec![class("small"); 4];
    let got = rates(&Parametric::new(profiles()), ShareMode::Mps, &four);
    // Co-runners' occupancy 3 * 0.3 * 0.3 = 0.27 stretches the GPU part by 1 + 0.3 * 0.27; the
    // four jobs' SM-time demands (4 * 0.3 * 0.3 * 1.081 * speed) fit in the GPU, so none waits.
    let expected = 20000.0 / (0.7 + 0.3 * (1.0 + 0.3 * 0.27));
    for rate in got {
        assert!((rate - expected).abs() < 1e-6, "{rate} vs {expected}");
    }
}

#[test]
fn launch_queueing_stretches_the_host_part_with_the_co_runners_occupancy() {
    let mut profile = test_profile();
    profile.mps.queueing = 2.0;
    let mut set = ProfileSet::default();
    set.insert(profile, PathBuf::from("test.ron"));
    let model = Parametric::new(Arc::new(set));
    let pair = [class("small"), class("big")];
    let without = rates(&Parametric::new(profiles()), ShareMode::Mps, &pair);
    let with = rates(&model, ShareMode::Mps, &pair);
    // The small job's host part (0.7) waits behind the big one's occupancy 0.95 * 0.9: with
    // the SMs not oversubscribed its speed is 1 / (0.7 * (1 + 2 * 0.855) + 0.3 * (1 + 0.3 * 0.855)).
    let occupancy_big = 0.95 * 0.9;
    let expected =
        20000.0 / (0.7 * (1.0 + 2.0 * occupancy_big) + 0.3 * (1.0 + 0.3 * occupancy_big));
    assert!(
        (with[0] - expected).abs() < 1e-6,
        "{} vs {expected}",
        with[0]
    );
    assert!(with[0] < 0.5 * without[0], "{with:?} vs {without:?}");
    // The big job's host part is small: queueing changes it far less.
    assert!(with[1] >= 0.9 * without[1], "{with:?} vs {without:?}");
}

#[test]
fn gpu_bound_pair_shares_time_and_loses_switching() {
    let two = vec![class("big"); 2];
    let got = rates(&Parametric::new(profiles()), ShareMode::Timeslice, &two);
    // Capacity 1 - 0.05 of GPU time split evenly; each needs 0.95 per unit of speed.
    let expected = 1000.0 * (0.95 / 2.0) / 0.95;
    assert!((got[0] - expected).abs() < 1e-6, "{got:?} vs {expected}");
}

#[test]
fn time_slicing_is_max_min_fair_a_light_job_keeps_its_speed() {
    let set = vec![class("big"), class("big"), class("small")];
    let got = rates(&Parametric::new(profiles()), ShareMode::Timeslice, &set);
    // The small job needs 0.3 of the time, under the fair level 0.95 / 3: it runs as alone;
    // the big ones split the remaining 0.65.
    assert!((got[2] - 20000.0).abs() < 1e-6, "{got:?}");
    let expected = 1000.0 * (0.65 / 2.0) / 0.95;
    assert!((got[0] - expected).abs() < 1e-6, "{got:?} vs {expected}");
}

#[test]
fn shares_fill_the_capacity_exactly_when_oversubscribed() {
    let two = vec![class("big"); 2];
    let got = rates(&Parametric::new(profiles()), ShareMode::Mps, &two);
    let c = class("big");
    // SM-time used: Σ u s (1 + β O) f = 1 when the demands exceed the GPU.
    let stretch = 1.0 + 0.3 * 0.95 * 0.9;
    let load: f64 = got
        .iter()
        .map(|r| r / 1000.0 * c.time_demand * c.space_demand * stretch)
        .sum();
    assert!((load - 1.0).abs() < 1e-9, "{load}");
}

#[test]
fn sm_budget_slows_a_job_alone_as_the_curve_says() {
    let gpu = hardware::gpu("h200").unwrap();
    let big = class("big");
    let tenant = [Tenant {
        class: &big,
        sm_budget: Some(0.45),
        gpus: 1,
    }];
    let model = Parametric::new(profiles());
    let got = model
        .predict(&CoRun {
            gpu,
            mode: ShareMode::Mps,
            partition: &Partition::whole(gpu),
            tenants: &tenant,
        })
        .rates[0];
    assert!((got - 1000.0 * alone_fraction(&big, 0.45)).abs() < 1e-9);
}

#[test]
fn memory_verdict_counts_contexts() {
    let gpu = hardware::gpu("h200").unwrap();
    let big = class("big");
    let tenants = vec![
        Tenant {
            class: &big,
            sm_budget: None,
            gpus: 1
        };
        5
    ];
    let p = Parametric::new(profiles()).predict(&CoRun {
        gpu,
        mode: ShareMode::Mps,
        partition: &Partition::whole(gpu),
        tenants: &tenants,
    });
    assert!((p.memory_gib - 5.0 * 30.25).abs() < 1e-9);
    assert!(!p.fits_memory(), "5 x 30.25 GiB exceeds the H200's memory");
}

#[test]
fn unknown_model_names_what_the_profile_has() {
    let gpu = hardware::gpu("h200").unwrap();
    let err = profiles()
        .class(gpu, &ModelKey::new("big", 32, 224))
        .unwrap_err();
    assert!(
        err.to_string().contains("it has big at: big:64:224"),
        "{err}"
    );
    let err = profiles()
        .class(gpu, &ModelKey::new("vgg", 32, 224))
        .unwrap_err();
    assert!(
        err.to_string().contains("known models: big, small"),
        "{err}"
    );
}

#[test]
fn profile_validation_names_the_field() {
    let mut profile = test_profile();
    profile.models[1].time_demand = 1.5;
    let err = profile.validate(std::path::Path::new("p.ron")).unwrap_err();
    assert!(
        err.to_string()
            .contains("models[1].time_demand (big:64:224) = 1.5"),
        "{err}"
    );
}

#[test]
fn profile_numbers_must_be_finite_and_spread_not_negative() {
    let path = std::path::Path::new("p.ron");
    for bad in [-0.01, f64::NAN, f64::INFINITY] {
        let mut profile = test_profile();
        profile.models[0].spread = Some(bad);
        let err = profile.validate(path).unwrap_err().to_string();
        assert!(
            err.starts_with("p.ron: models[0].spread (small:64:224) = ")
                && err.contains("(>= 0, finite)"),
            "{err}"
        );
    }
    let mut profile = test_profile();
    profile.models[0].spread = Some(0.05);
    profile.validate(path).unwrap();
    profile.models[1].samples_per_s = f64::INFINITY;
    let err = profile.validate(path).unwrap_err().to_string();
    assert!(err.contains("models[1].samples_per_s"), "{err}");
    let mut profile = test_profile();
    profile.memory.context_gib = f64::NAN;
    let err = profile.validate(path).unwrap_err().to_string();
    assert!(err.contains("memory.context_gib = NaN"), "{err}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn any_class() -> impl Strategy<Value = JobClass> {
        (1.0f64..1e5, 0.0f64..=1.0, 0.01f64..=1.0).prop_map(|(x, u, s)| JobClass {
            key: ModelKey::new("m", 1, 1),
            solo_rate: x,
            time_demand: u,
            space_demand: s,
            contention_demand: s,
            memory_gib: 1.0,
            spread: None,
            origin: Origin::Provisional,
        })
    }

    proptest! {
        #[test]
        fn parametric_rates_are_positive_and_never_beat_alone(
            classes in prop::collection::vec(any_class(), 1..10),
            mode_idx in 0usize..4,
        ) {
            let mode = ShareMode::ALL[mode_idx];
            let got = rates(&Parametric::new(profiles()), mode, &classes);
            for (rate, c) in got.iter().zip(&classes) {
                prop_assert!(*rate > 0.0 && rate.is_finite());
                prop_assert!(*rate <= c.solo_rate * (1.0 + 1e-12));
            }
        }

        #[test]
        fn adding_a_corunner_never_speeds_anyone_up(
            classes in prop::collection::vec(any_class(), 1..8),
            extra in any_class(),
            mode_idx in 1usize..3,
        ) {
            let mode = ShareMode::ALL[mode_idx];
            let model = Parametric::new(profiles());
            let before = rates(&model, mode, &classes);
            let mut more = classes.clone();
            more.push(extra);
            let after = rates(&model, mode, &more);
            for (b, a) in before.iter().zip(&after) {
                prop_assert!(*a <= b * (1.0 + 1e-9), "{a} > {b}");
            }
        }
    }
}

/// A profile written before the power model (no `power` section) reads unchanged, and one with
/// the section survives writing and reading back; its prediction follows its form.
#[test]
fn the_power_section_is_optional_and_round_trips() {
    let path = std::path::Path::new("test.ron");
    let old =
        ron::ser::to_string_pretty(&test_profile(), ron::ser::PrettyConfig::new()).expect("encode");
    assert!(!old.contains("power"), "no section written when absent");
    let read = Profile::parse(&old, path).expect("an old profile reads");
    assert!(read.power.is_none());
    let mut profile = test_profile();
    profile.power = Some(PowerParams {
        form: PowerForm::Alone,
        origin: Origin::Fitted,
        modes: vec![PowerMode {
            mode: MeasuredMode::Mps,
            idle_w: 100.0,
            slope: 0.5,
            max_w: None,
            sets: 12,
            held_out_mape_pct: 3.5,
        }],
        alone: vec![AlonePower {
            point: "resnet50:64:224".into(),
            power_w: 500.0,
            util: 0.99,
        }],
    });
    let text = ron::ser::to_string_pretty(&profile, ron::ser::PrettyConfig::new()).expect("encode");
    assert_eq!(Profile::parse(&text, path).expect("reads back"), profile);
    let power = profile.power.as_ref().expect("power");
    let key = crate::workload::ModelKey::new("resnet50", 64, 224);
    // 100 + 0.5 * (500 - 100) * 0.6 = 220 W.
    let (watts, fit) = power
        .predict(MeasuredMode::Mps, &[(key.clone(), 0.6)])
        .expect("known");
    assert!((watts - 220.0).abs() < 1e-9 && fit.is_some());
    assert_eq!(
        power.predict(MeasuredMode::Exclusive, &[(key.clone(), 1.0)]),
        Some((500.0, None))
    );
    assert!(
        power
            .predict(MeasuredMode::Timeslice, &[(key, 0.5)])
            .is_none()
    );
}

/// Issue 34 item 14: two profiles for one GPU were both accepted and the last silently won;
/// loading them is an error naming both files and the GPU.
#[test]
fn issue_34_two_profiles_for_one_gpu_are_refused() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../calibrate/profiles");
    let paths = [
        shipped.join("h200.ron"),
        shipped.join("h200-provisional.ron"),
    ];
    let err = ProfileSet::load(&paths)
        .expect_err("two h200 profiles")
        .to_string();
    assert!(
        err.contains("h200.ron and")
            && err.contains("h200-provisional.ron are both profiles for GPU `h200`"),
        "{err}"
    );
    // One profile per GPU still loads.
    let one = ProfileSet::load(&paths[..1]).expect("one profile");
    assert_eq!(one.gpus(), ["h200"]);
}

/// Issue 34 item 20: with no profile loaded the message read "(profiles loaded for: )".
#[test]
fn issue_34_no_profile_message_says_none_is_loaded() {
    let gpu = hardware::gpu("h200").unwrap();
    let err = ProfileSet::default().get(gpu).unwrap_err().to_string();
    assert!(
        err.starts_with("no profile for GPU `h200` (no profile is loaded);"),
        "{err}"
    );
    let err = profiles()
        .get(hardware::gpu("a100-40gb").unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("(profiles loaded for: h200);"), "{err}");
}

#[test]
fn a_gpu_without_a_profile_gets_the_calibrated_gpus_sharing_labelled_transferred() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../calibrate/profiles");
    let set = ProfileSet::load(&[root.join("h200.ron"), root.join("a100-40gb.ron")]).unwrap();
    let v100 = hardware::any_gpu("v100").unwrap();
    let (carried, path) = set
        .carried_to(v100)
        .expect("h200 has fitted kernel globals");
    assert!(path.ends_with("h200.ron"), "{}", path.display());
    let (h200, _) = set.get(hardware::gpu("h200").unwrap()).unwrap();
    assert_eq!(carried.gpu, "v100");
    assert_eq!(carried.origin, Origin::Transferred);
    assert!(
        carried.models.is_empty(),
        "no H200 rate may answer for a V100 job"
    );
    assert!(carried.power.is_none() && carried.held_out_error.is_empty());
    let (k, hk) = (carried.kernel.unwrap(), h200.kernel.clone().unwrap());
    assert_eq!(k.origin, Origin::Transferred);
    assert!(k.tables.is_empty() && k.traced.is_empty() && k.held_out_error.is_empty());
    assert_eq!(
        (k.mps_overlap, k.timeslice_switch_us, k.timeslice_overhead),
        (
            hk.mps_overlap,
            hk.timeslice_switch_us,
            hk.timeslice_overhead
        )
    );
    assert_eq!(carried.timeslice, h200.timeslice);
    // Without fitted kernel globals there is nothing to carry.
    let parametric_only = ProfileSet::load(&[root.join("a100-40gb.ron")]).unwrap();
    assert!(parametric_only.carried_to(v100).is_none());
}
