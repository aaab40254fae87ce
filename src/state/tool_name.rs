use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The server that names which are not `mcp__<server>__<tool>` belong to (`Bash`, `Read`, ...).
pub const BUILTIN_SERVER: &str = "builtin";

const PREFIX: &str = "mcp__";

/// A qualified tool name, `mcp__<server>__<tool>`, split into its server and tool.
///
/// The server is the shortest prefix made of non-empty segments joined by single underscores,
/// followed by `__` and a non-empty tool (the rule of the seed's `serverOf`). Every other string is
/// a built-in tool that belongs to server [`BUILTIN_SERVER`]. Parsing never fails and never loses
/// anything: [`ToolName::as_str`] gives back the input exactly.
///
/// ```
/// use mcp_readiness::ToolName;
///
/// let name = ToolName::parse("mcp__google-drive__search");
/// assert_eq!((name.server(), name.tool()), ("google-drive", "search"));
///
/// let name = ToolName::parse("mcp__my_server__do_thing");
/// assert_eq!((name.server(), name.tool()), ("my_server", "do_thing"));
///
/// let name = ToolName::parse("mcp__a__b__c");
/// assert_eq!((name.server(), name.tool()), ("a", "b__c"));
///
/// let name = ToolName::parse("Bash");
/// assert!(name.is_builtin());
/// assert_eq!((name.server(), name.tool()), ("builtin", "Bash"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName {
    full: Arc<str>,
    /// Length of the server segment, or `None` for a built-in tool.
    server_len: Option<usize>,
}

impl ToolName {
    /// Parses a qualified tool name. Never fails: anything that is not `mcp__<server>__<tool>` is a
    /// built-in tool.
    pub fn parse(name: &str) -> ToolName {
        ToolName {
            full: Arc::from(name),
            server_len: split(name).map(|(server, _)| server.len()),
        }
    }

    /// Builds the qualified name for `tool` on `server`. Returns `None` when the pair cannot be
    /// written so that it parses back to the same server and tool (an empty part, or a server with
    /// an empty segment, leading, trailing or doubled underscores).
    pub fn qualified(server: &str, tool: &str) -> Option<ToolName> {
        let name = ToolName::parse(&format!("{PREFIX}{server}__{tool}"));
        (name.server_len.is_some() && name.server() == server && name.tool() == tool)
            .then_some(name)
    }

    /// The whole name, exactly as parsed.
    pub fn as_str(&self) -> &str {
        &self.full
    }

    /// The server this tool belongs to, or [`BUILTIN_SERVER`].
    pub fn server(&self) -> &str {
        match self.server_len {
            Some(len) => &self.full[PREFIX.len()..PREFIX.len() + len],
            None => BUILTIN_SERVER,
        }
    }

    /// The tool's own name on its server (the whole name for a built-in tool).
    pub fn tool(&self) -> &str {
        match self.server_len {
            Some(len) => &self.full[PREFIX.len() + len + 2..],
            None => &self.full,
        }
    }

    /// Whether this is not an `mcp__<server>__<tool>` name.
    pub fn is_builtin(&self) -> bool {
        self.server_len.is_none()
    }

    /// The shared string behind this name (cheap to clone).
    pub fn as_arc(&self) -> &Arc<str> {
        &self.full
    }
}

/// Splits `mcp__<server>__<tool>` without allocating; `None` for a built-in name.
///
/// Equivalent to the seed's `/^mcp__([^_]+(?:_[^_]+)*?)__/` plus a non-empty tool.
pub(crate) fn split(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(PREFIX)?;
    let bytes = rest.as_bytes();
    // The server starts with a non-empty segment.
    if bytes.first().is_none_or(|b| *b == b'_') {
        return None;
    }
    let mut at = 0;
    loop {
        // Next underscore after the current segment; none means there is no `__` at all.
        let underscore = at + rest[at..].find('_')?;
        match bytes.get(underscore + 1) {
            // `__` ends the server (the shortest prefix wins).
            Some(b'_') => {
                let tool = &rest[underscore + 2..];
                return (!tool.is_empty()).then(|| (&rest[..underscore], tool));
            }
            // A single underscore joins the next non-empty segment.
            Some(_) => at = underscore + 1,
            // A trailing single underscore: no `__` follows.
            None => return None,
        }
    }
}

impl FromStr for ToolName {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ToolName::parse(s))
    }
}

impl From<&str> for ToolName {
    fn from(s: &str) -> Self {
        ToolName::parse(s)
    }
}

impl From<String> for ToolName {
    fn from(s: String) -> Self {
        ToolName::parse(&s)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full)
    }
}

impl fmt::Debug for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolName")
            .field("name", &&*self.full)
            .field("server", &self.server())
            .field("tool", &self.tool())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> (String, String) {
        let n = ToolName::parse(s);
        (n.server().to_owned(), n.tool().to_owned())
    }

    #[test]
    fn the_server_is_the_shortest_underscore_joined_prefix() {
        assert_eq!(
            parts("mcp__google-drive__search"),
            ("google-drive".into(), "search".into())
        );
        assert_eq!(
            parts("mcp__my_server__do_thing"),
            ("my_server".into(), "do_thing".into())
        );
        assert_eq!(parts("mcp__a__b__c"), ("a".into(), "b__c".into()));
        assert_eq!(parts("mcp__a_b_c__d"), ("a_b_c".into(), "d".into()));
        assert_eq!(parts("mcp__a___b"), ("a".into(), "_b".into()));
    }

    #[test]
    fn anything_else_belongs_to_builtin() {
        for s in [
            "Bash",
            "",
            "mcp__",
            "mcp____x",
            "mcp__x",
            "mcp__x__",
            "mcp__x_",
            "mcp___x__y",
            "MCP__x__y",
            "mcp_x__y",
        ] {
            let n = ToolName::parse(s);
            assert!(n.is_builtin(), "{s:?} should be builtin");
            assert_eq!(n.server(), BUILTIN_SERVER);
            assert_eq!(n.tool(), s);
        }
    }

    #[test]
    fn qualified_refuses_pairs_that_would_not_parse_back() {
        assert_eq!(
            ToolName::qualified("files", "read").unwrap().as_str(),
            "mcp__files__read"
        );
        assert_eq!(ToolName::qualified("a", "b__c").unwrap().tool(), "b__c");
        assert!(ToolName::qualified("a__b", "c").is_none());
        assert!(ToolName::qualified("", "c").is_none());
        assert!(ToolName::qualified("a", "").is_none());
        assert!(ToolName::qualified("a_", "c").is_none());
    }

    #[test]
    fn unicode_and_hostile_bytes_are_kept_verbatim() {
        assert_eq!(
            parts("mcp__dé\"\n\\__ツール"),
            ("dé\"\n\\".into(), "ツール".into())
        );
    }
}
