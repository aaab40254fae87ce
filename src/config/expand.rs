//! `${VAR}` and `${VAR:-default}` expansion.

/// Why a string could not be expanded. Never carries the string itself (it may be a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// `${NAME}` names a variable that is not set and has no default.
    Missing { name: String },
    /// `${` without a closing `}`, at this character position (0-based).
    Unterminated { at: usize },
    /// `${...}` whose name is not made of letters, digits and `_`, at this character position.
    BadName { at: usize },
}

impl ExpandError {
    /// The message shown after the file and JSON path.
    pub(crate) fn message(&self) -> String {
        match self {
            ExpandError::Missing { name } => format!(
                "environment variable `{name}` is not set: set it, or write `${{{name}:-default}}` to give a default"
            ),
            ExpandError::Unterminated { at } => format!(
                "`${{` at character {at} is not closed: write `${{NAME}}` or `${{NAME:-default}}`, or `$${{` for a literal `${{`"
            ),
            ExpandError::BadName { at } => format!(
                "`${{...}}` at character {at} does not name a variable: expected `${{NAME}}` or `${{NAME:-default}}` with NAME made of letters, digits and `_`"
            ),
        }
    }
}

/// Expands `${NAME}` and `${NAME:-default}` from `env`.
///
/// `${NAME:-default}` uses the default when `NAME` is unset or empty (as in the shell); `$${`
/// writes a literal `${`; any other `$` is kept as it is. Expanded values are not expanded again.
pub(crate) fn expand(
    input: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let tail = &rest[dollar..];
        let at = input[..input.len() - tail.len()].chars().count();
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            let close = after.find('}').ok_or(ExpandError::Unterminated { at })?;
            let inner = &after[..close];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            if !is_name(name) {
                return Err(ExpandError::BadName { at });
            }
            match (env(name), default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(ExpandError::Missing {
                        name: name.to_owned(),
                    });
                }
            }
            rest = &after[close + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("abc".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn run(s: &str) -> Result<String, ExpandError> {
        expand(s, &env)
    }

    #[test]
    fn set_variables_are_substituted_anywhere_in_the_string() {
        assert_eq!(run("Bearer ${TOKEN}!").unwrap(), "Bearer abc!");
        assert_eq!(run("${TOKEN}${TOKEN}").unwrap(), "abcabc");
    }

    #[test]
    fn defaults_apply_when_unset_or_empty() {
        assert_eq!(run("${NOPE:-20s}").unwrap(), "20s");
        assert_eq!(run("${EMPTY:-x}").unwrap(), "x");
        assert_eq!(run("${TOKEN:-x}").unwrap(), "abc");
        assert_eq!(run("${NOPE:-}").unwrap(), "");
        assert_eq!(run("${EMPTY}").unwrap(), "");
    }

    #[test]
    fn lone_dollars_and_escaped_braces_are_literal() {
        assert_eq!(run("cost $5 $ {x}").unwrap(), "cost $5 $ {x}");
        assert_eq!(run("$${TOKEN}").unwrap(), "${TOKEN}");
        assert_eq!(run("a$").unwrap(), "a$");
    }

    #[test]
    fn expanded_values_are_not_expanded_again() {
        let env = |n: &str| (n == "A").then(|| "${B}".to_owned());
        assert_eq!(expand("${A}", &env).unwrap(), "${B}");
    }

    #[test]
    fn a_missing_variable_names_itself_and_how_to_default_it() {
        let err = run("x ${NOPE}").unwrap_err();
        assert_eq!(
            err,
            ExpandError::Missing {
                name: "NOPE".into()
            }
        );
        assert_eq!(
            err.message(),
            "environment variable `NOPE` is not set: set it, or write `${NOPE:-default}` to give a default"
        );
    }

    #[test]
    fn malformed_references_give_their_character_position() {
        assert_eq!(
            run("ab${TOKEN").unwrap_err(),
            ExpandError::Unterminated { at: 2 }
        );
        assert_eq!(run("é${1X}").unwrap_err(), ExpandError::BadName { at: 1 });
        assert_eq!(run("${}").unwrap_err(), ExpandError::BadName { at: 0 });
        assert_eq!(run("${A B}").unwrap_err(), ExpandError::BadName { at: 0 });
    }
}
