//! Untrusted text as a message repeats it: control characters escaped ([`escape_controls`]), and
//! a name a caller gave cut to a length a person reads ([`echo`]). Here rather than in `secret`
//! so the resolver, which may use only `util`, words its reasons the same way;
//! `secret::escape_controls` and `secret::echo` are the public paths.

use std::borrow::Cow;

/// How many characters of a name a caller gave (a tool's or a server's) a message repeats.
const ECHO_MAX: usize = 120;

/// Every control character (terminal escapes, carriage returns, NULs, newlines) as a visible
/// escape such as `\u{1b}`.
pub(crate) fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A name a caller gave, as a message repeats it: control characters escaped and cut to 120
/// characters, with how long it was.
pub(crate) fn echo(text: &str) -> Cow<'_, str> {
    let escaped = escape_controls(text);
    if escaped.chars().nth(ECHO_MAX).is_none() {
        return escaped;
    }
    let kept: String = escaped.chars().take(ECHO_MAX).collect();
    Cow::Owned(format!("{kept}… ({} characters)", text.chars().count()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_short_name_is_shown_as_it_is_and_a_long_one_cut_with_its_length() {
        let long = "é".repeat(500);
        let cut = format!("{}… (500 characters)", "é".repeat(120));
        for (name, shown) in [("files", "files"), ("a\u{7}b", "a\\u{7}b"), (&long, &cut)] {
            assert_eq!(super::echo(name), shown);
        }
    }
}
