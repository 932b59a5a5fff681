//! Errors of the hardware catalog: unknown GPUs and profiles, unreadable or invalid MIG layouts.

/// Why a GPU, profile or MIG layout was refused. All are fatal for the scenario or command
/// that named them; each message says what to write instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HardwareError {
    /// The GPU name matches no catalog entry or alias.
    #[error("unknown GPU '{name}'; known GPUs: {known}")]
    UnknownGpu {
        /// The name as given.
        name: String,
        /// The catalog's GPUs, comma-separated.
        known: String,
    },
    /// The GPU has no MIG profile of that name.
    #[error("{gpu} has no MIG profile '{name}'; its profiles are: {known}")]
    UnknownMigProfile {
        /// Short id of the GPU.
        gpu: &'static str,
        /// The profile name as given.
        name: String,
        /// This GPU's profiles, comma-separated.
        known: String,
    },
    /// An item of a MIG layout text could not be read.
    #[error("cannot read MIG layout '{text}' for {gpu}: item '{item}' {reason}")]
    BadMigLayoutText {
        /// Short id of the GPU.
        gpu: &'static str,
        /// The whole layout text.
        text: String,
        /// The item that failed.
        item: String,
        /// What is wrong and what to write instead.
        reason: String,
    },
    /// The layout names no slice.
    #[error("MIG layout on {gpu} is empty; name at least one slice, e.g. '{example}'")]
    EmptyMigLayout {
        /// Short id of the GPU.
        gpu: &'static str,
        /// A valid example layout for this GPU.
        example: String,
    },
    /// The slices cannot all be placed on the GPU.
    #[error("MIG layout {layout} does not fit on {gpu}: {conflict}; {hint}")]
    MigLayoutDoesNotFit {
        /// Short id of the GPU.
        gpu: &'static str,
        /// The requested slices, e.g. `[4g.71gb, 4g.71gb]`.
        layout: String,
        /// The first rule the layout breaks.
        conflict: Box<MigConflict>,
        /// How to fix it.
        hint: String,
    },
}

/// The rule a MIG layout breaks. Checked in this order: compute slices, instance limits,
/// pinned starts, then placement of memory slices.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MigConflict {
    /// The slices need more compute slices than the GPU has.
    #[error("it uses {used} compute slices, the GPU has {available}")]
    ComputeSlices {
        /// Compute slices the layout asks for.
        used: u32,
        /// Compute slices of the GPU.
        available: u8,
    },
    /// A profile appears more often than NVIDIA allows on one GPU.
    #[error("it asks for {requested} x {profile}, at most {max} fit")]
    TooManyInstances {
        /// Profile name.
        profile: &'static str,
        /// Instances asked for.
        requested: usize,
        /// The profile's instance limit.
        max: u8,
    },
    /// A slice is pinned (`name@start`) to a start its profile does not allow.
    #[error("{slice} cannot start at memory slice {start}; it can start only at {starts}")]
    BadStart {
        /// The slice, e.g. `3g.71gb #1`.
        slice: String,
        /// The pinned start.
        start: u8,
        /// The allowed starts, e.g. `memory slices 0 or 4`.
        starts: String,
    },
    /// No allowed start of a slice is free in the deepest placement the search found.
    #[error("{slice} can start only at {starts}, which {holders}")]
    NoFreeStart {
        /// The slice that does not fit, e.g. `4g.71gb #2`.
        slice: String,
        /// Its allowed starts, e.g. `memory slice 0`.
        starts: String,
        /// The slices holding them, e.g. `4g.71gb #1 holds (slices 0-3)`.
        holders: String,
    },
}
