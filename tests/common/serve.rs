//! `mcp-readiness serve` as a real process: started on a free loopback port, its stdout and stderr
//! kept in files, killed with its children when the test ends.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::Scratch;
use super::process::{Guard, http_get, wait_for};

/// A running `serve`.
pub struct Serve {
    pub guard: Guard,
    /// `127.0.0.1:<port>` of its `/metrics`.
    pub addr: String,
    out: PathBuf,
    err: PathBuf,
}

impl Serve {
    /// Starts `bin serve --listen 127.0.0.1:0 --config config` with extra environment and waits
    /// for the address it prints; fails at once if it exits first.
    pub async fn start(bin: &str, scratch: &Scratch, config: &Path, env: &[(&str, &str)]) -> Serve {
        let out = scratch.path("serve.out");
        let err = scratch.path("serve.err");
        let child = Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .envs(env.iter().copied())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("start mcp-readiness serve");
        let mut guard = Guard {
            child,
            name: "mcp-readiness serve",
        };
        let addr = wait_for("serve's listening line", Duration::from_secs(20), || {
            if let Ok(Some(status)) = guard.child.try_wait() {
                panic!(
                    "serve exited early ({status}): {}",
                    std::fs::read_to_string(&err).unwrap_or_default()
                );
            }
            std::fs::read_to_string(&out).ok()?.lines().find_map(|l| {
                l.strip_prefix("listening on http://")?
                    .strip_suffix("/metrics")
                    .map(str::to_owned)
            })
        })
        .await;
        Serve {
            guard,
            addr,
            out,
            err,
        }
    }

    /// One scrape of `/metrics` (a `200` answer), as text.
    pub async fn metrics(&self) -> String {
        http_get(&self.addr, "/metrics").await
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }
}
