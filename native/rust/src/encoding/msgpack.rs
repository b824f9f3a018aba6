//! The binary stream: one msgpack map per record or header, fields in schema
//! order, every int, str, bin, array and map in its smallest form (str8
//! allowed); f32/f16/bf16 values as float32, everything else as float64;
//! the frame checksum last, after the tensor bytes, always as a uint32.

use crate::encoding::crc32c;
use crate::encoding::values::{leading, Number};
use crate::schema_gen::{
    visit_header, visit_record, DType, Encoding, HeaderView, MetaEntry, MetaValue, RecordView, ValuesView, Visitor,
};

/// One encoded frame: `head`, then `data` (the record's tensor bytes, kept by
/// reference so that a full tensor is written without being copied), then
/// `rest` (the frame fields, the checksum last).
pub(crate) struct Frame<'o, 'a> {
    pub head: &'o [u8],
    pub data: &'a [u8],
    pub rest: &'o [u8],
}

/// Encodes a record's frame into `out` (cleared first).
pub(crate) fn record_frame<'o, 'a>(out: &'o mut Vec<u8>, record: &RecordView<'a>) -> Frame<'o, 'a> {
    out.clear();
    let mut writer = MsgpackWriter { out, start: 0, data: None };
    visit_record(&mut writer, record, Encoding::Msgpack);
    let (data, at) = writer.data.unwrap_or((&[], out.len()));
    let (head, rest) = out.split_at(at);
    Frame { head, data, rest }
}

/// Appends a run header's frame.
pub(crate) fn header_frame(out: &mut Vec<u8>, header: &HeaderView<'_>) {
    let start = out.len();
    let mut writer = MsgpackWriter { out, start, data: None };
    visit_header(&mut writer, header, Encoding::Msgpack);
}

struct MsgpackWriter<'o, 'a> {
    out: &'o mut Vec<u8>,
    /// Where this frame starts in `out`.
    start: usize,
    /// The tensor bytes, not copied, and where in `out` they belong.
    data: Option<(&'a [u8], usize)>,
}

impl MsgpackWriter<'_, '_> {
    fn put(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    fn tagged(&mut self, tag: u8, bytes: &[u8]) {
        self.out.push(tag);
        self.out.extend_from_slice(bytes);
    }

    /// The frame so far in order: the bytes before the tensor's, the tensor's, the bytes after.
    fn frame_so_far(&self) -> [&[u8]; 3] {
        let frame = &self.out[self.start..];
        match self.data {
            Some((data, at)) => {
                let (head, rest) = frame.split_at(at - self.start);
                [head, data, rest]
            }
            None => [frame, &[], &[]],
        }
    }

    fn nil(&mut self) {
        self.put(&[0xc0]);
    }

    /// The shortest length prefix of a map, array, str or bin. Lengths stay
    /// below 2^32: the logger refuses larger tensors in the binary stream.
    fn length(&mut self, forms: &LengthForms, len: usize) {
        match (forms.fix, forms.len8) {
            (Some((marker, limit)), _) if len < limit => self.put(&[marker | len as u8]),
            (_, Some(tag)) if len <= 0xff => self.put(&[tag, len as u8]),
            _ if len <= 0xffff => self.tagged(forms.len16, &(len as u16).to_be_bytes()),
            _ => self.tagged(forms.len32, &(len as u32).to_be_bytes()),
        }
    }

    fn string(&mut self, s: &str) {
        self.length(&STR, s.len());
        self.put(s.as_bytes());
    }

    fn int(&mut self, v: i64) {
        match v {
            0..=0x7f => self.put(&[v as u8]),
            -32..=-1 => self.put(&[v as i8 as u8]),
            0x80..=0xff => self.put(&[0xcc, v as u8]),
            0x100..=0xffff => self.tagged(0xcd, &(v as u16).to_be_bytes()),
            0x1_0000..=0xffff_ffff => self.tagged(0xce, &(v as u32).to_be_bytes()),
            0x1_0000_0000.. => self.tagged(0xcf, &(v as u64).to_be_bytes()),
            -0x80..=-33 => self.put(&[0xd0, v as i8 as u8]),
            -0x8000..=-0x81 => self.tagged(0xd1, &(v as i16).to_be_bytes()),
            -0x8000_0000..=-0x8001 => self.tagged(0xd2, &(v as i32).to_be_bytes()),
            _ => self.tagged(0xd3, &v.to_be_bytes()),
        }
    }

    fn float32_bits(&mut self, bits: u32) {
        self.tagged(0xca, &bits.to_be_bytes());
    }

    fn float64(&mut self, v: f64) {
        self.tagged(0xcb, &v.to_bits().to_be_bytes());
    }
}

/// The length-prefixed forms of one msgpack type: an optional fix form
/// (marker | len, for len below the limit), an optional 8-bit form, and the
/// 16- and 32-bit forms.
struct LengthForms {
    fix: Option<(u8, usize)>,
    len8: Option<u8>,
    len16: u8,
    len32: u8,
}

const MAP: LengthForms = LengthForms { fix: Some((0x80, 16)), len8: None, len16: 0xde, len32: 0xdf };
const ARRAY: LengthForms = LengthForms { fix: Some((0x90, 16)), len8: None, len16: 0xdc, len32: 0xdd };
const STR: LengthForms = LengthForms { fix: Some((0xa0, 32)), len8: Some(0xd9), len16: 0xda, len32: 0xdb };
const BIN: LengthForms = LengthForms { fix: None, len8: Some(0xc4), len16: 0xc5, len32: 0xc6 };

impl<'a> Visitor<'a> for MsgpackWriter<'_, 'a> {
    fn begin_object(&mut self, len: usize) {
        self.length(&MAP, len);
    }

