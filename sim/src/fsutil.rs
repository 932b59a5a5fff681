//! Writing outputs whole: [`write_atomic`], the one helper every crate writes a file alone
//! through (a profile, a CSV named on the command line).
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it (`.NAME.tmpPID`),
/// synced, then renamed over `path`; such files of dead runs are removed first. Creates the
/// parent folder when missing. For a file written alone (a profile, a CSV named on the command
/// line).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_of(path);
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    remove_dead_file_temporaries(dir, &name);
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    match result.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = std::fs::remove_file(&tmp);
            Err(err)
        }
    }
}

/// Removes `dir/.NAME.tmpPID` files that dead runs of [`write_atomic`] left.
fn remove_dead_file_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.tmp");
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = file.strip_prefix(&prefix) else {
            continue;
        };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let path = entry.path();
        if pid.parse().is_ok_and(|pid| !pid_alive(pid, &path)) && path.is_file() {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether the process that named a temporary may still be writing it. On Linux, whether
/// `/proc/PID` exists; elsewhere, whether the leftover was touched within the last day.
fn pid_alive(pid: u32, path: &Path) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    let age = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    age.is_none_or(|age| age < Duration::from_secs(24 * 3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEAD: u32 = 4_194_303;

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn write_atomic_replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/p.ron");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(names(&dir.path().join("sub")), ["p.ron"]);
        let dead = dir.path().join(format!("sub/.p.ron.tmp{DEAD}"));
        std::fs::write(&dead, "half").unwrap();
        write_atomic(&path, b"three").unwrap();
        assert_eq!(
            names(&dir.path().join("sub")),
            ["p.ron"],
            "a dead run's is removed"
        );
    }
}
