//! The `readiness` block → [`ReadinessConfig`].

use std::collections::BTreeMap;
use std::time::Duration;

use super::error::{ConfigError, ConfigWarning};
use super::node::Node;
use super::walk::{Ctx, index};
use super::{ReadinessConfig, ServerReadiness, StepConfig};
use crate::client::ServerSpec;
use crate::resolve::Budget;
use crate::state::ToolName;

const READINESS_KEYS: &[&str] = &[
    "budget",
    "poll",
    "cooldown",
    "ping",
    "ping_timeout",
    "connect_timeout",
    "call_timeout",
    "steps",
    "servers",
    "probe",
    "schedule",
];
const SCHEDULE_KEYS: &[&str] = &["every"];
const SERVER_KEYS: &[&str] = &["budget"];
const STEP_KEYS: &[&str] = &["id", "tool", "required", "fallback"];

/// Reads the `readiness` block; `servers` are the configured servers (for warnings).
pub(crate) fn readiness(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
    servers: &[ServerSpec],
    warnings: &mut Vec<ConfigWarning>,
) -> Result<ReadinessConfig, ConfigError> {
    let fields = ctx.object(node, path, "`readiness`", Some(READINESS_KEYS))?;
    let mut config = ReadinessConfig::default();
    let duration = |key: &str| -> Result<Option<Duration>, ConfigError> {
        fields
            .get(key)
            .map(|n| ctx.duration(n, &fields.path_of(key)))
            .transpose()
    };

    let wait = duration("budget")?;
    let poll = duration("poll")?;
    if wait.is_some() || poll.is_some() {
        let budget = Budget::try_new(
            wait.unwrap_or(Budget::DEFAULT_WAIT),
            poll.unwrap_or(Budget::DEFAULT_POLL),
        );
        let blame = if poll.is_some() { "poll" } else { "budget" };
        config.budget = budget.map_err(|e| ctx.err(&fields.path_of(blame), e.to_string()))?;
    }
    if let Some(cooldown) = duration("cooldown")? {
        config.cooldown = cooldown;
    }
    if let Some(node) = fields.get("ping") {
        let path = fields.path_of("ping");
        config.ping = match node {
            Node::String(_) if ctx.string(node, &path)?.trim() == "off" => None,
            _ => match ctx.duration(node, &path)? {
                d if d.is_zero() => {
                    return Err(ctx.err(
                        &path,
                        r#"expected a positive interval: write "off" to disable health pings"#,
                    ));
                }
                d => Some(d),
            },
        };
    }
    for (key, slot) in [
        ("ping_timeout", &mut config.ping_timeout),
        ("connect_timeout", &mut config.connect_timeout),
        ("call_timeout", &mut config.call_timeout),
    ] {
        if let Some(timeout) = duration(key)? {
            if timeout.is_zero() {
                return Err(ctx.err(
                    &fields.path_of(key),
                    "expected a positive duration: a zero timeout fails every attempt",
                ));
            }
            *slot = timeout;
        }
    }
    if let Some(node) = fields.get("steps") {
        config.steps = steps(ctx, node, &fields.path_of("steps"), servers, warnings)?;
    }
    if let Some(node) = fields.get("schedule") {
        let path = fields.path_of("schedule");
        let schedule = ctx.object(node, &path, "`readiness.schedule`", Some(SCHEDULE_KEYS))?;
        if let Some(node) = schedule.get("every") {
            let every_path = schedule.path_of("every");
            let every = ctx.duration(node, &every_path)?;
            if every.is_zero() {
                return Err(ctx.err(
                    &every_path,
                    "expected a positive duration: how long from one run to the next",
                ));
            }
            config.schedule_every = Some(every);
        }
    }
    if let Some(node) = fields.get("probe") {
        config.probe = Some(super::probe::probe(ctx, node, &fields.path_of("probe"))?);
    }
    if let Some(node) = fields.get("servers") {
        config.servers = overrides(
            ctx,
            node,
            &fields.path_of("servers"),
            config.budget,
            servers,
            warnings,
        )?;
    }
    Ok(config)
}

