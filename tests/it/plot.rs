//! `colo plot` through the real binary: figures written, defaults, and errors that name the file.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("plots/tests/fixtures")
        .join(name)
}

fn colo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_colo"))
        .args(args)
        .output()
        .unwrap()
}

/// Copies a fixture folder so that the default `figures/` output lands in a temp dir.
fn copy_fixture(name: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn plot_writes_every_figure_into_results_figures_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("two_gpus");
    copy_fixture("two_gpus", &results);
    let output = colo(&["plot", results.to_str().unwrap(), "--format", "png"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("wrote 6 figure files"), "{stdout}");
    for stem in [
        "jct_cdf",
        "wait_cdf",
        "queue_length",
        "utilization",
        "throughput",
        "occupancy",
    ] {
        let png = results.join("figures").join(format!("{stem}.png"));
        let bytes = std::fs::read(&png).unwrap();
        assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000,
            "{}",
            png.display()
        );
        // 1200x800: the chart size; the occupancy chart grows only past 17 rows (two GPUs here).
        assert_eq!(
            crate::common::png_size(&bytes),
            Some((1200, 800)),
            "{}",
            png.display()
        );
        assert!(!results.join("figures").join(format!("{stem}.svg")).exists());
    }
}

#[test]
fn plot_overlays_folders_into_out() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("figs");
    let (sweep, mig) = (fixture("sweep"), fixture("mig_slice"));
    let output = colo(&[
        "plot",
        sweep.to_str().unwrap(),
        mig.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let cdf = std::fs::read_to_string(out.join("jct_cdf.svg")).unwrap();
    for legend in ["timeslice (5 jobs)", "mps (5 jobs)", "mig_slice (4 jobs)"] {
        assert!(cdf.contains(legend), "jct_cdf.svg lacks {legend}");
    }
    assert!(out.join("occupancy_mig_slice.svg").is_file());
}

#[test]
fn bad_csv_fails_naming_file_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("broken");
    copy_fixture("mig_slice", &results);
    let placements = results.join("placements.csv");
    let text = std::fs::read_to_string(&placements).unwrap();
    std::fs::write(
        &placements,
        text.replacen("0,0,4g.71gb@0,0,1500", "0,0,4g.71gb@0,0,soon", 1),
    )
    .unwrap();
    let output = colo(&["plot", results.to_str().unwrap()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("placements.csv: line 2, column 5 (end_s)"),
        "{stderr}"
    );
    assert!(
        !results.join("figures").exists(),
        "figures written despite the error"
    );
}

#[test]
fn folder_that_is_not_a_result_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let output = colo(&["plot", tmp.path().to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a result folder"));
}
