//! The one text encoder: writes a [`Family`]'s series from its storage in the Prometheus text
//! format 0.0.4, the bytes `prometheus::TextEncoder` writes for the same family (a test compares
//! them), without building a message per series: label text is escaped once when a series is
//! created, bucket bounds once per family, and series are stored in exposition order.

use std::fmt::Write as _;

use prometheus::proto::MetricType;

use super::series_family::Family;
use super::series_values::{Child, Reading};

/// A family that can write itself in the text format.
pub(crate) trait Encode: Send + Sync {
    /// The metric name.
    fn name(&self) -> &'static str;
    /// Appends `# HELP`, `# TYPE` and every sample line; nothing when the family has no series.
    fn encode(&self, out: &mut String);
}

impl<M: Child> Encode for Family<M> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn encode(&self, out: &mut String) {
        let series = self.series();
        if series.is_empty() {
            return;
        }
        out.push_str("# HELP ");
        out.push_str(self.name);
        out.push(' ');
        escape_help(out, &self.desc.help);
        out.push_str("\n# TYPE ");
        out.push_str(self.name);
        out.push_str(match M::KIND {
            MetricType::COUNTER => " counter\n",
            MetricType::GAUGE => " gauge\n",
            MetricType::HISTOGRAM => " histogram\n",
            MetricType::SUMMARY => " summary\n",
            MetricType::UNTYPED => " untyped\n",
        });
        for entry in series.values() {
            match entry.child.read() {
                Reading::Value(value) => sample(out, self.name, "", &entry.labels, None, value),
                Reading::Histogram(snapshot) => {
                    let buckets = self.bounds.iter().zip(&snapshot.cumulative);
                    for (i, (bound, count)) in buckets.enumerate() {
                        let le = Some(Le::new(self.les.get(i).map(|text| &**text), *bound));
                        sample(out, self.name, "_bucket", &entry.labels, le, *count as f64);
                    }
                    let count = snapshot.count() as f64;
                    let labels = &entry.labels;
                    sample(
                        out,
                        self.name,
                        "_bucket",
                        labels,
                        Some(Le::Text("+Inf")),
                        count,
                    );
                    sample(out, self.name, "_sum", labels, None, snapshot.sum);
                    sample(out, self.name, "_count", labels, None, count);
                }
            }
        }
    }
}

/// `name="escaped value",...` for label names and values in exposition order.
pub(crate) fn label_set<'a, 'b>(pairs: impl Iterator<Item = (&'a str, &'b str)>) -> Box<str> {
    let mut labels = String::new();
    for (n, (name, value)) in pairs.enumerate() {
        if n > 0 {
            labels.push(',');
        }
        labels.push_str(name);
        labels.push_str("=\"");
        escape_label_value(&mut labels, value);
        labels.push('"');
    }
    labels.into_boxed_str()
}

/// A bucket bound: formatted once per family, or (should the buckets differ) now.
#[derive(Clone, Copy)]
enum Le<'a> {
    Text(&'a str),
    Number(f64),
}

impl<'a> Le<'a> {
    fn new(cached: Option<&'a str>, bound: f64) -> Le<'a> {
        match cached {
            Some(text) => Le::Text(text),
            None => Le::Number(bound),
        }
    }
}

/// One sample line: `name[suffix]{labels[,le="bound"]} value`.
fn sample(
    out: &mut String,
    name: &str,
    suffix: &str,
    labels: &str,
    le: Option<Le<'_>>,
    value: f64,
) {
    out.push_str(name);
    out.push_str(suffix);
    if !labels.is_empty() || le.is_some() {
        out.push('{');
        out.push_str(labels);
        if let Some(le) = le {
            if !labels.is_empty() {
                out.push(',');
            }
            out.push_str("le=\"");
            match le {
                Le::Text(text) => out.push_str(text),
                Le::Number(bound) => number(out, bound),
            }
            out.push('"');
        }
        out.push('}');
    }
    out.push(' ');
    number(out, value);
    out.push('\n');
}

/// A number as the text format spells it (`+Inf`, `-Inf`, `NaN`, else Rust's shortest form, as
/// `TextEncoder` writes it).
pub(crate) fn number(out: &mut String, value: f64) {
    if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else if value.fract() == 0.0
        && value.abs() < 9.0e15
        && !(value == 0.0 && value.is_sign_negative())
    {
        // Most samples are whole numbers (counts, bucket counts, states): integer formatting is
        // several times faster and prints the same digits.
        let _ = write!(out, "{}", value as i64);
    } else {
        // Writing into a String cannot fail.
        let _ = write!(out, "{value}");
    }
}

/// Escapes a label value: backslash, double quote and line feed.
fn escape_label_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            // Other control characters (terminal escapes, NUL, CR) are shown as text, e.g.
            // `\u{1b}`, so a scrape read on a terminal cannot be used to drive it.
            c if c.is_control() => {
                for e in c.escape_default() {
                    if e == '\\' {
                        out.push_str("\\\\");
                    } else {
                        out.push(e);
                    }
                }
            }
            c => out.push(c),
        }
    }
}

/// Escapes a HELP text: backslash and line feed.
fn escape_help(out: &mut String, help: &str) {
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use prometheus::{Encoder, Registry, TextEncoder};

    use super::*;
    use crate::exposition::proto_collector::FamilyCollector;
    use crate::exposition::series_values::{Gauge, Histogram, IntCounter};

    #[test]
    fn the_text_is_byte_for_byte_what_the_text_encoder_writes_from_the_gathered_messages() {
        let counters: Arc<Family<IntCounter>> =
            Arc::new(Family::new("t_total", "test", &["tool", "server"], ()).unwrap());
        let histograms: Arc<Family<Histogram>> = Arc::new(
            Family::new(
                "h_seconds",
                "a \\ help\nwith a newline",
                &["server", "state"],
                Arc::from([0.005, 0.5, 1.0, 120.0]),
            )
            .unwrap(),
        );
        let gauges: Arc<Family<Gauge>> =
            Arc::new(Family::new("g", "gauge", &["server"], ()).unwrap());
        for (tool, server) in [("a\"b", "s\\1"), ("new\nline", "é🚀"), ("", "z"), ("x", "")] {
            counters.get_or_create(&[tool, server]).inc();
            counters.get_or_create(&[tool, server]).inc();
            let _ = gauges.get_or_create(&[server]);
            let h = histograms.get_or_create(&[server, "ready"]);
            h.observe(std::time::Duration::from_millis(250));
            h.observe(std::time::Duration::from_millis(1_700_000_000_125));
        }
        let values = [
            -0.0,
            0.0,
            -3.0,
            1e300,
            8.9e15,
            9.1e15,
            -1.5,
            1_700_000_063.25,
            f64::NAN,
        ];
        for (i, v) in values.into_iter().enumerate() {
            gauges.get_or_create(&[&format!("g{i}")]).set(v);
        }
        let registry = Registry::new();
        registry
            .register(Box::new(FamilyCollector(gauges.clone())))
            .unwrap();
        registry
            .register(Box::new(FamilyCollector(counters.clone())))
            .unwrap();
        registry
            .register(Box::new(FamilyCollector(histograms.clone())))
            .unwrap();
        let mut reference = Vec::new();
        TextEncoder::new()
            .encode(&registry.gather(), &mut reference)
            .unwrap();

        let mut direct = String::new();
        gauges.encode(&mut direct);
        histograms.encode(&mut direct);
        counters.encode(&mut direct);
        assert_eq!(direct, String::from_utf8(reference).unwrap());
    }
}
