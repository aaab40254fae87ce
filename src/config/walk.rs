//! Typed access to the [`Node`] tree: every accessor knows the JSON path of its value and turns a
//! mismatch into a [`ConfigError`] naming the file, the path and what was expected.

use std::path::Path;
use std::time::Duration;

use super::error::ConfigError;
use super::expand::expand;
use super::node::Node;
use crate::secret::Secret;

/// The file being read and where `${VAR}` values come from.
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a Path,
    pub(crate) env: &'a dyn Fn(&str) -> Option<String>,
}

/// The entries of one JSON object, checked against the keys its place allows.
pub(crate) struct Fields<'n> {
    pub(crate) path: String,
    entries: &'n [(String, Node)],
}

impl<'n> Fields<'n> {
    /// The value of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The path of `key` in this object.
    pub(crate) fn path_of(&self, key: &str) -> String {
        child(&self.path, key)
    }

    /// The value of `key` and its path, if present and not `null`.
    pub(crate) fn given(&self, key: &str) -> Option<(&'n Node, String)> {
        self.get(key)
            .filter(|node| !matches!(node, Node::Null))
            .map(|node| (node, self.path_of(key)))
    }

    /// All entries in file order.
    pub(crate) fn entries(&self) -> &'n [(String, Node)] {
        self.entries
    }
}

/// `parent.key`, or `parent["key"]` when the key is not a plain word.
pub(crate) fn child(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (parent.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{parent}.{key}"),
        (_, false) => format!("{parent}[{}]", serde_json::Value::from(key)),
    }
}

/// `parent[index]`.
pub(crate) fn index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

/// `` `a`, `b`, `c` ``.
fn list(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Ctx<'_> {
    /// An error at `path`.
    pub(crate) fn err(&self, path: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            file: self.file.to_owned(),
            path: path.to_owned(),
            message: message.into(),
        }
    }

    /// The value of `key` in `fields` and its path; an error saying `missing` where it is absent.
    pub(crate) fn required<'n>(
        &self,
        fields: &Fields<'n>,
        key: &str,
        missing: impl Into<String>,
    ) -> Result<(&'n Node, String), ConfigError> {
        let path = fields.path_of(key);
        match fields.get(key) {
            Some(node) => Ok((node, path)),
            None => Err(self.err(&path, missing)),
        }
    }

    fn expected(&self, path: &str, what: &str, node: &Node) -> ConfigError {
        self.err(path, format!("expected {what}, found {}", node.kind()))
    }

    /// An object whose keys are all in `allowed` (`what` names the place, e.g. "a stdio server").
    pub(crate) fn object<'n>(
        &self,
        node: &'n Node,
        path: &str,
        what: &str,
        allowed: Option<&[&str]>,
    ) -> Result<Fields<'n>, ConfigError> {
        let Node::Object(entries) = node else {
            return Err(self.expected(path, &format!("{what} (a JSON object)"), node));
        };
        for (i, (key, _)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(k, _)| k == key) {
                return Err(self.err(
                    &child(path, key),
                    "duplicate key: each key may appear only once in an object",
                ));
            }
            if let Some(allowed) = allowed
                && !allowed.contains(&key.as_str())
            {
                let hint = allowed
                    .iter()
                    .find(|a| edit_distance(a, key) <= 2)
                    .map(|a| format!(" (did you mean `{a}`?)"))
                    .unwrap_or_default();
                return Err(self.err(
                    &child(path, key),
                    format!("unknown key{hint}: {what} allows only {}", list(allowed)),
                ));
            }
        }
        Ok(Fields {
            path: path.to_owned(),
            entries,
        })
    }

    /// A string, with `${VAR}` expanded.
    pub(crate) fn string(&self, node: &Node, path: &str) -> Result<String, ConfigError> {
        let Node::String(raw) = node else {
            return Err(self.expected(path, "a string", node));
        };
        expand(raw, self.env).map_err(|e| self.err(path, e.message()))
    }

    /// A string that is a secret once expanded.
    pub(crate) fn secret(&self, node: &Node, path: &str) -> Result<Secret, ConfigError> {
        self.string(node, path).map(Secret::from)
    }

    /// An array of strings, each expanded.
    pub(crate) fn strings(&self, node: &Node, path: &str) -> Result<Vec<String>, ConfigError> {
        let Node::Array(items) = node else {
            return Err(self.expected(path, "an array of strings", node));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.string(item, &index(path, i)))
            .collect()
    }

    /// A boolean.
    pub(crate) fn bool(&self, node: &Node, path: &str) -> Result<bool, ConfigError> {
        match node {
            Node::Bool(b) => Ok(*b),
            other => Err(self.expected(path, "true or false", other)),
        }
    }

    /// A duration string such as `"20s"`, `"1m30s"` or `"500ms"`.
    pub(crate) fn duration(&self, node: &Node, path: &str) -> Result<Duration, ConfigError> {
        const EXPECTED: &str = r#"a duration like "20s", "1m30s" or "500ms""#;
        let Node::String(_) = node else {
            return Err(self.expected(path, EXPECTED, node));
        };
        let text = self.string(node, path)?;
        let duration = humantime::parse_duration(text.trim()).map_err(|e| {
            self.err(
                path,
                format!(
                    "expected {EXPECTED}, found {}: {e}",
                    serde_json::Value::from(text.as_str())
                ),
            )
        })?;
        if duration > crate::config::MAX_DURATION {
            return Err(self.err(
                path,
                format!(
                    "expected at most 365 days, found {}: write a shorter duration",
                    serde_json::Value::from(text)
                ),
            ));
        }
        Ok(duration)
    }
}

/// Levenshtein distance, for "did you mean" hints on short keys.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_quote_keys_that_are_not_plain_words() {
        assert_eq!(child("", "mcpServers"), "mcpServers");
        assert_eq!(
            child("mcpServers", "google-drive"),
            "mcpServers.google-drive"
        );
        assert_eq!(child("mcpServers", "a.b"), r#"mcpServers["a.b"]"#);
        assert_eq!(child("x", "say \"hi\""), r#"x["say \"hi\""]"#);
        assert_eq!(index("readiness.steps", 2), "readiness.steps[2]");
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("headers", "heders"), 1);
        assert_eq!(edit_distance("command", "comand"), 1);
        assert_eq!(edit_distance("url", "uri"), 1);
        assert_eq!(edit_distance("budget", "poll"), 6);
    }
}
