//! Result files rendered to bytes, and their writing into a result folder.
use std::fmt::Write as _;
use std::path::Path;

use super::{RunRecord, slowdown_of};
use crate::hardware::MigSlice;
use crate::workload::Job;

/// `jobs.csv`: one row per job, in input order.
pub fn jobs_csv(jobs: &[Job], run: &RunRecord) -> Vec<u8> {
    let mut out = String::from(
        "job,name,model,batch,image,gpus,arrival_s,start_s,end_s,wait_s,jct_s,group,gpu,slice,mode,samples,mean_rate,exclusive_rate,slowdown,status,preemptions\n",
    );
    for (idx, (job, o)) in jobs.iter().zip(&run.outcomes).enumerate() {
        let k = &job.model;
        let _ = write!(
            out,
            "{idx},{},{},{},{},{},{:.3},",
            csv_field(&job.name),
            csv_field(&k.model),
            k.batch,
            k.image,
            job.gpus,
            job.arrival_s
        );
        if o.completed {
            let _ = write!(
                out,
                "{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{:.3},{:.3},{:.4},completed",
                o.start_s,
                o.end_s,
                o.start_s - job.arrival_s,
                o.end_s - job.arrival_s,
                o.group.map_or(String::new(), |g| g.to_string()),
                o.gpus.first().map_or(String::new(), |g| g.to_string()),
                slice_label(o.slice),
                o.mode.map_or(String::new(), |m| m.to_string()),
                job.samples,
                job.samples / o.held_s(),
                o.exclusive_rate,
                slowdown_of(job, o),
            );
        } else {
            let _ = write!(
                out,
                ",,,,,,,,{},,{:.3},,unplaceable",
                job.samples, o.exclusive_rate
            );
        }
        let _ = writeln!(out, ",{}", o.preemptions());
    }
    out.into_bytes()
}

/// `placements.csv`: one row per (job, run, GPU) it occupied; a job never preempted has one run,
/// from its start to its end.
pub fn placements_csv(run: &RunRecord) -> Vec<u8> {
    let mut out = String::from("job,gpu,slice,start_s,end_s\n");
    for (idx, o) in run.outcomes.iter().enumerate() {
        for r in o.runs() {
            for gpu in r.gpus {
                let _ = writeln!(
                    out,
                    "{idx},{gpu},{},{:.3},{:.3}",
                    slice_label(r.slice),
                    r.start_s,
                    r.end_s
                );
            }
        }
    }
    out.into_bytes()
}

/// `timeline.csv`: cluster state after each change.
pub fn timeline_csv(run: &RunRecord) -> Vec<u8> {
    let mut out = String::from(
        "time_s,queued,running,busy_gpus,total_gpus,memory_used_gib,memory_total_gib\n",
    );
    for row in &run.timeline {
        let _ = writeln!(
            out,
            "{:.3},{},{},{},{},{:.3},{:.3}",
            row.time_s,
            row.queued,
            row.running,
            row.busy_gpus,
            run.total_gpus,
            row.memory_used_gib,
            run.memory_total_gib
        );
    }
    out.into_bytes()
}

fn slice_label(slice: Option<MigSlice>) -> String {
    slice.map_or(String::new(), |s| format!("{}@{}", s.profile.name, s.start))
}

/// Quotes a CSV field when it holds a comma, quote or newline.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Writes each `(file name, bytes)` into `dir`, creating `dir` (not its parent) when missing.
/// `dir` is a folder being written whole ([`crate::fsutil::WholeDir`]) or a subfolder of one,
/// so the files are written plainly: the folder is swapped in whole once complete.
pub fn write_result_dir(dir: &Path, files: &[(&str, Vec<u8>)]) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}
