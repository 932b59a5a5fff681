//! Read-only GPU state: identity (name, driver, UUID) and samples taken during a run.
//!
//! NVML is loaded at run time (nvml-wrapper opens libnvidia-ml when asked); where it cannot be
//! loaded, `nvidia-smi --query-gpu` is used instead. Nothing here changes a GPU setting.
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::enums::device::UsedGpuMemory;
use serde::{Deserialize, Serialize};

/// Why GPU state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// Neither NVML nor nvidia-smi answered: there is no usable NVIDIA GPU here.
    #[error(
        "no NVIDIA GPU found: NVML failed ({nvml}) and nvidia-smi failed ({smi}); run on a machine with a GPU and its driver"
    )]
    NoGpu {
        /// NVML's error.
        nvml: String,
        /// nvidia-smi's error.
        smi: String,
    },
    /// The GPU index is not present.
    #[error("GPU index {index} not found ({message}); `nvidia-smi -L` lists the GPUs")]
    NoSuchIndex {
        /// Requested index.
        index: u32,
        /// Detail.
        message: String,
    },
}

/// Identity of the GPU measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// Product name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Driver version.
    pub driver: String,
    /// GPU UUID.
    pub uuid: String,
    /// Index as nvidia-smi numbers it.
    pub index: u32,
    /// Total memory, MiB.
    pub memory_total_mib: u64,
}

/// One read of the GPU's state; any field the source could not read is `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Unix time of the read, seconds.
    pub time_s: f64,
    /// GPU utilisation, percent.
    pub util_pct: Option<f64>,
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// Board power, W.
    pub power_w: Option<f64>,
    /// Memory used on the GPU, MiB.
    pub mem_used_mib: Option<f64>,
    /// Memory used per process (pid, MiB).
    pub procs: Vec<(u32, f64)>,
}

/// Where samples come from.
pub enum Source {
    /// NVML through nvml-wrapper.
    Nvml(Box<Nvml>),
    /// `nvidia-smi --query-gpu`.
    Smi,
    /// No sampling (fake runs and tests).
    Off,
}

/// Unix time now, seconds.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Opens NVML or, failing that, checks that nvidia-smi answers; returns the source and the
/// identity of GPU `index`.
pub fn probe(index: u32) -> Result<(Source, GpuInfo), GpuError> {
    let nvml_err = match Nvml::init() {
        Ok(nvml) => match nvml_info(&nvml, index) {
            Ok(info) => return Ok((Source::Nvml(Box::new(nvml)), info)),
            Err(err) => err,
        },
        Err(err) => err.to_string(),
    };
    match smi_info(index) {
        Ok(info) => Ok((Source::Smi, info)),
        Err(smi) if smi.contains("index") => Err(GpuError::NoSuchIndex {
            index,
            message: smi,
        }),
        Err(smi) => Err(GpuError::NoGpu {
            nvml: nvml_err,
            smi,
        }),
    }
}

fn nvml_info(nvml: &Nvml, index: u32) -> Result<GpuInfo, String> {
    let dev = nvml.device_by_index(index).map_err(|e| e.to_string())?;
    Ok(GpuInfo {
        name: dev.name().map_err(|e| e.to_string())?,
        driver: nvml.sys_driver_version().map_err(|e| e.to_string())?,
        uuid: dev.uuid().map_err(|e| e.to_string())?,
        index,
        memory_total_mib: dev.memory_info().map(|m| m.total >> 20).unwrap_or(0),
    })
}

fn smi(args: &[&str]) -> Result<String, String> {
    let out = Command::new("nvidia-smi")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let msg = if err.is_empty() {
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        } else {
            err
        };
        return Err(format!("nvidia-smi exited with {}: {msg}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn smi_info(index: u32) -> Result<GpuInfo, String> {
    let idx = index.to_string();
    let text = smi(&[
        "--query-gpu=name,driver_version,uuid,memory.total",
        "--format=csv,noheader,nounits",
        "-i",
        &idx,
    ])?;
    let fields: Vec<&str> = text
        .lines()
        .next()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .collect();
    let [name, driver, uuid, mem] = fields[..] else {
        return Err(format!("unexpected nvidia-smi output `{}`", text.trim()));
    };
    Ok(GpuInfo {
        name: name.into(),
        driver: driver.into(),
        uuid: uuid.into(),
        index,
        memory_total_mib: mem.parse().unwrap_or(0),
    })
}

/// Reads one sample from the source.
pub fn read_sample(source: &Source, index: u32) -> Sample {
    let mut sample = match source {
        Source::Nvml(nvml) => nvml_sample(nvml, index),
        Source::Smi => smi_sample(index),
        Source::Off => Sample::default(),
    };
    sample.time_s = unix_now();
    sample
}

fn nvml_sample(nvml: &Nvml, index: u32) -> Sample {
    let Ok(dev) = nvml.device_by_index(index) else {
        return Sample::default();
    };
    let procs = dev.running_compute_processes().map(|list| {
        list.iter()
            .filter_map(|p| match p.used_gpu_memory {
                UsedGpuMemory::Used(bytes) => Some((p.pid, bytes as f64 / 1048576.0)),
                UsedGpuMemory::Unavailable => None,
            })
            .collect()
    });
    Sample {
        time_s: 0.0,
        util_pct: dev.utilization_rates().ok().map(|u| f64::from(u.gpu)),
        sm_clock_mhz: dev.clock_info(Clock::SM).ok().map(f64::from),
        power_w: dev.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
        mem_used_mib: dev.memory_info().ok().map(|m| m.used as f64 / 1048576.0),
        procs: procs.unwrap_or_else(|_| smi_procs()),
    }
}

fn smi_sample(index: u32) -> Sample {
    let idx = index.to_string();
    let query = "--query-gpu=utilization.gpu,clocks.sm,power.draw,memory.used";
    let text = smi(&[query, "--format=csv,noheader,nounits", "-i", &idx]).unwrap_or_default();
    let num = |s: Option<&str>| s.and_then(|v| v.trim().parse::<f64>().ok());
    let mut fields = text.lines().next().unwrap_or("").split(',');
    Sample {
        time_s: 0.0,
        util_pct: num(fields.next()),
        sm_clock_mhz: num(fields.next()),
        power_w: num(fields.next()),
        mem_used_mib: num(fields.next()),
        procs: smi_procs(),
    }
}

fn smi_procs() -> Vec<(u32, f64)> {
    let text = smi(&[
        "--query-compute-apps=pid,used_memory",
        "--format=csv,noheader,nounits",
    ])
    .unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (pid, mem) = line.split_once(',')?;
            Some((pid.trim().parse().ok()?, mem.trim().parse().ok()?))
        })
        .collect()
}

