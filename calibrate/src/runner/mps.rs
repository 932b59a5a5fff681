//! The calibrator's own MPS control daemon, with private pipe and log folders.
//!
//! [`MpsDaemon`] is a guard: dropping it sends `quit` to the daemon, so the daemon is shut down
//! after success, error, timeout and interrupt alike (the runner turns Ctrl-C into an error
//! that unwinds through the guard).
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{MpsDirs, RunError};

/// A running MPS control daemon; shut down on drop.
#[derive(Debug)]
pub struct MpsDaemon {
    control: PathBuf,
    dirs: MpsDirs,
    gpu_visible: String,
    running: bool,
}

impl MpsDaemon {
    /// Starts `control -d` with private folders, on the GPU named by `gpu_visible` (an index as
    /// nvidia-smi numbers it: the daemon gets CUDA_DEVICE_ORDER=PCI_BUS_ID), and waits
    /// (up to 10 s) for its control pipe to appear.
    pub fn start(control: &Path, dirs: &MpsDirs, gpu_visible: &str) -> Result<MpsDaemon, RunError> {
        for dir in [&dirs.pipe, &dirs.log] {
            std::fs::create_dir_all(dir).map_err(|source| RunError::Io {
                path: dir.clone(),
                source,
            })?;
        }
        let mut daemon = MpsDaemon {
            control: control.to_path_buf(),
            dirs: dirs.clone(),
            gpu_visible: gpu_visible.to_string(),
            running: false,
        };
        let status = daemon
            .command()
            .arg("-d")
            .stdin(Stdio::null())
            .status()
            .map_err(|err| daemon.error(format!("cannot start: {err}")))?;
        if !status.success() {
            return Err(daemon.error(format!(
                "`-d` exited with {status}; see {}",
                dirs.log.display()
            )));
        }
        daemon.running = true;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dirs.pipe.join("control").exists() {
            if Instant::now() > deadline {
                return Err(daemon.error(format!(
                    "no control pipe in {} after 10 s",
                    dirs.pipe.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(daemon)
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.control);
        cmd.env("CUDA_MPS_PIPE_DIRECTORY", &self.dirs.pipe)
            .env("CUDA_MPS_LOG_DIRECTORY", &self.dirs.log)
            .env("CUDA_VISIBLE_DEVICES", &self.gpu_visible)
            .env("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn error(&self, message: String) -> RunError {
        RunError::Mps {
            control: self.control.display().to_string(),
            message,
        }
    }

    /// Last lines of the daemon's control and server logs (for error records).
    pub fn log_tail(&self) -> String {
        let mut out = String::new();
        for name in ["control.log", "server.log"] {
            if let Ok(text) = std::fs::read_to_string(self.dirs.log.join(name)) {
                let lines: Vec<&str> = text.lines().rev().take(4).collect();
                let lines: Vec<&str> = lines.into_iter().rev().collect();
                out += &format!(" [{name}: {}]", lines.join(" | "));
            }
        }
        out
    }

    /// Sends `quit` and waits up to 10 s for the control command to return.
    pub fn stop(mut self) -> Result<(), RunError> {
        self.quit()
    }

    fn quit(&mut self) -> Result<(), RunError> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        let mut child = self
            .command()
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|err| self.error(format!("cannot send quit: {err}")))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A daemon that already exited closes the pipe early; wait() below still reaps it.
            let _ = stdin.write_all(b"quit\n");
        }
        let daemon_pid =
            std::fs::read_to_string(self.dirs.pipe.join("nvidia-cuda-mps-control.pid"));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => {
                    wait_for_exit(
                        daemon_pid.ok().and_then(|pid| pid.trim().parse().ok()),
                        deadline,
                    );
                    return Ok(());
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(self.error("`quit` did not return within 10 s".into()));
                }
            }
        }
    }
}

/// `quit` returns before the daemon is gone: wait (until `deadline`) for the pid the daemon
/// wrote into its pipe folder, so the next launch starts on a GPU without our MPS server.
fn wait_for_exit(pid: Option<u32>, deadline: Instant) {
    let Some(pid) = pid else { return };
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for MpsDaemon {
    fn drop(&mut self) {
        if let Err(err) = self.quit() {
            eprintln!("warning: {err}");
        }
    }
}
