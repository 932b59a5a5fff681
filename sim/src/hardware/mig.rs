//! MIG layouts: read them, place their slices on memory slices (backtracking), explain why a
//! layout does not fit, and enumerate every valid layout of a GPU.

use std::cmp::Reverse;
use std::fmt;
use std::ops::Range;

use super::{GpuSpec, HardwareError, MigConflict, MigProfile};

/// One MIG instance placed on a GPU: a profile and the memory slice where it starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MigSlice {
    /// The instance's profile.
    pub profile: &'static MigProfile,
    /// First memory slice it holds.
    pub start: u8,
}

impl MigSlice {
    /// The memory slices this instance holds, `start..start + memory_slices`.
    pub fn memory_slices(&self) -> Range<u8> {
        self.start..self.start + self.profile.memory_slices
    }
}

/// A valid set of MIG instances on one GPU, each with its start. Built only by
/// [`GpuSpec::mig_layout`], [`GpuSpec::parse_mig_layout`] and
/// [`GpuSpec::enumerate_mig_layouts`], so a `MigLayout` from them always fits.
///
/// Displays as `[4g.71gb@0, 3g.71gb@4]`, which [`GpuSpec::parse_mig_layout`] reads back into
/// the same layout.
#[derive(Clone, Debug, PartialEq)]
pub struct MigLayout {
    /// The instances, in the order they were asked for.
    pub slices: Vec<MigSlice>,
}

impl MigLayout {
    /// Compute slices the layout uses.
    pub fn compute_slices(&self) -> u32 {
        self.slices
            .iter()
            .map(|slice| u32::from(slice.profile.compute_slices))
            .sum()
    }

    /// Profile names of the slices, in slice order.
    pub fn profile_names(&self) -> Vec<&'static str> {
        self.slices.iter().map(|slice| slice.profile.name).collect()
    }
}

impl fmt::Display for MigLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .slices
            .iter()
            .map(|slice| format!("{}@{}", slice.profile.name, slice.start))
            .collect();
        write!(f, "[{}]", items.join(", "))
    }
}

/// One slice asked for: a profile (index into the GPU's table), maybe pinned to a start.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Request {
    profile_idx: usize,
    pinned: Option<u8>,
}

/// Why placement failed; indices point into the request list.
enum Failure {
    Compute {
        used: u32,
    },
    Instances {
        profile_idx: usize,
        requested: usize,
    },
    BadStart {
        request: usize,
    },
    NoFreeStart {
        request: usize,
        holders: Vec<(usize, u8)>,
    },
}

/// Upper bound on a count in layout text (`7 x 1g.18gb`), so a typo cannot allocate much.
const MAX_COUNT: usize = u8::MAX as usize;

impl GpuSpec {
    /// Places the named slices on this GPU. A name is a profile (`"3g.71gb"`, any case, an
    /// optional `MIG ` prefix), optionally pinned to a start: `"3g.71gb@4"`. The slices of the
    /// result are in the order of `names`; unpinned starts come from a deterministic
    /// backtracking search (most constrained slices first, lowest start first).
    ///
    /// # Errors
    /// [`HardwareError::EmptyMigLayout`] for no names, [`HardwareError::UnknownMigProfile`],
    /// [`HardwareError::BadMigLayoutText`] for a bad `@start`, and
    /// [`HardwareError::MigLayoutDoesNotFit`] saying which slice does not fit where.
    pub fn mig_layout(&self, names: &[&str]) -> Result<MigLayout, HardwareError> {
        let whole = names.join(", ");
        let requests = names
            .iter()
            .map(|name| self.parse_request(name, &whole))
            .collect::<Result<Vec<_>, _>>()?;
        self.layout_from_requests(&requests)
    }

