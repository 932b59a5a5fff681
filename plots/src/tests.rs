//! Every figure kind rendered from the fixture result folders in `plots/tests/fixtures/`.
use std::path::{Path, PathBuf};

use super::*;
use crate::chart::format_tick;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn load(names: &[&str]) -> Vec<ResultFolder> {
    let dirs: Vec<PathBuf> = names.iter().map(|name| fixture(name)).collect();
    load_results(&dirs).unwrap()
}

/// Checks a written PNG: real PNG signature, IHDR of the expected width, non-trivial size.
fn assert_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.len() > 10_000,
        "{} is only {} bytes",
        path.display(),
        bytes.len()
    );
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    assert_eq!(
        u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]),
        1200
    );
}

/// Checks a written SVG holds each of `texts` (axis labels, legend entries).
fn assert_svg_has(path: &Path, texts: &[&str]) {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg"), "{} is not an SVG", path.display());
    for text in texts {
        assert!(svg.contains(text), "{} lacks {text:?}", path.display());
    }
}

#[test]
fn every_results_figure_renders_for_a_sweep() {
    let out = tempfile::tempdir().unwrap();
    let report = plot_results(&load(&["sweep"]), out.path(), Format::Both).unwrap();
    // The fixture's summaries predate energy: that one comparison is skipped, saying why.
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    assert!(
        report.skipped[0].starts_with("variants_energy: `timeslice` has no such figure"),
        "{:?}",
        report.skipped
    );
    let stems = [
        "jct_cdf",
        "wait_cdf",
        "queue_length",
        "utilization",
        "throughput",
        "variants_mean_jct",
        "variants_p95_jct",
        "variants_makespan",
        "occupancy_timeslice",
        "occupancy_mps",
    ];
    assert_eq!(report.written.len(), 2 * stems.len());
    for stem in stems {
        assert_png(&out.path().join(format!("{stem}.png")));
    }
    let svg = |stem: &str| out.path().join(format!("{stem}.svg"));
    assert_svg_has(
        &svg("jct_cdf"),
        &[
            "job completion time (s, arrival to end, log scale)",
            "timeslice (5 jobs)",
            "mps (5 jobs)",
            "fraction of completed jobs",
        ],
    );
    assert_svg_has(
        &svg("wait_cdf"),
        &[
            "wait time (s, arrival to start)",
            "emulated; profile: provisional",
        ],
    );
    assert_svg_has(
        &svg("queue_length"),
        &["queued jobs", "simulated time (min)", "timeslice"],
    );
    assert_svg_has(&svg("utilization"), &["busy GPUs (% of cluster)", "mps"]);
    assert_svg_has(
        &svg("throughput"),
        &["throughput (samples/s, emulated)", "timeslice", "1347"],
    );
    assert_svg_has(&svg("occupancy_mps"), &["GPU 0", "GPU 1", "j2"]);
    let folders = load(&["sweep"]);
    let mean_jct_h = format_tick(folders[1].summary.jct_s.mean / 3600.0);
    assert_svg_has(
        &svg("variants_mean_jct"),
        &[
            "mean JCT (hours, emulated)",
            "Mean job completion time per variant",
            "timeslice",
            "mps",
            &format!(" {mean_jct_h}"),
        ],
    );
    assert_svg_has(&svg("variants_makespan"), &["makespan (hours, emulated)"]);
}

#[test]
fn hours_axis_mixed_modes_and_mig_rows() {
    let out = tempfile::tempdir().unwrap();
    plot_results(&load(&["two_gpus"]), out.path(), Format::Svg).unwrap();
    let svg = |stem: &str| out.path().join(format!("{stem}.svg"));
    assert_svg_has(&svg("queue_length"), &["simulated time (h)"]);
    assert_svg_has(&svg("throughput"), &["exclusive", "timeslice", "all modes"]);
    assert!(
        !out.path().join("jct_cdf.png").exists(),
        "svg-only run wrote a PNG"
    );

    plot_results(&load(&["mig_slice"]), out.path(), Format::Svg).unwrap();
    assert_svg_has(
        &svg("occupancy"),
        &["GPU 0 4g.71gb@0", "GPU 0 3g.71gb@4", "simulated time (min)"],
    );
}

#[test]
fn occupancy_rows_are_capped_and_the_title_says_so() {
    let mut folder = load(&["two_gpus"]).remove(0);
    folder
        .timeline
        .iter_mut()
        .for_each(|point| point.total_gpus = 100);
    let out = tempfile::tempdir().unwrap();
    plot_results(&[folder], out.path(), Format::Svg).unwrap();
    assert_svg_has(
        &out.path().join("occupancy.svg"),
        &["first 64 of 100 GPUs", "GPU 63"],
    );
}

#[test]
fn bad_csv_row_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["jobs.csv", "placements.csv", "timeline.csv", "summary.json"] {
        std::fs::copy(fixture("two_gpus").join(file), dir.path().join(file)).unwrap();
    }
    let timeline = dir.path().join("timeline.csv");
    let text = std::fs::read_to_string(&timeline).unwrap();
    std::fs::write(&timeline, text.replacen("600,0,3,2,2", "600,zero,3,2,2", 1)).unwrap();
    let err = load_results(&[dir.path().to_path_buf()]).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("timeline.csv: line 3, column 2 (queued)"),
        "{message}"
    );
}

