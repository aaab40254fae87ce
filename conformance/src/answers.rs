//! What this client answers when a scenario's server asks (`elicitation/create`): it stands in
//! for a service with a person behind it, who accepts the form as offered, each field at its
//! default. A form field without a default is left out (the person filled in nothing); a URL
//! elicitation is declined (nobody opens the page).

use std::future::Future;
use std::pin::Pin;

use mcp_readiness::client::ServerRequests;
use mcp_readiness::rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value};

/// Accepts every form with its defaults.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AcceptDefaults;

impl ServerRequests for AcceptDefaults {
    fn answers_elicitation(&self) -> bool {
        true
    }

    fn elicit(
        &self,
        server: &str,
        request: ElicitRequestParams,
    ) -> Pin<Box<dyn Future<Output = ElicitResult> + Send + '_>> {
        let answer = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
                ElicitResult::new(ElicitationAction::Accept)
                    .with_content(Value::Object(defaults_of(&schema)))
            }
            _ => ElicitResult::new(ElicitationAction::Decline),
        };
        tracing::info!(server, action = ?answer.action, "answered an elicitation");
        Box::pin(std::future::ready(answer))
    }
}

/// Each property of a form's schema that has a `default`, at that default.
pub(crate) fn defaults_of(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, property)| {
                    property
                        .get("default")
                        .map(|default| (name.clone(), default.clone()))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_form_is_answered_with_the_defaults_it_offers_and_nothing_else() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "verified": {"type": "boolean", "default": true},
                "note": {"type": "string"}
            }
        });
        assert_eq!(
            Value::Object(defaults_of(&schema)),
            json!({"name": "John Doe", "age": 30, "verified": true})
        );
        assert!(defaults_of(&json!({"type": "object"})).is_empty());
    }
}