    /// Reads a layout written as text: comma-separated items, each a profile name with an
    /// optional count before (`7x1g.18gb`, `7 x 1g.18gb`, `2*3g.71gb`) or after
    /// (`1g.35gb x4`) and an optional `@start`; spaces are free and `[ ]` around the list are
    /// optional. `"[3g.71gb, 4g.71gb]"`, `"7 x 1g.18gb"` and the [`MigLayout`] display form
    /// all parse.
    ///
    /// # Errors
    /// As [`GpuSpec::mig_layout`], plus [`HardwareError::BadMigLayoutText`] for an empty
    /// item or a count of zero or above 255.
    pub fn parse_mig_layout(&self, text: &str) -> Result<MigLayout, HardwareError> {
        let trimmed = text.trim();
        let inner = trimmed
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or(trimmed);
        if inner.trim().is_empty() {
            return Err(self.empty_layout_error());
        }
        let mut requests = Vec::new();
        for item in inner.split(',').map(str::trim) {
            let (count, name) =
                split_count(item).map_err(|reason| self.bad_text(text, item, &reason))?;
            let request = self.parse_request(name, text)?;
            requests.extend(std::iter::repeat_n(request, count));
        }
        self.layout_from_requests(&requests)
    }

    /// Every valid MIG layout of this GPU, non-maximal ones included, once per multiset of
    /// profiles (placements that differ only in starts count once; the empty layout is not
    /// listed).
    ///
    /// Order: each layout lists its slices in profile-table order (smallest profile first),
    /// and layouts come in lexicographic order of those profile lists, so on H200 the list
    /// starts `[1g.18gb]`, `[1g.18gb, 1g.18gb]`, ... and ends with `[7g.141gb]`. Starts are
    /// the ones [`GpuSpec::mig_layout`] would choose.
    pub fn enumerate_mig_layouts(&self) -> Vec<MigLayout> {
        let mut found = Vec::new();
        self.extend_layouts(0, &mut Vec::new(), &mut found);
        found
    }

    /// Depth-first over multisets in non-decreasing profile order. A multiset that does not
    /// fit has no superset that fits, so the walk stops there.
    fn extend_layouts(
        &self,
        first_profile: usize,
        requests: &mut Vec<Request>,
        found: &mut Vec<MigLayout>,
    ) {
        for profile_idx in first_profile..self.mig_profiles.len() {
            requests.push(Request {
                profile_idx,
                pinned: None,
            });
            if let Ok(starts) = self.place(requests) {
                found.push(self.layout(requests, &starts));
                self.extend_layouts(profile_idx, requests, found);
            }
            requests.pop();
        }
    }

    fn parse_request(&self, item: &str, whole: &str) -> Result<Request, HardwareError> {
        let (name, pinned) = match item.split_once('@') {
            None => (item, None),
            Some((name, start)) => {
                let start = start.trim().parse::<u8>().map_err(|_| {
                    let reason = "has a start after '@' that is not a memory-slice index; write e.g. 3g.71gb@4";
                    self.bad_text(whole, item, reason)
                })?;
                (name, Some(start))
            }
        };
        let profile = self.mig_profile(name)?;
        let profile_idx = self
            .mig_profiles
            .iter()
            .position(|known| std::ptr::eq(known, profile))
            .unwrap_or_default();
        Ok(Request {
            profile_idx,
            pinned,
        })
    }

    fn layout_from_requests(&self, requests: &[Request]) -> Result<MigLayout, HardwareError> {
        if requests.is_empty() {
            return Err(self.empty_layout_error());
        }
        match self.place(requests) {
            Ok(starts) => Ok(self.layout(requests, &starts)),
            Err(failure) => Err(self.explain(requests, failure)),
        }
    }

    fn layout(&self, requests: &[Request], starts: &[u8]) -> MigLayout {
        let profiles: &'static [MigProfile] = self.mig_profiles;
        let slices = requests
            .iter()
            .zip(starts)
            .map(|(request, &start)| MigSlice {
                profile: &profiles[request.profile_idx],
                start,
            })
            .collect();
        MigLayout { slices }
    }

