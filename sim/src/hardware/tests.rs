//! Unit tests of the hardware catalog and MIG placement.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::{GpuSpec, HardwareError, MigConflict, MigLayout, catalog, gpu};

fn h200() -> &'static GpuSpec {
    gpu("h200").expect("h200 is in the catalog")
}

fn error_text(result: Result<MigLayout, HardwareError>) -> String {
    match result {
        Ok(layout) => format!("unexpectedly valid: {layout}"),
        Err(err) => err.to_string(),
    }
}

/// One `MIG ...` row of `nvidia-smi mig -lgip`: name, total instances, GiB, SMs.
fn parse_lgip_row(line: &str) -> Option<(String, u8, f64, u32)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [_mig, name, _id, instances, memory, sms, ..] = fields.as_slice() else {
        return None;
    };
    let total = instances.split_once('/')?.1.parse().ok()?;
    Some((
        name.to_string(),
        total,
        memory.parse().ok()?,
        sms.parse().ok()?,
    ))
}

#[test]
fn h200_table_matches_the_measured_lgip_listing() {
    let listing = include_str!("h200_mig_profiles.txt");
    let rows: Vec<_> = listing
        .lines()
        .filter(|line| line.starts_with("MIG "))
        .map(|line| parse_lgip_row(line).expect("well-formed lgip row"))
        .collect();
    let spec = h200();
    assert_eq!(rows.len(), spec.mig_profiles.len());
    for ((name, total, memory, sms), profile) in rows.iter().zip(spec.mig_profiles) {
        assert_eq!(name, profile.name);
        assert_eq!(*total, profile.max_instances, "{name}");
        assert_eq!(*memory, profile.memory_gib, "{name}");
        assert_eq!(*sms, profile.sms, "{name}");
    }
    let header = listing.lines().next().unwrap_or_default();
    assert!(header.contains(&format!("{} SMs", spec.sms)));
    let mib = (spec.memory_gib * 1024.0).round();
    assert!(header.contains(&format!("{mib} MiB")), "{header}");
}

#[test]
fn catalog_geometry_is_consistent() {
    for spec in catalog() {
        for profile in spec.mig_profiles {
            let label = format!("{} {}", spec.name, profile.name);
            assert!(
                profile
                    .name
                    .starts_with(&format!("{}g.", profile.compute_slices)),
                "{label}"
            );
            assert!(profile.max_instances >= 1, "{label}");
            assert!(
                profile.sms <= spec.sms && profile.memory_gib < spec.memory_gib,
                "{label}"
            );
            for &start in profile.starts {
                assert!(
                    start + profile.memory_slices <= spec.mig_memory_slices,
                    "{label}"
                );
            }
            assert!(spec.sm_fraction(profile) > 0.0 && spec.sm_fraction(profile) <= 1.0);
        }
    }
}

#[test]
fn gpu_lookup_accepts_aliases_and_lists_known_names() {
    for (alias, name) in [
        ("H200", "h200"),
        ("h200-141gb", "h200"),
        ("NVIDIA H200", "h200"),
        ("a100", "a100-40gb"),
        ("A100-SXM4-40GB", "a100-40gb"),
        ("nvidia a100_sxm4_80gb", "a100-80gb"),
        ("h100", "h100-80gb"),
        ("NVIDIA H100 80GB HBM3", "h100-80gb"),
    ] {
        assert_eq!(gpu(alias).map(|spec| spec.name), Ok(name), "{alias}");
    }
    let err = gpu("v100").map(|spec| spec.name).unwrap_err().to_string();
    assert_eq!(
        err,
        "unknown GPU 'v100'; known GPUs: a100-40gb (NVIDIA A100-SXM4-40GB), \
         a100-80gb (NVIDIA A100-SXM4-80GB), h100-80gb (NVIDIA H100 80GB HBM3), h200 (NVIDIA H200)"
    );
}

