//! Typed access to the fields of one CSV row; each failure names its field and skip reason.

use csv::ByteRecord;

use super::SkipReason;
use super::time::parse_datetime;
use crate::workload::limits;

/// A column of the header: where it is and its name (for messages).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Col {
    pub idx: usize,
    pub name: &'static str,
}

/// Why one row is skipped: the reason, the field at fault and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Skip {
    pub reason: SkipReason,
    pub field: &'static str,
    pub detail: String,
}

impl Skip {
    pub fn new(reason: SkipReason, col: Col, detail: String) -> Self {
        Skip {
            reason,
            field: col.name,
            detail,
        }
    }
}

/// A job read from one row, before times are made relative to the trace's first submission.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawJob {
    pub name: String,
    pub submit_s: f64,
    pub duration_s: f64,
    pub gpus: u32,
    pub gpu_milli: Option<u32>,
}

impl RawJob {
    /// A job on whole GPUs (no `gpu_milli` share): what every layout but openb's gives.
    pub fn whole_gpus(name: String, submit_s: f64, duration_s: f64, gpus: u32) -> Self {
        RawJob {
            name,
            submit_s,
            duration_s,
            gpus,
            gpu_milli: None,
        }
    }
}

/// One CSV row.
pub(crate) struct Row<'r> {
    pub record: &'r ByteRecord,
}

impl<'r> Row<'r> {
    /// The trimmed text of a field, `None` when the field is empty or absent.
    pub fn opt_text(&self, col: Col) -> Result<Option<&'r str>, Skip> {
        let Some(bytes) = self.record.get(col.idx) else {
            return Ok(None);
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Skip::new(SkipReason::Unparsable, col, "is not UTF-8 text".into()))?;
        let text = text.trim();
        Ok((!text.is_empty()).then_some(text))
    }

    /// The trimmed text of a required field.
    pub fn text(&self, col: Col) -> Result<&'r str, Skip> {
        self.opt_text(col)?
            .ok_or_else(|| Skip::new(SkipReason::MissingField, col, "is empty".into()))
    }

    /// A required finite number.
    pub fn number(&self, col: Col) -> Result<f64, Skip> {
        let text = self.text(col)?;
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(value),
            _ => Err(unparsable(col, text, "a finite number")),
        }
    }

    /// A required whole number; `8` and `8.0` are both read as 8.
    pub fn whole(&self, col: Col) -> Result<i64, Skip> {
        let text = self.text(col)?;
        let value = text.parse::<f64>().ok();
        match value {
            Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Ok(v as i64),
            _ => Err(unparsable(col, text, "a whole number")),
        }
    }

    /// An optional `YYYY-MM-DD HH:MM:SS` time, in seconds since 1970.
    pub fn opt_datetime(&self, col: Col) -> Result<Option<f64>, Skip> {
        let Some(text) = self.opt_text(col)? else {
            return Ok(None);
        };
        parse_datetime(text)
            .map(Some)
            .ok_or_else(|| unparsable(col, text, "a time YYYY-MM-DD HH:MM:SS"))
    }

    /// A required `YYYY-MM-DD HH:MM:SS` time, in seconds since 1970.
    pub fn datetime(&self, col: Col) -> Result<f64, Skip> {
        self.opt_datetime(col)?
            .ok_or_else(|| Skip::new(SkipReason::MissingField, col, "is empty".into()))
    }

    /// A GPU count of at least 1; a count of 0 is skipped for `zero_reason`.
    pub fn gpu_count(&self, col: Col, zero_reason: SkipReason) -> Result<u32, Skip> {
        gpu_value(self.whole(col)?, col, zero_reason)
    }
}

/// A GPU count read from `col` (a whole number) checked to be at least 1 and at most
/// `limits::MAX_GPUS`; a count of 0 is skipped for `zero_reason`.
pub(crate) fn gpu_value(count: i64, col: Col, zero_reason: SkipReason) -> Result<u32, Skip> {
    match u32::try_from(count) {
        Ok(0) => Err(Skip::new(zero_reason, col, "is 0".into())),
        Ok(gpus) if gpus > limits::MAX_GPUS => Err(Skip::new(
            SkipReason::OutOfRange,
            col,
            format!("`{gpus}` is above the limit of {} GPUs", limits::MAX_GPUS),
        )),
        Ok(gpus) => Ok(gpus),
        Err(_) if count < 0 => Err(Skip::new(
            SkipReason::NegativeGpus,
            col,
            format!("`{count}` is negative"),
        )),
        Err(_) => Err(unparsable(col, &count.to_string(), "a GPU count")),
    }
}

/// Check that a duration is above zero and in the accepted range (`workload::limits`).
pub(crate) fn positive_duration(duration_s: f64, col: Col) -> Result<f64, Skip> {
    if duration_s < 0.0 {
        let detail = format!("`{duration_s}` is negative");
        Err(Skip::new(SkipReason::NegativeDuration, col, detail))
    } else if duration_s == 0.0 {
        Err(Skip::new(SkipReason::ZeroDuration, col, "is 0".into()))
    } else {
        limits::duration(duration_s).map_err(|e| out_of_range(col, &e))
    }
}

/// Check that a raw time (before times are made relative) is in the accepted range.
pub(crate) fn time_in_range(time_s: f64, col: Col) -> Result<f64, Skip> {
    limits::trace_time(time_s).map_err(|e| out_of_range(col, &e))
}

/// The skip for a time or duration outside the accepted range.
pub(crate) fn out_of_range(col: Col, err: &limits::OutOfRange) -> Skip {
    Skip::new(SkipReason::OutOfRange, col, err.to_string())
}

/// The skip for a field that does not parse as `expected`.
pub(crate) fn unparsable(col: Col, text: &str, expected: &str) -> Skip {
    let shown: String = text.chars().take(40).collect();
    Skip::new(
        SkipReason::Unparsable,
        col,
        format!("`{shown}` is not {expected}"),
    )
}
