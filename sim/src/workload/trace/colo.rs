//! colo's own minimal CSV: `name,arrival_s,duration_s,gpus`; other columns are ignored.

use super::row::{Col, RawJob, Row, Skip, positive_duration, time_in_range};
use super::source::Header;
use super::{SkipReason, TraceError};

/// The columns a colo trace needs.
pub(crate) struct ColoCols {
    name: Col,
    arrival_s: Col,
    duration_s: Col,
    gpus: Col,
}

impl ColoCols {
    pub fn find(header: &Header<'_>) -> Result<Self, TraceError> {
        Ok(ColoCols {
            name: header.require("name")?,
            arrival_s: header.require("arrival_s")?,
            duration_s: header.require("duration_s")?,
            gpus: header.require("gpus")?,
        })
    }

    /// One row as a job; an arrival below zero is nonsense in a file of relative times.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let name = row.text(self.name)?;
        let gpus = row.gpu_count(self.gpus, SkipReason::ZeroGpus)?;
        let submit_s = row.number(self.arrival_s)?;
        if submit_s < 0.0 {
            let detail = format!("`{submit_s}` is negative");
            return Err(Skip::new(
                SkipReason::NegativeArrival,
                self.arrival_s,
                detail,
            ));
        }
        let submit_s = time_in_range(submit_s, self.arrival_s)?;
        let duration_s = positive_duration(row.number(self.duration_s)?, self.duration_s)?;
        Ok(RawJob {
            name: name.to_owned(),
            submit_s,
            duration_s,
            gpus,
            gpu_milli: None,
        })
    }
}
