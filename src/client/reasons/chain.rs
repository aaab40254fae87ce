//! Walking an error chain: every error below one, rmcp's handshake errors included (they keep
//! their cause in fields `source()` does not return), and rmcp's transport type names removed
//! from a message. Used by the rules (`rmcp_errors.rs`) and the reasons (`reason.rs`) alike.

use std::error::Error as StdError;

use rmcp::service::ClientInitializeError;

/// `error` and every error below it, the handshake's hidden causes included (see [`cause`]).
pub(crate) fn chain<'a>(
    error: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    std::iter::successors(Some(error), |e: &&'a (dyn StdError + 'static)| cause(*e))
}

/// The error below `error`: its `source()`, or for rmcp's errors that keep their cause in fields
/// `source()` does not return, that cause (the transport's error; the legacy fallback's failure;
/// the HTTP client's error, where a refused connection or a timeout is).
fn cause<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a (dyn StdError + 'static)> {
    #[cfg(feature = "hub")]
    if let Some(client) = http_client_error(error) {
        return Some(client);
    }
    match error.downcast_ref::<ClientInitializeError>() {
        Some(ClientInitializeError::TransportError { error, .. }) => Some(error),
        Some(ClientInitializeError::LegacyFallbackFailed { fallback, .. }) => {
            Some(fallback.as_ref())
        }
        _ => error.source(),
    }
}

/// The HTTP client's own error inside rmcp's `StreamableHttpError::Client` (whose `source()` is
/// `None`), for the clients the crate's connections use.
#[cfg(feature = "hub")]
fn http_client_error<'a>(
    error: &'a (dyn StdError + 'static),
) -> Option<&'a (dyn StdError + 'static)> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    if let Some(StreamableHttpError::Client(client)) =
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        return Some(client);
    }
    if let Some(StreamableHttpError::Client(client)) =
        error.downcast_ref::<StreamableHttpError<std::io::Error>>()
    {
        return Some(client);
    }
    None
}

#[cfg(feature = "hub")]
/// Removes rmcp's `Transport [<type name>] error` wrappers from a message.
pub(crate) fn strip_transport_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("Transport [") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + "Transport [".len()..];
        // The type name nests brackets (`Worker<Foo<[u8]>>`): find the matching `]`.
        let Some(end) = closing(tail, '[', ']') else {
            out.push_str(&rest[at..]);
            return out;
        };
        rest = &tail[end + 1..];
        rest = rest.strip_prefix(" error").unwrap_or(rest);
        rest = rest.strip_prefix(':').unwrap_or(rest);
    }
    out.push_str(rest);
    out
}

#[cfg(feature = "hub")]
/// Where the bracket opened just before `text` closes: the index of the `close` that matches it,
/// nested `open`/`close` pairs skipped; `None` when it does not close.
pub(crate) fn closing(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}
