//! What each step of an unattended run does with its tool's state, decided up front (the seed's
//! table), and the record the run leaves for the next human.
//!
//! | state | required step | optional step |
//! |---|---|---|
//! | `ready` | run | run |
//! | `unauthenticated` | abort: re-authorize | fallback |
//! | `connecting` (budget ran out) | retry next run | skip |
//! | `absent` | abort: add the connection | fallback |

mod decision;
mod preflight;
mod run;
mod step;
mod summary;

pub use decision::{Decision, decide};
pub use preflight::{SERVER_PROBE_TOOL, preflight, server_step};
pub use run::{RUN_SPAN_TARGET, record_run, run_span, run_step, run_step_with, run_steps};
pub use step::{Step, StepOutcome};
pub use summary::RunSummary;
