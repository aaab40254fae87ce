//! Real processes in tests: descendants from `/proc`, signals, a kill-on-drop guard, bounded
//! polling, a raw HTTP GET, and the rule for external prerequisites (fail under `CI=true`).

use std::collections::BTreeSet;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

use super::alive;

/// Skips (loudly) or fails (under `CI=true`) when an external prerequisite is missing.
pub fn prerequisite(found: bool, message: &str) -> bool {
    if !found {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
    }
    found
}

/// Every living descendant of `root` (children, grandchildren, ...), from `/proc`.
pub fn descendants(root: u32) -> BTreeSet<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let mut fields = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace());
        let state = fields.as_mut().and_then(Iterator::next);
        let ppid = fields.as_mut().and_then(Iterator::next);
        if let (Some(state), Some(Ok(ppid))) = (state, ppid.map(str::parse))
            && state != "Z"
        {
            parents.push((pid, ppid));
        }
    }
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if found.insert(*pid) {
                frontier.push(*pid);
            }
        }
    }
    found
}

pub fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Asserts that every pid is gone within `grace` (a SIGKILL takes a moment to land).
pub async fn assert_all_gone(what: &str, pids: &[u32], grace: Duration) {
    let deadline = Instant::now() + grace;
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left: Vec<String> = pids
        .iter()
        .filter(|p| alive(**p))
        .map(|p| format!("{p} ({})", command_line(*p)))
        .collect();
    assert!(left.is_empty(), "{what}: processes left running: {left:?}");
}

pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid} failed");
}

/// A child process killed (with its descendants) when the test ends, even on a failed assertion.
pub struct Guard {
    pub child: Child,
    pub name: &'static str,
}

impl Guard {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    /// Waits for the process to exit by itself, up to `limit`.
    pub async fn exit_within(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {limit:?}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            for pid in descendants(self.child.id()) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Polls `probe` every 50 ms until it gives a value; fails after `limit`.
pub async fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A raw HTTP/1.0 GET on 127.0.0.1; returns the body of a 200 answer.
pub async fn http_get(addr: &str, target: &str) -> String {
    let (head, body) = http_get_any(addr, target).await;
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "GET {target}: {head}"
    );
    body
}

/// One raw HTTP/1.0 exchange with `addr` (loopback): sends `request` whole, reads the answer to
/// its end, and splits it into head and body. `what` names the request in errors.
pub async fn http_exchange(
    addr: &str,
    request: String,
    what: &str,
) -> Result<(String, String), String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(raw)
    };
    let raw = tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .map_err(|_| format!("{what} timed out"))?
        .map_err(|e| format!("{what}: {e}"))?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{what}: not an HTTP answer"))?;
    Ok((head.to_owned(), body.to_owned()))
}

/// A raw HTTP/1.0 GET on 127.0.0.1; returns the head and body of any answer.
pub async fn http_get_any(addr: &str, target: &str) -> (String, String) {
    let request = format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    http_exchange(addr, request, &format!("GET http://{addr}{target}"))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}