#[test]
fn valid_h200_layouts_from_the_issue() {
    let spec = h200();
    let cases = [
        ("3g.71gb, 4g.71gb", "[3g.71gb@4, 4g.71gb@0]"),
        (
            "[7 x 1g.18gb]",
            "[1g.18gb@0, 1g.18gb@1, 1g.18gb@2, 1g.18gb@3, 1g.18gb@4, 1g.18gb@5, 1g.18gb@6]",
        ),
        (
            "7x1g.18gb",
            "[1g.18gb@0, 1g.18gb@1, 1g.18gb@2, 1g.18gb@3, 1g.18gb@4, 1g.18gb@5, 1g.18gb@6]",
        ),
        ("2x3g.71gb", "[3g.71gb@0, 3g.71gb@4]"),
        (
            "[1g.35gb x4]",
            "[1g.35gb@0, 1g.35gb@2, 1g.35gb@4, 1g.35gb@6]",
        ),
        ("MIG 7G.141GB", "[7g.141gb@0]"),
        (
            "3g.71gb@4, 2g.35gb, 1g.18gb+me, 1g.18gb",
            "[3g.71gb@4, 2g.35gb@0, 1g.18gb+me@3, 1g.18gb@2]",
        ),
    ];
    for (text, placed) in cases {
        let layout = spec.parse_mig_layout(text).map(|layout| layout.to_string());
        assert_eq!(layout.as_deref(), Ok(placed), "{text}");
    }
    let by_names = spec
        .mig_layout(&["4g.71gb", "3g.71gb"])
        .map(|layout| layout.compute_slices());
    assert_eq!(by_names, Ok(7));
}

#[test]
fn invalid_h200_layouts_say_which_slice_does_not_fit_where() {
    let spec = h200();
    let cases = [
        (
            "4g.71gb, 4g.71gb",
            "MIG layout [4g.71gb, 4g.71gb] does not fit on h200: it uses 8 compute slices, the GPU has 7; \
             drop slices worth at least 1 compute slice(s) (`colo hardware --gpu <GPU>` lists every valid layout)",
        ),
        (
            "8 x 1g.18gb",
            "MIG layout [8 x 1g.18gb] does not fit on h200: it uses 8 compute slices, the GPU has 7; \
             drop slices worth at least 1 compute slice(s) (`colo hardware --gpu <GPU>` lists every valid layout)",
        ),
        (
            "3g.71gb, 3g.71gb, 1g.18gb",
            "MIG layout [3g.71gb, 3g.71gb, 1g.18gb] does not fit on h200: 1g.18gb #1 can start only at \
             memory slices 0-6, which 3g.71gb #1 (slices 0-3) and 3g.71gb #2 (slices 4-7) hold; \
             no profile fits beside the other slices: drop 1g.18gb #1",
        ),
        (
            "3g.71gb@0, 4g.71gb",
            "MIG layout [3g.71gb@0, 4g.71gb] does not fit on h200: 4g.71gb #1 can start only at \
             memory slice 0, which 3g.71gb #1 holds (slices 0-3); beside the other slices these \
             profiles still fit: 1g.18gb, 1g.18gb+me, 1g.35gb, 2g.35gb, 3g.71gb",
        ),
        (
            "2 x 1g.18gb+me",
            "MIG layout [1g.18gb+me, 1g.18gb+me] does not fit on h200: it asks for 2 x 1g.18gb+me, \
             at most 1 fit; use at most 1 x 1g.18gb+me",
        ),
        (
            "3g.71gb@2",
            "MIG layout [3g.71gb@2] does not fit on h200: 3g.71gb #1 cannot start at memory slice 2; \
             it can start only at memory slices 0 or 4; pin it to one of those starts, or drop the '@' \
             and let the placement choose",
        ),
        (
            "5g.99gb",
            "h200 has no MIG profile '5g.99gb'; its profiles are: 1g.18gb, 1g.18gb+me, 1g.35gb, \
             2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb",
        ),
        (
            "[ ]",
            "MIG layout on h200 is empty; name at least one slice, e.g. '7 x 1g.18gb'",
        ),
        (
            "3g.71gb,,1g.18gb",
            "cannot read MIG layout '3g.71gb,,1g.18gb' for h200: item '' is empty; separate slices \
             with single commas",
        ),
        (
            "0x1g.18gb",
            "cannot read MIG layout '0x1g.18gb' for h200: item '0x1g.18gb' asks for 0 slices; write \
             a count of at least 1",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error_text(spec.parse_mig_layout(text)), expected, "{text}");
    }
}

#[test]
fn the_placement_conflict_is_structured() {
    let err = h200()
        .mig_layout(&["4g.71gb", "1g.35gb", "1g.35gb", "1g.18gb"])
        .unwrap_err();
    let HardwareError::MigLayoutDoesNotFit { conflict, .. } = err else {
        panic!("expected a placement error, got {err}");
    };
    assert_eq!(
        *conflict,
        MigConflict::NoFreeStart {
            slice: "1g.18gb #1".to_string(),
            starts: "memory slices 0-6".to_string(),
            holders:
                "4g.71gb #1 (slices 0-3), 1g.35gb #1 (slices 4-5) and 1g.35gb #2 (slices 6-7) hold"
                    .to_string(),
        }
    );
}

