//! Helpers shared by the integration tests that run real processes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The fixture MCP server (`examples/fixture_server.rs`) next to this test binary
/// (`target/<profile>/deps/../examples/`), built on demand when missing or older than its source.
pub fn fixture() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>");
        let path = profile_dir.join("examples").join("fixture_server");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fixture_server.rs");
        let stale = match (std::fs::metadata(&path), std::fs::metadata(&source)) {
            (Ok(bin), Ok(src)) => bin.modified().ok() < src.modified().ok(),
            _ => true,
        };
        if stale {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = std::process::Command::new(cargo)
                .args(["build", "--example", "fixture_server"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("run cargo build --example fixture_server");
            assert!(status.success(), "building the fixture server failed");
        }
        assert!(
            path.exists(),
            "fixture server not found at {}",
            path.display()
        );
        path
    })
    .clone()
}
