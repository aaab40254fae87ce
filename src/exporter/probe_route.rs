//! `GET /probe?target=URL[&module=NAME][&server=NAME]`: one probe of one MCP server (see
//! [`probe`](crate::probe)), answered in the text format 0.0.4, or refused with a status and a
//! line that says why.

use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::routes::CONTENT_TYPE;
use crate::probe::{ProbeRefusal, ProbeRequest, Prober};
use crate::util::form_decode;

/// The path of the probe endpoint.
pub const PROBE_PATH: &str = "/probe";

/// The header Prometheus sends with the scrape's timeout, in seconds.
pub const SCRAPE_TIMEOUT_HEADER: &str = "x-prometheus-scrape-timeout-seconds";

/// A router with `GET /probe` answered by `prober`, to merge into your own axum application
/// (beside [`router`](super::router)). A [`Prober::disabled`] answers `404` with a line that
/// says how to turn it on.
///
/// ```
/// use axum::Router;
/// use mcp_readiness::exporter;
/// use mcp_readiness::Metrics;
/// use mcp_readiness::probe::{ProbeConfig, Prober};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let prober = Prober::new(ProbeConfig::allowing(vec!["https://*.example.com/mcp".parse()?]))?;
/// let app: Router = exporter::router(Metrics::new()).merge(exporter::probe_router(prober));
/// # Ok(()) }
/// ```
pub fn probe_router(prober: Prober) -> Router {
    Router::new()
        .route(PROBE_PATH, get(probe))
        .with_state(prober)
}

