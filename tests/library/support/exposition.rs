//! A small parser for the Prometheus text format 0.0.4, independent of the encoder under test.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample {
    pub(crate) name: String,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) value: f64,
}

/// Parses every sample line; panics (failing the test) on anything malformed.
pub(crate) fn parse(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        samples.push(parse_line(line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")));
    }
    samples
}

pub(crate) fn parse_line(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(['{', ' '])
        .ok_or("no value after the metric name")?;
    let name = line[..name_end].to_owned();
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after_brace) = rest.strip_prefix('{') {
        let mut chars = after_brace.char_indices().peekable();
        loop {
            // label name
            let start = chars.peek().map(|(i, _)| *i).ok_or("unterminated labels")?;
            let mut end = start;
            let mut closed = false;
            for (i, c) in chars.by_ref() {
                if c == '=' {
                    end = i;
                    break;
                }
                if c == '}' && i == start {
                    closed = true;
                    end = i;
                    break;
                }
            }
            if closed {
                rest = &after_brace[end + 1..];
                break;
            }
            let label = after_brace[start..end].to_owned();
            if chars.next().map(|(_, c)| c) != Some('"') {
                return Err(format!("label {label} has no opening quote"));
            }
            let mut value = String::new();
            loop {
                match chars.next().ok_or("unterminated label value")?.1 {
                    '\\' => match chars.next().ok_or("dangling backslash")?.1 {
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        'n' => value.push('\n'),
                        other => return Err(format!("unknown escape \\{other}")),
                    },
                    '"' => break,
                    '\n' => return Err("raw newline in a label value".into()),
                    c => value.push(c),
                }
            }
            if labels.insert(label.clone(), value).is_some() {
                return Err(format!("label {label} twice"));
            }
            match chars.next().ok_or("unterminated labels")? {
                (_, ',') => continue,
                (i, '}') => {
                    rest = &after_brace[i + 1..];
                    break;
                }
                (_, c) => return Err(format!("unexpected {c:?} after a label value")),
            }
        }
    }
    let value = rest
        .trim()
        .parse::<f64>()
        .map_err(|e| format!("bad value {rest:?}: {e}"))?;
    Ok(Sample {
        name,
        labels,
        value,
    })
}

pub(crate) fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The value of the one sample named `name` with exactly `pairs`, if any.
pub(crate) fn value(samples: &[Sample], name: &str, pairs: &[(&str, &str)]) -> Option<f64> {
    let want = labels(pairs);
    let found: Vec<_> = samples
        .iter()
        .filter(|s| s.name == name && s.labels == want)
        .collect();
    assert!(
        found.len() <= 1,
        "{name} {want:?} appears {} times",
        found.len()
    );
    found.first().map(|s| s.value)
}
