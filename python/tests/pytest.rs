//! Runs the Python face's pytest suite (`python/tests/test_*.py`, and the docstrings' examples
//! of the `colo` package as doctests) over the extension module
//! this same `cargo test` build made (`target/<profile>/lib_colo.so`), so the README's one test
//! command tests the bindings too.
//!
//! The module is staged as `target/python/colo/` (the package's Python files and the library
//! as `_colo.abi3.so`), and pytest runs in a virtual environment, `target/py-venv`, made on
//! first use with pandas, pytest and matplotlib from PyPI (kept between runs; delete it to
//! refresh). `COLO_PYTHON=/path/to/python` uses that interpreter instead (it must have those
//! packages). Needs `python3` (>= 3.9) with `venv`.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("python/ has a parent")
        .to_path_buf()
}

/// The folder cargo puts this profile's libraries in: this test runs from `<it>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps folder");
    deps.parent().expect("profile folder").to_path_buf()
}

/// The extension this build made: the newest of the profile folder's copy and `deps/`'s (a test
/// build refreshes only `deps/`, so an earlier `cargo build`'s copy beside it can be stale).
fn extension() -> PathBuf {
    let dir = profile_dir();
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let newest = ["lib_colo.so", "lib_colo.dylib", "_colo.dll"]
        .iter()
        .flat_map(|name| [dir.join(name), dir.join("deps").join(name)])
        .filter(|candidate| candidate.is_file())
        .max_by_key(modified);
    if let Some(path) = newest {
        return path;
    }
    panic!(
        "no colo extension in {} (cargo builds lib_colo.so beside this test)",
        dir.display()
    );
}

/// `target/python/colo/`: the package's files and the extension, replaced whole.
fn stage(target: &Path) -> PathBuf {
    let stage = target.join("python");
    let package = stage.join("colo");
    if package.exists() {
        std::fs::remove_dir_all(&package).expect("old staged package removed");
    }
    std::fs::create_dir_all(&package).expect("staging folder");
    let sources = root().join("python/py_src/colo");
    for entry in std::fs::read_dir(&sources).expect("python/py_src/colo") {
        let path = entry.expect("package file").path();
        if path.is_file() {
            std::fs::copy(&path, package.join(path.file_name().expect("file name")))
                .expect("package file copied");
        }
    }
    std::fs::copy(extension(), package.join("_colo.abi3.so")).expect("extension copied");
    stage
}

fn run(command: &mut Command, what: &str) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(status.success(), "{what} failed ({status})");
}

/// The interpreter to test with: `COLO_PYTHON`, or `target/py-venv` (made on first use).
fn python(target: &Path) -> PathBuf {
    if let Some(given) = std::env::var_os("COLO_PYTHON") {
        return PathBuf::from(given);
    }
    let venv = target.join("py-venv");
    let python = venv.join("bin/python");
    let ready = venv.join(".colo-ready");
    if !ready.is_file() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv target/py-venv",
        );
        run(
            Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "pandas",
                "pytest",
                "matplotlib",
            ]),
            "pip install pandas pytest matplotlib (from PyPI; or set COLO_PYTHON)",
        );
        std::fs::write(&ready, "pandas pytest matplotlib\n").expect("venv marker");
    }
    python
}

#[test]
fn pytest_suite_passes() {
    let target = profile_dir().parent().expect("target folder").to_path_buf();
    let stage = stage(&target);
    let python = python(&target);
    run(
        Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--doctest-modules",
            ])
            .arg(stage.join("colo"))
            .arg(root().join("python/tests"))
            .current_dir(root())
            .env("PYTHONPATH", &stage)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("MPLBACKEND", "Agg"),
        "pytest python/tests",
    );
}