async fn probe(
    State(prober): State<Prober>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (request, debug) = match request(query.as_deref().unwrap_or(""), &headers) {
        Ok(request) => request,
        Err(message) => return refusal(StatusCode::BAD_REQUEST, &message),
    };
    match prober.probe(&request).await {
        Ok(answer) if debug => (
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            debug_log(&request, &answer) + "\n" + &answer.text,
        )
            .into_response(),
        Ok(answer) => (
            [
                (header::CONTENT_TYPE, CONTENT_TYPE),
                (header::CACHE_CONTROL, "no-store"),
            ],
            answer.text,
        )
            .into_response(),
        Err(refused) => {
            let status =
                StatusCode::from_u16(refused.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            match &refused {
                ProbeRefusal::NotAllowed(reason) => {
                    tracing::warn!(target: "mcp_readiness::probe", "probe refused: {reason}");
                }
                ProbeRefusal::RenderFailed(reason) => {
                    tracing::error!(target: "mcp_readiness::probe", "probe failed: {reason}");
                }
                _ => {}
            }
            refusal(status, &refused.to_string())
        }
    }
}

fn refusal(status: StatusCode, message: &str) -> Response {
    let mut body = crate::secret::escape_controls(message).into_owned();
    body.push('\n');
    let mut response = (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    }
    response
}

/// `&debug=true`: the probe's own log, for a person (blackbox_exporter's convention): the
/// target, the module (its name, never its headers or credentials), each phase with its start
/// and duration, the verdict, how the attempt ended and why; then the metrics of the answer.
fn debug_log(request: &ProbeRequest, answer: &crate::probe::ProbeAnswer) -> String {
    use std::fmt::Write as _;
    let outcome = &answer.outcome;
    let shown = crate::probe::ProbeTarget::parse(&request.target)
        .map(|t| t.shown())
        .unwrap_or_else(|_| "(unparsable)".into());
    let mut log = String::new();
    let _ = writeln!(
        log,
        "probe of {shown} as server `{}`",
        crate::secret::escape_controls(&answer.server)
    );
    let _ = writeln!(
        log,
        "module: {}",
        request
            .module
            .as_deref()
            .map_or_else(|| "default".into(), crate::secret::escape_controls)
    );
    let target = crate::probe::ProbeTarget::parse(&request.target).ok();
    for phase in &outcome.phases {
        let _ = write!(
            log,
            "phase {:<10} started at {:>6} ms, took {:>6} ms: {}",
            phase.name,
            phase.started.as_millis(),
            phase.duration.as_millis(),
            if phase.ok { "ok" } else { "failed" }
        );
        match &phase.detail {
            Some(detail) => {
                let _ = writeln!(log, " ({})", crate::secret::escape_controls(detail));
            }
            None => log.push('\n'),
        }
        // Plain HTTP has no TLS phase: said where it would have been.
        if phase.name == "connect" && phase.ok && target.as_ref().is_some_and(|t| !t.is_https()) {
            let _ = writeln!(log, "phase tls        not applicable: plain http, no TLS");
        }
    }
    if outcome.phases.is_empty() {
        let _ = writeln!(log, "no phase started: the deadline came first");
    }
    if outcome.http_answers.is_empty() {
        let _ = writeln!(
            log,
            "http (no answer from the target before the probe ended)"
        );
    }
    for answer in &outcome.http_answers {
        let _ = writeln!(
            log,
            "http {}",
            crate::secret::escape_controls(&answer.to_string())
        );
    }
    if let Some(not_after) = outcome.tls_certificate_expiry {
        let _ = writeln!(
            log,
            "tls certificate: the leaf certificate is valid until {} (notAfter, Unix {not_after})",
            crate::probe::unix_time(not_after)
        );
    }
    if let Some(identity) = &outcome.identity {
        let _ = writeln!(
            log,
            "server: {} {} (MCP {})",
            crate::secret::escape_controls(&identity.server_name),
            crate::secret::escape_controls(&identity.server_version),
            crate::secret::escape_controls(&identity.protocol_version)
        );
    }
    if let Some(tools) = outcome.tools {
        let _ = writeln!(log, "tools listed: {tools}");
    }
    let _ = writeln!(
        log,
        "verdict: {} (attempt {}) after {} ms",
        outcome.state,
        outcome.result.as_str(),
        outcome.duration.as_millis()
    );
    let _ = writeln!(
        log,
        "reason: {}",
        outcome
            .reason
            .as_deref()
            .map_or_else(|| "-".into(), crate::secret::escape_controls)
    );
    if let Some(next) = probe_next_step(outcome.state, request.module.as_deref()) {
        let _ = writeln!(log, "next step: {next}");
    }
    log
}

/// What to do about a probe target in `state`, in the probe's words: its credentials are a probe
/// module's, its deadline the module's `timeout` (or the scrape's), and nothing on the `serve`
/// side connects it (no connection to add, no wait budget).
fn probe_next_step(state: crate::state::State, module: Option<&str>) -> Option<String> {
    use crate::state::State;
    Some(match state {
        State::Ready => return None,
        State::Unauthenticated => match module {
            Some(module) => format!(
                "renew the credentials of probe module `{}` (`readiness.probe.modules.{0}`: its \
                 `headers`, or its OAuth store), then reload",
                crate::secret::escape_controls(module)
            ),
            None => "probe with `&module=NAME`, a module of `readiness.probe.modules` with \
                     credentials the server accepts (a probe without `module` sends none)"
                .into(),
        },
        State::Connecting => "check the server behind the URL (it did not finish the handshake \
                              before the probe's deadline); if it is only slow, raise the module's \
                              `timeout` and the scrape's `scrape_timeout`"
            .into(),
        State::Absent => "check the server behind the URL (is it up and listening there, the \
                          proxy or firewall in front, the path); the next probe sees it"
            .into(),
    })
}

/// The probe request of a query string and the scrape's headers, and whether `debug=true` asked
/// for the probe's log; each parameter at most once.
fn request(query: &str, headers: &HeaderMap) -> Result<(ProbeRequest, bool), String> {
    let (mut target, mut module, mut server, mut debug) = (None, None, None, None);
    for (key, value) in form_pairs(query) {
        let slot = match key.as_str() {
            "target" => &mut target,
            "module" => &mut module,
            "server" => &mut server,
            "debug" => &mut debug,
            // Prometheus may add its own parameters (`params:` in a scrape config): ignored.
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(format!("`{key}` is given more than once: give it once"));
        }
    }
    let scrape_timeout = headers
        .get(SCRAPE_TIMEOUT_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| Duration::from_secs_f64(s.min(3600.0)));
    let debug = match debug.as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err("`debug` is `true` or `false`".into()),
    };
    Ok((
        ProbeRequest {
            target: target.unwrap_or_default(),
            module: module.filter(|m| !m.is_empty()),
            server: server.filter(|s| !s.is_empty()),
            scrape_timeout,
        },
        debug,
    ))
}

/// `application/x-www-form-urlencoded` pairs (see [`form_decode`]).
fn form_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (form_decode(key), form_decode(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_form_decoded_and_each_parameter_given_once() {
        let mut headers = HeaderMap::new();
        headers.insert(SCRAPE_TIMEOUT_HEADER, "4.5".parse().unwrap());
        let (request, debug) = request(
            "target=http%3A%2F%2F127.0.0.1%3A8080%2Fmcp%3Fa%3D1&module=gh&server=my+api&x=%zz",
            &headers,
        )
        .unwrap();
        assert!(!debug);
        assert!(super::request("target=a&debug=true", &headers).unwrap().1);
        assert!(super::request("target=a&debug=yes", &headers).is_err());
        assert_eq!(request.target, "http://127.0.0.1:8080/mcp?a=1");
        assert_eq!(request.module.as_deref(), Some("gh"));
        assert_eq!(request.server.as_deref(), Some("my api"));
        assert_eq!(request.scrape_timeout, Some(Duration::from_millis(4500)));
        assert!(super::request("target=a&target=b", &HeaderMap::new()).is_err());
        assert_eq!(form_decode("%4"), "%4");
        assert_eq!(form_decode("100%"), "100%");
    }
}
