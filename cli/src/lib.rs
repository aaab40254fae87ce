//! The pieces of the `mcp-readiness` command line that its examples and end-to-end tests use too:
//! the demo fleet ([`demo`]: real MCP servers in every state, and the unattended run that uses
//! them) and the design's virtual-clock scenarios ([`sim`], `mcp-readiness simulate`).
//!
//! A service that adds readiness to its own tool calls depends on the `mcp-readiness` library,
//! not on this package.
#![warn(missing_docs, unreachable_pub)]

pub mod demo;
pub mod sim;
