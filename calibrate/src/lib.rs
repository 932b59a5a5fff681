//! colo-calibrate: measure real training on a GPU under each sharing mode and store it.
//!
//! - [`plan`]: RON calibration plans (groups of co-run sets under one mode);
//! - [`runner`]: starts workers under a mode (the only code that touches a GPU), or fakes it;
//! - [`gpu`]: read-only GPU identity and sampling (NVML at run time, or nvidia-smi);
//! - [`shipped`]: the profiles and kernel tables of `calibrate/profiles/`, compiled in;
//! - [`store`]: append-only JSON lines, resumable; [`summary`]: tables of the store;
//! - [`execute`]: runs a plan with a runner into a store;
//! - [`trace`]: raw kernel traces (`workloads/trace.py`) reduced to sim's kernel tables;
//! - [`tracing`]: takes those traces through a runner, and indexes them for the store;
//! - [`transfer`]: traces carried to another GPU, and checked against traces measured there;
//! - [`predictor`]: the model `colo predict` answers with, over the shipped or given profiles;
//! - [`fit`]: least-squares fits of the parametric model (H200 data, Gavel pairs, MISO MIG);
//! - [`report`]: the collocation study's page (`colo report paper`), with the study's sets
//!   found in the store measured beside the predictions.
//!
//! ```
//! use colo_calibrate::{execute, plan::Plan, runner::FakeRunner};
//! let text = r#"(name: "demo", groups: [(id: "alone", mode: Exclusive, sets: [["resnet50:64:224"]])])"#;
//! let plan = Plan::parse(text, "demo.ron".as_ref()).unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let outcome = execute::run_plan(&plan, &mut FakeRunner::new(), dir.path(), &Default::default(), &mut |_| {}).unwrap();
//! assert_eq!(outcome.written, 3); // one set, one process, three repeats
//! ```
#![warn(clippy::print_stdout)]

pub mod execute;
pub mod fit;
#[cfg(test)]
mod fuzzing;
pub mod gpu;
pub mod plan;
pub mod predictor;
pub mod published;
pub mod report;
pub mod runner;
pub mod shipped;
pub mod store;
pub mod summary;
pub mod trace;
pub mod trace_cmd;
pub mod tracing;
pub mod transfer;
