//! Properties over any names: parsing a tool name never panics and gives back its input and parts,
//! and classification never panics on any name.

use super::*;
use proptest::prelude::*;

fn name_like() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "(mcp__)?[a-z_\\-\"\\\\\n\u{e9}\u{30c4}]{0,12}(__[a-z_]{0,6}){0,3}",
    ]
}

proptest! {
    #[test]
    fn parsing_never_panics_and_gives_back_the_input(s in name_like()) {
        let name = ToolName::parse(&s);
        prop_assert_eq!(name.as_str(), s.as_str());
        prop_assert_eq!(name.to_string(), s.clone());
        if name.is_builtin() {
            prop_assert_eq!(name.server(), "builtin");
            prop_assert_eq!(name.tool(), s.as_str());
        } else {
            prop_assert_eq!(format!("mcp__{}__{}", name.server(), name.tool()), s.clone());
            prop_assert!(!name.server().is_empty() && !name.tool().is_empty());
            prop_assert!(!name.server().contains("__"));
            prop_assert!(!name.server().starts_with('_') && !name.server().ends_with('_'));
        }
    }

    #[test]
    fn a_qualified_name_parses_back_to_its_parts(server in "[a-z0-9\\-]{1,8}(_[a-z0-9]{1,4}){0,2}", tool in "[a-zA-Z0-9_]{1,12}") {
        let name = ToolName::qualified(&server, &tool).expect("a valid pair");
        prop_assert_eq!(name.server(), server.as_str());
        prop_assert_eq!(name.tool(), tool.as_str());
    }

    #[test]
    fn classify_never_panics_on_any_name(s in name_like()) {
        let snapshot = Snapshot::default().with_pending_server("x").with_unauthenticated_server("y");
        let _ = classify(&ToolName::parse(&s), &snapshot);
    }
}
