//! MIG instances the runner creates for one group (mode Mig with `mig_profiles`), only when the
//! user passed `--allow-mig-reconfigure`, and destroys afterwards.
//!
//! [`MigInstances`] is a guard like [`super::MpsDaemon`]: dropping it destroys the compute and
//! GPU instances it created, so they go after success, error, timeout and interrupt alike. It
//! only ever destroys GPU instances that `nvidia-smi mig -cgi` reported as created by its own
//! call and that were absent before; instances an administrator made are never touched. It never
//! changes MIG mode, clocks, power, compute mode or persistence, and never resets a GPU: where
//! MIG mode is off it stops with an error. Every nvidia-smi call runs in its own process group,
//! so a Ctrl-C in the terminal cannot cut a creation or destruction in half.
//!
//! Tested only against `tests/fixtures/fake_nvidia_smi.sh`, whose output copies the layout of
//! nvidia-smi 580's `-L`, `mig -lgi`, `mig -lci` and `mig -cgi ... -C`.
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{RunError, interrupted};

/// How long a destruction is retried: a killed worker's CUDA context can hold its instance
/// ("In use by another client") for a moment after the process is gone.
const DESTROY_RETRY: Duration = Duration::from_secs(10);

/// The nvidia-smi program and the GPU it is asked about.
#[derive(Debug, Clone)]
struct NvidiaSmi {
    program: PathBuf,
    gpu_index: u32,
}

/// What one nvidia-smi call said.
struct SmiOutput {
    success: bool,
    stdout: String,
    /// stdout and stderr together, trimmed, for error messages.
    text: String,
}

impl NvidiaSmi {
    fn run(&self, args: &[&str]) -> Result<SmiOutput, RunError> {
        let out = Command::new(&self.program)
            .args(args)
            .stdin(Stdio::null())
            .process_group(0)
            .output()
            .map_err(|err| self.error(format!("cannot run `{}`: {err}", args.join(" "))))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let text = format!("{} {}", stdout.trim(), stderr.trim())
            .trim()
            .replace('\n', " | ");
        Ok(SmiOutput {
            success: out.status.success(),
            stdout,
            text,
        })
    }

    /// `mig -i <gpu> <args..>`.
    fn mig(&self, args: &[&str]) -> Result<SmiOutput, RunError> {
        let gpu = self.gpu_index.to_string();
        let mut full = vec!["mig", "-i", &gpu];
        full.extend_from_slice(args);
        self.run(&full)
    }

    fn error(&self, message: String) -> RunError {
        RunError::Mig {
            nvidia_smi: self.program.display().to_string(),
            gpu: self.gpu_index,
            message,
        }
    }

    /// Fails unless MIG mode is on; colo never turns it on.
    fn require_mig_enabled(&self) -> Result<(), RunError> {
        let gpu = self.gpu_index.to_string();
        let out = self.run(&[
            "--query-gpu=mig.mode.current",
            "--format=csv,noheader",
            "-i",
            &gpu,
        ])?;
        match out.stdout.trim() {
            "Enabled" if out.success => Ok(()),
            "Disabled" => Err(RunError::MigDisabled {
                gpu: self.gpu_index,
            }),
            _ => Err(self.error(format!(
                "MIG mode query said `{}`: this GPU may not support MIG; use mode MigEmulated \
                 to emulate slices under MPS",
                out.text
            ))),
        }
    }

    /// GPU instance ids on the GPU (`mig -lgi`); none is an empty list.
    fn gpu_instances(&self) -> Result<Vec<u32>, RunError> {
        let out = self.mig(&["-lgi"])?;
        match (out.success, out.text.contains("No GPU instances found")) {
            (true, _) => Ok(parse_gpu_instances(&out.stdout, self.gpu_index)),
            (false, true) => Ok(Vec::new()),
            (false, false) => Err(self.error(format!("`mig -lgi` failed: {}", out.text))),
        }
    }

    /// (GPU instance, compute instance) ids on the GPU (`mig -lci`); none is an empty list.
    fn compute_instances(&self) -> Result<Vec<(u32, u32)>, RunError> {
        let out = self.mig(&["-lci"])?;
        match (out.success, out.text.contains("No compute instances found")) {
            (true, _) => Ok(parse_compute_instances(&out.stdout, self.gpu_index)),
            (false, true) => Ok(Vec::new()),
            (false, false) => Err(self.error(format!("`mig -lci` failed: {}", out.text))),
        }
    }

