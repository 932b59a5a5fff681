//! The one way CLI tests run `colo`: from the repository root, output captured as text.
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one `colo` run printed and how it ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `colo args...` in the repository root with extra environment variables.
pub fn colo_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    colo_at(&root(), args, env)
}

/// Runs `colo args...` in folder `dir` (a temporary one, for a command whose default output
/// is relative: it must not write into the checkout).
pub fn colo_in(dir: &Path, args: &[&str]) -> Run {
    colo_at(dir, args, &[])
}

fn colo_at(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_colo"))
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("colo runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `colo args...` in the repository root.
pub fn colo(args: &[&str]) -> Run {
    colo_env(args, &[])
}

/// Runs `colo args...` in the repository root; it must succeed.
pub fn colo_ok(args: &[&str]) -> Run {
    let run = colo(args);
    assert_eq!(run.code, 0, "colo {args:?} failed:\n{}", run.stderr);
    run
}

/// The `summary.json` of result folder `dir`, parsed.
pub fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json written");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// Writes `text` to `dir/name` and returns the path as a string.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write fixture");
    path.to_string_lossy().into_owned()
}

/// A small valid scenario, with `{cluster}` and `{jobs}` left for the test to fill.
pub fn scenario(cluster: &str, jobs: &str) -> String {
    let profile = root().join("calibrate/profiles/h200-provisional.ron");
    format!(
        "#![enable(implicit_some)]\n(\n    name: \"t\",\n    profiles: [\"{}\"],\n    cluster: [{cluster}],\n    workload: Jobs([{jobs}]),\n)\n",
        profile.display()
    )
}

/// A sweep scenario in `dir` with one small variant per name.
pub fn sweep_scenario(dir: &Path, names: &[&str]) -> String {
    let base = scenario(
        "(gpu: \"h200\", count: 1, mode: Mps)",
        "(model: \"resnet18:128:32\", samples: 10.0)",
    );
    let variants: Vec<String> = names.iter().map(|n| format!("(name: {n:?})")).collect();
    let text = format!(
        "{}\n    sweep: [{}],\n)\n",
        base.trim_end().trim_end_matches(')'),
        variants.join(", ")
    );
    write(dir, "sweep.ron", &text)
}

/// Width and height of a PNG file's bytes, from its header (the IHDR chunk's first fields,
/// big-endian, at bytes 16 and 20); `None` for bytes that are not a PNG.
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if !png.starts_with(b"\x89PNG\r\n\x1a\n") || png.get(12..16) != Some(b"IHDR") {
        return None;
    }
    let field = |at: usize| Some(u32::from_be_bytes(png.get(at..at + 4)?.try_into().ok()?));
    Some((field(16)?, field(20)?))
}

/// Names in `dir`, sorted, subfolders with a trailing `/`.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() { name + "/" } else { name }
        })
        .collect();
    names.sort();
    names
}

/// Runs `python3 script args...` in the repository root; it must succeed. Its stdout.
pub fn python_ok(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .current_dir(root())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 {script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Positions (in characters) where a run of non-blank characters of `line` ends.
fn token_ends(line: &str) -> Vec<usize> {
    let chars: Vec<char> = line.chars().collect();
    (1..=chars.len())
        .filter(|&i| chars[i - 1] != ' ' && chars.get(i).is_none_or(|c| *c == ' '))
        .collect()
}

/// Checks that a table's rows keep their columns where its header has them, whatever the
/// length of the names in its first column: every row of `rows` (each `(name, line)`, the line
/// starting with its name) has its right-aligned columns end at the same positions, and the
/// header has `columns` of its words ending there too.
pub fn assert_aligned(header: &str, rows: &[(&str, &str)], columns: usize) {
    let after_name = |name: &str, line: &str| -> Vec<usize> {
        assert!(
            line.starts_with(name),
            "{line:?} does not start with {name:?}"
        );
        let start = name.chars().count();
        token_ends(line)
            .into_iter()
            .filter(|&e| e > start)
            .collect()
    };
    let (first_name, first_line) = rows[0];
    let ends = after_name(first_name, first_line);
    for (name, line) in rows {
        assert_eq!(
            after_name(name, line),
            ends,
            "columns moved:\n{header}\n{first_line}\n{line}"
        );
    }
    let in_header = token_ends(header)
        .into_iter()
        .filter(|e| ends.contains(e))
        .count();
    assert_eq!(in_header, columns, "header:\n{header}\n{first_line}");
}
