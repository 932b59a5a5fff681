//! Alibaba GPU cluster trace 2023 "openb": a pod list (`name,cpu_milli,memory_mib,num_gpu,
//! gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time`) and a node list
//! (`sn,cpu_milli,memory_mib,gpu,model`) that defines the cluster.

use std::cell::Cell;
use std::io::Read;
use std::path::{Path, PathBuf};

use csv::ByteRecord;

use super::row::{Col, RawJob, Row, Skip, out_of_range, time_in_range};
use super::source::{Header, csv_reader, open, read_error};
use super::{SkipReason, TraceError, TraceFormat, TraceNode};

/// The node list's file name, looked for beside the pod list (plain or `.gz`).
pub const NODE_LIST_FILE: &str = "openb_node_list_gpu_node.csv";

/// The columns an openb pod list needs.
pub(crate) struct PodCols {
    name: Col,
    num_gpu: Col,
    gpu_milli: Col,
    creation_time: Col,
    deletion_time: Col,
    /// Rows seen so far with a valid GPU share below 1000, kept or not.
    pub sharing_rows: Cell<u64>,
}

impl PodCols {
    pub fn find(header: &Header<'_>) -> Result<Self, TraceError> {
        Ok(PodCols {
            name: header.require("name")?,
            num_gpu: header.require("num_gpu")?,
            gpu_milli: header.require("gpu_milli")?,
            creation_time: header.require("creation_time")?,
            deletion_time: header.require("deletion_time")?,
            sharing_rows: Cell::new(0),
        })
    }

    /// One pod as a job: GPUs and share first (CPU-only pods are filtered as `no_gpu`), then
    /// arrival = `creation_time`, duration = `deletion_time - creation_time`.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let name = row.text(self.name)?;
        let gpus = row.gpu_count(self.num_gpu, SkipReason::NoGpu)?;
        let gpu_milli = self.gpu_share(row, gpus)?;
        let created = time_in_range(row.number(self.creation_time)?, self.creation_time)?;
        let Some(deleted) = row.opt_text(self.deletion_time)? else {
            let detail = "is empty: the pod outlived the trace".into();
            return Err(Skip::new(SkipReason::NoEndTime, self.deletion_time, detail));
        };
        let deleted = deleted
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite())
            .ok_or_else(|| super::row::unparsable(self.deletion_time, deleted, "a number"))?;
        let deleted = time_in_range(deleted, self.deletion_time)?;
        let duration_s = self.lifetime(created, deleted)?;
        Ok(RawJob {
            name: name.to_owned(),
            submit_s: created,
            duration_s,
            gpus,
            gpu_milli: Some(gpu_milli),
        })
    }

    /// `gpu_milli` in 1..=1000; below 1000 (a shared GPU) only on a one-GPU pod.
    fn gpu_share(&self, row: &Row<'_>, gpus: u32) -> Result<u32, Skip> {
        let milli = row.whole(self.gpu_milli)?;
        let valid = (1..=1000).contains(&milli) && (gpus == 1 || milli == 1000);
        if !valid {
            let detail = format!("`{milli}` is not a share in 1..=1000 for a {gpus}-GPU pod");
            return Err(Skip::new(SkipReason::BadGpuShare, self.gpu_milli, detail));
        }
        if milli < 1000 {
            self.sharing_rows.set(self.sharing_rows.get() + 1);
        }
        Ok(milli as u32)
    }

    fn lifetime(&self, created: f64, deleted: f64) -> Result<f64, Skip> {
        let lifetime = deleted - created;
        if lifetime < 0.0 {
            let detail = format!("`{deleted}` is before `creation_time` `{created}`");
            Err(Skip::new(
                SkipReason::EndBeforeStart,
                self.deletion_time,
                detail,
            ))
        } else if lifetime == 0.0 {
            let detail = "equals `creation_time`".into();
            Err(Skip::new(
                SkipReason::ZeroDuration,
                self.deletion_time,
                detail,
            ))
        } else {
            crate::workload::limits::duration(lifetime)
                .map_err(|e| out_of_range(self.deletion_time, &e))
        }
    }
}

/// Where the node list is: `explicit` if given, else beside the pod list (plain, then `.gz`);
/// `None` when there is none beside it.
pub(crate) fn node_list_path(pods: &Path, explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_owned());
    }
    let folder = pods.parent().unwrap_or(Path::new("."));
    [NODE_LIST_FILE.to_owned(), format!("{NODE_LIST_FILE}.gz")]
        .into_iter()
        .map(|name| folder.join(name))
        .find(|candidate| candidate.is_file())
}

/// Read an openb node list. Every row must be valid (an error names the line); nodes with 0
/// GPUs (CPU-only nodes, `model` `nan` upstream) are left out.
pub fn read_openb_nodes(path: &Path) -> Result<Vec<TraceNode>, TraceError> {
    nodes_from(open(path)?, path)
}

/// Read a node list from decoded `input`; `path` is used in messages only.
pub(crate) fn nodes_from(
    input: Box<dyn Read + Send>,
    path: &Path,
) -> Result<Vec<TraceNode>, TraceError> {
    let mut reader = csv_reader(input);
    let header = Header::read(&mut reader, path, TraceFormat::AlibabaOpenb)?;
    let cols = NodeCols {
        sn: header.require("sn")?,
        gpu: header.require("gpu")?,
        model: header.require("model")?,
    };
    let mut nodes = Vec::new();
    let mut record = ByteRecord::new();
    let mut line = 1;
    loop {
        let more = reader
            .read_byte_record(&mut record)
            .map_err(|source| read_error(path, line, source))?;
        if !more {
            return Ok(nodes);
        }
        line = record.position().map_or(line + 1, |pos| pos.line());
        let node = cols
            .parse(&Row { record: &record })
            .map_err(|skip| TraceError::BadNode {
                path: path.to_owned(),
                line,
                field: skip.field,
                detail: skip.detail,
            })?;
        nodes.extend(node);
    }
}

struct NodeCols {
    sn: Col,
    gpu: Col,
    model: Col,
}

impl NodeCols {
    /// One node, or `None` for a CPU-only node.
    fn parse(&self, row: &Row<'_>) -> Result<Option<TraceNode>, Skip> {
        let name = row.text(self.sn)?;
        let gpus = row.whole(self.gpu)?;
        let gpus = u32::try_from(gpus).map_err(|_| {
            let detail = format!("`{gpus}` is not a GPU count");
            Skip::new(SkipReason::NegativeGpus, self.gpu, detail)
        })?;
        if gpus == 0 {
            return Ok(None);
        }
        Ok(Some(TraceNode {
            name: name.to_owned(),
            gpus,
            gpu_model: row.text(self.model)?.to_owned(),
        }))
    }
}
