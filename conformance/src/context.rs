//! What the suite tells the client about a scenario: `MCP_CONFORMANCE_SCENARIO`,
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and the JSON of `MCP_CONFORMANCE_CONTEXT`.

use serde::Deserialize;
use serde_json::{Map, Value};

/// One tool call a scenario asks for (`toolCalls` in the context).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ScenarioToolCall {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Option<Map<String, Value>>,
}

/// The scenario's context. Unknown keys are kept out: the suite adds keys per scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Context {
    #[serde(default, alias = "tool_calls")]
    pub(crate) tool_calls: Vec<ScenarioToolCall>,
    /// A pre-registered client (`auth/pre-registration`, the client-credentials extensions).
    #[serde(default, alias = "client_id")]
    pub(crate) client_id: Option<String>,
    #[serde(default, alias = "client_secret")]
    pub(crate) client_secret: Option<String>,
    /// The PEM private key of `auth/client-credentials-jwt` (`private_key_jwt`).
    #[serde(default, alias = "private_key_pem")]
    pub(crate) private_key_pem: Option<String>,
    /// Its signing algorithm (`ES256`, `RS256`...).
    #[serde(default, alias = "signing_algorithm")]
    pub(crate) signing_algorithm: Option<String>,
    /// The workload's identity token of `auth/wif-jwt-bearer` (what the platform would keep in
    /// a file).
    #[serde(default, alias = "valid_jwt")]
    pub(crate) valid_jwt: Option<String>,
    /// The enterprise identity provider of `auth/enterprise-managed-authorization`: its issuer,
    /// token endpoint, this client's id there, and the ID token it issued to that client.
    #[serde(default, alias = "idp_issuer")]
    pub(crate) idp_issuer: Option<String>,
    #[serde(default, alias = "idp_token_endpoint")]
    pub(crate) idp_token_endpoint: Option<String>,
    #[serde(default, alias = "idp_client_id")]
    pub(crate) idp_client_id: Option<String>,
    #[serde(default, alias = "idp_id_token")]
    pub(crate) idp_id_token: Option<String>,
}

impl Context {
    /// The context of `MCP_CONFORMANCE_CONTEXT`, or an empty one. A context that is not valid
    /// JSON is an error: the scenario would be judged on calls the client never meant to make.
    pub(crate) fn from_env() -> Result<Context, String> {
        match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Err(_) => Ok(Context::default()),
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not the expected JSON: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_reads_camel_case_tool_calls_and_credentials() {
        let context: Context = serde_json::from_value(serde_json::json!({
            "name": "http-custom-headers",
            "toolCalls": [{"name": "test_custom_headers", "arguments": {"region": "us-west1"}}],
            "clientId": "c1",
            "client_secret": "s1"
        }))
        .unwrap();
        assert_eq!(context.tool_calls[0].name, "test_custom_headers");
        assert_eq!(
            context.tool_calls[0].arguments.as_ref().unwrap()["region"],
            "us-west1"
        );
        assert_eq!(context.client_id.as_deref(), Some("c1"));
        assert_eq!(context.client_secret.as_deref(), Some("s1"));
    }
}
