//! The text of a whole registry: our families written from their storage and the registry's
//! other collectors (a service's own) written with `prometheus::TextEncoder`, merged by name, so
//! `/metrics` is one exposition sorted by family name.

use prometheus::proto::MetricFamily;
use prometheus::{Registry, TextEncoder};

use super::text_encoder::Encode;

/// `ours` (sorted by name) and what `registry` gathers, merged by family name into one text
/// exposition of at least `capacity` bytes reserved. A gathered family the encoder refuses is
/// left out (and logged) rather than failing the render.
///
/// The caller decides what is ours: with the recorder's own registry, our families' collectors
/// only reserve their names and gather nothing, so `ours` is every family; with a service's
/// registry, the registry gathers our families too and `ours` is empty.
pub(crate) fn render_merged(ours: &[&dyn Encode], registry: &Registry, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    let encoder = TextEncoder::new();
    let gathered = registry.gather();
    let mut others = gathered.iter().peekable();
    for family in ours {
        while let Some(other) = others.next_if(|o| o.name() < family.name()) {
            encode_other(&encoder, other, &mut out);
        }
        family.encode(&mut out);
    }
    for other in others {
        encode_other(&encoder, other, &mut out);
    }
    out
}

fn encode_other(encoder: &TextEncoder, family: &MetricFamily, out: &mut String) {
    // The encoder checks a family before writing any of it, so a refused family leaves nothing
    // half-written.
    if let Err(error) = encoder.encode_utf8(std::slice::from_ref(family), out) {
        tracing::warn!(metric = family.name(), %error, "metric family left out of /metrics");
    }
}