    fn profile_of(&self, request: Request) -> &'static MigProfile {
        let profiles: &'static [MigProfile] = self.mig_profiles;
        &profiles[request.profile_idx]
    }

    /// Checks the counting rules, then searches for starts; returns one start per request.
    fn place(&self, requests: &[Request]) -> Result<Vec<u8>, Failure> {
        let used: u32 = requests
            .iter()
            .map(|&request| u32::from(self.profile_of(request).compute_slices))
            .sum();
        if used > u32::from(self.mig_compute_slices) {
            return Err(Failure::Compute { used });
        }
        for (profile_idx, profile) in self.mig_profiles.iter().enumerate() {
            let requested = requests
                .iter()
                .filter(|request| request.profile_idx == profile_idx)
                .count();
            if requested > usize::from(profile.max_instances) {
                return Err(Failure::Instances {
                    profile_idx,
                    requested,
                });
            }
        }
        let bad_pin = requests.iter().position(|&request| {
            request
                .pinned
                .is_some_and(|start| !self.profile_of(request).starts.contains(&start))
        });
        if let Some(request) = bad_pin {
            return Err(Failure::BadStart { request });
        }
        Placer::new(self, requests).run()
    }

    fn empty_layout_error(&self) -> HardwareError {
        let example = self
            .mig_profiles
            .first()
            .map(|profile| format!("{} x {}", profile.max_instances, profile.name))
            .unwrap_or_default();
        HardwareError::EmptyMigLayout {
            gpu: self.name,
            example,
        }
    }

    fn bad_text(&self, whole: &str, item: &str, reason: &str) -> HardwareError {
        HardwareError::BadMigLayoutText {
            gpu: self.name,
            text: whole.to_string(),
            item: item.to_string(),
            reason: reason.to_string(),
        }
    }

    /// Turns a placement failure into the user-facing error: which slice, where, how to fix.
    fn explain(&self, requests: &[Request], failure: Failure) -> HardwareError {
        let label = |request: usize| slice_label(self, requests, request);
        let (conflict, hint) = match failure {
            Failure::Compute { used } => {
                let excess = used - u32::from(self.mig_compute_slices);
                let conflict = MigConflict::ComputeSlices {
                    used,
                    available: self.mig_compute_slices,
                };
                let hint = format!(
                    "drop slices worth at least {excess} compute slice(s) ({ENUMERATE_HINT})"
                );
                (conflict, hint)
            }
            Failure::Instances {
                profile_idx,
                requested,
            } => {
                let profile = &self.mig_profiles[profile_idx];
                let conflict = MigConflict::TooManyInstances {
                    profile: profile.name,
                    requested,
                    max: profile.max_instances,
                };
                let hint = format!("use at most {} x {}", profile.max_instances, profile.name);
                (conflict, hint)
            }
            Failure::BadStart { request } => {
                let conflict = MigConflict::BadStart {
                    slice: label(request),
                    start: requests[request].pinned.unwrap_or_default(),
                    starts: describe_starts(self.profile_of(requests[request]).starts),
                };
                let hint =
                    "pin it to one of those starts, or drop the '@' and let the placement choose"
                        .to_string();
                (conflict, hint)
            }
            Failure::NoFreeStart { request, holders } => {
                let conflict = MigConflict::NoFreeStart {
                    slice: label(request),
                    starts: describe_starts(&self.candidate_starts(requests[request])),
                    holders: describe_holders(self, requests, &holders),
                };
                (conflict, self.fitting_profiles_hint(requests, request))
            }
        };
        HardwareError::MigLayoutDoesNotFit {
            gpu: self.name,
            layout: describe_requests(self, requests),
            conflict: Box::new(conflict),
            hint,
        }
    }

    /// Which profiles would fit in place of the slice that did not.
    fn fitting_profiles_hint(&self, requests: &[Request], failed: usize) -> String {
        let mut others: Vec<Request> = requests.to_vec();
        others.remove(failed);
        let fitting: Vec<&str> = (0..self.mig_profiles.len())
            .filter(|&profile_idx| {
                let mut candidate = others.clone();
                candidate.push(Request {
                    profile_idx,
                    pinned: None,
                });
                self.place(&candidate).is_ok()
            })
            .map(|profile_idx| self.mig_profiles[profile_idx].name)
            .collect();
        if fitting.is_empty() {
            format!(
                "no profile fits beside the other slices: drop {}",
                slice_label(self, requests, failed)
            )
        } else {
            format!(
                "beside the other slices these profiles still fit: {}",
                fitting.join(", ")
            )
        }
    }

    fn candidate_starts(&self, request: Request) -> Vec<u8> {
        match request.pinned {
            Some(start) => vec![start],
            None => self.profile_of(request).starts.to_vec(),
        }
    }
}

