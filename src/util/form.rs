//! `application/x-www-form-urlencoded` values, as a redirect's query and a `/probe` query carry them.

/// Decodes one value: `+` is a space, `%XX` a byte; a `%` not followed by two hex digits is kept;
/// invalid UTF-8 is replaced.
// Used by `oauth` and the probe route; feature sets without either leave it unused.
#[allow(dead_code)]
pub(crate) fn form_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::form_decode;

    #[test]
    fn redirect_parameters_are_form_decoded() {
        assert_eq!(form_decode("a%2Fb+c"), "a/b c");
        assert_eq!(form_decode("100%"), "100%");
        assert_eq!(form_decode("%zz"), "%zz");
    }
}
