//! colo-calibrate: measure real training on a GPU and fit profiles.
#![warn(clippy::print_stdout)]

pub mod fit;
