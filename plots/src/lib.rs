//! colo-plots: figures drawn from colo's result files.
#![warn(clippy::print_stdout)]
