//! Philly as prepared for Pollux: `timestamp,duration,num_gpus,gpu_time,cluster`.

use super::row::{Col, RawJob, Row, Skip, positive_duration, time_in_range};
use super::source::Header;
use super::{SkipReason, TraceError};

/// The columns a Philly trace needs.
pub(crate) struct PhillyCols {
    timestamp: Col,
    duration: Col,
    num_gpus: Col,
}

impl PhillyCols {
    pub fn find(header: &Header<'_>) -> Result<Self, TraceError> {
        Ok(PhillyCols {
            timestamp: header.require("timestamp")?,
            duration: header.require("duration")?,
            num_gpus: header.require("num_gpus")?,
        })
    }

    /// One row as a job; the trace has no job id, so the job is named `philly-<line>`.
    pub fn parse(&self, row: &Row<'_>, line: u64) -> Result<RawJob, Skip> {
        let gpus = row.gpu_count(self.num_gpus, SkipReason::ZeroGpus)?;
        let submit_s = time_in_range(row.datetime(self.timestamp)?, self.timestamp)?;
        let duration_s = positive_duration(row.number(self.duration)?, self.duration)?;
        Ok(RawJob::whole_gpus(
            format!("philly-{line}"),
            submit_s,
            duration_s,
            gpus,
        ))
    }
}
