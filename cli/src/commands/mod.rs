//! One file per subcommand.

pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod common;
pub(crate) mod demo;
pub(crate) mod oauth;
pub(crate) mod serve;
pub(crate) mod signals;
pub(crate) mod simulate;
