//! Helpers shared by the property-test files (`mod common;`).

/// Cycles per drawn stream: `SOAK_CYCLES` (underscores allowed) if set and positive, else
/// `default`.
pub fn soak_cycles(default: u64) -> u64 {
    std::env::var("SOAK_CYCLES")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .filter(|&c| c > 0)
        .unwrap_or(default)
}

/// `make soak` is running (more cases, longer streams).
pub fn soak_mode() -> bool {
    std::env::var_os("SOAK_CYCLES").is_some()
}