    fn key(&mut self, key: &'static str) {
        self.string(key);
    }

    fn end_object(&mut self) {}

    fn str(&mut self, v: &str) {
        self.string(v);
    }

    fn opt_str(&mut self, v: Option<&str>) {
        match v {
            Some(s) => self.string(s),
            None => self.nil(),
        }
    }

    fn i32(&mut self, v: i32) {
        self.int(i64::from(v));
    }

    fn opt_i32(&mut self, v: Option<i32>) {
        match v {
            Some(i) => self.i32(i),
            None => self.nil(),
        }
    }

    fn i64(&mut self, v: i64) {
        self.int(v);
    }

    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(i) => self.int(i),
            None => self.nil(),
        }
    }

    fn f64(&mut self, v: f64) {
        self.float64(v);
    }

    fn opt_f64(&mut self, v: Option<f64>) {
        match v {
            Some(f) => self.float64(f),
            None => self.nil(),
        }
    }

    fn boolean(&mut self, v: bool) {
        self.put(&[if v { 0xc3 } else { 0xc2 }]);
    }

    fn opt_boolean(&mut self, v: Option<bool>) {
        match v {
            Some(b) => self.boolean(b),
            None => self.nil(),
        }
    }

    fn floats_f32(&mut self, v: &[f64]) {
        self.length(&ARRAY, v.len());
        v.iter().for_each(|&f| self.float32_bits((f as f32).to_bits()));
    }

    fn floats_f64(&mut self, v: &[f64]) {
        self.length(&ARRAY, v.len());
        v.iter().for_each(|&f| self.float64(f));
    }

    /// Hex is JSONL's text for these floats; msgpack stores floats as they are.
    fn floats_f32_hex(&mut self, v: &[f64]) {
        self.floats_f32(v);
    }

    fn dtype(&mut self, v: DType) {
        self.string(v.name());
    }

    fn shape(&mut self, v: &[i64]) {
        self.length(&ARRAY, v.len());
        v.iter().for_each(|&d| self.int(d));
    }

    fn values(&mut self, v: &ValuesView<'_>) {
        let numbers = leading(v);
        self.length(&ARRAY, numbers.len());
        for number in numbers {
            match number {
                Number::F32Bits(bits) => self.float32_bits(bits),
                Number::F64Bits(bits) => self.float64(f64::from_bits(bits)),
                Number::Int(i) => self.int(i),
            }
        }
    }

    fn hex256(&mut self, v: &str) {
        self.string(v);
    }

