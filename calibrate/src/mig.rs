//! MIG profiles of the GPUs the calibrator knows, used to emulate MIG slices under MPS and to
//! check the profiles of real instances a plan asks colo to create (mode Mig, `mig_profiles`).
//!
//! The H200 table is copied from `nvidia-smi mig -lgip` on an H200 (driver 580.159.04, 132 SMs,
//! 143771 MiB), read on 2026-11-30. Emulation sets an MPS SM budget of `sms / gpu_sms` and a
//! pinned memory limit of the profile's memory; it shares memory bandwidth and L2 with other
//! clients, which real MIG does not, so records made this way are labelled `mig-emulated`.

/// One MIG GPU-instance profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MigProfile {
    /// Profile name as `nvidia-smi mig -lgip` prints it without "MIG ", e.g. `3g.71gb`.
    pub name: &'static str,
    /// Streaming multiprocessors of the slice.
    pub sms: u32,
    /// Memory of the slice in MiB.
    pub memory_mib: u64,
}

/// SMs of a whole H200.
pub const H200_SMS: u32 = 132;

/// H200 MIG profiles (GiB from `nvidia-smi mig -lgip`, times 1024).
pub const H200_PROFILES: [MigProfile; 6] = [
    MigProfile {
        name: "1g.18gb",
        sms: 16,
        memory_mib: 16 * 1024,
    },
    MigProfile {
        name: "1g.35gb",
        sms: 26,
        memory_mib: 33_280,
    },
    MigProfile {
        name: "2g.35gb",
        sms: 32,
        memory_mib: 33_280,
    },
    MigProfile {
        name: "3g.71gb",
        sms: 60,
        memory_mib: 71_424,
    },
    MigProfile {
        name: "4g.71gb",
        sms: 64,
        memory_mib: 71_424,
    },
    MigProfile {
        name: "7g.141gb",
        sms: 132,
        memory_mib: 140 * 1024,
    },
];

/// Looks up an H200 profile by name (`3g.71gb`, with or without a leading `MIG `).
pub fn h200_profile(name: &str) -> Option<MigProfile> {
    let name = name.trim().trim_start_matches("MIG ").trim();
    H200_PROFILES.iter().copied().find(|p| p.name == name)
}

impl MigProfile {
    /// MPS active-thread percentage that emulates this slice, rounded to the nearest percent.
    pub fn sm_percent(&self) -> u32 {
        (self.sms * 100 + H200_SMS / 2) / H200_SMS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulated_budgets_follow_the_sm_counts() {
        let pct: Vec<u32> = H200_PROFILES.iter().map(MigProfile::sm_percent).collect();
        assert_eq!(pct, vec![12, 20, 24, 45, 48, 100]);
    }

    #[test]
    fn lookup_accepts_the_nvidia_smi_spelling() {
        assert_eq!(h200_profile("MIG 3g.71gb").map(|p| p.sms), Some(60));
        assert_eq!(h200_profile("9g.1tb"), None);
    }
}
