//! Jobs made as the clock reaches them rather than listed: a synthetic generator's draws, or a
//! trace read row by row. The engine pulls the next job when the previous one arrives, so no
//! job is held before it arrives and none after it finishes.
use std::fmt;

use super::{Job, MinSpeed, ModelKey};

/// A kind of job a [`JobSource`] gives: what the engine resolves once for every job of it (the
/// model's class and memory on each GPU type, whether it fits somewhere).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceKind {
    /// What its jobs train.
    pub model: ModelKey,
    /// GPUs each of its jobs asks for (at least 1).
    pub gpus: u32,
    /// Least speed its jobs accept, if any.
    pub min_speed: Option<MinSpeed>,
    /// Its first job's index in arrival order.
    pub first: u32,
    /// Its first job's name (errors about the kind name it).
    pub first_name: String,
}

/// One job a source gives, with its kind (an index into [`JobSource::kinds`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Drawn {
    /// Its kind, an index into [`JobSource::kinds`].
    pub kind: u32,
    /// The job.
    pub job: Job,
}

/// A source could not give a job it counted before the run (its trace became unreadable, or
/// differs from what was read when the scenario was built).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

/// The jobs a source gives, in arrival order.
pub type Draws<'s> = Box<dyn Iterator<Item = Result<Drawn, SourceError>> + Send + 's>;

/// Where the engine takes jobs from as its clock goes, checked once before the run: every job
/// it will give is known to be in range, its count and kinds are known.
pub trait JobSource: fmt::Debug + Send + Sync {
    /// How many jobs it gives.
    fn len(&self) -> u32;

    /// Whether it gives no job.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its kinds of job, in the order of their first jobs.
    fn kinds(&self) -> &[SourceKind];

    /// Its jobs in arrival order, from the first: job `idx` is the `idx`-th given. With
    /// `named` false, a job may come with an empty name, which is then [`index_name`]`(idx)`.
    fn draws(&self, named: bool) -> Draws<'_>;

    /// The name of the first job with a minimum speed, if any has one.
    fn first_min_speed(&self) -> Option<String> {
        self.kinds()
            .iter()
            .filter(|k| k.min_speed.is_some())
            .min_by_key(|k| k.first)
            .map(|k| k.first_name.clone())
    }
}

/// The name of job `idx` when its source gives none: `j` and its index.
pub fn index_name(idx: u32) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(idx);
    let mut name = String::with_capacity(1 + digits.len());
    name.push('j');
    name.push_str(digits);
    name
}
