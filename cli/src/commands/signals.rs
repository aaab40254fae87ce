//! Stop signals for the commands that run to completion (`check`, `demo`): SIGINT, SIGTERM and
//! SIGHUP stop every child's process group (children run in their own group, so a terminal's
//! Ctrl-C never reaches them by itself), then the command exits with the conventional code
//! 128 + signal number: 130, 143 or 129.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::Hub;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signals that stop a run, installed before any child starts (a signal that arrives
/// earlier would end the process with its children still running).
#[derive(Debug)]
pub(crate) struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

/// A stop signal that arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopSignal {
    /// SIGINT (Ctrl-C): exit 130.
    Interrupt,
    /// SIGTERM: exit 143.
    Terminate,
    /// SIGHUP (the terminal went away): exit 129.
    Hangup,
}

impl StopSignal {
    /// The signal's name, as `kill -l` spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::Hangup => "SIGHUP",
        }
    }

    /// The conventional exit code: 128 + the signal number.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
            StopSignal::Hangup => 129,
        }
    }
}

impl StopSignals {
    /// Installs the handlers. Call it before the Hub starts any child.
    pub(crate) fn install() -> Result<StopSignals, ExitCode> {
        let install = |kind: SignalKind| {
            signal(kind).map_err(|err| {
                err_line!(
                    "error: could not install the signal handlers ({err}); without them a stop \
                     signal would leave child servers running, so nothing was started"
                );
                ExitCode::FAILURE
            })
        };
        Ok(StopSignals {
            interrupt: install(SignalKind::interrupt())?,
            terminate: install(SignalKind::terminate())?,
            hangup: install(SignalKind::hangup())?,
        })
    }

    /// Waits for the next stop signal.
    pub(crate) async fn recv(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
            _ = self.hangup.recv() => StopSignal::Hangup,
        }
    }
}

/// How long stopping the children may take before the command exits anyway.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Runs `work` until it completes (`Ok` with its output) or a stop signal arrives. On a signal,
/// stops every server of `hub` (each stdio child with its process group), says so on stderr, and
/// returns `Err` with the exit code to return from `main`: 130 (SIGINT), 143 (SIGTERM) or
/// 129 (SIGHUP).
pub(crate) async fn run_until_stop_signal<F: Future>(
    signals: &mut StopSignals,
    hub: &Hub,
    work: F,
) -> Result<F::Output, ExitCode> {
    tokio::select! {
        output = work => Ok(output),
        stop = signals.recv() => {
            let _ = tokio::time::timeout(STOP_GRACE, hub.shutdown()).await;
            // Let the aborted connection attempts drop their children (each drop kills a group).
            tokio::task::yield_now().await;
            err_line!(
                "stopped by {}: every server was stopped; exiting with {}",
                stop.name(),
                stop.exit_code()
            );
            Err(ExitCode::from(stop.exit_code()))
        }
    }
}