    /// MIG devices of this GPU as `nvidia-smi -L` lists them.
    fn mig_devices(&self) -> Result<Vec<MigDevice>, RunError> {
        let out = self.run(&["-L"])?;
        if !out.success {
            return Err(self.error(format!("`-L` failed: {}", out.text)));
        }
        Ok(parse_mig_devices(&out.stdout, self.gpu_index))
    }

    /// Runs one destroying call, retrying for a while (see [`DESTROY_RETRY`]).
    fn destroy(&self, args: &[&str]) -> Result<(), String> {
        let deadline = Instant::now() + DESTROY_RETRY;
        loop {
            let out = self.mig(args).map_err(|err| err.to_string())?;
            if out.success {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "`mig -i {} {}`: {}",
                    self.gpu_index,
                    args.join(" "),
                    out.text
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// A MIG device as `nvidia-smi -L` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigDevice {
    /// Profile name without "MIG ", e.g. `3g.71gb`.
    pub profile: String,
    /// `MIG-...` UUID, what CUDA_VISIBLE_DEVICES takes.
    pub uuid: String,
}

/// MIG instances created for one group; destroyed on drop.
#[derive(Debug)]
pub struct MigInstances {
    smi: NvidiaSmi,
    /// GPU instance ids this guard's own `-cgi` call created (never pre-existing ones).
    created: Vec<u32>,
    /// (GPU instance, compute instance) ids that call reported.
    created_compute: Vec<(u32, u32)>,
    /// Instance UUID per process rank.
    uuids: Vec<String>,
}

impl MigInstances {
    /// Creates one GPU instance with its default compute instance per profile on GPU
    /// `gpu_index` (`nvidia-smi mig -i N -cgi P1,P2 -C`) and finds each one's UUID. Fails, and
    /// destroys what it made, where MIG mode is off, creation fails or the new instances cannot
    /// be told apart from others.
    pub fn create(
        nvidia_smi: &Path,
        gpu_index: u32,
        profiles: &[String],
    ) -> Result<MigInstances, RunError> {
        let smi = NvidiaSmi {
            program: nvidia_smi.to_path_buf(),
            gpu_index,
        };
        smi.require_mig_enabled()?;
        let gis_before = smi.gpu_instances()?;
        let devices_before = smi.mig_devices()?;
        let mut instances = MigInstances {
            smi,
            created: Vec::new(),
            created_compute: Vec::new(),
            uuids: Vec::new(),
        };
        let out = instances.smi.mig(&["-cgi", &profiles.join(","), "-C"])?;
        let (gis, cis) = parse_created(&out.stdout);
        instances.created = gis
            .into_iter()
            .filter(|gi| !gis_before.contains(gi))
            .collect();
        instances.created_compute = cis;
        if !out.success {
            return Err(instances.smi.error(format!(
                "cannot create instances {}: {}; other instances on the GPU may leave no room \
                 (`nvidia-smi mig -lgi` lists them)",
                profiles.join(","),
                out.text
            )));
        }
        if instances.created.len() != profiles.len() {
            return Err(instances.smi.error(format!(
                "asked for {} instances but could tell only GPU instances {:?} apart as new in \
                 `{}`; colo destroys only instances it knows it made: check `nvidia-smi mig -lgi`",
                profiles.len(),
                instances.created,
                out.text
            )));
        }
        if interrupted() {
            return Err(RunError::Interrupted);
        }
        let devices_after = instances.smi.mig_devices()?;
        let new: Vec<MigDevice> = devices_after
            .into_iter()
            .filter(|d| !devices_before.contains(d))
            .collect();
        instances.uuids = assign_uuids(profiles, &new).map_err(|msg| instances.smi.error(msg))?;
        Ok(instances)
    }

    /// Instance UUID per process rank.
    pub fn uuids(&self) -> &[String] {
        &self.uuids
    }

    /// Destroys the instances now and says whether every one went.
    pub fn destroy(mut self) -> Result<(), RunError> {
        self.destroy_created()
    }

    /// Compute instances first (those the creation reported and any other inside our GPU
    /// instances), then the GPU instances. Runs once: a second call has nothing left.
    fn destroy_created(&mut self) -> Result<(), RunError> {
        let gis = std::mem::take(&mut self.created);
        let mut cis = std::mem::take(&mut self.created_compute);
        if gis.is_empty() {
            return Ok(());
        }
        // A failed listing still leaves the reported compute instances to destroy.
        if let Ok(listed) = self.smi.compute_instances() {
            cis.extend(listed);
        }
        cis.retain(|(gi, _)| gis.contains(gi));
        cis.sort_unstable();
        cis.dedup();
        let mut failures = Vec::new();
        for (gi, ci) in cis {
            let (gi, ci) = (gi.to_string(), ci.to_string());
            if let Err(msg) = self.smi.destroy(&["-gi", &gi, "-ci", &ci, "-dci"]) {
                failures.push(msg);
            }
        }
        for gi in &gis {
            if let Err(msg) = self.smi.destroy(&["-gi", &gi.to_string(), "-dgi"]) {
                failures.push(msg);
            }
        }
        match failures.is_empty() {
            true => Ok(()),
            false => Err(self.smi.error(format!(
                "could not destroy the instances colo created (GPU instances {gis:?}): {}; \
                 destroy them by hand with `nvidia-smi mig -i {gpu} -gi ID -ci ID -dci` then \
                 `nvidia-smi mig -i {gpu} -gi ID -dgi`",
                failures.join("; "),
                gpu = self.smi.gpu_index
            ))),
        }
    }
}

impl Drop for MigInstances {
    fn drop(&mut self) {
        if let Err(err) = self.destroy_created() {
            eprintln!("warning: {err}");
        }
    }
}

/// Gives each process a new device of its profile.
fn assign_uuids(profiles: &[String], new: &[MigDevice]) -> Result<Vec<String>, String> {
    let mut free: Vec<&MigDevice> = new.iter().collect();
    let mut uuids = Vec::with_capacity(profiles.len());
    for profile in profiles {
        let Some(pos) = free.iter().position(|d| &d.profile == profile) else {
            let seen: Vec<String> = new
                .iter()
                .map(|d| format!("{} {}", d.profile, d.uuid))
                .collect();
            return Err(format!(
                "no new MIG device of profile {profile} in `nvidia-smi -L` (new devices: [{}])",
                seen.join(", ")
            ));
        };
        uuids.push(free.remove(pos).uuid.clone());
    }
    Ok(uuids)
}

/// Table cells of a `mig -lgi` / `mig -lci` row, without the `|` borders.
fn cells(line: &str) -> Vec<&str> {
    line.split(|c: char| c == '|' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect()
}

/// GPU instance ids of GPU `gpu` in `mig -lgi` output (rows `GPU MIG NAME PROFILE_ID ID START:SIZE`).
pub fn parse_gpu_instances(text: &str, gpu: u32) -> Vec<u32> {
    text.lines()
        .map(cells)
        .filter(|c| c.len() >= 6 && c[1] == "MIG" && c[0].parse() == Ok(gpu))
        .filter_map(|c| c[4].parse().ok())
        .collect()
}

/// (GPU instance, compute instance) ids of GPU `gpu` in `mig -lci` output (rows
/// `GPU GI MIG NAME PROFILE_ID CI START:SIZE`).
pub fn parse_compute_instances(text: &str, gpu: u32) -> Vec<(u32, u32)> {
    text.lines()
        .map(cells)
        .filter(|c| c.len() >= 7 && c[2] == "MIG" && c[0].parse() == Ok(gpu))
        .filter_map(|c| Some((c[1].parse().ok()?, c[5].parse().ok()?)))
        .collect()
}

/// MIG devices listed under `GPU <gpu>:` in `nvidia-smi -L` output.
pub fn parse_mig_devices(text: &str, gpu: u32) -> Vec<MigDevice> {
    let mut current = None;
    let mut devices = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("GPU ") {
            current = rest.split(':').next().and_then(|n| n.trim().parse().ok());
            continue;
        }
        let (Some(rest), true) = (line.strip_prefix("MIG "), current == Some(gpu)) else {
            continue;
        };
        let profile = rest.split_whitespace().next().unwrap_or_default();
        let uuid = rest
            .split("(UUID: ")
            .nth(1)
            .and_then(|u| u.split(')').next());
        if let Some(uuid) = uuid {
            devices.push(MigDevice {
                profile: profile.to_string(),
                uuid: uuid.trim().to_string(),
            });
        }
    }
    devices
}

/// GPU instance ids and (GPU instance, compute instance) ids that `mig -cgi .. -C` reported
/// as created ("Successfully created GPU instance ID  2 ..." / "... compute instance ID  0 on
/// GPU  0 GPU instance ID  2 ...").
pub fn parse_created(text: &str) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut gis = Vec::new();
    let mut cis = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Successfully created GPU instance") {
            gis.extend(number_after(line, "GPU instance ID"));
        } else if line.starts_with("Successfully created compute instance") {
            let gi = number_after(line, "GPU instance ID");
            let ci = number_after(line, "compute instance ID");
            cis.extend(gi.zip(ci));
        }
    }
    (gis, cis)
}

