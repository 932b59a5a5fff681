//! Jobs, model keys and synthetic workloads.
//!
//! A job trains one model ([`ModelKey`]: model name, batch size, image side or sequence length)
//! for a fixed amount of work (samples). Traces and generators produce [`Job`]s; the engine
//! never sees where they came from.
pub mod limits;
pub mod stream;
pub mod synthetic;
pub mod trace;

use std::fmt;
use std::num::NonZeroU32;
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
    /// Least speed it accepts while sharing; `None`: any. Only the `LeastSlowdown` placement
    /// rule reads it (a scenario refuses it under any other rule); a job spanning several GPUs
    /// runs alone and is never slowed by sharing.
    pub min_speed: Option<MinSpeed>,
}

/// A job's minimum speed: a fraction of its alone rate in (0, 1], held as an `f32` (to about
/// 6e-8) in four bytes, so that a [`Job`] keeps its size (the field takes the padding after
/// `gpus`; a million jobs would otherwise carry 16 MB more).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MinSpeed(NonZeroU32);

impl MinSpeed {
    /// The minimum speed `fraction` of alone, or `None` unless it is in (0, 1].
    pub fn new(fraction: f64) -> Option<Self> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return None;
        }
        // The nearest f32, at least the smallest positive one.
        let bits = (fraction as f32).to_bits().max(1);
        NonZeroU32::new(bits).map(Self)
    }

    /// The fraction of alone.
    pub fn get(self) -> f64 {
        f64::from(f32::from_bits(self.0.get()))
    }
}

impl fmt::Display for MinSpeed {
    /// The shortest decimal that reads back as the kept value (`0.9`, not `0.8999999761581421`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", f32::from_bits(self.0.get()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_min_speed_is_a_fraction_in_four_bytes_and_jobs_keep_their_size() {
        for bad in [0.0, -0.5, 1.0 + 1e-9, 2.0, f64::NAN, f64::INFINITY] {
            assert_eq!(MinSpeed::new(bad), None, "{bad}");
        }
        for good in [1.0, 0.5, 0.95, 1e-30] {
            let kept = MinSpeed::new(good).unwrap().get();
            assert!((kept - good).abs() <= 6e-8 * good, "{good}: {kept}");
        }
        assert!(
            MinSpeed::new(1e-300).unwrap().get() > 0.0,
            "below f32's range: the least"
        );
        assert_eq!(MinSpeed::new(0.9).unwrap().to_string(), "0.9");
        assert_eq!(MinSpeed::new(1.0).unwrap().get(), 1.0);
        assert_eq!(std::mem::size_of::<Option<MinSpeed>>(), 4);
        #[cfg(target_pointer_width = "64")]
        assert_eq!(
            std::mem::size_of::<Job>(),
            80,
            "the minimum speed sits in padding"
        );
    }

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
