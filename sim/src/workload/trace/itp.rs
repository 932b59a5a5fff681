//! Microsoft ITP 2021, one cluster's CSV: `job_id,submission_time,duration,num_gpu`.

use super::row::{Col, RawJob, Row, Skip, positive_duration, time_in_range};
use super::source::Header;
use super::{SkipReason, TraceError};

/// The columns an ITP trace needs.
pub(crate) struct ItpCols {
    job_id: Col,
    submission_time: Col,
    duration: Col,
    num_gpu: Col,
}

impl ItpCols {
    pub fn find(header: &Header<'_>) -> Result<Self, TraceError> {
        Ok(ItpCols {
            job_id: header.require("job_id")?,
            submission_time: header.require("submission_time")?,
            duration: header.require("duration")?,
            num_gpu: header.require("num_gpu")?,
        })
    }

    /// One row as a job named by its `job_id`.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let name = row.text(self.job_id)?;
        let gpus = row.gpu_count(self.num_gpu, SkipReason::ZeroGpus)?;
        let submit_s = time_in_range(row.number(self.submission_time)?, self.submission_time)?;
        let duration_s = positive_duration(row.number(self.duration)?, self.duration)?;
        Ok(RawJob {
            name: name.to_owned(),
            submit_s,
            duration_s,
            gpus,
            gpu_milli: None,
        })
    }
}