/// Where to look for every valid layout; part of the hint of a compute-slice error.
const ENUMERATE_HINT: &str = "`colo hardware --gpu <GPU>` lists every valid layout";

/// Backtracking search for starts. Slices go most constrained first (more memory slices,
/// then fewer allowed starts, then table order, then request order), each tries its allowed
/// starts lowest first. The deepest dead end is kept to explain a failure.
struct Placer<'a> {
    gpu: &'a GpuSpec,
    requests: &'a [Request],
    order: Vec<usize>,
    holder: Vec<Option<usize>>,
    starts: Vec<u8>,
    deepest: Option<(usize, usize, Vec<Option<usize>>)>,
}

impl<'a> Placer<'a> {
    fn new(gpu: &'a GpuSpec, requests: &'a [Request]) -> Self {
        let mut order: Vec<usize> = (0..requests.len()).collect();
        order.sort_by_key(|&request| {
            let profile = gpu.profile_of(requests[request]);
            let n_starts = gpu.candidate_starts(requests[request]).len();
            (
                Reverse(profile.memory_slices),
                n_starts,
                requests[request].profile_idx,
            )
        });
        Placer {
            gpu,
            requests,
            order,
            holder: vec![None; usize::from(gpu.mig_memory_slices)],
            starts: vec![0; requests.len()],
            deepest: None,
        }
    }

    fn run(mut self) -> Result<Vec<u8>, Failure> {
        if self.search(0) {
            return Ok(self.starts);
        }
        let (_, request, holder) = self.deepest.unwrap_or((0, self.order[0], self.holder));
        let profile = self.gpu.profile_of(self.requests[request]);
        let mut holders: Vec<usize> = Vec::new();
        for start in self.gpu.candidate_starts(self.requests[request]) {
            let window = usize::from(start)..usize::from(start + profile.memory_slices);
            for held_by in window.filter_map(|slice| holder.get(slice).copied().flatten()) {
                if !holders.contains(&held_by) {
                    holders.push(held_by);
                }
            }
        }
        let mut holders: Vec<(usize, u8)> = holders
            .into_iter()
            .filter_map(|held_by| {
                let start = holder.iter().position(|&h| h == Some(held_by))?;
                Some((held_by, u8::try_from(start).ok()?))
            })
            .collect();
        holders.sort_by_key(|&(_, start)| start);
        Err(Failure::NoFreeStart { request, holders })
    }

    fn search(&mut self, depth: usize) -> bool {
        let Some(&request) = self.order.get(depth) else {
            return true;
        };
        let size = usize::from(self.gpu.profile_of(self.requests[request]).memory_slices);
        let mut any_free = false;
        for start in self.gpu.candidate_starts(self.requests[request]) {
            let window = usize::from(start)..usize::from(start) + size;
            if window.end > self.holder.len()
                || self.holder[window.clone()].iter().any(Option::is_some)
            {
                continue;
            }
            any_free = true;
            self.holder[window.clone()].fill(Some(request));
            self.starts[request] = start;
            if self.search(depth + 1) {
                return true;
            }
            self.holder[window].fill(None);
        }
        let deeper = self
            .deepest
            .as_ref()
            .is_none_or(|(best, _, _)| depth > *best);
        if !any_free && deeper {
            self.deepest = Some((depth, request, self.holder.clone()));
        }
        false
    }
}

