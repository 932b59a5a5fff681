//! Property tests that the readers of sim answer every input with a result or an error, never a
//! panic: random bytes and mutated fixtures for scenarios and profiles here; traces of every
//! format in `workload::trace::tests`, kernel tables in `perf::kernel::tests`. The `fuzz/`
//! folder holds cargo-fuzz targets for the same readers (run on demand, not in CI).
//!
//! The cases are few and the inputs small (a few KB), so the whole set takes about a second.
use std::path::Path;

use proptest::prelude::*;

pub(crate) use crate::fuzz_edit::{Edit, mutate};
use crate::perf::Profile;
use crate::scenario::Scenario;

/// Cases per reader: cheap enough for every `cargo test`, many enough to shake the parsers.
pub(crate) const CASES: u32 = 96;

/// A few edits of a fixture.
pub(crate) fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec((any::<usize>(), 0u8..4, any::<u8>()), 1..10)
}

const SCENARIO: &[u8] = include_bytes!("../../scenarios/default.ron");
const PROFILE: &[u8] = include_bytes!("../../calibrate/profiles/h200-provisional.ron");

/// A place for the scenario's relative paths to point at (nothing is read from it).
fn scenario_path() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/fuzz.ron"
    ))
}

#[test]
fn the_fixtures_read_unmutated() {
    let text = std::str::from_utf8(SCENARIO).unwrap();
    Scenario::parse(text, scenario_path()).unwrap();
    let text = std::str::from_utf8(PROFILE).unwrap();
    Profile::parse(text, Path::new("fuzz.ron")).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn scenarios_never_panic_on_random_or_mutated_text(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        edits in edits(),
    ) {
        let _ = Scenario::parse(&String::from_utf8_lossy(&bytes), scenario_path());
        let mutated = mutate(SCENARIO, &edits);
        if let Ok(scenario) = Scenario::parse(&String::from_utf8_lossy(&mutated), scenario_path()) {
            let _ = scenario.variants();
        }
    }

    #[test]
    fn profiles_never_panic_on_random_or_mutated_text(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        edits in edits(),
    ) {
        let _ = Profile::parse(&String::from_utf8_lossy(&bytes), Path::new("fuzz.ron"));
        let mutated = mutate(PROFILE, &edits);
        let _ = Profile::parse(&String::from_utf8_lossy(&mutated), Path::new("fuzz.ron"));
    }
}