/// Samples the GPU on a background thread until stopped.
pub struct Sampler {
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Source>>,
}

impl Sampler {
    /// Starts sampling GPU `index` every `interval`; the source is handed back by [`Sampler::stop`].
    pub fn start(source: Source, index: u32, interval: Duration) -> Sampler {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_samples, thread_stop) = (Arc::clone(&samples), Arc::clone(&stop));
        let handle = std::thread::spawn(move || {
            while !thread_stop.load(Ordering::Relaxed) {
                if !matches!(source, Source::Off) {
                    let sample = read_sample(&source, index);
                    if let Ok(mut list) = thread_samples.lock() {
                        list.push(sample);
                    }
                }
                std::thread::sleep(interval);
            }
            source
        });
        Sampler {
            samples,
            stop,
            handle: Some(handle),
        }
    }

    /// Summary of the samples taken between two unix times, for process `pid`.
    pub fn window(&self, start_s: f64, end_s: f64, pid: u32) -> WindowStats {
        match self.samples.lock() {
            Ok(list) => WindowStats::from_samples(&list, start_s, end_s, pid),
            Err(_) => WindowStats::default(),
        }
    }

    /// Stops the thread and returns the source for the next launch.
    pub fn stop(mut self) -> Source {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or(Source::Off)
    }
}

/// GPU state over a measured window (means, and maxima for memory).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowStats {
    /// Samples that fell in the window.
    pub n_samples: usize,
    /// Mean GPU utilisation, percent.
    pub util_pct: Option<f64>,
    /// Mean SM clock, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// Mean power, W.
    pub power_w: Option<f64>,
    /// Largest memory used on the GPU, MiB.
    pub gpu_mem_used_mib: Option<f64>,
    /// Largest memory NVML reported for this process, MiB.
    pub proc_mem_mib: Option<f64>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

fn max(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.fold(None, |acc: Option<f64>, v| {
        Some(acc.map_or(v, |a| a.max(v)))
    })
}

impl WindowStats {
    /// Summarises the samples with `start_s <= time_s <= end_s`.
    pub fn from_samples(samples: &[Sample], start_s: f64, end_s: f64, pid: u32) -> WindowStats {
        let inside: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.time_s >= start_s && s.time_s <= end_s)
            .collect();
        WindowStats {
            n_samples: inside.len(),
            util_pct: mean(inside.iter().filter_map(|s| s.util_pct)),
            sm_clock_mhz: mean(inside.iter().filter_map(|s| s.sm_clock_mhz)),
            power_w: mean(inside.iter().filter_map(|s| s.power_w)),
            gpu_mem_used_mib: max(inside.iter().filter_map(|s| s.mem_used_mib)),
            proc_mem_mib: max(inside
                .iter()
                .flat_map(|s| s.procs.iter().filter(|p| p.0 == pid).map(|p| p.1))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(time_s: f64, clock: f64, procs: Vec<(u32, f64)>) -> Sample {
        Sample {
            time_s,
            sm_clock_mhz: Some(clock),
            procs,
            ..Sample::default()
        }
    }

    #[test]
    fn window_keeps_only_samples_inside_and_the_process_memory() {
        let samples = vec![
            sample(0.5, 100.0, vec![(7, 50.0)]),
            sample(1.0, 1000.0, vec![(7, 900.0), (8, 4000.0)]),
            sample(2.0, 2000.0, vec![(7, 1000.0)]),
            sample(3.5, 100.0, vec![(7, 5000.0)]),
        ];
        let stats = WindowStats::from_samples(&samples, 1.0, 3.0, 7);
        assert_eq!(stats.n_samples, 2);
        assert_eq!(stats.sm_clock_mhz, Some(1500.0));
        assert_eq!(stats.proc_mem_mib, Some(1000.0));
        assert_eq!(stats.util_pct, None);
    }
}