#[test]
fn folder_without_results_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = load_results(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(matches!(err, PlotError::NotAResultFolder { .. }), "{err}");
    // A folder that is not there is named as missing, not as a folder without results.
    let missing = dir.path().join("nodir");
    let err = load_results(&[missing]).unwrap_err().to_string();
    assert!(err.contains("nodir: no such folder"), "{err}");
}

#[test]
fn calibration_scatter_and_curves_render() {
    let out = tempfile::tempdir().unwrap();
    let points: Vec<ScatterPoint> = [
        ("mps", 1000.0, 1100.0),
        ("mps", 5000.0, 4600.0),
        ("timeslice", 800.0, 950.0),
        ("mig", 19_000.0, 18_000.0),
    ]
    .into_iter()
    .map(|(label, measured, predicted)| ScatterPoint {
        label: label.to_string(),
        measured,
        predicted,
    })
    .collect();
    let text = ChartText {
        title: "Calibration (measured vs fitted)".to_string(),
        x_label: "measured throughput (samples/s)".to_string(),
        y_label: "predicted throughput (samples/s, fitted)".to_string(),
    };
    let target = FigureOut {
        dir: out.path().to_path_buf(),
        stem: "scatter".to_string(),
        format: Format::Both,
    };
    plot_measured_vs_predicted(&points, &text, &target).unwrap();
    assert_png(&out.path().join("scatter.png"));
    assert_svg_has(
        &out.path().join("scatter.svg"),
        &[
            "measured throughput (samples/s)",
            "y = x",
            "timeslice",
            "mig",
        ],
    );

    let curves = vec![
        Curve {
            label: "resnet18".to_string(),
            points: vec![
                (100.0, 19_500.0),
                (50.0, 17_000.0),
                (25.0, 11_000.0),
                (12.0, 6_000.0),
            ],
            kind: CurveKind::Line,
        },
        Curve {
            label: "resnet50".to_string(),
            points: vec![(100.0, 1_100.0), (50.0, 700.0), (25.0, 380.0)],
            kind: CurveKind::Line,
        },
    ];
    let text = ChartText {
        title: "Throughput vs SM budget (measured)".to_string(),
        x_label: "SM budget (% of SMs)".to_string(),
        y_label: "throughput (samples/s, measured)".to_string(),
    };
    let target = FigureOut {
        stem: "curves".to_string(),
        ..target
    };
    plot_curves(&curves, &text, &target).unwrap();
    assert_png(&out.path().join("curves.png"));
    assert_svg_has(
        &out.path().join("curves.svg"),
        &["SM budget (% of SMs)", "resnet18", "resnet50"],
    );
}

#[test]
fn empty_calibration_data_is_an_error_not_a_blank_figure() {
    let out = tempfile::tempdir().unwrap();
    let text = ChartText {
        title: String::new(),
        x_label: String::new(),
        y_label: String::new(),
    };
    let target = FigureOut {
        dir: out.path().to_path_buf(),
        stem: "empty".to_string(),
        format: Format::Png,
    };
    let err = plot_measured_vs_predicted(&[], &text, &target).unwrap_err();
    assert!(matches!(err, PlotError::NoData { .. }), "{err}");
    assert!(!out.path().join("empty.png").exists());
}

#[cfg(unix)]
#[test]
fn figures_are_readable_by_others_not_owner_only_temp_files() {
    use std::os::unix::fs::PermissionsExt;
    let out = tempfile::tempdir().unwrap();
    let report = plot_results(&load(&["mig_slice"]), out.path(), Format::Both).unwrap();
    for path in &report.written {
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        assert_ne!(mode & 0o044, 0, "{} has mode {mode:o}", path.display());
    }
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with(".colo-plot-")
        })
        .collect();
    assert!(
        leftovers.is_empty(),
        "temp files left behind: {leftovers:?}"
    );
}

#[test]
fn plain_bars_render_with_their_labels() {
    let out = tempfile::tempdir().unwrap();
    let groups = vec![
        BarGroup {
            label: "1 naive".into(),
            bars: vec![("needed".into(), 2.0), ("available".into(), 140.0)],
        },
        BarGroup {
            label: "7 MIG 1g".into(),
            bars: vec![("needed".into(), 1.8), ("available".into(), 16.0)],
        },
    ];
    let text = ChartText {
        title: "Memory per set".into(),
        x_label: "set".into(),
        y_label: "GPU memory (GiB, provisional)".into(),
    };
    let figure = FigureOut {
        dir: out.path().to_path_buf(),
        stem: "memory".into(),
        format: Format::Both,
    };
    let written = plot_bars(&groups, &text, &figure).unwrap();
    assert_eq!(written.len(), 2);
    assert_png(&out.path().join("memory.png"));
    assert_svg_has(
        &out.path().join("memory.svg"),
        &["7 MIG 1g", "needed", "available", "GiB, provisional"],
    );
    assert!(plot_bars(&[], &text, &figure).is_err());
}
