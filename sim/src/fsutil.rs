//! Writing outputs whole: one file ([`write_atomic`]) or one folder ([`WholeDir`]).
//!
//! A result folder is the unit: a run writes everything into a temporary sibling folder
//! (`.NAME.tmp-PID.N`) and swaps it in at the end, so a reader (or a run killed by SIGKILL)
//! sees the previous folder whole or the new one whole, never a mix, and no file of an earlier
//! run survives in it. The swap is two renames: the previous folder goes to `.NAME.old-PID.N`,
//! the new one takes its place, then the old one is removed. Between the two renames (a few
//! microseconds) the target is missing; a run killed there leaves the previous folder whole as
//! `.NAME.old-PID.N`, and the next run beside it puts it back. Temporaries of dead runs (a PID
//! with no `/proc/PID` on Linux; elsewhere, older than a day) are removed by the next run that
//! writes beside them.
//!
//! For Ctrl-C, the binary calls [`remove_in_progress`] from its signal handler and exits: the
//! folders being written go, and no swap starts afterwards, nor any folder of a result is
//! created ([`create_result_dir`]), which would bring a removed one back. A swap and the
//! removal of the previous folder after it hold the same lock, so a Ctrl-C there waits for
//! them, and [`remove_in_progress`] reports the folder as published, whole, with no `.old-`
//! folder beside it.
//!
//! Before the swap, every file of the new folder and the folder itself are synced, and the
//! parent after it (one `fsync` a file, none a row), so a power loss cannot leave a
//! renamed-in folder whose files the disk never got.
//!
//! A result folder of colo's own ([`WholeDir::begin_result`]) holds a marker file,
//! [`MARKER`]: an existing folder is replaced only when it holds one or is empty, never a
//! folder of someone else's files that happens to be named as the output.
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it (`.NAME.tmpPID`),
/// synced, then renamed over `path`; such files of dead runs are removed first. Creates the
/// parent folder when missing. For a file written alone (a profile, a CSV named on the command
/// line); files of a result folder go through [`WholeDir`] instead.
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
        Ok(()) => {
            sync_dir(dir);
            Ok(())
        }
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

/// Folders being written by this process, those it has published, and whether an interrupt
/// has removed the former.
struct InProgress {
    dirs: Vec<PathBuf>,
    published: Vec<PathBuf>,
    interrupted: bool,
}

static IN_PROGRESS: Mutex<InProgress> = Mutex::new(InProgress {
    dirs: Vec::new(),
    published: Vec::new(),
    interrupted: false,
});

static SEQ: AtomicU64 = AtomicU64::new(0);

fn in_progress() -> std::sync::MutexGuard<'static, InProgress> {
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// What [`remove_in_progress`] found: the result folders this process had published (whole,
/// their previous folders removed) and those it was still writing (removed: their targets
/// are as they were).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interrupted {
    /// Targets swapped in whole before the interrupt.
    pub published: Vec<PathBuf>,
    /// Temporary folders being written, now removed.
    pub removed: Vec<PathBuf>,
}

impl Interrupted {
    /// Whether every result folder the process began was published: the interrupt came after
    /// the work, and there is nothing to redo.
    pub fn complete(&self) -> bool {
        !self.published.is_empty() && self.removed.is_empty()
    }
}

/// Removes every folder this process is writing through a [`WholeDir`] and refuses any later
/// [`WholeDir::begin_result`] or [`WholeDir::commit`]: what a Ctrl-C handler calls before it
/// exits.
/// A swap already under way, and the removal of the previous folder after it, finish first
/// (they hold the same lock). Returns what is where, for the handler to say.
pub fn remove_in_progress() -> Interrupted {
    let mut state = in_progress();
    state.interrupted = true;
    let removed: Vec<PathBuf> = state.dirs.drain(..).collect();
    for dir in &removed {
        remove_while_written(dir);
    }
    Interrupted {
        published: state.published.clone(),
        removed,
    }
}

/// Removes `dir` while other threads may still be writing files into it (the Ctrl-C handler
/// runs beside the run). A plain `remove_dir_all` loses to a file created after it listed the
/// folder (the folder is then not empty and stays), so the folder is first renamed to a fresh
/// temporary name, which no later create by path can reach, and removal is retried for the few
/// creates already under way. Should it still fail, the name is a temporary's, so the next run
/// beside it removes it.
fn remove_while_written(dir: &Path) {
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `.NAME.tmp-PID.N` becomes `.NAME.tmp-PID.M`: still a temporary to `tidy`.
    let renamed = match name.rsplit_once('.') {
        Some((stem, _)) => dir.with_file_name(format!("{stem}.{seq}")),
        None => dir.to_path_buf(),
    };
    let doomed = if std::fs::rename(dir, &renamed).is_ok() {
        renamed
    } else {
        dir.to_path_buf()
    };
    for _ in 0..100 {
        match std::fs::remove_dir_all(&doomed) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => std::thread::yield_now(),
            _ => return,
        }
    }
}

