//! The connector factory: the rmcp connector for a configured server, and the secrets of its
//! configuration (redacted from every message the hub produces).

use std::sync::Arc;

use super::options::HubOptions;
use crate::client::connector::Connector;
use crate::client::http::HttpConnector;
use crate::client::spec::error::SpecError;
use crate::client::spec::{ServerSpec, TransportSpec};
use crate::client::stdio::StdioConnector;
use crate::secret::Secret;
use crate::state::ToolName;

/// Builds the rmcp connector for `spec`: [`StdioConnector`] for a command, [`HttpConnector`] for a
/// URL, with the connect timeout, the `after_connect` hook for that server and the
/// [`ServerRequests`](crate::client::ServerRequests) hook from `options`.
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

/// The connector for `spec`, or, when this build cannot serve it (a feature not built, a bad
/// URL or header, an empty command), a connector that never connects and the problem: that
/// server reads `absent` with the problem as its reason, and the other servers start. Only a
/// name that cannot form `mcp__<server>__<tool>` is refused (no call could reach the server).
pub(super) fn connector_or_problem(
    spec: &ServerSpec,
    options: &HubOptions,
) -> Result<(Arc<dyn Connector>, Option<SpecError>), SpecError> {
    match connector_for(spec, options) {
        Ok(connector) => Ok((connector, None)),
        Err(bad @ SpecError::BadName { .. }) => Err(bad),
        Err(problem) => Ok((
            Arc::new(Unservable {
                transport: spec.transport.network_transport(),
                problem: problem.clone(),
            }),
            Some(problem),
        )),
    }
}

/// The connector of a server this build cannot serve: its supervisor never calls it (the server
/// is `Unservable`); if something did, it answers with the problem.
struct Unservable {
    transport: &'static str,
    problem: SpecError,
}

impl Connector for Unservable {
    fn connect(
        &self,
        _events: crate::client::connector::SessionEvents,
    ) -> futures::future::BoxFuture<
        '_,
        Result<Arc<dyn crate::client::connector::Session>, crate::client::connector::ConnectError>,
    > {
        let error = crate::client::connector::ConnectError::new(
            crate::state::ConnectResult::ProtocolError,
            self.problem.to_string(),
        );
        Box::pin(std::future::ready(Err(error)))
    }

    fn network_transport(&self) -> &'static str {
        self.transport
    }
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
            problem: crate::client::spec::error::OAUTH_FEATURE_MISSING.into(),
        })
    }
}
