//! What leaves the process through telemetry is redacted first: every log line (whichever crate
//! wrote it, at any level) and every string of every exported span.

use opentelemetry_sdk::Resource;
use tracing_subscriber::fmt;

use crate::secret::redact_everywhere;

/// Where log lines go: stderr, one event per write, after [`redact_everywhere`] (so no crate's
/// line, at any level, shows a configured secret or a URL's path) and with control characters
/// escaped (a server name or a child's stderr cannot drive the terminal). Colours the formatter
/// itself adds (`ESC[...m`) are kept.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SafeStderr;

impl<'a> fmt::MakeWriter<'a> for SafeStderr {
    type Writer = SafeLine;

    fn make_writer(&'a self) -> Self::Writer {
        SafeLine(Vec::new())
    }
}

/// One log line being written; it reaches stderr when dropped.
#[derive(Debug)]
pub(crate) struct SafeLine(Vec<u8>);

impl std::io::Write for SafeLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // A hostile flood cannot grow one line without bound.
        let room = MAX_LOG_LINE.saturating_sub(self.0.len());
        self.0.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The longest log line written; longer ones are cut.
const MAX_LOG_LINE: usize = 64 * 1024;

impl Drop for SafeLine {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.0);
        let line = safe_log_line(&text);
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }
}

/// Redacts a formatted log line and escapes its control characters, keeping the final newline
/// and SGR colour sequences.
pub(crate) fn safe_log_line(text: &str) -> String {
    let (body, newline) = match text.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (text, ""),
    };
    let redacted = redact_everywhere(body);
    let mut out = String::with_capacity(redacted.len() + 1);
    let mut chars = redacted.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\u{1b}'
            && let Some(len) = sgr_len(&redacted[i..])
        {
            out.push_str(&redacted[i..i + len]);
            while chars.peek().is_some_and(|(j, _)| *j < i + len) {
                chars.next();
            }
        } else if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push_str(newline);
    out
}

/// The length of a colour sequence `ESC [ digits;... m` at the start of `text`.
fn sgr_len(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("\u{1b}[")?;
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (rest[end..].starts_with('m') && end <= 16).then_some(2 + end + 1)
}

/// Redacts every string a span carries (name, attributes, events, status) before export: the
/// spans of `rmcp`, `reqwest` and the others, whose fields may quote a URL, included.
#[derive(Debug)]
pub(crate) struct RedactingExporter<E>(pub(crate) E);

fn redact_value(value: &mut opentelemetry::Value) {
    use opentelemetry::{Array, StringValue, Value};
    match value {
        Value::String(s) => *s = StringValue::from(redact_everywhere(s.as_str())),
        Value::Array(Array::String(items)) => {
            for s in items {
                *s = StringValue::from(redact_everywhere(s.as_str()));
            }
        }
        _ => {}
    }
}

fn redact_span(span: &mut opentelemetry_sdk::trace::SpanData) {
    span.name = redact_everywhere(&span.name).into();
    for kv in &mut span.attributes {
        redact_value(&mut kv.value);
    }
    for event in &mut span.events.events {
        event.name = redact_everywhere(&event.name).into();
        for kv in &mut event.attributes {
            redact_value(&mut kv.value);
        }
    }
    if let opentelemetry::trace::Status::Error { description } = &mut span.status {
        *description = redact_everywhere(description).into();
    }
}

impl<E: opentelemetry_sdk::trace::SpanExporter> opentelemetry_sdk::trace::SpanExporter
    for RedactingExporter<E>
{
    fn export(
        &self,
        mut batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> impl Future<Output = opentelemetry_sdk::error::OTelSdkResult> + Send {
        batch.iter_mut().for_each(redact_span);
        self.0.export(batch)
    }

    fn shutdown_with_timeout(
        &self,
        timeout: std::time::Duration,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.0.set_resource(resource);
    }
}
