//! Slurm accounting: `sacct --parsable2` output (`|`-separated), e.g. from
//! `sacct --allusers --parsable2 --format JobID,JobName,Submit,Start,End,Elapsed,AllocTRES,State`.

use super::row::{Col, RawJob, Row, Skip, gpu_value, positive_duration, time_in_range, unparsable};
use super::source::Header;
use super::time::{parse_datetime, parse_elapsed};
use super::{SkipReason, TraceError};

/// The columns a Slurm accounting dump needs: `Start` and `End`, or else `Elapsed`, for the
/// duration.
pub(crate) struct SlurmCols {
    job_id: Col,
    submit: Col,
    state: Col,
    alloc_tres: Col,
    duration: DurationCols,
    all_states: bool,
}

/// Where a job's run time comes from.
enum DurationCols {
    /// `End - Start`.
    StartEnd(Col, Col),
    /// `Elapsed`, when `Start` or `End` is not in the header.
    Elapsed(Col),
}

/// States of a job that has not ended (its length is not known yet).
const UNFINISHED: [&str; 9] = [
    "PENDING",
    "RUNNING",
    "SUSPENDED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESIZING",
    "STOPPED",
    "CONFIGURING",
    "COMPLETING",
];

impl SlurmCols {
    pub fn find(header: &Header<'_>, all_states: bool) -> Result<Self, TraceError> {
        let duration = match header.find("Start").zip(header.find("End")) {
            Some((start, end)) => DurationCols::StartEnd(start, end),
            None => DurationCols::Elapsed(header.require("Elapsed")?),
        };
        Ok(SlurmCols {
            job_id: header.require("JobID")?,
            submit: header.require("Submit")?,
            state: header.require("State")?,
            alloc_tres: header.require("AllocTRES")?,
            duration,
            all_states,
        })
    }

    /// One row as a job named by its `JobID` (`123`, an array task `123_4`, a heterogeneous
    /// component `123+0`); steps (`123.batch`, `123.0`) are filtered as `job_step`.
    pub fn parse(&self, row: &Row<'_>, _line: u64) -> Result<RawJob, Skip> {
        let name = row.text(self.job_id)?;
        if name.contains('.') {
            let detail = format!("`{name}` is a job step; its job's own row is read");
            return Err(Skip::new(SkipReason::JobStep, self.job_id, detail));
        }
        self.check_state(row)?;
        let submit_s = time_in_range(row.datetime(self.submit)?, self.submit)?;
        let duration_s = self.duration(row)?;
        let gpus = self.gpus(row)?;
        Ok(RawJob::whole_gpus(
            name.to_owned(),
            submit_s,
            duration_s,
            gpus,
        ))
    }

    /// Unfinished jobs are `no_end_time`; ended ones other than `COMPLETED` are
    /// `not_completed` unless every state is kept.
    fn check_state(&self, row: &Row<'_>) -> Result<(), Skip> {
        let state = row.text(self.state)?;
        // `CANCELLED by 1234`; sacct marks a cut name with `+`.
        let word = state.split_whitespace().next().unwrap_or(state);
        let word = word.trim_end_matches('+');
        if UNFINISHED.contains(&word) {
            let detail = format!("is `{word}`: the job has not ended");
            return Err(Skip::new(SkipReason::NoEndTime, self.state, detail));
        }
        if word != "COMPLETED" && !self.all_states {
            let detail = format!("is `{word}`, not COMPLETED (keep it with `all_states`)");
            return Err(Skip::new(SkipReason::NotCompleted, self.state, detail));
        }
        Ok(())
    }

    /// `End - Start` when both columns are there, else `Elapsed`.
    fn duration(&self, row: &Row<'_>) -> Result<f64, Skip> {
        let (start_col, end_col) = match self.duration {
            DurationCols::StartEnd(start_col, end_col) => (start_col, end_col),
            DurationCols::Elapsed(col) => {
                let text = row.text(col)?;
                let seconds = parse_elapsed(text)
                    .ok_or_else(|| unparsable(col, text, "a time [D-][HH:]MM:SS"))?;
                return positive_duration(seconds, col);
            }
        };
        let start = slurm_time(row, start_col)?;
        let end = slurm_time(row, end_col)?;
        match (start, end) {
            (Some(start), Some(end)) if end < start => {
                let detail = format!("is {} s before `Start`", start - end);
                Err(Skip::new(SkipReason::EndBeforeStart, end_col, detail))
            }
            (Some(start), Some(end)) => positive_duration(end - start, end_col),
            (_, None) => Err(Skip::new(
                SkipReason::NoEndTime,
                end_col,
                "is Unknown: the job has not ended".into(),
            )),
            (None, Some(_)) => Err(Skip::new(
                SkipReason::ZeroDuration,
                start_col,
                "is None: the job ended before it started".into(),
            )),
        }
    }

    /// GPUs from `AllocTRES` (`cpu=8,gres/gpu=2,mem=64G,node=1`): `gres/gpu`, or else the sum
    /// of the typed `gres/gpu:TYPE` counts; none is a CPU-only job (`no_gpu`).
    fn gpus(&self, row: &Row<'_>) -> Result<u32, Skip> {
        let col = self.alloc_tres;
        let tres = row.text(col)?;
        let mut plain: Option<i64> = None;
        let mut typed: Option<i64> = None;
        for item in tres
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            let Some((key, value)) = item.split_once('=') else {
                return Err(unparsable(col, item, "a TRES `name=count`"));
            };
            let is_plain = key == "gres/gpu";
            if !is_plain && !key.starts_with("gres/gpu:") {
                continue;
            }
            let count: i64 = value
                .parse()
                .map_err(|_| unparsable(col, item, "a GPU count `gres/gpu=N`"))?;
            if is_plain {
                plain = Some(count);
            } else {
                typed = Some(typed.unwrap_or(0).saturating_add(count));
            }
        }
        gpu_value(plain.or(typed).unwrap_or(0), col, SkipReason::NoGpu)
    }
}