/// Independent reference: every set of (profile, start) placements that obeys the rules,
/// reduced to its sorted multiset of profile names. Walks placements, not multisets.
fn brute_force_layouts(spec: &GpuSpec) -> BTreeSet<Vec<&'static str>> {
    let candidates: Vec<(usize, u8)> = spec
        .mig_profiles
        .iter()
        .enumerate()
        .flat_map(|(idx, profile)| profile.starts.iter().map(move |&start| (idx, start)))
        .collect();
    let mut found = BTreeSet::new();
    let mut chosen = Vec::new();
    walk_placements(spec, &candidates, 0, &mut chosen, &mut found);
    found
}

fn walk_placements(
    spec: &GpuSpec,
    candidates: &[(usize, u8)],
    next: usize,
    chosen: &mut Vec<(usize, u8)>,
    found: &mut BTreeSet<Vec<&'static str>>,
) {
    if !chosen.is_empty() {
        let mut names: Vec<usize> = chosen.iter().map(|&(idx, _)| idx).collect();
        names.sort_unstable();
        found.insert(
            names
                .into_iter()
                .map(|idx| spec.mig_profiles[idx].name)
                .collect(),
        );
    }
    for (offset, &candidate) in candidates[next..].iter().enumerate() {
        chosen.push(candidate);
        if obeys_rules(spec, chosen) {
            walk_placements(spec, candidates, next + offset + 1, chosen, found);
        }
        chosen.pop();
    }
}

fn obeys_rules(spec: &GpuSpec, placed: &[(usize, u8)]) -> bool {
    let mut memory = 0u32;
    let mut compute = 0u32;
    for &(idx, start) in placed {
        let profile = &spec.mig_profiles[idx];
        let mask = ((1u32 << profile.memory_slices) - 1) << start;
        let in_range = start + profile.memory_slices <= spec.mig_memory_slices;
        if memory & mask != 0 || !in_range {
            return false;
        }
        memory |= mask;
        compute += u32::from(profile.compute_slices);
    }
    let counts_ok = spec.mig_profiles.iter().enumerate().all(|(idx, profile)| {
        placed.iter().filter(|&&(i, _)| i == idx).count() <= usize::from(profile.max_instances)
    });
    compute <= u32::from(spec.mig_compute_slices) && counts_ok
}

fn layout_obeys_rules(spec: &GpuSpec, layout: &MigLayout) -> bool {
    let placed: Vec<(usize, u8)> = layout
        .slices
        .iter()
        .map(|slice| {
            let idx = spec.mig_profiles.iter().position(|p| p == slice.profile);
            (idx.unwrap_or(usize::MAX), slice.start)
        })
        .collect();
    let starts_ok = layout
        .slices
        .iter()
        .all(|s| s.profile.starts.contains(&s.start));
    starts_ok && placed.iter().all(|&(idx, _)| idx != usize::MAX) && obeys_rules(spec, &placed)
}

#[test]
fn enumeration_matches_an_independent_brute_force() {
    for spec in catalog() {
        let layouts = spec.enumerate_mig_layouts();
        let multisets: Vec<Vec<&str>> = layouts.iter().map(MigLayout::profile_names).collect();
        let distinct: BTreeSet<Vec<&str>> = multisets.iter().cloned().collect();
        assert_eq!(distinct.len(), layouts.len(), "{}: duplicates", spec.name);
        assert_eq!(distinct, brute_force_layouts(spec), "{}", spec.name);
        for layout in &layouts {
            assert!(layout_obeys_rules(spec, layout), "{}: {layout}", spec.name);
            let names = layout.profile_names();
            assert_eq!(
                spec.mig_layout(&names).as_ref(),
                Ok(layout),
                "{}",
                spec.name
            );
            let reparsed = spec.parse_mig_layout(&layout.to_string());
            assert_eq!(reparsed.as_ref(), Ok(layout), "{}", spec.name);
        }
    }
}