    fn meta(&mut self, v: &[MetaEntry<'_>]) {
        self.length(&MAP, v.len());
        for entry in v {
            self.string(entry.key);
            match entry.value {
                MetaValue::Bool(b) => self.put(&[if b { 0xc3 } else { 0xc2 }]),
                MetaValue::Int(i) => self.int(i),
                MetaValue::Float(f) => self.float64(f),
                MetaValue::Str(s) => self.string(s),
            }
        }
    }

    fn bytes(&mut self, v: &'a [u8]) {
        self.length(&BIN, v.len());
        self.data = Some((v, self.out.len()));
    }

    /// The frame checksum: CRC-32C of every byte of the frame before its key
    /// (the tensor bytes in their place), always a uint32.
    fn frame_crc32c(&mut self) {
        let crc = self.frame_so_far().iter().fold(0, |crc, piece| crc32c::update(crc, piece));
        self.string("crc32c");
        self.tagged(0xce, &crc.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded<'a>(write: impl FnOnce(&mut MsgpackWriter<'_, 'a>)) -> Vec<u8> {
        let mut out = Vec::new();
        let mut writer = MsgpackWriter { out: &mut out, start: 0, data: None };
        write(&mut writer);
        out
    }

    #[test]
    fn ints_take_their_smallest_form_at_every_boundary() {
        let cases: [(i64, &[u8]); 14] = [
            (0, &[0x00]),
            (127, &[0x7f]),
            (128, &[0xcc, 0x80]),
            (255, &[0xcc, 0xff]),
            (256, &[0xcd, 0x01, 0x00]),
            (65536, &[0xce, 0, 1, 0, 0]),
            (1 << 32, &[0xcf, 0, 0, 0, 1, 0, 0, 0, 0]),
            (-1, &[0xff]),
            (-32, &[0xe0]),
            (-33, &[0xd0, 0xdf]),
            (-128, &[0xd0, 0x80]),
            (-129, &[0xd1, 0xff, 0x7f]),
            (-32769, &[0xd2, 0xff, 0xff, 0x7f, 0xff]),
            (i64::MIN, &[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        ];
        for (v, expected) in cases {
            assert_eq!(encoded(|w| w.int(v)), expected, "{v}");
        }
    }

    #[test]
    fn strings_use_fixstr_then_str8_str16() {
        assert_eq!(encoded(|w| w.string(&"a".repeat(31)))[0], 0xbf);
        assert_eq!(encoded(|w| w.string(&"a".repeat(32)))[..2], [0xd9, 32]);
        assert_eq!(encoded(|w| w.string(&"a".repeat(256)))[..3], [0xda, 1, 0]);
    }

    #[test]
    fn containers_use_their_fix_forms_below_16() {
        assert_eq!(encoded(|w| w.length(&MAP, 15)), [0x8f]);
        assert_eq!(encoded(|w| w.length(&MAP, 17)), [0xde, 0, 17]);
        assert_eq!(encoded(|w| w.length(&ARRAY, 16)), [0xdc, 0, 16]);
        assert_eq!(encoded(|w| w.length(&ARRAY, 70_000)), [0xdd, 0, 1, 0x11, 0x70]);
    }

    #[test]
    fn bin_has_no_fix_form() {
        assert_eq!(encoded(|w| w.length(&BIN, 0)), [0xc4, 0]);
        assert_eq!(encoded(|w| w.length(&BIN, 256)), [0xc5, 1, 0]);
        assert_eq!(encoded(|w| w.length(&BIN, 1 << 16)), [0xc6, 0, 1, 0, 0]);
    }

    #[test]
    fn the_tensor_bytes_stay_out_of_the_buffer_and_the_checksum_covers_them_in_place() {
        static DATA: [u8; 3] = [1, 2, 3];
        let mut out = Vec::new();
        let mut writer = MsgpackWriter { out: &mut out, start: 0, data: None };
        writer.bytes(&DATA);
        writer.nil();
        writer.frame_crc32c();
        let crc = crate::encoding::crc32c::update(0, &[0xc4, 3, 1, 2, 3, 0xc0]);
        let mut expected = vec![0xc4, 3, 0xc0, 0xa6];
        expected.extend_from_slice(b"crc32c");
        expected.push(0xce);
        expected.extend_from_slice(&crc.to_be_bytes());
        assert_eq!(out, expected);
    }
}
