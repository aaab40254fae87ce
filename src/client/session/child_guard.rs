//! [`ChildGuard`]: a stdio child in its own process group, watched for its own exit.
//!
//! A session over a child's pipes learns that the child is gone from the process itself, not
//! from its stdout: a wrapper that starts a helper in the background (`sh -c 'helper & exec
//! server'`, a launcher that daemonizes a log shipper) leaves that helper holding the pipe after
//! the server exits, so end-of-file never comes. A task owns the child and awaits its exit
//! (tokio's `SIGCHLD` driver: the exit is seen, and the child reaped, at once); when it exits the
//! rest of its process group is killed and [`ChildGuard::exited`] resolves with how it ended.

use std::sync::Arc;

use tokio::sync::watch;

/// A stdio child in its own process group. Dropping it (or [`ChildGuard::kill`]) sends `SIGKILL`
/// to the whole group, synchronously, so no grandchild survives either; the task that watches
/// the child reaps it.
#[derive(Debug)]
pub(crate) struct ChildGuard {
    pid: Option<u32>,
    /// `None` while the child runs; then how it ended ("exited with status 3").
    exit: watch::Receiver<Option<Arc<str>>>,
}

impl ChildGuard {
    /// Takes the started child (its pipes already taken) and watches it: the returned guard's
    /// [`exited`](Self::exited) resolves the moment the child exits, whoever holds its pipes.
    #[cfg(unix)]
    pub(crate) fn new(mut child: Box<dyn process_wrap::tokio::ChildWrapper>) -> Self {
        let pid = child.id();
        let (tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            // `wait` on the process-group child awaits the leader (reaping it), then reaps any
            // other member that is still this process's child, without blocking.
            let how: Arc<str> = match child.wait().await {
                Ok(status) => describe(status).into(),
                Err(e) => format!("its process could not be waited for ({e})").into(),
            };
            // The session is over: helpers it left in its group (holding its stdout) go too.
            kill_group(pid);
            let _ = tx.send(Some(how));
        });
        ChildGuard { pid, exit }
    }

    /// The child's pid (also its process group id).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Resolves with how the child ended ("exited with status 0", "was killed by signal 9") once
    /// it has exited and been reaped; pending for as long as it runs.
    pub(crate) fn exited(&self) -> impl Future<Output = Arc<str>> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            match exit.wait_for(Option::is_some).await {
                Ok(how) => how.clone().unwrap_or_else(|| "it exited".into()),
                // The watching task is gone (the runtime is shutting down).
                Err(_) => "it was stopped with its runtime".into(),
            }
        }
    }

    /// Kills the child's whole process group now, unless it has already exited (then its group
    /// was killed when it did). Idempotent; the watching task reaps the child.
    pub(crate) fn kill(&self) {
        if self.exit.borrow().is_none() {
            kill_group(self.pid);
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends `SIGKILL` to the process group `pgid` (a child started as its group's leader).
fn kill_group(pgid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        if let Err(e) = killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL) {
            // ESRCH: the group is already empty.
            tracing::trace!(pgid, "kill process group: {e}");
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// How a process ended, in words.
#[cfg(unix)]
fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("its process exited with status {code}"),
        (None, Some(signal)) => match signal {
            9 => "its process was killed by signal 9 (SIGKILL: the out-of-memory killer, or \
                  someone killed it)"
                .into(),
            15 => "its process was stopped by signal 15 (SIGTERM)".into(),
            6 => "its process aborted (signal 6, SIGABRT)".into(),
            11 => "its process crashed (signal 11, SIGSEGV)".into(),
            _ => format!("its process was killed by signal {signal}"),
        },
        (None, None) => "its process ended".into(),
    }
}
