//! Jobs, model keys and synthetic workloads.
//!
//! A job trains one model ([`ModelKey`]: model name, batch size, image side or sequence length)
//! for a fixed amount of work (samples). Traces and generators produce [`Job`]s; the engine
//! never sees where they came from.
pub mod limits;
pub mod synthetic;
pub mod trace;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What a job trains: model name, batch size and image side (or sequence length).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelKey {
    /// Model name as the profile names it, e.g. `resnet50`.
    pub model: String,
    /// Samples per training step.
    pub batch: u32,
    /// Image side in pixels, or sequence length for language models.
    pub image: u32,
}

/// A model key written as `MODEL:BATCH:IMAGE` could not be read.
#[derive(Debug, Error, PartialEq)]
#[error("`{text}` is not a job written MODEL:BATCH:IMAGE (e.g. resnet50:64:224): {why}")]
pub struct ModelKeyError {
    /// The text as given.
    pub text: String,
    /// What was wrong with it.
    pub why: String,
}

impl ModelKey {
    /// A key from its three parts.
    pub fn new(model: &str, batch: u32, image: u32) -> Self {
        Self {
            model: model.to_owned(),
            batch,
            image,
        }
    }
}

impl fmt::Display for ModelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.model, self.batch, self.image)
    }
}

impl FromStr for ModelKey {
    type Err = ModelKeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why: &str| ModelKeyError {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let parts: Vec<&str> = text.trim().split(':').collect();
        let [model, batch, image] = parts[..] else {
            return Err(fail("expected three parts separated by ':'"));
        };
        if model.is_empty() {
            return Err(fail("the model name is empty"));
        }
        let number = |part: &str, what: &str| match part.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(fail(&format!(
                "{what} `{part}` is not a positive whole number"
            ))),
        };
        Ok(Self::new(
            model,
            number(batch, "batch")?,
            number(image, "image size")?,
        ))
    }
}

/// One training job as the engine sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The user's name for it (unique within a workload).
    pub name: String,
    /// What it trains.
    pub model: ModelKey,
    /// Submission time, seconds on the simulation's clock, in `[0, limits::MAX_TIME_S]`.
    pub arrival_s: f64,
    /// Work to do, in samples (epochs times dataset size).
    pub samples: f64,
    /// Whole GPUs it needs; more than one means it takes whole, unshared GPUs.
    pub gpus: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_key_round_trips_through_text() {
        let key: ModelKey = "resnet50:64:224".parse().unwrap();
        assert_eq!(key, ModelKey::new("resnet50", 64, 224));
        assert_eq!(key.to_string(), "resnet50:64:224");
    }

    #[test]
    fn model_key_errors_say_what_is_wrong() {
        let err = "resnet50:0:224".parse::<ModelKey>().unwrap_err();
        assert!(
            err.to_string()
                .contains("batch `0` is not a positive whole number"),
            "{err}"
        );
        let err = "resnet50:64".parse::<ModelKey>().unwrap_err();
        assert!(err.to_string().contains("three parts"), "{err}");
        assert!(":64:224".parse::<ModelKey>().is_err());
    }
}
