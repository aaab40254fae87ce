//! `readiness.probe` → [`ProbeConfig`]: the allow-list, the bound on probes in flight, modules.
//!
//! ```json
//! "probe": {
//!   "targets": ["http://127.0.0.1:*/mcp", "https://*.internal.example.com/mcp"],
//!   "max_in_flight": 16,
//!   "timeout": "10s",
//!   "modules": {
//!     "github": {
//!       "targets": ["https://api.githubcopilot.com/mcp/*"],
//!       "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" },
//!       "timeout": "15s",
//!       "protocol_generations": ["2025-11-25"]
//!     }
//!   }
//! }
//! ```

use std::collections::BTreeMap;

use super::error::ConfigError;
use super::node::Node;
use super::walk::{Ctx, Fields, index};
use crate::client::ProtocolGenerations;
use crate::probe::{ProbeConfig, ProbeModule, TargetPattern};

const PROBE_KEYS: &[&str] = &["targets", "max_in_flight", "timeout", "modules"];
const MODULE_KEYS: &[&str] = &[
    "targets",
    "headers",
    "oauth",
    "timeout",
    "protocol_generations",
];

/// The largest `max_in_flight` (each probe holds a socket and a few hundred kilobytes).
const MAX_IN_FLIGHT: u64 = 1024;

/// Reads `readiness.probe`.
pub(crate) fn probe(ctx: &Ctx<'_>, node: &Node, path: &str) -> Result<ProbeConfig, ConfigError> {
    let fields = ctx.object(node, path, "`readiness.probe`", Some(PROBE_KEYS))?;
    let targets = match fields.get("targets") {
        Some(node) => patterns(ctx, node, &fields.path_of("targets"))?,
        None => {
            return Err(ctx.err(
                &fields.path_of("targets"),
                "missing: `readiness.probe` needs the allow-list of URL patterns probes may reach \
                 (e.g. [\"http://127.0.0.1:*/mcp\"]); a probe endpoint without one would fetch any URL",
            ));
        }
    };
    let mut config = ProbeConfig::allowing(targets);
    if let Some(timeout) = timeout(ctx, &fields)? {
        config.default_module.timeout = timeout;
    }
    if let Some(node) = fields.get("max_in_flight") {
        let path = fields.path_of("max_in_flight");
        let value = whole_number(node)
            .filter(|n| (1..=MAX_IN_FLIGHT).contains(n))
            .ok_or_else(|| {
                ctx.err(
                    &path,
                    format!("expected a whole number from 1 to {MAX_IN_FLIGHT}"),
                )
            })?;
        config.max_in_flight = usize::try_from(value).unwrap_or(1);
    }
    if let Some(node) = fields.get("modules") {
        let path = fields.path_of("modules");
        let entries = ctx.object(
            node,
            &path,
            "`readiness.probe.modules` (name → module)",
            None,
        )?;
        let mut modules = BTreeMap::new();
        for (name, node) in entries.entries() {
            let module_path = entries.path_of(name);
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(ctx.err(
                    &module_path,
                    "a module name is letters, digits, `-` and `_` (it is a URL parameter)",
                ));
            }
            modules.insert(
                name.clone(),
                module(ctx, node, &module_path, name, &config)?,
            );
        }
        config.modules = modules;
    }
    Ok(config)
}

fn module(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
    name: &str,
    config: &ProbeConfig,
) -> Result<ProbeModule, ConfigError> {
    let fields = ctx.object(node, path, "a probe module", Some(MODULE_KEYS))?;
    let headers = match fields.get("headers") {
        Some(node) => super::servers::headers(ctx, node, &fields.path_of("headers"))?,
        None => BTreeMap::new(),
    };
    let oauth = super::oauth::oauth(ctx, &fields, name, &headers)?.map(|mut spec| {
        // `oauth login --server` names a configured server, not a module.
        spec.reauthorize = None;
        spec
    });
    let targets = match fields.get("targets") {
        Some(node) => patterns(ctx, node, &fields.path_of("targets"))?,
        None if headers.is_empty() && oauth.is_none() => config.default_module.targets.clone(),
        None => {
            return Err(ctx.err(
                &fields.path_of("targets"),
                "missing: a module with credentials (`headers` or `oauth`) names the targets they \
                 may be sent to; they go nowhere else",
            ));
        }
    };
    let mut module = ProbeModule::without_credentials(targets);
    module.headers = headers;
    module.oauth = oauth;
    module.timeout = timeout(ctx, &fields)?.unwrap_or(config.default_module.timeout);
    if let Some(node) = fields.get("protocol_generations") {
        module.generations = generations(ctx, node, &fields.path_of("protocol_generations"))?;
    }
    Ok(module)
}

fn timeout(ctx: &Ctx<'_>, fields: &Fields<'_>) -> Result<Option<std::time::Duration>, ConfigError> {
    let Some(node) = fields.get("timeout") else {
        return Ok(None);
    };
    let path = fields.path_of("timeout");
    let timeout = ctx.duration(node, &path)?;
    if timeout.is_zero() {
        return Err(ctx.err(
            &path,
            "expected a positive duration: a zero timeout fails every probe",
        ));
    }
    Ok(Some(timeout))
}

fn patterns(ctx: &Ctx<'_>, node: &Node, path: &str) -> Result<Vec<TargetPattern>, ConfigError> {
    let texts = ctx.strings(node, path)?;
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            text.parse::<TargetPattern>()
                .map_err(|e| ctx.err(&index(path, i), e.to_string()))
        })
        .collect()
}

fn generations(ctx: &Ctx<'_>, node: &Node, path: &str) -> Result<ProtocolGenerations, ConfigError> {
    let names = ctx.strings(node, path)?;
    let (mut discover, mut initialize) = (false, false);
    for (i, name) in names.iter().enumerate() {
        match name.as_str() {
            ProtocolGenerations::DISCOVER_NAME => discover = true,
            ProtocolGenerations::INITIALIZE_NAME => initialize = true,
            _ => {
                return Err(ctx.err(
                    &index(path, i),
                    format!(
                        "expected \"{}\" (server/discover) or \"{}\" (initialize, which also \
                         accepts servers down to 2024-11-05)",
                        ProtocolGenerations::DISCOVER_NAME,
                        ProtocolGenerations::INITIALIZE_NAME
                    ),
                ));
            }
        }
    }
    ProtocolGenerations::from_names(discover, initialize)
        .ok_or_else(|| ctx.err(path, "expected at least one protocol generation"))
}

/// A whole, non-negative JSON number.
fn whole_number(node: &Node) -> Option<u64> {
    match node {
        Node::Whole(n) => Some(*n),
        _ => None,
    }
}
