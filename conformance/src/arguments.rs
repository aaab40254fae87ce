//! Arguments for a tool the scenario did not describe: one value of the declared type for each
//! required property of its input schema.

use mcp_readiness::rmcp::model::Tool;
use serde_json::{Map, Value, json};

/// The arguments to call `tool` with: its required properties, each with a value of its type.
pub(crate) fn for_tool(tool: &Tool) -> Option<Map<String, Value>> {
    let schema = &tool.input_schema;
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return None;
    }
    let mut arguments = Map::new();
    for (name, property) in properties {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = match property.get("type").and_then(Value::as_str) {
            Some("number") => json!(1.0),
            Some("integer") => json!(1),
            Some("string") => json!("test"),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => Value::Null,
        };
        arguments.insert(name.clone(), value);
    }
    Some(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tool(schema: Value) -> Tool {
        Tool::new("t", "a tool", Arc::new(schema.as_object().unwrap().clone()))
    }

    #[test]
    fn only_required_properties_get_a_value_of_their_type() {
        let args = for_tool(&tool(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
            "required": ["a", "b"]
        })))
        .unwrap();
        assert_eq!(Value::Object(args), json!({"a": 1, "b": "test"}));
    }

    #[test]
    fn a_tool_without_required_properties_is_called_without_arguments() {
        assert!(
            for_tool(&tool(
                json!({"type": "object", "properties": {"a": {"type": "integer"}}})
            ))
            .is_none()
        );
        assert!(for_tool(&tool(json!({"type": "object"}))).is_none());
    }
}
