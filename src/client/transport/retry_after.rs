//! HTTP 429 / 503 with `Retry-After` during a handshake: the server said when to come back, so
//! the supervisor cools down for that long (bounded by
//! [`MAX_RETRY_AFTER`](crate::client::connector::MAX_RETRY_AFTER)) and the server reads `connecting`
//! meanwhile: it heals by itself.

use std::time::{Duration, SystemTime};

/// The status and raw `Retry-After` value of the `HttpStatusError` rmcp keeps for a 429 / 5xx
/// answer. rmcp stores the transport's error in a field without `source()`, so it is read from
/// the error chain's `Debug` text (`HttpStatusError { status: 429, retry_after: Some("7") }`).
pub(crate) fn http_status(debug_text: &str) -> Option<(u16, Option<String>)> {
    let at = debug_text.find("HttpStatusError { status: ")?;
    let rest = &debug_text[at + "HttpStatusError { status: ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let status = digits.parse().ok()?;
    let rest = &rest[digits.len()..];
    let retry_after = rest
        .strip_prefix(", retry_after: Some(\"")
        .and_then(|v| v.split_once("\")"))
        .map(|(v, _)| v.to_owned());
    Some((status, retry_after))
}

/// A `Retry-After` value as a delay from `now`: delta-seconds or an HTTP-date. `None` for
/// anything else (a server that sends garbage gets the ordinary cooldown).
pub(crate) fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The delay a 429 / 503 handshake failure asks for, if it is one and names one.
pub(crate) fn requested(debug_text: &str) -> Option<(u16, Duration)> {
    let (status, value) = http_status(debug_text)?;
    if status != 429 && status != 503 {
        return None;
    }
    let delay = parse(&value?, SystemTime::now())?;
    Some((status, delay))
}

/// How long after an authorization server failed (a refresh it did not answer, a discovery that
/// failed) the next connection attempt starts; the server reads `connecting` meanwhile.
#[cfg(feature = "oauth")]
pub(crate) const AUTHORIZATION_SERVER_RETRY: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use crate::client::transport::retry_after::*;
    use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};

    #[test]
    fn the_status_and_retry_after_are_read_from_rmcps_error() {
        let e: StreamableHttpError<std::io::Error> =
            HttpStatusError::new(429, Some("7".into())).into();
        let text = format!("{e:?}");
        assert_eq!(http_status(&text), Some((429, Some("7".into()))));
        let e: StreamableHttpError<std::io::Error> = HttpStatusError::new(503, None).into();
        assert_eq!(http_status(&format!("{e:?}")), Some((503, None)));
        assert_eq!(http_status("connection refused"), None);
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(parse("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse("soon", now), None);
    }
}
