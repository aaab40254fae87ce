//! Open files: every stdio server costs this process about four descriptors (its stdin, stdout
//! and stderr pipes, and the pidfd or signal plumbing), so a fleet of a few hundred needs more than
//! systemd's default soft limit of 1,024. [`raise_open_file_limit`] lifts the soft limit to the
//! hard one (the binary does so at start), and a start-up that fails for want of descriptors
//! says so ([`out_of_descriptors`]) instead of suggesting the command is not installed.

use std::io;

/// The open-file limit before and after [`raise_open_file_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileLimit {
    /// The soft limit this process started with.
    pub before: u64,
    /// The soft limit in force now.
    pub now: u64,
    /// The hard limit (the most an unprivileged process may raise its soft limit to).
    pub hard: u64,
}

/// Raises this process's soft open-file limit to its hard limit, where the platform allows it.
/// A library does not change process limits on its own: call this at the start of a service that
/// supervises many stdio servers (`mcp-readiness serve`, `check` and `demo` do).
///
/// ```
/// let limit = mcp_readiness::supervise::raise_open_file_limit()?;
/// assert!(limit.now >= limit.before);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn raise_open_file_limit() -> io::Result<OpenFileLimit> {
    let (before, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
    let now = rlimit::increase_nofile_limit(hard)?;
    Ok(OpenFileLimit { before, now, hard })
}

/// Whether `error` is the process (`EMFILE`) or the whole system (`ENFILE`) running out of file
/// descriptors.
pub(crate) fn is_out_of_descriptors(error: &io::Error) -> bool {
    // EMFILE is 24 and ENFILE 23 on Linux, the BSDs and macOS alike.
    matches!(error.raw_os_error(), Some(23 | 24))
}

/// What to tell a human when `error` ran out of descriptors: the limit in force and the next step.
pub(crate) fn out_of_descriptors(error: &io::Error) -> Option<String> {
    if !is_out_of_descriptors(error) {
        return None;
    }
    let limit = match rlimit::getrlimit(rlimit::Resource::NOFILE) {
        Ok((soft, hard)) => format!(" (open-file limit {soft}, hard limit {hard})"),
        Err(_) => String::new(),
    };
    Some(format!(
        "this process ran out of file descriptors{limit}; raise the limit (`ulimit -n`, or \
         `LimitNOFILE=` in a systemd unit) or supervise fewer servers per process"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emfile_and_enfile_are_out_of_descriptors_and_other_errors_are_not() {
        assert!(is_out_of_descriptors(&io::Error::from_raw_os_error(24)));
        assert!(is_out_of_descriptors(&io::Error::from_raw_os_error(23)));
        assert!(!is_out_of_descriptors(&io::Error::from_raw_os_error(2)));
        let reason = out_of_descriptors(&io::Error::from_raw_os_error(24)).expect("a reason");
        assert!(reason.contains("ran out of file descriptors"), "{reason}");
        assert!(reason.contains("LimitNOFILE"), "{reason}");
        assert_eq!(out_of_descriptors(&io::Error::from_raw_os_error(2)), None);
    }
}
