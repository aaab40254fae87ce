//! The fixture MCP server of the end-to-end tests: see `mcp_readiness_fixtures::server`.

fn main() {
    mcp_readiness_fixtures::server::main();
}
