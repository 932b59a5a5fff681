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

/// What is wrong with a `MODEL:BATCH:IMAGE` text, found in this order; each reader of such
/// texts words its own message ([`ModelKeyError`] for [`ModelKey`]'s `FromStr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelKeyFault {
    /// Not three parts separated by `:`.
    Parts,
    /// The model name is refused (by default: empty).
    Model,
    /// The batch is not a positive whole number; holds the part as written.
    Batch(String),
    /// The image size is not a positive whole number; holds the part as written.
    Image(String),
}

impl ModelKey {
    /// Reads `MODEL:BATCH:IMAGE` (surrounding whitespace ignored), with `model_ok` deciding
    /// which model names are accepted: the one parser of such texts, behind [`ModelKey`]'s
    /// `FromStr` (which accepts any non-empty name) and the calibration plan's points.
    pub fn parse_with(text: &str, model_ok: impl Fn(&str) -> bool) -> Result<Self, ModelKeyFault> {
        let parts: Vec<&str> = text.trim().split(':').collect();
        let [model, batch, image] = parts[..] else {
            return Err(ModelKeyFault::Parts);
        };
        if !model_ok(model) {
            return Err(ModelKeyFault::Model);
        }
        let number = |part: &str| match part.parse::<u32>() {
            Ok(n) if n > 0 => Some(n),
            _ => None,
        };
        let batch = number(batch).ok_or_else(|| ModelKeyFault::Batch(batch.to_owned()))?;
        let image = number(image).ok_or_else(|| ModelKeyFault::Image(image.to_owned()))?;
        Ok(Self::new(model, batch, image))
    }
}

impl FromStr for ModelKey {
    type Err = ModelKeyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse_with(text, |model| !model.is_empty()).map_err(|fault| ModelKeyError {
            text: text.to_owned(),
            why: match fault {
                ModelKeyFault::Parts => "expected three parts separated by ':'".to_owned(),
                ModelKeyFault::Model => "the model name is empty".to_owned(),
                ModelKeyFault::Batch(part) => {
                    format!("batch `{part}` is not a positive whole number")
                }
                ModelKeyFault::Image(part) => {
                    format!("image size `{part}` is not a positive whole number")
                }
            },
        })
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
    /// Least speed it accepts while sharing, as a fraction of its alone rate, in (0, 1]; `None`:
    /// any. Only the `LeastSlowdown` placement rule reads it (a scenario refuses it under any
    /// other rule); a job spanning several GPUs runs alone and is never slowed by sharing.
    pub min_speed: Option<f64>,
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

    #[test]
    fn parse_with_lets_the_caller_choose_the_names_it_takes() {
        let no_spaces = |m: &str| !m.is_empty() && !m.contains(' ');
        assert_eq!(
            ModelKey::parse_with("res net:1:1", no_spaces),
            Err(ModelKeyFault::Model)
        );
        assert_eq!(
            ModelKey::parse_with(" resnet50:0:x ", no_spaces),
            Err(ModelKeyFault::Batch("0".to_owned()))
        );
        assert_eq!(
            ModelKey::parse_with("resnet50:64:x", no_spaces),
            Err(ModelKeyFault::Image("x".to_owned()))
        );
        assert_eq!(
            ModelKey::parse_with(" resnet50:64:224 ", no_spaces),
            Ok(ModelKey::new("resnet50", 64, 224))
        );
    }
}
