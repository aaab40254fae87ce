//! What each step of an unattended run does with its tool's state, decided up front (the seed's
//! table), and the record the run leaves for the next human.
//!
//! | state | required step | optional step |
//! |---|---|---|
//! | `ready` | run | run |
//! | `unauthenticated` | abort: re-authorize | fallback |
//! | `connecting` (budget ran out) | retry next run | skip |
//! | `absent` | abort: add the connection | fallback |

//!
//! A [`Run`] decides its [`Step`]s (calling their tools, or a pre-flight that only resolves them)
//! inside the run and step spans, and [`Run::finish`] returns the record, [`RunSummary`].

mod call;
mod decision;
mod preflight;
mod run;
mod spans;
mod step;
mod summary;

pub use decision::Decision;
pub use preflight::SERVER_PROBE_TOOL;
pub use run::Run;
pub use spans::RUN_SPAN_TARGET;
pub use step::{Step, StepOutcome};
pub use summary::RunSummary;
