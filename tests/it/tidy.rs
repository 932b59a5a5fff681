//! Tidy checks, run as ordinary tests: file headers, scenario files, scenario docs, no skipped
//! or panic-expecting tests, and CI running exactly the README's test command.
use std::path::{Path, PathBuf};

use colo_sim::scenario::{Scenario, build_variant};
use colo_sim::study::StudySpec;

use crate::common::root;

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            if !name.starts_with('.')
                && name != "target"
                && !name.starts_with("target-")
                && name != "results"
            {
                files_under(&path, ext, out);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

fn rust_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["src", "sim", "calibrate", "plots", "tests"] {
        files_under(&root().join(dir), "rs", &mut files);
    }
    assert!(files.len() > 20, "found only {} .rs files", files.len());
    files
}

#[test]
fn every_rust_file_starts_with_a_module_comment() {
    let missing: Vec<String> = rust_files()
        .into_iter()
        .filter(|p| !std::fs::read_to_string(p).unwrap().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a leading //! comment: {missing:?}"
    );
}

#[test]
fn no_test_is_ignored_or_expects_a_panic() {
    let (ignore, should_panic) = (concat!("#[", "ignore"), concat!("#[", "should_panic"));
    for path in rust_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(ignore) && !text.contains(should_panic),
            "{}",
            path.display()
        );
    }
}

#[test]
fn every_shipped_scenario_loads_and_builds_every_variant() {
    let mut files = Vec::new();
    files_under(&root().join("scenarios"), "ron", &mut files);
    assert!(!files.is_empty());
    // `*.report.ron` are reproduction specs, not scenarios; the next test loads them.
    // `*.profile.ron` are profiles (read by the scenarios beside them).
    for path in files
        .into_iter()
        .filter(|p| !is_report_spec(p) && !p.to_string_lossy().ends_with(".profile.ron"))
    {
        let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        // The benchmark inputs (`colo bench --case anchors`) make up to 10M jobs: loaded
        // here, built by the bench's own test at small sizes.
        if path.parent() == Some(&root().join("scenarios/bench")) {
            continue;
        }
        for variant in scenario.variants() {
            build_variant(&scenario, &variant, None)
                .unwrap_or_else(|e| panic!("{}: {e}", variant.name));
        }
    }
}

fn is_report_spec(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".report.ron")
}

#[test]
fn every_shipped_report_spec_loads_with_its_matrix() {
    let mut files = Vec::new();
    files_under(&root().join("scenarios"), "ron", &mut files);
    files.retain(|p| is_report_spec(p));
    assert!(files.len() >= 2, "{files:?}");
    for path in files {
        let spec = StudySpec::load(&path).unwrap_or_else(|e| panic!("{e}"));
        colo_sim::study::read_matrix(&spec.matrix).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn every_scenario_field_is_documented() {
    let schema = std::fs::read_to_string(root().join("sim/src/scenario/schema.rs")).unwrap();
    let docs = std::fs::read_to_string(root().join("scenarios/README.md")).unwrap();
    let fields: Vec<&str> = schema
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':').map(|(name, _)| name))
        .filter(|name| !name.contains(' ') && !name.contains('('))
        .collect();
    assert!(fields.len() > 20, "{fields:?}");
    let missing: Vec<&&str> = fields
        .iter()
        .filter(|f| !docs.contains(&format!("`{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "scenario fields not in scenarios/README.md: {missing:?}"
    );
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let test_command = readme
        .lines()
        .find(|l| l.starts_with("cargo fmt"))
        .expect("README names its test command");
    let ci_command = ci.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(test_command, ci_command);
    let first = readme
        .lines()
        .find(|l| l.starts_with("cargo run"))
        .expect("README names its first command");
    assert!(first.contains("scenarios/default.ron"), "{first}");
}

/// Issue 35: the top level and every command a user starts with show examples in `--help`.
#[test]
fn every_main_command_help_has_an_example() {
    let commands: [&[&str]; 14] = [
        &[],
        &["simulate"],
        &["merge"],
        &["predict"],
        &["pack"],
        &["plan"],
        &["hardware"],
        &["plot"],
        &["report", "paper"],
        &["bench"],
        &["calibrate", "trace"],
        &["calibrate", "transfer"],
        &["calibrate", "summary"],
        &["calibrate", "fit"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let run = crate::common::colo(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(
            run.stdout.contains("Example"),
            "colo {command:?} --help has no example"
        );
    }
}
