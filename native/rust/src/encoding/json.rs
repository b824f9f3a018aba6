//! The JSONL encoding: one object per line, no spaces, fields in schema
//! order (walked by the generated `visit_*`).

use crate::encoding::numbers::{write_f32, write_f64, write_i64};
use crate::encoding::text::write_json_string;
use crate::encoding::values::{leading, Number};
use crate::schema_gen::{
    visit_header, visit_record, DType, Encoding, HeaderView, MetaEntry, MetaValue, RecordView, ValuesView, Visitor,
};

/// Appends a record's JSONL line, newline included.
pub(crate) fn record_line(out: &mut Vec<u8>, record: &RecordView<'_>) {
    visit_record(&mut JsonWriter::new(out), record, Encoding::Jsonl);
    out.push(b'\n');
}

/// Appends a run header's JSONL line, newline included.
pub(crate) fn header_line(out: &mut Vec<u8>, header: &HeaderView<'_>) {
    visit_header(&mut JsonWriter::new(out), header, Encoding::Jsonl);
    out.push(b'\n');
}

struct JsonWriter<'o> {
    out: &'o mut Vec<u8>,
    /// Whether the next key needs a `,` before it.
    after_value: bool,
}

impl<'o> JsonWriter<'o> {
    fn new(out: &'o mut Vec<u8>) -> Self {
        JsonWriter { out, after_value: false }
    }

    fn null(&mut self) {
        self.out.extend_from_slice(b"null");
    }

    fn array<T>(&mut self, items: impl IntoIterator<Item = T>, mut write: impl FnMut(&mut Vec<u8>, T)) {
        self.out.push(b'[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write(self.out, item);
        }
        self.out.push(b']');
    }

    fn scalar_meta(&mut self, value: MetaValue<'_>) {
        match value {
            MetaValue::Bool(b) => self.out.extend_from_slice(if b { b"true" } else { b"false" }),
            MetaValue::Int(i) => write_i64(self.out, i),
            MetaValue::Float(f) => write_f64(self.out, f),
            MetaValue::Str(s) => write_json_string(self.out, s),
        }
    }
}

impl<'a> Visitor<'a> for JsonWriter<'_> {
    fn begin_object(&mut self, _len: usize) {
        self.out.push(b'{');
        self.after_value = false;
    }

    fn key(&mut self, key: &'static str) {
        // The generated visitor's keys are the schema's field names, identifiers with nothing to escape.
        debug_assert!(key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{key}");
        self.out.reserve(key.len() + 4);
        if self.after_value {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.after_value = true;
    }

    fn end_object(&mut self) {
        self.out.push(b'}');
        self.after_value = true;
    }

    fn str(&mut self, v: &str) {
        write_json_string(self.out, v);
    }

    fn opt_str(&mut self, v: Option<&str>) {
        match v {
            Some(s) => self.str(s),
            None => self.null(),
        }
    }

    fn i32(&mut self, v: i32) {
        write_i64(self.out, i64::from(v));
    }

    fn opt_i32(&mut self, v: Option<i32>) {
        match v {
            Some(i) => self.i32(i),
            None => self.null(),
        }
    }

    fn i64(&mut self, v: i64) {
        write_i64(self.out, v);
    }

    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(i) => self.i64(i),
            None => self.null(),
        }
    }

    fn f64(&mut self, v: f64) {
        write_f64(self.out, v);
    }

    fn opt_f64(&mut self, v: Option<f64>) {
        match v {
            Some(f) => self.f64(f),
            None => self.null(),
        }
    }

    fn boolean(&mut self, v: bool) {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
    }

    fn opt_boolean(&mut self, v: Option<bool>) {
        match v {
            Some(b) => self.boolean(b),
            None => self.null(),
        }
    }

    fn floats_f32(&mut self, v: &[f64]) {
        // The values are f32s held in f64 (exactly): printed in f32's shortest digits.
        self.array(v, |out, &f| write_f32(out, f as f32));
    }

    fn floats_f64(&mut self, v: &[f64]) {
        self.array(v, |out, &f| write_f64(out, f));
    }

    fn floats_f32_hex(&mut self, v: &[f64]) {
        // FORMAT.md, "Numbers": one string of each f32's bits, 8 lowercase hex digits, most significant
        // first; a byte's two digits from a table, eight digits written at once.
        const PAIRS: [[u8; 2]; 256] = {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let mut pairs = [[0u8; 2]; 256];
            let mut b = 0;
            while b < 256 {
                pairs[b] = [HEX[b >> 4], HEX[b & 15]];
                b += 1;
            }
            pairs
        };
        let start = self.out.len();
        self.out.resize(start + 8 * v.len() + 2, b'"');
        for (&f, text) in v.iter().zip(self.out[start + 1..].chunks_exact_mut(8)) {
            for (byte, pair) in (f as f32).to_bits().to_be_bytes().iter().zip(text.chunks_exact_mut(2)) {
                pair.copy_from_slice(&PAIRS[usize::from(*byte)]);
            }
        }
    }

    fn dtype(&mut self, v: DType) {
        write_json_string(self.out, v.name());
    }

    fn shape(&mut self, v: &[i64]) {
        self.array(v, |out, &d| write_i64(out, d));
    }

    fn values(&mut self, v: &ValuesView<'_>) {
        self.array(leading(v), |out, number| match number {
            Number::F32Bits(bits) => write_f32(out, f32::from_bits(bits)),
            Number::F64Bits(bits) => write_f64(out, f64::from_bits(bits)),
            Number::Int(i) => write_i64(out, i),
        });
    }

    fn hex256(&mut self, v: &str) {
        write_json_string(self.out, v);
    }

    fn meta(&mut self, v: &[MetaEntry<'_>]) {
        self.out.push(b'{');
        for (i, entry) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write_json_string(self.out, entry.key);
            self.out.push(b':');
            self.scalar_meta(entry.value);
        }
        self.out.push(b'}');
    }

    fn bytes(&mut self, _v: &'a [u8]) {
        // The schema keeps `data` out of JSONL; should bytes ever be visited
        // here, null keeps the line valid JSON.
        self.null();
    }
}
