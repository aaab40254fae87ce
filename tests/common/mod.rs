//! Helpers shared by the integration tests that run real processes.
#![allow(dead_code)]

pub mod otlp;
pub mod process;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The fixture MCP server (`examples/fixture_server.rs`) next to this test binary.
pub fn fixture() -> PathBuf {
    example("fixture_server")
}

/// The compiled example `name` next to this test binary (`target/<profile>/deps/../examples/`),
/// built on demand when missing or older than its source.
pub fn example(name: &'static str) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static BUILT: OnceLock<Mutex<HashMap<&'static str, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let path = profile_dir.join("examples").join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    let stale = match (std::fs::metadata(&path), std::fs::metadata(&source)) {
        (Ok(bin), Ok(src)) => bin.modified().ok() < src.modified().ok(),
        _ => true,
    };
    if stale {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap_or_else(|e| panic!("run cargo build --example {name}: {e}"));
        assert!(status.success(), "building the example {name} failed");
    }
    assert!(
        path.exists(),
        "example {name} not found at {}",
        path.display()
    );
    built.insert(name, path.clone());
    path
}

/// A temporary directory for one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory under the system temp dir, unique per process and call.
    pub fn new(name: &str) -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-readiness-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Scratch(dir)
    }

    /// A file in the directory.
    pub fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }

    /// A file's text, empty when it does not exist.
    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).unwrap_or_default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether a process runs (a zombie has exited and counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

/// A stdio server spec running the fixture server as `name`, with extra environment.
pub fn stdio(name: &str, env: &[(&str, &str)]) -> mcp_readiness::ServerSpec {
    mcp_readiness::ServerSpec {
        name: name.into(),
        transport: mcp_readiness::TransportSpec::Stdio {
            command: fixture().display().to_string(),
            args: Vec::new(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), (*v).into()))
                .collect(),
            cwd: None,
        },
    }
}

/// The text content of a tool result.
pub fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            rmcp::model::ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}
