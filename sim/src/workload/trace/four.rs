//! Traces of four columns: a job's name, its submission time, its duration and its GPUs.
//! Microsoft ITP 2021, one cluster's CSV: `job_id,submission_time,duration,num_gpu`; colo's own
//! minimal CSV: `name,arrival_s,duration_s,gpus`. Other columns are ignored.

use super::row::{Col, RawJob, Row, Skip, positive_duration, time_in_range};
use super::source::Header;
use super::{SkipReason, TraceError};

/// A four-column format: its column names, and whether its times are relative to the trace's
/// start (then an arrival below zero is nonsense).
pub(crate) struct FourColumns {
    pub name: &'static str,
    pub submit: &'static str,
    pub duration: &'static str,
    pub gpus: &'static str,
    pub relative_times: bool,
}

/// Microsoft ITP 2021.
pub(crate) const ITP: FourColumns = FourColumns {
    name: "job_id",
    submit: "submission_time",
    duration: "duration",
    gpus: "num_gpu",
    relative_times: false,
};

/// colo's own CSV.
pub(crate) const COLO: FourColumns = FourColumns {
    name: "name",
    submit: "arrival_s",
    duration: "duration_s",
    gpus: "gpus",
    relative_times: true,
};

/// Where a four-column format's columns are in one file.
pub(crate) struct FourCols {
    name: Col,
    submit: Col,
    duration: Col,
    gpus: Col,
    relative_times: bool,
}

impl FourCols {
    pub fn find(header: &Header<'_>, format: &FourColumns) -> Result<Self, TraceError> {
        Ok(FourCols {
            name: header.require(format.name)?,
            submit: header.require(format.submit)?,
            duration: header.require(format.duration)?,
            gpus: header.require(format.gpus)?,
            relative_times: format.relative_times,
        })
    }

    /// One row as a job named by its name column.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let name = row.text(self.name)?;
        let gpus = row.gpu_count(self.gpus, SkipReason::ZeroGpus)?;
        let submit_s = row.number(self.submit)?;
        if self.relative_times && submit_s < 0.0 {
            let detail = format!("`{submit_s}` is negative");
            return Err(Skip::new(SkipReason::NegativeArrival, self.submit, detail));
        }
        let submit_s = time_in_range(submit_s, self.submit)?;
        let duration_s = positive_duration(row.number(self.duration)?, self.duration)?;
        Ok(RawJob::whole_gpus(
            name.to_owned(),
            submit_s,
            duration_s,
            gpus,
        ))
    }
}