/// Creates `dir` and its missing parents for files of a result: a folder being written whole
/// ([`WholeDir::path`]) or one inside it, whose files are written plainly since the folder is
/// swapped in whole once complete. Refused once [`remove_in_progress`] has run: creating `dir`
/// then would bring back the temporary folder it removed (the Ctrl-C handler runs beside the
/// run), so both hold the same lock.
pub fn create_result_dir(dir: &Path) -> std::io::Result<()> {
    let state = in_progress();
    if state.interrupted {
        return Err(interrupted_error());
    }
    std::fs::create_dir_all(dir)
}

fn interrupted_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted")
}

/// A result folder being written whole: files go into [`path`](Self::path), a temporary
/// sibling of the target, and [`commit`](Self::commit) swaps it in. Dropped uncommitted (an
/// error on the way), the temporary folder is removed and the target left as it was.
/// [`begin_result`](Self::begin_result) adds the marker of a colo result ([`MARKER`]).
#[derive(Debug)]
pub struct WholeDir {
    /// As the caller named it.
    target: PathBuf,
    /// Where the swap happens: `target`, or where it points when it is a symlink.
    real: PathBuf,
    tmp: PathBuf,
    name: String,
    committed: bool,
}

impl WholeDir {
    /// [`begin_result`](Self::begin_result) without the marker and its check: for the tests of
    /// the swap itself.
    #[cfg(test)]
    pub fn begin(target: &Path) -> std::io::Result<Self> {
        Self::begin_with(target, None)
    }

    /// Starts writing `target` as a result folder of colo's own: tidies what dead runs left
    /// beside it, then creates the empty temporary folder with the marker in it ([`MARKER`]),
    /// saying what it holds (`kind`, e.g. `results`) and of what (`name`, e.g. the scenario).
    /// Refuses a target that is a file, has no folder name (`.`, `..`, `/`), holds the current
    /// directory or is a git checkout (the swap replaces the whole folder), and an existing
    /// one that is neither empty nor marked with the same kind (a folder colo never wrote, one
    /// an earlier colo wrote without the marker, or another kind of result).
    pub fn begin_result(target: &Path, kind: &str, name: &str) -> std::io::Result<Self> {
        Self::begin_with(target, Some(Marker { kind, name }))
    }

    fn begin_with(target: &Path, marker: Option<Marker<'_>>) -> std::io::Result<Self> {
        if !target.components().next_back().is_some_and(is_normal) {
            return Err(refuse(target, "it names no folder of its own"));
        }
        // A symlinked result folder is replaced where it points; the link stays.
        let real = match std::fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() => target.canonicalize()?,
            _ => target.to_path_buf(),
        };
        let name = match real.file_name() {
            Some(n) => n.to_string_lossy().into_owned(),
            None => return Err(refuse(target, "it names no folder of its own")),
        };
        check_replaceable(&real)?;
        if let Some(marker) = &marker {
            check_marked(target, &real, marker.kind)?;
        }
        let parent = parent_of(&real);
        std::fs::create_dir_all(parent)?;
        tidy(parent, &name, &pid_alive);
        let mut state = in_progress();
        if state.interrupted {
            return Err(interrupted_error());
        }
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = parent.join(format!(".{name}.tmp-{}.{seq}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp)?;
        }
        std::fs::create_dir(&tmp)?;
        state.dirs.push(tmp.clone());
        drop(state);
        let whole = WholeDir {
            target: target.to_path_buf(),
            real,
            tmp,
            name,
            committed: false,
        };
        if let Some(marker) = marker {
            std::fs::write(whole.tmp.join(MARKER), marker.json())?;
        }
        Ok(whole)
    }

    /// The temporary folder to write into.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The folder this becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Where `written`, a path under [`path`](Self::path), will be once committed.
    pub fn final_path(&self, written: &Path) -> PathBuf {
        match written.strip_prefix(&self.tmp) {
            Ok(rel) if rel.as_os_str().is_empty() => self.target.clone(),
            Ok(rel) => self.target.join(rel),
            Err(_) => written.to_path_buf(),
        }
    }

