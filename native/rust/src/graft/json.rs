//! A strict reader of one JSON text (a line of a JSONL trace) for the
//! reference index: RFC 8259 only, nesting at most `MAX_DEPTH` deep, every
//! escape checked. The rules are the C++ core's
//! (detail/decode/json_reader.hpp): numbers are kept as their text and
//! parsed on demand, correctly rounded, so both index a line alike.

/// A JSON value; members of an object keep the order they were written in.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(String),
    Text(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

const MAX_DEPTH: usize = 16;

impl Json {
    /// Parses `text` whole (spaces, tabs, CR and LF around it allowed); `None` when it is not JSON.
    pub(crate) fn parse(text: &str) -> Option<Json> {
        let mut r = Reader { s: text.as_bytes(), pos: 0 };
        r.space();
        let v = r.value(0)?;
        r.space();
        (r.pos == r.s.len()).then_some(v)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A number as f64 (correctly rounded), or the text the JSONL encoding writes for a non-finite float.
    pub(crate) fn real(&self) -> Option<f64> {
        match self {
            Json::Number(text) => text.parse().ok(),
            Json::Text(t) if t == "NaN" => Some(f64::NAN),
            Json::Text(t) if t == "Infinity" => Some(f64::INFINITY),
            Json::Text(t) if t == "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        }
    }

    /// The f32s of a string of their bits, 8 lowercase hex digits each, most significant first (FORMAT.md,
    /// "Numbers": a `floats` field with `text: hex`); `None` for any other text, or one of another length.
    pub(crate) fn hex_f32s(&self, len: usize) -> Option<Vec<f32>> {
        let Json::Text(t) = self else { return None };
        if t.len() != 8 * len || !t.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
            return None;
        }
        t.as_bytes()
            .chunks_exact(8)
            .map(|digits| {
                std::str::from_utf8(digits).ok().and_then(|d| u32::from_str_radix(d, 16).ok()).map(f32::from_bits)
            })
            .collect()
    }

    /// An integer number (no fraction or exponent) that fits i64.
    pub(crate) fn integer(&self) -> Option<i64> {
        match self {
            Json::Number(text) => text.parse().ok(),
            _ => None,
        }
    }
}

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Option<Json> {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Some(value)
        } else {
            None
        }
    }

    fn value(&mut self, depth: usize) -> Option<Json> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.text().map(Json::Text),
            b't' => self.literal(b"true", Json::Bool(true)),
            b'f' => self.literal(b"false", Json::Bool(false)),
            b'n' => self.literal(b"null", Json::Null),
            _ => self.number().map(Json::Number),
        }
    }

    fn object(&mut self, depth: usize) -> Option<Json> {
        self.pos += 1;
        let mut members = Vec::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Some(Json::Object(members));
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return None;
            }
            let name = self.text()?;
            self.space();
            if self.peek() != Some(b':') {
                return None;
            }
            self.pos += 1;
            self.space();
            members.push((name, self.value(depth + 1)?));
            self.space();
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    return Some(Json::Object(members));
                }
                b',' => self.pos += 1,
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Json> {
        self.pos += 1;
        let mut items = Vec::new();
        self.space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Some(Json::Array(items));
        }
        loop {
            self.space();
            items.push(self.value(depth + 1)?);
            self.space();
            match self.peek()? {
                b']' => {
                    self.pos += 1;
                    return Some(Json::Array(items));
                }
                b',' => self.pos += 1,
                _ => return None,
            }
        }
    }

    /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    fn number(&mut self) -> Option<String> {
        let start = self.pos;
        let digits = |r: &mut Self| {
            let from = r.pos;
            while matches!(r.peek(), Some(b'0'..=b'9')) {
                r.pos += 1;
            }
            r.pos > from
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else if !digits(self) {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !digits(self) {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        std::str::from_utf8(&self.s[start..self.pos]).ok().map(str::to_owned)
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.s.get(self.pos..self.pos + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += 4;
        u32::from_str_radix(text, 16).ok()
    }

    /// A string, its escapes decoded; raw control characters and lone surrogates are refused.
    fn text(&mut self) -> Option<String> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let c = self.peek()?;
            self.pos += 1;
            match c {
                b'"' => return String::from_utf8(out).ok(),
                0x00..=0x1f => return None,
                b'\\' => {
                    let e = self.peek()?;
                    self.pos += 1;
                    let decoded = match e {
                        b'"' | b'\\' | b'/' => e as char,
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xdc00..=0xdfff).contains(&cp) {
                                return None;
                            }
                            if (0xd800..=0xdbff).contains(&cp) {
                                if self.s.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                    return None;
                                }
                                self.pos += 2;
                                let low = self.hex4()?;
                                if !(0xdc00..=0xdfff).contains(&low) {
                                    return None;
                                }
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                            }
                            char::from_u32(cp)?
                        }
                        _ => return None,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(decoded.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn a_hex_sketch_gives_its_f32_bits_and_any_other_text_gives_none() {
        let rows = Json::Text("3f800000c0490fdb7fc00001".into()).hex_f32s(3).unwrap();
        assert_eq!(rows.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [0x3f80_0000, 0xc049_0fdb, 0x7fc0_0001]);
        for bad in [
            "3f800000c0490fdb7fc0000",
            "3F800000c0490fdb7fc00001",
            "3f800000c0490fdb7fc0000g",
            "+f800000c0490fdb7fc00001",
        ] {
            assert_eq!(Json::Text(bad.into()).hex_f32s(3), None, "{bad}");
        }
        assert_eq!(Json::Number("1".into()).hex_f32s(0), None);
    }

    #[test]
    fn a_record_line_parses_with_its_escapes_and_nonfinite_texts() {
        let v = Json::parse(r#"{"a":"x\u00e9\ud83d\ude00\n","b":[1,-0.5e3,"NaN",null,true]} "#).unwrap();
        assert_eq!(v.get("a"), Some(&Json::Text("xé😀\n".into())));
        let Some(Json::Array(items)) = v.get("b") else { panic!("b is an array") };
        assert_eq!(items[0].integer(), Some(1));
        assert_eq!(items[1].real(), Some(-500.0));
        assert!(items[2].real().unwrap().is_nan());
        assert_eq!(items[3], Json::Null);
    }

    #[test]
    fn what_is_not_strict_json_is_refused() {
        for text in [
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "NaN",
            "\"\\x\"",
            "\"\\udc00\"",
            "\"a\nb\"",
            "{} x",
            "\"\\ud800\"",
        ] {
            assert_eq!(Json::parse(text), None, "{text}");
        }
        let deep = "[".repeat(40) + &"]".repeat(40);
        assert_eq!(Json::parse(&deep), None);
    }
}