/// `readiness.servers`: per-server overrides; `default` is the block's budget (its poll applies).
fn overrides(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
    default: Budget,
    servers: &[ServerSpec],
    warnings: &mut Vec<ConfigWarning>,
) -> Result<BTreeMap<String, ServerReadiness>, ConfigError> {
    let entries = ctx.object(
        node,
        path,
        "`readiness.servers` (server name → overrides)",
        None,
    )?;
    let mut overrides = BTreeMap::new();
    for (name, node) in entries.entries() {
        let server_path = entries.path_of(name);
        let fields = ctx.object(
            node,
            &server_path,
            "a server's overrides",
            Some(SERVER_KEYS),
        )?;
        let mut entry = ServerReadiness::default();
        if let Some(node) = fields.get("budget") {
            let budget_path = fields.path_of("budget");
            let wait = ctx.duration(node, &budget_path)?;
            let budget = Budget::try_new(wait, default.poll())
                .map_err(|e| ctx.err(&budget_path, format!("{e} (`readiness.poll`)")))?;
            entry.budget = Some(budget);
        }
        if !servers.iter().any(|s| &*s.name == name.as_str()) {
            warnings.push(ConfigWarning {
                file: ctx.file.to_owned(),
                path: server_path,
                message: format!(
                    "server `{name}` is not in `mcpServers`: these overrides apply to nothing"
                ),
            });
        }
        overrides.insert(name.clone(), entry);
    }
    Ok(overrides)
}

fn steps(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
    servers: &[ServerSpec],
    warnings: &mut Vec<ConfigWarning>,
) -> Result<Vec<StepConfig>, ConfigError> {
    let Node::Array(items) = node else {
        return Err(ctx.err(
            path,
            format!("expected an array of steps, found {}", node.kind()),
        ));
    };
    let mut steps: Vec<StepConfig> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let step_path = index(path, i);
        let fields = ctx.object(item, &step_path, "a step", Some(STEP_KEYS))?;
        let required_string = |key: &str| -> Result<String, ConfigError> {
            let path = fields.path_of(key);
            let value = match fields.get(key) {
                Some(node) => ctx.string(node, &path)?,
                None => {
                    return Err(ctx.err(&path, "missing: every step needs an `id` and a `tool`"));
                }
            };
            if value.trim().is_empty() {
                return Err(ctx.err(&path, "expected a non-empty string"));
            }
            Ok(value)
        };

        let id = required_string("id")?;
        if let Some(first) = steps.iter().position(|s| s.id == id) {
            return Err(ctx.err(
                &fields.path_of("id"),
                format!(
                    "duplicate step id `{id}` (first used at {}): give each step its own id",
                    index(path, first)
                ),
            ));
        }

        let tool_path = fields.path_of("tool");
        let tool = ToolName::parse(&required_string("tool")?);
        if tool.is_builtin() {
            return Err(ctx.err(
                &tool_path,
                format!("expected a tool named `mcp__<server>__<tool>`, found `{tool}`"),
            ));
        }
        if !servers.iter().any(|s| &*s.name == tool.server()) {
            warnings.push(ConfigWarning {
                file: ctx.file.to_owned(),
                path: tool_path,
                message: format!(
                    "server `{}` is not in `mcpServers`: this step will resolve as absent",
                    tool.server()
                ),
            });
        }

        let required = match fields.get("required") {
            Some(node) => ctx.bool(node, &fields.path_of("required"))?,
            None => true,
        };
        let fallback = match fields.get("fallback") {
            None | Some(Node::Null) => None,
            Some(node) => Some(ctx.string(node, &fields.path_of("fallback"))?),
        };
        if required && fallback.is_some() {
            warnings.push(ConfigWarning {
                file: ctx.file.to_owned(),
                path: fields.path_of("fallback"),
                message: "a required step aborts instead of falling back: set \"required\": false to use this fallback".into(),
            });
        }
        steps.push(StepConfig {
            id,
            tool,
            required,
            fallback,
        });
    }
    Ok(steps)
}