/// Splits `7x1g.18gb`, `7 x 1g.18gb`, `2*3g.71gb` or `1g.35gb x4` into count and name.
fn split_count(item: &str) -> Result<(usize, &str), String> {
    if item.is_empty() {
        return Err("is empty; separate slices with single commas".to_string());
    }
    let is_count = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let separators = ['x', 'X', '*', '×'];
    let prefix = item
        .split_once(separators)
        .filter(|(count, _)| is_count(count.trim()));
    let suffix = item
        .rsplit_once(separators)
        .filter(|(_, count)| is_count(count.trim()))
        .map(|(name, count)| (count, name));
    let Some((count, name)) = prefix.or(suffix) else {
        return Ok((1, item));
    };
    match count.trim().parse::<usize>() {
        Ok(0) => Err("asks for 0 slices; write a count of at least 1".to_string()),
        Ok(n) if n <= MAX_COUNT => Ok((n, name)),
        _ => Err(format!(
            "asks for more than {MAX_COUNT} slices; no GPU holds that many"
        )),
    }
}

/// `4g.71gb #2`: the profile and which of its slices, counted in request order.
fn slice_label(gpu: &GpuSpec, requests: &[Request], request: usize) -> String {
    let profile_idx = requests[request].profile_idx;
    let nth = requests[..=request]
        .iter()
        .filter(|other| other.profile_idx == profile_idx)
        .count();
    format!("{} #{nth}", gpu.mig_profiles[profile_idx].name)
}

/// `[4g.71gb, 4g.71gb]`; runs of three or more equal items as `8 x 1g.18gb`.
fn describe_requests(gpu: &GpuSpec, requests: &[Request]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut rest = requests;
    while let Some(&first) = rest.first() {
        let run = rest.iter().take_while(|&&other| other == first).count();
        let mut name = gpu.profile_of(first).name.to_string();
        if let Some(start) = first.pinned {
            name = format!("{name}@{start}");
        }
        if run >= 3 {
            items.push(format!("{run} x {name}"));
        } else {
            items.extend(std::iter::repeat_n(name, run));
        }
        rest = &rest[run..];
    }
    format!("[{}]", items.join(", "))
}

/// `memory slice 0`, `memory slices 0 or 4`, `memory slices 0, 2, 4 or 6`, `memory slices 0-6`.
fn describe_starts(starts: &[u8]) -> String {
    if let [only] = starts {
        return format!("memory slice {only}");
    }
    let mut items: Vec<String> = Vec::new();
    let mut rest = starts;
    while let Some(&first) = rest.first() {
        let run = (1..rest.len())
            .take_while(|&i| usize::from(rest[i]) == usize::from(first) + i)
            .count()
            + 1;
        if run >= 3 {
            items.push(format!("{first}-{}", rest[run - 1]));
        } else {
            items.extend(rest[..run].iter().map(u8::to_string));
        }
        rest = &rest[run..];
    }
    format!("memory slices {}", join_with_and_or(&items, "or"))
}

/// `4g.71gb #1 holds (slices 0-3)` or `3g.71gb #1 (slices 0-3) and 3g.71gb #2 (slices 4-7) hold`.
fn describe_holders(gpu: &GpuSpec, requests: &[Request], holders: &[(usize, u8)]) -> String {
    let held = |(request, start): (usize, u8)| {
        let last = start + gpu.profile_of(requests[request]).memory_slices - 1;
        let slices = if last == start {
            format!("slice {start}")
        } else {
            format!("slices {start}-{last}")
        };
        (slice_label(gpu, requests, request), slices)
    };
    match holders {
        [] => "lie outside the GPU".to_string(),
        [only] => {
            let (label, slices) = held(*only);
            format!("{label} holds ({slices})")
        }
        _ => {
            let items: Vec<String> = holders
                .iter()
                .map(|&holder| {
                    let (label, slices) = held(holder);
                    format!("{label} ({slices})")
                })
                .collect();
            format!("{} hold", join_with_and_or(&items, "and"))
        }
    }
}

/// `a, b and c` / `a, b or c`.
fn join_with_and_or(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} {word} {last}", init.join(", ")),
    }
}
