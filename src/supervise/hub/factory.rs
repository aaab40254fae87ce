//! The connector factory: the rmcp connector for a configured server, and the secrets of its
//! configuration (redacted from every message the hub produces).

use std::sync::Arc;

use super::options::HubOptions;
use crate::client::connector::Connector;
use crate::client::spec::{ServerSpec, TransportSpec};
use crate::client::spec_error::SpecError;
use crate::client::stdio::StdioConnector;
use crate::client::streamable_http::HttpConnector;
use crate::secret::Secret;
use crate::state::ToolName;

/// Builds the rmcp connector for `spec`: [`StdioConnector`] for a command, [`HttpConnector`] for a
/// URL, with the connect timeout, the `after_connect` hook for that server and the
/// [`ServerRequests`](crate::supervise::ServerRequests) hook from `options`.
pub fn connector_for(
    spec: &ServerSpec,
    options: &HubOptions,
) -> Result<Arc<dyn Connector>, SpecError> {
    if ToolName::qualified(&spec.name, "x").is_none() || spec.name.chars().any(char::is_control) {
        return Err(SpecError::BadName {
            server: spec.name.clone(),
        });
    }
    let hook = options.after_connect.get(&*spec.name).cloned();
    Ok(match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if command.trim().is_empty() {
                return Err(SpecError::EmptyCommand {
                    server: spec.name.clone(),
                });
            }
            Arc::new(
                StdioConnector::new(spec.name.clone(), command.clone(), args.clone())
                    .env(env.clone())
                    .cwd(cwd.clone())
                    .init_timeout(options.connect_timeout)
                    .after_connect(hook)
                    .server_requests(options.server_requests.clone()),
            )
        }
        TransportSpec::Http {
            url,
            headers,
            oauth,
        } => {
            let connector = HttpConnector::new(spec.name.clone(), url.clone(), headers)?
                .connect_timeout(options.connect_timeout)
                .after_connect(hook)
                .server_requests(options.server_requests.clone());
            Arc::new(with_oauth(connector, &spec.name, oauth.as_ref())?)
        }
    })
}

pub(super) fn secrets_of(spec: &ServerSpec) -> Vec<Secret> {
    match &spec.transport {
        TransportSpec::Stdio { env, .. } => env.values().cloned().collect(),
        TransportSpec::Http {
            url,
            headers,
            oauth,
        } => {
            let mut secrets: Vec<Secret> = headers.values().cloned().collect();
            secrets.push(url.clone());
            secrets.extend(oauth.as_ref().and_then(|o| o.client_secret.clone()));
            secrets
        }
    }
}

/// Adds OAuth to an HTTP connector, or refuses a build without the `oauth` feature.
fn with_oauth(
    connector: HttpConnector,
    server: &Arc<str>,
    oauth: Option<&crate::client::spec::OAuthSpec>,
) -> Result<HttpConnector, SpecError> {
    let Some(oauth) = oauth else {
        return Ok(connector);
    };
    if oauth
        .client_id
        .as_deref()
        .is_some_and(|id| id.trim().is_empty())
    {
        return Err(SpecError::OAuth {
            server: server.clone(),
            problem: "`oauth.client_id` is empty; set the client id the server's authorization \
                      server knows this client by, or leave it out to register at `oauth login`"
                .into(),
        });
    }
    #[cfg(feature = "oauth")]
    {
        Ok(connector.oauth(oauth.clone()))
    }
    #[cfg(not(feature = "oauth"))]
    {
        drop(connector);
        Err(SpecError::OAuth {
            server: server.clone(),
            problem: "uses `oauth`, but this build has no `oauth` feature; rebuild with it".into(),
        })
    }
}
