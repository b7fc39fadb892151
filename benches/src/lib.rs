//! Helpers shared by the netstep criterion benches: loading the repository's scenarios.

use std::path::{Path, PathBuf};

/// Absolute path of a file in the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative)
}

/// Loads a repository scenario with overrides, panicking with the scenario error (benches only).
pub fn load_scenario(relative: &str, overrides: &[&str]) -> netstep_scenario::Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    netstep_scenario::load(
        &repo_path(relative),
        &overrides,
        &netstep_scenario::Limits::machine(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}