#[test]
fn enumeration_order_is_lexicographic_in_table_order() {
    let spec = h200();
    let layouts = spec.enumerate_mig_layouts();
    let keys: Vec<Vec<usize>> = layouts
        .iter()
        .map(|layout| {
            layout
                .slices
                .iter()
                .filter_map(|s| spec.mig_profiles.iter().position(|p| p == s.profile))
                .collect()
        })
        .collect();
    assert!(keys.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(
        layouts.first().map(ToString::to_string).as_deref(),
        Some("[1g.18gb@0]")
    );
    assert_eq!(
        layouts.last().map(ToString::to_string).as_deref(),
        Some("[7g.141gb@0]")
    );
}

fn gpu_and_profile_picks() -> impl Strategy<Value = (usize, Vec<usize>, Vec<usize>)> {
    (0..catalog().len(), prop::collection::vec(0usize..7, 0..10)).prop_flat_map(
        |(gpu_idx, picks)| {
            let shuffled = Just(picks.clone()).prop_shuffle();
            (Just(gpu_idx), Just(picks), shuffled)
        },
    )
}

#[test]
fn the_text_lists_every_gpu_and_every_layout() {
    let table = super::text::catalog_table();
    assert_eq!(table.lines().count(), catalog().len() + 2);
    assert!(
        table
            .lines()
            .last()
            .unwrap()
            .starts_with("numbers: vendor datasheets"),
        "{table}"
    );
    // The footer's summary of the sources holds for every GPU of the catalog.
    for gpu in catalog() {
        assert!(gpu.source.contains("datasheet"), "{}", gpu.source);
        assert!(gpu.source.contains("nvidia-smi mig"), "{}", gpu.source);
        let measured = gpu.source.starts_with("measured");
        assert_eq!(measured, gpu.name == "h200", "{}", gpu.source);
    }
    assert!(table.lines().any(|l| l.starts_with("h200 ")));
    let text = super::text::describe(h200());
    let layouts = h200().enumerate_mig_layouts().len();
    assert!(
        text.contains(&format!("\n{layouts} valid MIG layouts")),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("  ")).count(),
        layouts
    );
}

proptest! {
    #[test]
    fn validation_is_total_and_order_independent((gpu_idx, picks, shuffled) in gpu_and_profile_picks()) {
        let spec = &catalog()[gpu_idx];
        let names: Vec<&str> = picks.iter().map(|&i| spec.mig_profiles[i].name).collect();
        let permuted: Vec<&str> = shuffled.iter().map(|&i| spec.mig_profiles[i].name).collect();
        let verdict = spec.mig_layout(&names);
        prop_assert_eq!(verdict.is_ok(), spec.mig_layout(&permuted).is_ok());
        if let Ok(layout) = &verdict {
            prop_assert!(layout_obeys_rules(spec, layout));
            prop_assert_eq!(&layout.profile_names(), &names);
        }
        let mut sorted = names.clone();
        sorted.sort_unstable();
        let in_enumeration = spec.enumerate_mig_layouts().iter().any(|layout| {
            let mut listed = layout.profile_names();
            listed.sort_unstable();
            listed == sorted
        });
        prop_assert_eq!(verdict.is_ok(), in_enumeration);
    }

    #[test]
    fn layout_text_never_panics(text in "[ \\[\\]0-9xX*@,.a-z+]{0,40}") {
        let _ = h200().parse_mig_layout(&text);
    }
}

#[test]
fn an_mps_budget_holds_whole_tpcs_as_measured_on_the_h200() {
    let h200 = h200();
    // PyTorch's SM count in MPS clients on the H200 (budget-traces-call1.txt).
    assert_eq!(h200.mps_client_sms(0.12), 14);
    assert_eq!(h200.mps_client_sms(0.24), 30);
    assert_eq!(h200.mps_client_sms(0.50), 66);
    assert_eq!(h200.mps_client_sms(1.0), 132);
    // Never below one TPC, never above the GPU.
    assert_eq!(h200.mps_client_sms(0.001), 2);
    assert_eq!(h200.mps_client_sms(1.5), 132);
}

#[test]
fn traces_can_be_carried_to_gavels_gpus_but_only_the_catalog_is_simulated() {
    assert_eq!(super::any_gpu("V100").unwrap().sms, 80);
    assert_eq!(super::any_gpu("nvidia k80").unwrap().name, "k80");
    assert_eq!(super::any_gpu("H200").unwrap().name, "h200");
    assert!(
        super::gpu("v100").is_err(),
        "scenarios still cannot place jobs on a V100"
    );
    let err = super::any_gpu("t4").unwrap_err().to_string();
    assert!(
        err.contains("h200") && err.contains("v100, p100, k80"),
        "{err}"
    );
}
