//! What the benches share, one module per concern: the bare service and the layer built as a
//! service builds it (`bare`), the hand-built minimum (`minimum`) and the span contract written by
//! hand around it (`contract`), the interleaved rounds timed in thread CPU time (`rounds`), pinned
//! worker threads (`threads`), the rows of the layer benches (`layer_rows`, `quiet_rows`), what
//! each span attribute costs (`attributes`) and a fleet of servers (`fleet`). Every bench compiles
//! all of them and uses its part.
#![allow(dead_code, unused_imports)]

pub(crate) mod attributes;
pub(crate) mod bare;
pub(crate) mod contract;
pub(crate) mod fleet;
pub(crate) mod layer_rows;
pub(crate) mod minimum;
pub(crate) mod quiet_rows;
pub(crate) mod rounds;
pub(crate) mod threads;