fn number_after(line: &str, key: &str) -> Option<u32> {
    let rest = &line[line.find(key)? + key.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LGI: &str = "\
+-------------------------------------------------------+
| GPU instances:                                        |
| GPU   Name             Profile  Instance   Placement  |
|                          ID       ID       Start:Size |
|=======================================================|
|   0  MIG 3g.71gb          9        2          4:4     |
|   1  MIG 4g.71gb          5        1          0:4     |
+-------------------------------------------------------+";

    const LCI: &str = "\
| GPU     GPU       Name             Profile   Instance   Placement  |
|       Instance                       ID        ID       Start:Size |
|         ID                                                         |
|====================================================================|
|   0      2       MIG 3g.71gb          2         0          0:3     |
|   1      1       MIG 4g.71gb          3         0          0:4     |";

    const LIST: &str = "\
GPU 0: NVIDIA H200 (UUID: GPU-aaa)
  MIG 3g.71gb     Device  0: (UUID: MIG-0a)
GPU 1: NVIDIA H200 (UUID: GPU-bbb)
  MIG 4g.71gb     Device  0: (UUID: MIG-1a)
  MIG 3g.71gb     Device  1: (UUID: MIG-1b)";

    #[test]
    fn tables_are_read_for_the_selected_gpu_only() {
        assert_eq!(parse_gpu_instances(LGI, 0), vec![2]);
        assert_eq!(parse_gpu_instances(LGI, 1), vec![1]);
        assert_eq!(parse_compute_instances(LCI, 0), vec![(2, 0)]);
        assert!(parse_gpu_instances("No GPU instances found: Not Found", 0).is_empty());
    }

    #[test]
    fn devices_are_read_under_their_gpu() {
        let uuids: Vec<String> = parse_mig_devices(LIST, 1)
            .into_iter()
            .map(|d| format!("{} {}", d.profile, d.uuid))
            .collect();
        assert_eq!(uuids, vec!["4g.71gb MIG-1a", "3g.71gb MIG-1b"]);
    }

    #[test]
    fn creation_output_names_the_new_instances() {
        let out = "Successfully created GPU instance ID  2 on GPU  0 using profile MIG 3g.71gb (ID  9)\n\
                   Successfully created compute instance ID  0 on GPU  0 GPU instance ID  2 using profile MIG 3g.71gb (ID  2)\n";
        assert_eq!(parse_created(out), (vec![2], vec![(2, 0)]));
    }

    #[test]
    fn each_process_gets_a_device_of_its_profile() {
        let new = parse_mig_devices(LIST, 1);
        let profiles = ["3g.71gb".to_string(), "4g.71gb".to_string()];
        assert_eq!(
            assign_uuids(&profiles, &new),
            Ok(vec!["MIG-1b".to_string(), "MIG-1a".to_string()])
        );
        let err = assign_uuids(&["1g.18gb".to_string()], &new).expect_err("no such device");
        assert!(err.contains("1g.18gb"), "{err}");
    }
}
