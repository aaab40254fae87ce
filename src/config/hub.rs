//! From a loaded [`Config`] to a running [`Hub`]: every `readiness` key applied in one place, the
//! library's and the command line's.

use super::Config;
use crate::client::SpecError;
use crate::supervise::{Hub, HubOptions, HubOptionsBuilder};

impl Config {
    /// The [`HubOptions`] of this file's `readiness` block: `connect_timeout`, `call_timeout`,
    /// `cooldown`, `ping` (`"off"`: no health ping), `ping_timeout` and each server's `budget`
    /// (`readiness.servers`). Add what the file does not say (event sinks, hooks) and change
    /// what you must; the layer's default budget is [`ReadinessConfig::budget`](super::ReadinessConfig::budget).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_readiness::Config;
    ///
    /// let text = r#"{ "mcpServers": {}, "readiness": { "cooldown": "10s", "ping": "off" } }"#;
    /// let config = Config::parse(text, "mcp.json", |_| None).unwrap();
    /// let options = config.hub_options().build().unwrap();
    /// assert_eq!(options.cooldown(), Duration::from_secs(10));
    /// assert_eq!(options.health_interval(), None);
    /// ```
    pub fn hub_options(&self) -> HubOptionsBuilder {
        let readiness = &self.readiness;
        let mut options = HubOptions::builder()
            .connect_timeout(readiness.connect_timeout)
            .call_timeout(readiness.call_timeout)
            .cooldown(readiness.cooldown)
            .health_interval(readiness.ping)
            .ping_timeout(readiness.ping_timeout);
        for (server, overrides) in &readiness.servers {
            if let Some(budget) = overrides.budget {
                options = options.server_budget(server.clone(), budget);
            }
        }
        options
    }

    /// The [`Hub`] of this file's servers with every `readiness` key applied
    /// ([`Config::hub_options`]), then `more` (event sinks, hooks, anything the file does not
    /// say). Nothing connects until [`Hub::connect_all`]; give the layer the file's default
    /// budget with `ReadinessLayer::builder(hub).budget(config.readiness.budget)` (each server's
    /// own budget comes from the Hub).
    ///
    /// ```
    /// use mcp_readiness::{Config, Metrics};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let text = r#"{ "mcpServers": { "files": { "command": "files-mcp" } },
    ///                 "readiness": { "cooldown": "10s", "servers": { "files": { "budget": "45s" } } } }"#;
    /// let config = Config::parse(text, "mcp.json", |_| None)?;
    /// let metrics = Metrics::new();
    /// let hub = config.hub(|options| options.event_sink(metrics.clone()))?;
    /// assert_eq!(hub.server_budget("files").map(|b| b.wait().as_secs()), Some(45));
    /// # Ok(()) }
    /// ```
    pub fn hub(
        &self,
        more: impl FnOnce(HubOptionsBuilder) -> HubOptionsBuilder,
    ) -> Result<Hub, SpecError> {
        Hub::new(self.servers.clone(), more(self.hub_options()))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::state::State;

    /// A `.mcp.json` with an OAuth server, in a build without the `oauth` feature (the library's
    /// default features): the hub starts, that server reads `absent` naming the feature, the
    /// others start.
    #[cfg(not(feature = "oauth"))]
    #[tokio::test(start_paused = true)]
    async fn an_oauth_entry_without_the_oauth_feature_is_absent_alone_and_names_the_feature() {
        let text = r#"{ "mcpServers": {
            "files": { "command": "files-mcp" },
            "github": { "type": "http", "url": "https://example.invalid/mcp",
                        "oauth": { "store": "tokens/github.json", "client_id": "me" } } } }"#;
        let config = Config::parse(text, "mcp.json", |_| None).unwrap();
        let hub = config
            .hub(|options| options)
            .expect("one entry does not stop the hub");
        assert_eq!(hub.state("files"), Some(State::Connecting));
        assert_eq!(hub.state("github"), Some(State::Absent));
        let reason = hub
            .server("github")
            .and_then(|s| s.reason)
            .unwrap_or_default();
        assert!(reason.contains("`oauth` feature"), "{reason}");
        assert!(reason.contains("features = [\"oauth\"]"), "{reason}");
    }

    /// A URL the hub cannot use (not http(s), no host) no longer refuses the whole file: that
    /// entry reads `absent` with a reason naming `url`, its calls fail at once, the others start.
    #[tokio::test(start_paused = true)]
    async fn a_bad_url_is_that_entrys_problem_alone_and_its_reason_names_the_key() {
        let text = r#"{ "mcpServers": {
            "files": { "command": "files-mcp" },
            "wiki": { "type": "http", "url": "ftp://user:hunter2@wiki.example/mcp" },
            "docs": { "url": "https:///mcp" } } }"#;
        let config = Config::parse(text, "mcp.json", |_| None).expect("the file loads");
        let hub = config.hub(|options| options).expect("the hub starts");
        assert_eq!(hub.state("files"), Some(State::Connecting));
        let reason = |server: &str| {
            hub.server(server)
                .and_then(|s| s.reason)
                .unwrap_or_default()
        };
        for (server, problem) in [
            (
                "wiki",
                "must start with http:// or https:// (found scheme `ftp`)",
            ),
            ("docs", "has no host after `https://`"),
        ] {
            assert_eq!(hub.state(server), Some(State::Absent));
            let reason = reason(server);
            assert!(reason.contains(problem), "{reason}");
            assert!(reason.contains("fix `url`"), "{reason}");
            assert!(!reason.contains("hunter2"), "{reason}");
            let call = crate::state::ToolCall::new(format!("mcp__{server}__search").as_str());
            let error = hub.call(call).await.unwrap_err().to_string();
            assert!(error.contains("`url`"), "{error}");
        }
    }

    /// With the feature, the same entry is a server like the others (it needs a login).
    #[cfg(feature = "oauth")]
    #[test]
    fn an_oauth_entry_with_the_oauth_feature_is_not_refused() {
        let text = r#"{ "mcpServers": {
            "github": { "type": "http", "url": "https://example.invalid/mcp",
                        "oauth": { "store": "tokens/github.json", "client_id": "me" } } } }"#;
        let config = Config::parse(text, "mcp.json", |_| None).unwrap();
        let hub = config.hub(|options| options).unwrap();
        assert_eq!(hub.state("github"), Some(State::Connecting));
    }
}
