//! `colo hardware` through the real binary: `--format json` against NVIDIA's datasheets and
//! against the text the same command prints.
use crate::common::colo_ok;

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["hardware"];
    all.extend(args);
    all.extend(["--format", "json"]);
    serde_json::from_str(&colo_ok(&all).stdout).expect("stdout is one JSON")
}

/// SM counts from NVIDIA's datasheets: H200 (GH100 as in H100 SXM5) 132, A100 108; an A100
/// 1g.5gb MIG slice 14 (the A100 MIG user guide).
#[test]
fn json_catalog_and_detail_match_nvidia_datasheets() {
    let catalog = json(&[]);
    let gpus = catalog["gpus"].as_array().unwrap();
    let sms = |name: &str| {
        let gpu = gpus.iter().find(|g| g["name"] == name).unwrap();
        assert!(gpu["source"].as_str().is_some_and(|s| !s.is_empty()));
        gpu["sms"].as_u64().unwrap()
    };
    assert_eq!(sms("h200"), 132);
    assert_eq!(sms("a100-40gb"), 108);
    for (gpu, want) in [("h200", 132), ("a100-40gb", 108)] {
        let detail = json(&["--gpu", gpu]);
        assert_eq!(detail["gpu"]["sms"], want, "{gpu}");
        // As many layouts as the text says, written as it writes them.
        let text = colo_ok(&["hardware", "--gpu", gpu]).stdout;
        let layouts = detail["mig_layouts"].as_array().unwrap();
        let count = format!("{} valid MIG layouts", layouts.len());
        assert!(text.contains(&count), "{count}\n{text}");
        let first = format!("  {}\n", layouts[0].as_str().unwrap());
        assert!(text.contains(&first), "{first}\n{text}");
    }
    let a100 = json(&["--gpu", "a100-40gb"]);
    let profiles = a100["gpu"]["mig_profiles"].as_array().unwrap();
    let small = profiles.iter().find(|p| p["name"] == "1g.5gb").unwrap();
    assert_eq!(small["sms"], 14);
}

#[test]
fn help_shows_the_json_example() {
    let help = colo_ok(&["hardware", "--help"]).stdout;
    assert!(
        help.contains("colo hardware --gpu a100-40gb --format json"),
        "{help}"
    );
}