    /// Syncs the written folder to disk, swaps it in place of the target (see the module's
    /// notes on the window between the two renames), syncs the parent and removes the previous
    /// folder. A Ctrl-C from the swap on waits until the previous folder is gone.
    pub fn commit(mut self) -> std::io::Result<()> {
        sync_tree(&self.tmp)?;
        let mut state = in_progress();
        if state.interrupted {
            return Err(interrupted_error());
        }
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let parent = parent_of(&self.real);
        let old = parent.join(format!(".{}.old-{}.{seq}", self.name, std::process::id()));
        swap(&self.tmp, &self.real, &old)?;
        state.dirs.retain(|d| d != &self.tmp);
        state.published.push(self.target.clone());
        self.committed = true;
        sync_dir(parent);
        // Under the lock: an interrupt here finds the previous folder gone, not half removed
        // (should removing fail, the next run beside it removes it: a dead run's `.old-`).
        let _ = std::fs::remove_dir_all(&old);
        Ok(())
    }
}

/// Syncs every file under `dir`, its subfolders and `dir` itself: one `fsync` each.
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            std::fs::File::open(entry.path())?.sync_all()?;
        }
    }
    sync_dir(dir);
    Ok(())
}

/// Syncs folder `dir`'s entries (a rename into it, a file created in it). Where a folder
/// cannot be opened as a file (not Unix), or the file system does not sync folders, nothing.
fn sync_dir(dir: &Path) {
    if cfg!(unix)
        && let Ok(handle) = std::fs::File::open(dir)
    {
        let _ = handle.sync_all();
    }
}

/// File name of the marker in a result folder of colo's own ([`WholeDir::begin_result`]): a
/// small JSON object naming the tool, its version, what the folder holds and of what.
pub const MARKER: &str = ".colo-result";

/// What a result folder's [`MARKER`] says.
struct Marker<'a> {
    kind: &'a str,
    name: &'a str,
}

impl Marker<'_> {
    fn json(&self) -> Vec<u8> {
        let value = serde_json::json!({
            "tool": "colo",
            "version": env!("CARGO_PKG_VERSION"),
            "kind": self.kind,
            "name": self.name,
        });
        let mut bytes = serde_json::to_vec_pretty(&value).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// Files an earlier colo wrote in result folders (before [`MARKER`]): the hint for a folder
/// holding them.
const RESULT_FILES: [&str; 7] = [
    "summary.json",
    "sweep.csv",
    "shard.json",
    "jobs.csv",
    "jobs.parquet",
    "plan.csv",
    "report.md",
];

/// Refuses an existing folder `real` (as the caller named it: `target`) that holds files but
/// no [`MARKER`] (colo did not write it, or an earlier colo did, before the marker), or whose
/// marker says it holds another kind of result than `kind`: a plot must not replace the
/// results it was drawn from.
fn check_marked(target: &Path, real: &Path, kind: &str) -> std::io::Result<()> {
    let mut entries = match std::fs::read_dir(real) {
        Ok(entries) => entries.flatten().map(|e| e.file_name()).peekable(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if entries.peek().is_none() {
        return Ok(());
    }
    let shown = target.display();
    let marker = real.join(MARKER);
    if marker.is_file() {
        return match marked_kind(&marker) {
            Some(marked) if marked == kind => Ok(()),
            Some(marked) => Err(refuse(
                target,
                &format!(
                    "it holds colo {marked}, not {kind} (its {MARKER} says so); choose another \
                     output folder (--out), or remove this one (rm -r {shown}) if its {marked} \
                     can go"
                ),
            )),
            None => Err(refuse(
                target,
                &format!(
                    "its {MARKER} marker does not say what it holds (not colo's JSON with a \
                     \"kind\"); choose another output folder (--out) or remove this one"
                ),
            )),
        };
    }
    let names: Vec<String> = entries.map(|n| n.to_string_lossy().into_owned()).collect();
    let figures = |n: &String| n.ends_with(".png") || n.ends_with(".svg");
    let earlier = RESULT_FILES
        .iter()
        .find(|f| names.iter().any(|n| n == *f))
        .map(|f| (*f).to_owned())
        .or_else(|| names.iter().find(|n| figures(n)).cloned());
    let why = match earlier {
        Some(file) => format!(
            "it holds {file} but no {MARKER} marker: results of an earlier colo, written \
             before the marker, or files of your own; if it is colo's, remove it \
             (rm -r {shown}) and run again, else choose another output folder (--out)"
        ),
        None => format!(
            "it holds files that colo did not write (no {MARKER} marker); choose another \
             output folder (--out) or remove this one"
        ),
    };
    Err(refuse(target, &why))
}

/// The `kind` a [`MARKER`] file names; `None` when it cannot be read as colo's marker.
fn marked_kind(marker: &Path) -> Option<String> {
    let bytes = std::fs::read(marker).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some(value.get("kind")?.as_str()?.to_owned())
}

impl Drop for WholeDir {
    fn drop(&mut self) {
        if !self.committed {
            let mut state = in_progress();
            let _ = std::fs::remove_dir_all(&self.tmp);
            state.dirs.retain(|d| d != &self.tmp);
        }
    }
}

fn is_normal(c: std::path::Component<'_>) -> bool {
    matches!(c, std::path::Component::Normal(_))
}

fn refuse(target: &Path, why: &str) -> std::io::Error {
    std::io::Error::other(format!(
        "will not replace {} with a result folder: {why}",
        target.display()
    ))
}

/// Refuses `target` as a result folder when one of `inputs` (files or folders the run reads)
/// lies inside it: replacing the folder would remove what the run read.
pub fn check_outside(target: &Path, inputs: &[&Path]) -> std::io::Result<()> {
    let Ok(target_real) = target.canonicalize() else {
        return Ok(());
    };
    for input in inputs {
        if let Ok(input_real) = input.canonicalize()
            && input_real.starts_with(&target_real)
        {
            return Err(refuse(
                target,
                &format!("it holds {}, an input of this run", input.display()),
            ));
        }
    }
    Ok(())
}

/// [`check_outside`], and refuses `target` inside one of `inputs` as well: for a command whose
/// inputs are folders it reads whole (`colo merge`'s shards), whose result does not belong in
/// one of them.
pub fn check_apart(target: &Path, inputs: &[&Path]) -> std::io::Result<()> {
    check_outside(target, inputs)?;
    let Some(target_real) = resolve(target) else {
        return Ok(());
    };
    for input in inputs {
        if let Ok(input_real) = input.canonicalize()
            && target_real.starts_with(&input_real)
        {
            return Err(refuse(
                target,
                &format!("it lies inside {}, an input of this run", input.display()),
            ));
        }
    }
    Ok(())
}

/// `path` made absolute through its nearest existing folder (the rest need not exist); `None`
/// when a missing part is not a plain name.
fn resolve(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut base = path;
    loop {
        if let Ok(real) = base.canonicalize() {
            return Some(rest.iter().rev().fold(real, |acc, part| acc.join(part)));
        }
        rest.push(base.file_name()?);
        base = base.parent()?;
        if base.as_os_str().is_empty() {
            base = Path::new(".");
        }
    }
}

/// The checks of [`WholeDir::begin_result`] on an existing target, whatever it holds.
fn check_replaceable(target: &Path) -> std::io::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(target) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(refuse(target, "it is not a folder"));
    }
    if target.join(".git").exists() {
        return Err(refuse(target, "it is a git checkout"));
    }
    let (Ok(canonical), Ok(cwd)) = (target.canonicalize(), std::env::current_dir()) else {
        return Ok(());
    };
    if cwd.starts_with(&canonical) {
        return Err(refuse(target, "it holds the current directory"));
    }
    Ok(())
}

/// The two renames; on a failed second one the previous folder is put back.
fn swap(tmp: &Path, target: &Path, old: &Path) -> std::io::Result<()> {
    let had_old = match std::fs::rename(target, old) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e),
    };
    if let Err(err) = std::fs::rename(tmp, target) {
        if had_old {
            let _ = std::fs::rename(old, target);
        }
        return Err(err);
    }
    Ok(())
}

