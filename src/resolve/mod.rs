//! Resolution at the point of use: [`classify`] a [`Snapshot`], wait on `connecting` only, inside a
//! [`Budget`], and share what was learned through the [`CapabilityCache`] at the right grain.
//!
//! # Why budgets
//!
//! Only `connecting` heals with time. A resolver that waits on anything missing spends its whole
//! budget on `unauthenticated` and `absent` tools that will never arrive, and that time is taken from
//! steps that would have succeeded. [`resolve`] returns `unauthenticated` and `absent` at once and
//! waits on `connecting` until the next poll would overrun the budget (with a change feed, until
//! the budget ends: a change wakes it at once, so waiting costs nothing).

pub(crate) mod budget;
mod cache;

mod changes;
pub(crate) mod inventory;
mod resolver;
pub(crate) mod snapshot;
mod verdict;

pub(crate) use budget::Budget;
pub use budget::BudgetError;
pub(crate) use cache::ToolSlot;
pub use cache::{CacheTtls, CapabilityCache};

pub use changes::ChangeFeed;
pub(crate) use inventory::Inventory;
pub use resolver::{resolve, resolve_with};
pub(crate) use snapshot::Snapshot;
pub use snapshot::classify;
pub(crate) use verdict::not_ready_error_type;
pub use verdict::{Scope, Verdict};
