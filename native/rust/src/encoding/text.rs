//! JSON string literals (FORMAT.md, "Text"): UTF-8 written raw; only `"`,
//! `\` and C0 controls are escaped (`\b \f \n \r \t`, else `\u00xx`
//! lowercase). DEL and U+2028 stay as they are.

/// Appends `s` as a JSON string literal.
pub(crate) fn write_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut clean_from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => &[],
            _ => continue,
        };
        out.extend_from_slice(&bytes[clean_from..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
        } else {
            out.extend_from_slice(escape);
        }
        clean_from = i + 1;
    }
    out.extend_from_slice(&bytes[clean_from..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(s: &str) -> String {
        let mut out = Vec::new();
        write_json_string(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn quotes_backslashes_and_c0_controls_are_escaped() {
        assert_eq!(literal("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(literal("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(literal("\u{0}\u{1f}\u{b}"), r#""\u0000\u001f\u000b""#);
    }

    #[test]
    fn del_u2028_and_non_ascii_are_written_raw() {
        assert_eq!(literal("\u{7f}\u{2028}注意力 ü"), "\"\u{7f}\u{2028}注意力 ü\"");
        assert_eq!(literal(""), "\"\"");
    }
}
