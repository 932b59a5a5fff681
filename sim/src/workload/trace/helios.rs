//! The Helios / Acme job log (`cluster_log.csv`): `job_id,user,vc,gpu_num,cpu_num,node_num,
//! state,submit_time,start_time,end_time,duration,queue`, times as `YYYY-MM-DD HH:MM:SS`.

use super::row::{Col, RawJob, Row, Skip, positive_duration, time_in_range};
use super::source::Header;
use super::{SkipReason, TraceError};

/// The columns a Helios log needs (`start_time` and `end_time` are checked when present).
pub(crate) struct HeliosCols {
    job_id: Col,
    gpu_num: Col,
    submit_time: Col,
    start_time: Option<Col>,
    end_time: Option<Col>,
    duration: Col,
}

impl HeliosCols {
    pub fn find(header: &Header<'_>) -> Result<Self, TraceError> {
        Ok(HeliosCols {
            job_id: header.require("job_id")?,
            gpu_num: header.require("gpu_num")?,
            submit_time: header.require("submit_time")?,
            start_time: header.find("start_time"),
            end_time: header.find("end_time"),
            duration: header.require("duration")?,
        })
    }

    /// One row as a job: arrival from `submit_time`, run time from `duration`; CPU-only jobs
    /// (`gpu_num` 0, common in Helios) are filtered as `no_gpu`.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let name = row.text(self.job_id)?;
        let gpus = row.gpu_count(self.gpu_num, SkipReason::NoGpu)?;
        let submit_s = time_in_range(row.datetime(self.submit_time)?, self.submit_time)?;
        self.check_start_end(row)?;
        let duration_s = positive_duration(row.number(self.duration)?, self.duration)?;
        Ok(RawJob::whole_gpus(
            name.to_owned(),
            submit_s,
            duration_s,
            gpus,
        ))
    }

    /// When both `start_time` and `end_time` are given, the end must not be before the start.
    fn check_start_end(&self, row: &Row<'_>) -> Result<(), Skip> {
        let (Some(start_col), Some(end_col)) = (self.start_time, self.end_time) else {
            return Ok(());
        };
        let start = row.opt_datetime(start_col)?;
        let end = row.opt_datetime(end_col)?;
        match (start, end) {
            (Some(start), Some(end)) if end < start => {
                let detail = format!("is {} s before `start_time`", start - end);
                Err(Skip::new(SkipReason::EndBeforeStart, end_col, detail))
            }
            _ => Ok(()),
        }
    }
}