/// A `Start` or `End` time; `Unknown` and `None` (not started, not ended) are `None`.
fn slurm_time(row: &Row<'_>, col: Col) -> Result<Option<f64>, Skip> {
    let text = row.text(col)?;
    if matches!(text, "Unknown" | "None") {
        return Ok(None);
    }
    parse_datetime(text)
        .map(Some)
        .ok_or_else(|| unparsable(col, text, "a time YYYY-MM-DDTHH:MM:SS, Unknown or None"))
}

#[cfg(test)]
mod tests {
    use crate::workload::trace::{ReadOptions, SkipReason, TraceFormat, read_trace_bytes};

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/traces/slurm_sacct.txt");

    fn opts(strict: bool, all_states: bool) -> ReadOptions {
        ReadOptions {
            strict,
            limit: None,
            all_states,
        }
    }

    /// (name, arrival_s, duration_s, gpus, line) of each job kept.
    fn jobs(all_states: bool) -> Vec<(String, f64, f64, u32, u64)> {
        let trace = read_trace_bytes(TraceFormat::Slurm, FIXTURE, &opts(false, all_states));
        let trace = trace.unwrap();
        trace
            .jobs
            .iter()
            .map(|j| (j.name.clone(), j.arrival_s, j.duration_s, j.gpus, j.line))
            .collect()
    }

    fn owned(rows: &[(&str, f64, f64, u32, u64)]) -> Vec<(String, f64, f64, u32, u64)> {
        rows.iter()
            .map(|&(n, a, d, g, l)| (n.to_owned(), a, d, g, l))
            .collect()
    }

    /// Worked by hand from the fixture: arrivals from 10:00:00 (1001's Submit, the earliest
    /// COMPLETED), durations End - Start; 1002_1's `gres/gpu=1` wins over its typed twin, 1002_2
    /// has only `gres/gpu:h100=4`.
    #[test]
    fn completed_jobs_by_hand() {
        let expected = owned(&[
            ("1001", 0.0, 7200.0, 2, 2),
            ("1002_1", 1800.0, 1800.0, 1, 5),
            ("1002_2", 1800.0, 600.0, 4, 6),
            ("1008+0", 12_600.0, 45.0, 1, 13),
        ]);
        assert_eq!(jobs(false), expected);
        let trace = read_trace_bytes(TraceFormat::Slurm, FIXTURE, &opts(false, false)).unwrap();
        assert_eq!(trace.rows_read, 15);
        assert_eq!(
            trace.skips.to_string(),
            "11 rows skipped: 1 missing_field, 1 unparsable, 1 end_before_start, \
             2 no_end_time, 1 no_gpu, 2 job_step, 3 not_completed"
        );
    }

    /// With every state kept, 1004 (TIMEOUT, submitted 09:00:00, 26 h) is the first arrival and
    /// 1011 (FAILED, 4 min 30 s) is kept; 1005 (cancelled before it started) is zero_duration.
    #[test]
    fn all_states_keeps_failed_and_timed_out_jobs() {
        let expected = owned(&[
            ("1004", 0.0, 93_600.0, 8, 9),
            ("1001", 3600.0, 7200.0, 2, 2),
            ("1011", 4500.0, 270.0, 2, 16),
            ("1002_1", 5400.0, 1800.0, 1, 5),
            ("1002_2", 5400.0, 600.0, 4, 6),
            ("1008+0", 16_200.0, 45.0, 1, 13),
        ]);
        assert_eq!(jobs(true), expected);
        let trace = read_trace_bytes(TraceFormat::Slurm, FIXTURE, &opts(false, true)).unwrap();
        assert_eq!(trace.skips.get(SkipReason::ZeroDuration), 1);
        assert_eq!(trace.skips.get(SkipReason::NotCompleted), 0);
        assert_eq!(trace.skips.total(), 9);
    }

    #[test]
    fn strict_mode_names_the_first_defect() {
        let err = read_trace_bytes(TraceFormat::Slurm, FIXTURE, &opts(true, false)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<bytes>:12: field `End` is 300 s before `Start` (end_before_start); fix the row, or \
             read without strict mode to skip and count such rows"
        );
    }

    /// Without `Start` and `End`, the duration is `Elapsed` (`D-HH:MM:SS`); a trailing `|`
    /// (`--parsable` rather than `--parsable2`) is read too.
    #[test]
    fn elapsed_when_start_and_end_are_absent() {
        let text = "JobID|Submit|Elapsed|AllocTRES|State|\n\
                    7|2024-03-01T00:00:00|1-02:03:04|gres/gpu=3|COMPLETED|\n\
                    8|2024-03-01T00:00:10|03:04|gres/gpu=1|COMPLETED|\n";
        let trace = read_trace_bytes(TraceFormat::Slurm, text.as_bytes(), &opts(true, false));
        let got: Vec<_> = trace
            .unwrap()
            .jobs
            .iter()
            .map(|j| (j.arrival_s, j.duration_s, j.gpus))
            .collect();
        assert_eq!(got, [(0.0, 93_784.0, 3), (10.0, 184.0, 1)]);
    }

    #[test]
    fn a_header_without_a_duration_is_an_error() {
        let text = "JobID|Submit|Start|AllocTRES|State\n";
        let err = read_trace_bytes(TraceFormat::Slurm, text.as_bytes(), &opts(false, false))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has no column `Elapsed`, which a slurm trace needs"),
            "{err}"
        );
    }
}