/// What a temporary sibling of folder `name` is: `.NAME.tmp-PID[.N]` or `.NAME.old-PID[.N]`.
#[derive(Debug, PartialEq, Eq)]
enum Leftover {
    Tmp(u32),
    Old(u32),
}

fn leftover(entry: &str, name: &str) -> Option<Leftover> {
    let rest = entry.strip_prefix('.')?.strip_prefix(name)?;
    let (old, rest) = match (rest.strip_prefix(".tmp-"), rest.strip_prefix(".old-")) {
        (Some(r), _) => (false, r),
        (None, Some(r)) => (true, r),
        (None, None) => return None,
    };
    let (pid, seq) = rest.split_once('.').unwrap_or((rest, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(seq) {
        return None;
    }
    let pid = pid.parse().ok()?;
    Some(if old {
        Leftover::Old(pid)
    } else {
        Leftover::Tmp(pid)
    })
}

/// Whether the process that named a leftover may still be writing it. On Linux, whether
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

/// Removes the temporaries of dead runs beside `parent/name`; a dead run's `.old-` folder is
/// put back when the target is missing (the run died between the two renames of its swap).
fn tidy(parent: &Path, name: &str, alive: &dyn Fn(u32, &Path) -> bool) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let mut found: Vec<(Leftover, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let entry = e.file_name().to_string_lossy().into_owned();
            leftover(&entry, name).map(|l| (l, e.path()))
        })
        .filter(|(l, path)| {
            let (Leftover::Tmp(pid) | Leftover::Old(pid)) = l;
            !alive(*pid, path)
        })
        .collect();
    // Old folders first, so that one can be put back before the rest are removed.
    found.sort_by_key(|(l, _)| matches!(l, Leftover::Tmp(_)));
    let target = parent.join(name);
    for (kind, path) in found {
        let restore =
            matches!(kind, Leftover::Old(_)) && std::fs::symlink_metadata(&target).is_err();
        if restore && std::fs::rename(&path, &target).is_ok() {
            continue;
        }
        let _ = std::fs::remove_dir_all(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEAD: u32 = 4_194_303;

    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap_or_else(|_| "<dir>".into());
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        out.sort();
        out
    }

    fn names(dir: &Path) -> Vec<String> {
        files(dir).into_iter().map(|(n, _)| n).collect()
    }

    fn previous(root: &Path) -> PathBuf {
        let target = root.join("res");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("jobs.csv"), "old jobs").unwrap();
        std::fs::write(target.join("summary.json"), "old summary").unwrap();
        target
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

    /// What the Ctrl-C handler does to a folder the run is still writing files into: gone,
    /// both by its name and by the temporary name it was moved to, however the creates fall.
    #[test]
    fn a_folder_being_written_is_removed_whole() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..20 {
            let tmp = dir
                .path()
                .join(format!(".res.tmp-{}.{round}", std::process::id()));
            std::fs::create_dir(&tmp).unwrap();
            let stop = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                scope.spawn(|| {
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let _ = std::fs::write(tmp.join(format!("f{n}")), "x");
                        n += 1;
                    }
                });
                while std::fs::read_dir(&tmp).map_or(0, |d| d.count()) < 50 {
                    std::thread::yield_now();
                }
                remove_while_written(&tmp);
                stop.store(true, Ordering::Relaxed);
            });
            assert_eq!(names(dir.path()), Vec::<String>::new(), "round {round}");
        }
    }

    #[test]
    fn issue_37_a_failed_second_rename_puts_the_previous_folder_back() {
        let dir = tempfile::tempdir().unwrap();
        let (target, old) = (dir.path().join("res"), dir.path().join(".res.old-1.0"));
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("a.csv"), "previous").unwrap();
        // The new folder is gone before the swap: the second rename fails.
        let err = swap(&dir.path().join(".res.tmp-1"), &target, &old).expect_err("no new folder");
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(files(&target), vec![("a.csv".into(), "previous".into())]);
        assert_eq!(names(dir.path()), vec!["res"]);
        // No previous folder: nothing to put back, and nothing appears.
        let empty = tempfile::tempdir().unwrap();
        let target = empty.path().join("res");
        let old = empty.path().join(".res.old-1.0");
        swap(&empty.path().join(".res.tmp-1"), &target, &old).expect_err("no new folder");
        assert!(names(empty.path()).is_empty());
    }

    #[test]
    fn issue_37_the_first_swap_into_a_missing_target_moves_the_new_folder_in() {
        let dir = tempfile::tempdir().unwrap();
        let (target, tmp) = (dir.path().join("res"), dir.path().join(".res.tmp-1"));
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("a.csv"), "new").unwrap();
        swap(&tmp, &target, &dir.path().join(".res.old-1.0")).expect("nothing to move aside");
        assert_eq!(files(&target), vec![("a.csv".into(), "new".into())]);
        assert_eq!(names(dir.path()), vec!["res"]);
    }

    #[test]
    fn issue_37_a_first_rename_failing_otherwise_than_not_found_stops_the_swap() {
        // The previous folder is empty and its aside name is taken by a folder with a file:
        // moving it aside fails (not empty), and the swap must stop there, although the new
        // folder could replace an empty one.
        let dir = tempfile::tempdir().unwrap();
        let (target, tmp) = (dir.path().join("res"), dir.path().join(".res.tmp-1"));
        let old = dir.path().join(".res.old-1.0");
        for folder in [&target, &tmp, &old] {
            std::fs::create_dir(folder).unwrap();
        }
        std::fs::write(tmp.join("a.csv"), "new").unwrap();
        std::fs::write(old.join("x"), "").unwrap();
        let err = swap(&tmp, &target, &old).expect_err("the first rename fails");
        assert_ne!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(files(&target).is_empty());
        assert_eq!(files(&tmp), vec![("a.csv".into(), "new".into())]);
    }

    #[test]
    fn issue_37_a_failed_first_rename_leaves_both_folders_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let (target, tmp) = (dir.path().join("res"), dir.path().join(".res.tmp-1"));
        for (folder, text) in [(&target, "previous"), (&tmp, "new")] {
            std::fs::create_dir(folder).unwrap();
            std::fs::write(folder.join("a.csv"), text).unwrap();
        }
        // The name the previous folder would move to is a folder that is not empty.
        let old = dir.path().join(".res.old-1.0");
        std::fs::create_dir(&old).unwrap();
        std::fs::write(old.join("x"), "").unwrap();
        swap(&tmp, &target, &old).expect_err("the first rename fails");
        assert_eq!(files(&target), vec![("a.csv".into(), "previous".into())]);
        assert_eq!(files(&tmp), vec![("a.csv".into(), "new".into())]);
        // And the swap that works moves the new folder in and the previous one aside.
        std::fs::remove_dir_all(&old).unwrap();
        swap(&tmp, &target, &old).expect("swapped");
        assert_eq!(files(&target), vec![("a.csv".into(), "new".into())]);
        assert_eq!(files(&old), vec![("a.csv".into(), "previous".into())]);
        assert!(!tmp.exists());
    }

    #[test]
    fn commit_replaces_the_whole_folder() {
        let dir = tempfile::tempdir().unwrap();
        let target = previous(dir.path());
        std::fs::write(target.join("stale.txt"), "stale").unwrap();
        let whole = WholeDir::begin(&target).unwrap();
        std::fs::write(whole.path().join("jobs.csv"), "new jobs").unwrap();
        assert_eq!(
            whole.final_path(&whole.path().join("jobs.csv")),
            target.join("jobs.csv")
        );
        whole.commit().unwrap();
        assert_eq!(files(&target), [("jobs.csv".into(), "new jobs".into())]);
        assert_eq!(names(dir.path()), ["res"], "no temporary left beside it");
    }

    /// A run killed (SIGKILL: no destructor runs) after writing its temporary folder and
    /// before the swap leaves the previous folder intact and whole; the next run removes the
    /// dead run's temporary.
    #[test]
    fn a_run_killed_before_the_swap_leaves_the_previous_folder_whole() {
        let dir = tempfile::tempdir().unwrap();
        let target = previous(dir.path());
        let whole = WholeDir::begin(&target).unwrap();
        std::fs::write(whole.path().join("jobs.csv"), "new jobs").unwrap();
        let tmp = whole.path().to_path_buf();
        std::mem::forget(whole);
        in_progress().dirs.retain(|d| d != &tmp);
        assert_eq!(
            files(&target),
            [
                ("jobs.csv".into(), "old jobs".into()),
                ("summary.json".into(), "old summary".into())
            ]
        );
        // As a dead process's: the next run's tidying removes it.
        let dead = dir.path().join(format!(".res.tmp-{DEAD}.0"));
        std::fs::rename(&tmp, &dead).unwrap();
        let next = WholeDir::begin(&target).unwrap();
        assert!(!dead.exists());
        drop(next);
        assert_eq!(names(dir.path()), ["res"]);
    }

    /// Killed between the two renames: the target is missing, the previous folder is whole
    /// under `.res.old-PID`; the next run puts it back and drops the unswapped new one.
    #[test]
    fn a_run_killed_between_the_renames_gets_the_previous_folder_back() {
        let dir = tempfile::tempdir().unwrap();
        let target = previous(dir.path());
        let tmp = dir.path().join(format!(".res.tmp-{DEAD}.3"));
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("jobs.csv"), "new jobs").unwrap();
        std::fs::rename(&target, dir.path().join(format!(".res.old-{DEAD}.4"))).unwrap();
        let next = WholeDir::begin(&target).unwrap();
        drop(next);
        assert_eq!(names(dir.path()), ["res"]);
        assert_eq!(
            files(&target),
            [
                ("jobs.csv".into(), "old jobs".into()),
                ("summary.json".into(), "old summary".into())
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_folder_is_replaced_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        let real = previous(dir.path());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let whole = WholeDir::begin(&link).unwrap();
        std::fs::write(whole.path().join("jobs.csv"), "new jobs").unwrap();
        assert_eq!(whole.final_path(whole.path()), link);
        whole.commit().unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(files(&real), [("jobs.csv".into(), "new jobs".into())]);
        assert_eq!(names(dir.path()), ["link", "res"]);
    }

    #[test]
    fn dropped_uncommitted_leaves_the_target_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let target = previous(dir.path());
        let whole = WholeDir::begin(&target).unwrap();
        std::fs::write(whole.path().join("jobs.csv"), "half").unwrap();
        drop(whole);
        assert_eq!(names(dir.path()), ["res"]);
        assert_eq!(files(&target)[0].1, "old jobs");
    }

    #[test]
    fn live_runs_temporaries_and_other_names_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = previous(dir.path());
        for name in [
            ".res.tmp-77.0",
            ".resx.tmp-4194303.0",
            ".res.tmp-x",
            "other",
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        tidy(dir.path(), "res", &|pid, _| pid == 77);
        assert_eq!(
            names(dir.path()),
            [
                ".res.tmp-77.0",
                ".res.tmp-x",
                ".resx.tmp-4194303.0",
                "other",
                "res"
            ]
        );
        assert!(target.is_dir());
    }

    #[test]
    fn leftover_names_parse() {
        assert_eq!(leftover(".res.tmp-12.3", "res"), Some(Leftover::Tmp(12)));
        assert_eq!(leftover(".res.old-12", "res"), Some(Leftover::Old(12)));
        assert_eq!(leftover(".res.tmp-12.", "res"), None);
        assert_eq!(leftover(".res.tmp-1x", "res"), None);
        assert_eq!(leftover(".res.tmp12", "res"), None);
        assert_eq!(leftover(".re.tmp-12", "res"), None);
    }

    /// Issue 34.4: a result folder of colo's own replaces only an empty or marked folder,
    /// and carries the marker.
    #[test]
    fn a_result_folder_replaces_only_an_empty_or_marked_one() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes");
        std::fs::create_dir(&notes).unwrap();
        std::fs::write(notes.join("thesis.tex"), "mine").unwrap();
        let err = WholeDir::begin_result(&notes, "results", "t").unwrap_err();
        assert!(err.to_string().contains("colo did not write"), "{err}");
        let earlier = previous(dir.path());
        let err = WholeDir::begin_result(&earlier, "results", "t").unwrap_err();
        assert!(err.to_string().contains("earlier colo"), "{err}");
        assert_eq!(names(dir.path()), ["notes", "res"], "nothing begun");
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        WholeDir::begin_result(&empty, "results", "t")
            .unwrap()
            .commit()
            .unwrap();
        let marker: serde_json::Value =
            serde_json::from_slice(&std::fs::read(empty.join(MARKER)).unwrap()).unwrap();
        assert_eq!(marker["kind"], "results");
        std::fs::write(empty.join("jobs.csv"), "x").unwrap();
        let again = WholeDir::begin_result(&empty, "results", "t").unwrap();
        again.commit().unwrap();
        assert_eq!(names(&empty), [MARKER]);
    }

    /// A marked folder is replaced only by a result of its own kind, and one whose marker
    /// names none is not replaced at all.
    #[test]
    fn a_marked_folder_is_replaced_only_by_a_result_of_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("r");
        let written = WholeDir::begin_result(&results, "results", "t").unwrap();
        std::fs::write(written.path().join("jobs.csv"), "x").unwrap();
        written.commit().unwrap();
        let err = WholeDir::begin_result(&results, "figures", "t").unwrap_err();
        assert!(
            err.to_string()
                .contains("it holds colo results, not figures"),
            "{err}"
        );
        WholeDir::begin_result(&results, "results", "u")
            .unwrap()
            .commit()
            .unwrap();
        assert_eq!(names(&results), [MARKER]);
        std::fs::write(results.join("jobs.csv"), "x").unwrap();
        for unnamed in ["not json", "{}", r#"{"kind": 3}"#] {
            std::fs::write(results.join(MARKER), unnamed).unwrap();
            let err = WholeDir::begin_result(&results, "results", "t").unwrap_err();
            assert!(
                err.to_string().contains("does not say what it holds"),
                "{err}"
            );
        }
        assert_eq!(names(dir.path()), ["r"], "nothing begun");
        assert_eq!(names(&results), [MARKER, "jobs.csv"]);
    }

    /// Issue 34.2: a target that is an input, holds one or lies inside one is refused.
    #[test]
    fn check_apart_refuses_a_target_among_the_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("s0");
        std::fs::create_dir(&input).unwrap();
        for target in [
            input.clone(),
            dir.path().to_owned(),
            input.join("inner"),
            input.join("a/b"),
        ] {
            assert!(check_apart(&target, &[&input]).is_err(), "{target:?}");
        }
        assert!(check_apart(&dir.path().join("merged"), &[&input]).is_ok());
        assert!(check_apart(&dir.path().join("s0x"), &[&input]).is_ok());
    }

    #[test]
    fn refuses_folders_it_must_not_replace() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(WholeDir::begin(&file).is_err());
        assert!(WholeDir::begin(Path::new(".")).is_err());
        assert!(WholeDir::begin(&dir.path().join("a/..")).is_err());
        let checkout = dir.path().join("repo");
        std::fs::create_dir_all(checkout.join(".git")).unwrap();
        assert!(WholeDir::begin(&checkout).is_err());
        let cwd = std::env::current_dir().unwrap();
        assert!(WholeDir::begin(&cwd).is_err());
        assert!(WholeDir::begin(cwd.parent().unwrap()).is_err());
        assert_eq!(names(dir.path()), ["f", "repo"]);
    }

    #[test]
    fn issue_37_a_live_runs_file_temporary_is_left_alone() {
        // Process 1 is alive wherever these tests run (on Linux, /proc/1; elsewhere the file
        // is new), so its temporary is being written: write_atomic leaves it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.ron");
        std::fs::write(dir.path().join(".p.ron.tmp1"), "live").unwrap();
        write_atomic(&path, b"one").unwrap();
        assert_eq!(names(dir.path()), [".p.ron.tmp1", "p.ron"]);
    }

    #[test]
    fn issue_37_this_processs_own_temporaries_are_left_alone() {
        // Another folder this process is writing beside the target, as two threads would.
        let dir = tempfile::tempdir().unwrap();
        let target = previous(dir.path());
        let mine = dir
            .path()
            .join(format!(".res.tmp-{}.999999", std::process::id()));
        std::fs::create_dir(&mine).unwrap();
        drop(WholeDir::begin(&target).unwrap());
        assert!(mine.is_dir());
    }

    #[test]
    fn issue_37_a_dead_runs_temporary_is_removed_and_never_becomes_the_target() {
        // Only an `.old-` folder is put back where the target is missing; a `.tmp-` one is a
        // result never swapped in.
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join(format!(".res.tmp-{DEAD}.0"));
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("jobs.csv"), "unfinished").unwrap();
        tidy(dir.path(), "res", &|_, _| false);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn issue_37_a_folder_of_figures_is_named_as_an_earlier_colos() {
        let dir = tempfile::tempdir().unwrap();
        let plots = dir.path().join("plots");
        std::fs::create_dir(&plots).unwrap();
        std::fs::write(plots.join("jct.svg"), "<svg/>").unwrap();
        let err = WholeDir::begin_result(&plots, "plots", "t").unwrap_err();
        assert!(
            err.to_string()
                .contains("it holds jct.svg but no .colo-result marker"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn issue_37_the_target_is_the_folder_as_named_not_where_its_link_points() {
        let dir = tempfile::tempdir().unwrap();
        let real = previous(dir.path());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let whole = WholeDir::begin(&link).unwrap();
        assert_eq!(whole.target(), link);
    }

    #[test]
    fn issue_37_an_interrupt_is_complete_only_when_something_was_published_and_nothing_cut() {
        let a = || vec![PathBuf::from("a")];
        let cases = [
            (a(), vec![], true),
            (vec![], vec![], false),
            (a(), a(), false),
            (vec![], a(), false),
        ];
        for (published, removed, complete) in cases {
            let interrupted = Interrupted { published, removed };
            assert_eq!(interrupted.complete(), complete, "{interrupted:?}");
        }
    }

    /// [`remove_in_progress`] stops every later result folder of the process, so this runs in
    /// a child: the test binary again, running only this test, with `CHILD` naming its folder.
    #[test]
    fn issue_37_an_interrupt_removes_the_folders_being_written_and_names_the_published() {
        const CHILD: &str = "COLO_FSUTIL_INTERRUPT_TEST_DIR";
        const NAME: &str = "fsutil::tests::issue_37_an_interrupt_removes_the_folders_being_written_and_names_the_published";
        let Some(root) = std::env::var_os(CHILD).map(PathBuf::from) else {
            let root = tempfile::tempdir().unwrap();
            let child = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1"])
                .env(CHILD, root.path())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&child.stdout);
            assert!(child.status.success(), "{stdout}");
            assert!(
                stdout.contains("1 passed"),
                "the child ran the test: {stdout}"
            );
            return;
        };
        let done = root.join("done");
        WholeDir::begin(&done).unwrap().commit().unwrap();
        drop(WholeDir::begin(&root.join("dropped")).unwrap());
        let half = WholeDir::begin(&root.join("half")).unwrap();
        std::fs::write(half.path().join("jobs.csv"), "half").unwrap();
        let tmp = half.path().to_path_buf();
        let interrupted = remove_in_progress();
        assert_eq!(
            interrupted,
            Interrupted {
                published: vec![done.clone()],
                removed: vec![tmp.clone()],
            }
        );
        assert!(!tmp.exists() && done.is_dir());
        assert!(!interrupted.complete());
        let refused =
            |r: std::io::Result<()>| r.unwrap_err().kind() == std::io::ErrorKind::Interrupted;
        half.commit().expect_err("its folder is gone");
        assert!(refused(WholeDir::begin(&root.join("later")).map(drop)));
        assert!(refused(create_result_dir(&root.join("later"))));
        assert_eq!(names(&root), ["done"]);
    }

    #[test]
    fn issue_37_a_file_named_as_a_temporary_but_with_a_signed_pid_is_left_alone() {
        // `+4194303` parses as a u32, but write_atomic names its temporaries with digits only.
        let dir = tempfile::tempdir().unwrap();
        let signed = format!(".p.ron.tmp+{DEAD}");
        std::fs::write(dir.path().join(&signed), "not a temporary").unwrap();
        write_atomic(&dir.path().join("p.ron"), b"one").unwrap();
        assert_eq!(names(dir.path()), [signed, "p.ron".to_owned()]);
    }
}
