//! The phases of a probe, each timed with tokio's clock from the probe's start: `resolve` (the
//! host's addresses, tokio's resolver), `connect` (TCP to the first address that answers), `tls`
//! (HTTPS only: the handshake with reqwest's rustls configuration and the platform's roots, the
//! leaf certificate's notAfter noted), then `handshake` and `tools_list` through the HTTP client.
//!
//! The first three are made by the probe itself on a connection of its own, closed at once; the
//! HTTP client then makes its own connection for the MCP handshake (so `handshake` includes a
//! second resolution, connection and TLS handshake). A phase that fails is logged as failed and
//! the MCP handshake still runs: its classification (refused, not MCP, unauthenticated...) is the
//! verdict, as on a supervised server.

use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

use tokio::time::Instant;

use super::outcome::ProbePhase;
use super::target_pattern::ProbeTarget;
use crate::util::MutexExt as _;

/// The phases of one probe, recorded as they start and end; one may be running when the
/// deadline comes (it then counts until the deadline, failed).
#[derive(Debug)]
pub(crate) struct PhaseClock {
    probe_started: Instant,
    running: Mutex<Option<(&'static str, Instant)>>,
    done: Mutex<Vec<ProbePhase>>,
}

impl PhaseClock {
    pub(crate) fn new(probe_started: Instant) -> Self {
        PhaseClock {
            probe_started,
            running: Mutex::new(None),
            done: Mutex::new(Vec::new()),
        }
    }

    /// `name` starts now.
    pub(crate) fn begin(&self, name: &'static str) {
        *self.running.lock_unpoisoned() = Some((name, Instant::now()));
    }

    /// The running phase ends now, `ok` or not, with what a person should read of it.
    pub(crate) fn end(&self, ok: bool, detail: Option<String>) {
        if let Some((name, at)) = self.running.lock_unpoisoned().take() {
            self.done.lock_unpoisoned().push(ProbePhase {
                name,
                started: at.duration_since(self.probe_started),
                duration: at.elapsed(),
                ok,
                detail,
            });
        }
    }

    /// The phase still running, if any.
    pub(crate) fn running(&self) -> Option<&'static str> {
        self.running.lock_unpoisoned().map(|(name, _)| name)
    }

