//! One file per subcommand.

pub(crate) mod simulate;