    /// Every phase, in order (one still running ends now, failed: the deadline came).
    pub(crate) fn finish(self) -> Vec<ProbePhase> {
        self.end(false, Some("still running at the probe's deadline".into()));
        self.done.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the probe's own connection learned: the leaf certificate's notAfter, over HTTPS.
#[derive(Debug, Default)]
pub(crate) struct Reached {
    pub(crate) tls_certificate_expiry: Option<i64>,
}

/// Resolves `target`'s host, connects to it over TCP and, for `https://`, makes the TLS handshake,
/// each phase on `clock`. Stops at the first phase that fails (logged on `clock`).
pub(crate) async fn reach(target: &ProbeTarget, clock: &PhaseClock) -> Reached {
    let mut reached = Reached::default();
    let (host, port) = (target.host(), target.port());

    clock.begin("resolve");
    let addresses: Vec<SocketAddr> = if let Ok(ip) = host.parse::<IpAddr>() {
        clock.end(
            true,
            Some(format!("{ip} is an IP address: nothing to resolve")),
        );
        vec![SocketAddr::new(ip, port)]
    } else {
        match tokio::net::lookup_host((host, port)).await {
            Ok(found) => {
                let found: Vec<SocketAddr> = found.collect();
                clock.end(!found.is_empty(), Some(format!("{host}: {}", list(&found))));
                found
            }
            Err(error) => {
                clock.end(
                    false,
                    Some(format!(
                        "{host} could not be resolved (the network's DNS): {error}"
                    )),
                );
                return reached;
            }
        }
    };

    clock.begin("connect");
    let mut connected = None;
    let mut failures = Vec::new();
    for address in addresses.iter().take(4) {
        match tokio::net::TcpStream::connect(address).await {
            Ok(stream) => {
                connected = Some((stream, *address));
                break;
            }
            Err(error) => failures.push(format!("{address}: {error}")),
        }
    }
    let Some((stream, address)) = connected else {
        clock.end(
            false,
            Some(format!(
                "no TCP connection (the network, or nothing listening): {}",
                failures.join("; ")
            )),
        );
        return reached;
    };
    clock.end(true, Some(format!("to {address}")));

    if target.is_https() {
        reached.tls_certificate_expiry = tls(host, stream, clock).await;
    }
    reached
}

#[cfg(feature = "tls")]
async fn tls(host: &str, stream: tokio::net::TcpStream, clock: &PhaseClock) -> Option<i64> {
    use crate::client::transport::tls_certificate::{CertificateSlot, client_config};
    use rustls::pki_types::ServerName;

    clock.begin("tls");
    let slot = CertificateSlot::default();
    let config = match client_config(slot.clone()) {
        Ok(config) => config,
        Err(error) => {
            clock.end(
                false,
                Some(format!("the TLS client could not be set up: {error}")),
            );
            return None;
        }
    };
    let Ok(name) = ServerName::try_from(host.to_owned()) else {
        clock.end(false, Some(format!("{host} is not a TLS server name")));
        return None;
    };
    let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
    match connector.connect(name, stream).await {
        Ok(tls) => {
            let version = tls
                .get_ref()
                .1
                .protocol_version()
                .map(|v| format!("{v:?}"))
                .unwrap_or_default();
            let expiry = slot.not_after();
            clock.end(
                true,
                Some(format!(
                    "{version}, certificate valid until {}",
                    expiry.map_or_else(|| "an unknown time".into(), unix_time)
                )),
            );
            expiry
        }
        Err(error) => {
            let expiry = slot.not_after();
            clock.end(
                false,
                Some(format!(
                    "the TLS handshake failed (the MCP server's certificate or TLS set-up): \
                     {error}{}",
                    expiry.map_or_else(String::new, |e| format!(
                        "; its certificate is valid until {}",
                        unix_time(e)
                    ))
                )),
            );
            expiry
        }
    }
}

#[cfg(not(feature = "tls"))]
async fn tls(_host: &str, _stream: tokio::net::TcpStream, clock: &PhaseClock) -> Option<i64> {
    clock.begin("tls");
    clock.end(
        false,
        Some("this build has no `tls` feature: HTTPS cannot be probed".into()),
    );
    None
}

fn list(addresses: &[SocketAddr]) -> String {
    if addresses.is_empty() {
        return "no address".into();
    }
    let shown: Vec<String> = addresses
        .iter()
        .take(4)
        .map(|a| a.ip().to_string())
        .collect();
    let more = addresses.len().saturating_sub(4);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// `2027-01-31T12:00:00Z` for Unix seconds (humantime's RFC 3339): the TLS phase's words and
/// `/probe`'s debug log (the `tls` and `http` features).
#[cfg(any(feature = "tls", feature = "http", test))]
pub(crate) fn unix_time(seconds: i64) -> String {
    let Ok(seconds) = u64::try_from(seconds) else {
        return format!("{seconds} (Unix seconds, before 1970)");
    };
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    humantime::format_rfc3339_seconds(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_read_as_rfc3339() {
        assert_eq!(unix_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(unix_time(1_800_000_000), "2027-01-15T08:00:00Z");
    }

    #[tokio::test(start_paused = true)]
    async fn an_ip_literal_has_nothing_to_resolve_and_a_closed_port_fails_to_connect() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let target = ProbeTarget::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let clock = PhaseClock::new(Instant::now());
        let reached = reach(&target, &clock).await;
        assert_eq!(reached.tls_certificate_expiry, None);
        let phases = clock.finish();
        let names: Vec<&str> = phases.iter().map(|p| p.name).collect();
        assert_eq!(names, ["resolve", "connect"]);
        assert!(phases[0].ok && phases[0].duration.is_zero(), "{phases:?}");
        assert!(
            phases[0]
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("nothing to resolve")),
            "{phases:?}"
        );
        assert!(!phases[1].ok, "{phases:?}");
    }
}
