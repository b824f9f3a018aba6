//! The reference trace a graft or `ORCH_LOG_AGAINST` reads from, indexed once
//! (checkpoint and key parts -> each record's place and digest), so that a
//! graft costs one read of the tensor it replaces and a comparison none.
//!
//! A graft reads a full-mode binary stream and indexes the records that
//! carry their tensor. `ORCH_LOG_AGAINST` indexes every record, with what its
//! summary proves (stats, sketch, BLAKE3) and where its tensor lies when it
//! has one, from a binary stream (full or summary frames) or a JSONL trace.
//! The rules are the C++ core's (detail/graft/reference.hpp).
//!
//! A key that occurs several times in the reference (a checkpoint logged at
//! every decode step without a step number) is matched by occurrence: the
//! n-th graft call under that key takes the n-th reference record under it.
//! The frames are read as a stream, so an index never holds tensor bytes.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::json::Json;
use crate::fields_gen::{RecordKey, KEY_PART_NAMES};
use crate::schema_gen::DType;

/// What an index is for: a graft needs tensors, a comparison every record's summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    Graft,
    Against,
}

impl Use {
    fn what(self) -> &'static str {
        match self {
            Use::Graft => "graft reference",
            Use::Against => "ORCH_LOG_AGAINST reference",
        }
    }
}

/// What a reference record's summary proves (`ORCH_LOG_AGAINST`).
#[derive(Clone, Debug)]
pub(crate) struct Summary {
    pub(crate) rms: Option<f64>,
    pub(crate) nan_count: i64,
    pub(crate) inf_count: i64,
    /// 64 hex digits, or empty.
    pub(crate) blake3: String,
    pub(crate) sketched: bool,
    /// The stored f32 rows, widened.
    pub(crate) sketch: [f64; 64],
}

impl Default for Summary {
    fn default() -> Self {
        Summary { rms: None, nan_count: 0, inf_count: 0, blake3: String::new(), sketched: false, sketch: [0.0; 64] }
    }
}

/// Lines longer than this end a JSONL reference's index.
const MAX_LINE: u64 = 256 << 20;

/// One key part as a graft matches it: its value, whatever its type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum KeyValue {
    Null,
    Int(i64),
    Text(String),
    Flag(bool),
}

/// A checkpoint and every key part, in schema order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct GraftKey {
    checkpoint: String,
    parts: Vec<KeyValue>,
}

impl GraftKey {
    /// The key a record with this (resolved) key is written under.
    pub(crate) fn of(key: &RecordKey<'_>) -> GraftKey {
        let part = |name: &str| match (key.number(name), key.text(name), key.flag(name)) {
            (Some(n), _, _) => KeyValue::Int(n),
            (_, Some(s), _) => KeyValue::Text(s.to_owned()),
            (_, _, Some(b)) => KeyValue::Flag(b),
            _ => KeyValue::Null,
        };
        GraftKey { checkpoint: key.checkpoint.to_owned(), parts: KEY_PART_NAMES.iter().map(|n| part(n)).collect() }
    }

    /// The key as a warning names it: the checkpoint and every part that is set.
    pub(crate) fn describe(&self) -> String {
        let mut out = format!("'{}'", self.checkpoint);
        for (name, value) in KEY_PART_NAMES.iter().zip(&self.parts) {
            match value {
                KeyValue::Null => {}
                KeyValue::Int(n) => out += &format!(" {name}={n}"),
                KeyValue::Text(s) => out += &format!(" {name}={s}"),
                KeyValue::Flag(b) => out += &format!(" {name}={}", u8::from(*b)),
            }
        }
        out
    }
}

/// Where one reference record's tensor lies in the file (when it has one), and what it holds.
#[derive(Clone, Debug)]
pub(crate) struct ReferenceTensor {
    offset: u64,
    pub(crate) nbytes: u64,
    pub(crate) has_data: bool,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<i64>,
    /// Read for `ORCH_LOG_AGAINST` only.
    pub(crate) summary: Summary,
}

/// The records of a reference trace by key, in file order under each key.
#[derive(Debug)]
pub(crate) struct ReferenceIndex {
    path: PathBuf,
    purpose: Use,
    by_key: HashMap<GraftKey, Vec<ReferenceTensor>>,
}

/// What indexing a reference gave: an index (with a note when part of the
/// file could not be read), or why there is none.
pub(crate) struct Indexed {
    pub(crate) index: Option<ReferenceIndex>,
    pub(crate) note: Option<String>,
}

impl ReferenceIndex {
    /// Reads the records of `path`. Records it cannot parse end the index
    /// (what came before stays usable) and are reported in the note.
    pub(crate) fn build(path: &Path, purpose: Use) -> Indexed {
        let shown = path.display();
        let what = purpose.what();
        let file = match File::open(path) {
            Ok(file) => file,
            Err(_) => return Indexed { index: None, note: Some(format!("cannot open the {what} '{shown}'")) },
        };
        let size = file.metadata().map_or(0, |m| m.len());
        let mut inner = BufReader::new(file);
        let mut index = ReferenceIndex { path: path.to_owned(), purpose, by_key: HashMap::new() };
        // A JSONL trace: its header line opens with {"orchlog":
        if inner.fill_buf().map(|b| b.first() == Some(&b'{')).unwrap_or(false) {
            if purpose == Use::Graft {
                let note = format!("the graft reference '{shown}' is JSONL; a graft needs a full-mode binary stream");
                return Indexed { index: None, note: Some(note) };
            }
            return index.build_jsonl(inner);
        }
        let mut stream = Stream { inner, pos: 0 };
        let mut note = None;
        while stream.pos < size {
            let start = stream.pos;
            match index.frame(&mut stream) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::InvalidData || e.kind() == ErrorKind::UnexpectedEof => {
                    note = Some(format!(
                        "the {what} '{shown}' is not a binary stream from byte {start} on \
                         (records before it are used)"
                    ));
                    break;
                }
                Err(_) => {
                    note = Some(format!("reading the {what} '{shown}' failed"));
                    break;
                }
            }
        }
        index.finish(note)
    }

    fn finish(self, note: Option<String>) -> Indexed {
        if self.by_key.is_empty() {
            let shown = self.path.display();
            let why = note.unwrap_or_else(|| match self.purpose {
                Use::Graft => {
                    format!("the graft reference '{shown}' holds no record with its tensor (a full-mode trace)")
                }
                Use::Against => format!("the ORCH_LOG_AGAINST reference '{shown}' holds no record"),
            });
            return Indexed { index: None, note: Some(why) };
        }
        Indexed { index: Some(self), note }
    }

    /// A JSONL trace, one line at a time: each record line with its summary
    /// (a line's values are not read as a tensor).
    fn build_jsonl(mut self, mut inner: BufReader<File>) -> Indexed {
        let shown = self.path.display().to_string();
        let mut line = Vec::new();
        let mut number: u64 = 0;
        let mut note = None;
        loop {
            line.clear();
            match (&mut inner).take(MAX_LINE + 1).read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(n) if n as u64 > MAX_LINE => {
                    note = Some(format!(
                        "the ORCH_LOG_AGAINST reference '{shown}' has a line longer than 256 MiB after line \
                         {number} (records before it are used)"
                    ));
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    note = Some(format!("reading the ORCH_LOG_AGAINST reference '{shown}' failed"));
                    break;
                }
            }
            if line.last() != Some(&b'\n') {
                break; // a last line cut short: what a crash leaves, not a record
            }
            number += 1;
            if !self.index_line(&line) {
                note = Some(format!(
                    "the ORCH_LOG_AGAINST reference '{shown}' has no orchlog record at line {number} \
                     (records before it are used)"
                ));
                break;
            }
        }
        self.finish(note)
    }

    /// One line: a header or a blank line is skipped, a record indexed; false for anything else.
    fn index_line(&mut self, line: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(line) else { return false };
        if text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n')).is_empty() {
            return true;
        }
        let Some(doc) = Json::parse(text) else { return false };
        if !matches!(doc, Json::Object(_)) {
            return false;
        }
        if doc.get("orchlog").is_some() {
            return true; // a run header
        }
        let (Some(Json::Text(checkpoint)), Some(Json::Text(dtype)), Some(Json::Array(shape))) =
            (doc.get("checkpoint"), doc.get("dtype"), doc.get("shape"))
        else {
            return false;
        };
        let Some(dtype) = DType::from_name(dtype) else { return false };
        let Some(shape) = shape.iter().map(Json::integer).collect::<Option<Vec<i64>>>() else { return false };
        let mut parts = Vec::with_capacity(KEY_PART_NAMES.len());
        for name in KEY_PART_NAMES {
            parts.push(match doc.get(name) {
                None | Some(Json::Null) => KeyValue::Null,
                Some(Json::Text(s)) => KeyValue::Text(s.clone()),
                Some(Json::Bool(b)) => KeyValue::Flag(*b),
                Some(n @ Json::Number(_)) => match n.integer() {
                    Some(i) => KeyValue::Int(i),
                    None => return false,
                },
                Some(_) => return false,
            });
        }
        let mut summary = Summary::default();
        if let Some(Json::Text(hash)) = doc.get("blake3") {
            summary.blake3 = hash.clone();
        }
        if let Some(stats) = doc.get("stats") {
            summary.rms = stats.get("rms").and_then(Json::real);
            summary.nan_count = stats.get("nan_count").and_then(Json::integer).unwrap_or(0);
            summary.inf_count = stats.get("inf_count").and_then(Json::integer).unwrap_or(0);
        }
        if let Some(Json::Array(rows)) = doc.get("sketch") {
            if rows.len() == summary.sketch.len() {
                summary.sketched = true;
                for (row, value) in summary.sketch.iter_mut().zip(rows) {
                    // Written as the shortest text of an f32: parsed to the nearest f64, then to that f32.
                    match value.real() {
                        Some(v) => *row = f64::from(v as f32),
                        None => summary.sketched = false,
                    }
                }
            }
        }
        let tensor = ReferenceTensor { offset: 0, nbytes: 0, has_data: false, dtype, shape, summary };
        self.by_key.entry(GraftKey { checkpoint: checkpoint.clone(), parts }).or_default().push(tensor);
        true
    }

    /// The n-th reference record under `key`, if there is one.
    pub(crate) fn find(&self, key: &GraftKey, occurrence: usize) -> Option<&ReferenceTensor> {
        self.by_key.get(key).and_then(|records| records.get(occurrence))
    }

    /// A record's tensor bytes; an error when the file changed under us.
    pub(crate) fn read(&self, tensor: &ReferenceTensor) -> io::Result<Vec<u8>> {
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(tensor.offset))?;
        let mut bytes = vec![0; usize::try_from(tensor.nbytes).map_err(|_| ErrorKind::OutOfMemory)?];
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    /// Reads one frame (a msgpack map) and indexes it when it is a record
    /// with its tensor bytes.
    fn frame(&mut self, s: &mut Stream) -> io::Result<()> {
        let entries = s.map_len()?;
        let (mut checkpoint, mut dtype, mut data, mut header) = (None, None, None, false);
        let mut shape = Vec::new();
        let mut parts = vec![KeyValue::Null; KEY_PART_NAMES.len()];
        let mut summary = Summary::default();
        let against = self.purpose == Use::Against;
        for _ in 0..entries {
            let name = s.text()?;
            match name.as_str() {
                "blake3" if against => summary.blake3 = s.text()?,
                "sketch" if against => s.sketch(&mut summary)?,
                "stats" if against => s.stats(&mut summary)?,
                "orchlog" => {
                    header = true;
                    s.skip()?;
                }
                "checkpoint" => checkpoint = Some(s.text()?),
                "dtype" => dtype = DType::from_name(&s.text()?),
                "shape" => {
                    shape.clear();
                    for _ in 0..s.array_len()? {
                        shape.push(s.int()?);
                    }
                }
                "data" => data = s.bin_skipped()?,
                _ => match KEY_PART_NAMES.iter().position(|part| *part == name) {
                    Some(i) => parts[i] = s.key_value()?,
                    None => s.skip()?,
                },
            }
        }
        // A graft needs the tensor; a comparison takes every record.
        if let (false, Some(checkpoint), Some(dtype)) = (header, checkpoint, dtype) {
            if against || data.is_some() {
                let (offset, nbytes) = data.unwrap_or_default();
                let has_data = data.is_some();
                let tensor = ReferenceTensor { offset, nbytes, has_data, dtype, shape, summary };
                self.by_key.entry(GraftKey { checkpoint, parts }).or_default().push(tensor);
            }
        }
        Ok(())
    }
}

/// A msgpack reader over the file that knows its offset and skips tensor
/// bytes without reading them.
struct Stream {
    inner: BufReader<File>,
    pos: u64,
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, what.to_owned())
}

impl Stream {
    fn bytes<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut b = [0; N];
        self.inner.read_exact(&mut b)?;
        self.pos += N as u64;
        Ok(b)
    }

    fn byte(&mut self) -> io::Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }

    fn advance(&mut self, n: u64) -> io::Result<()> {
        self.inner.seek_relative(i64::try_from(n).map_err(|_| invalid("length"))?)?;
        self.pos += n;
        Ok(())
    }

    /// A big-endian length of `width` bytes.
    fn length(&mut self, width: u8) -> io::Result<u64> {
        Ok(match width {
            1 => u64::from(self.byte()?),
            2 => u64::from(u16::from_be_bytes(self.bytes()?)),
            _ => u64::from(u32::from_be_bytes(self.bytes()?)),
        })
    }

    fn map_len(&mut self) -> io::Result<u64> {
        match self.byte()? {
            b @ 0x80..=0x8f => Ok(u64::from(b & 0x0f)),
            0xde => self.length(2),
            0xdf => self.length(4),
            _ => Err(invalid("not a map")),
        }
    }

    fn array_len(&mut self) -> io::Result<u64> {
        match self.byte()? {
            b @ 0x90..=0x9f => Ok(u64::from(b & 0x0f)),
            0xdc => self.length(2),
            0xdd => self.length(4),
            _ => Err(invalid("not an array")),
        }
    }

    fn text_after(&mut self, marker: u8) -> io::Result<Option<String>> {
        let len = match marker {
            0xa0..=0xbf => u64::from(marker & 0x1f),
            0xd9 => self.length(1)?,
            0xda => self.length(2)?,
            0xdb => self.length(4)?,
            _ => return Ok(None),
        };
        let mut bytes = Vec::new();
        (&mut self.inner).take(len).read_to_end(&mut bytes)?;
        if bytes.len() as u64 != len {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        self.pos += len;
        String::from_utf8(bytes).map(Some).map_err(|_| invalid("text is not UTF-8"))
    }

    fn text(&mut self) -> io::Result<String> {
        let marker = self.byte()?;
        self.text_after(marker)?.ok_or_else(|| invalid("not a text"))
    }

    fn int_after(&mut self, marker: u8) -> io::Result<Option<i64>> {
        Ok(Some(match marker {
            0x00..=0x7f => i64::from(marker),
            0xe0..=0xff => i64::from(marker as i8),
            0xcc => i64::from(self.byte()?),
            0xcd => i64::from(u16::from_be_bytes(self.bytes()?)),
            0xce => i64::from(u32::from_be_bytes(self.bytes()?)),
            0xcf => i64::try_from(u64::from_be_bytes(self.bytes()?)).map_err(|_| invalid("integer beyond i64"))?,
            0xd0 => i64::from(self.byte()? as i8),
            0xd1 => i64::from(i16::from_be_bytes(self.bytes()?)),
            0xd2 => i64::from(i32::from_be_bytes(self.bytes()?)),
            0xd3 => i64::from_be_bytes(self.bytes()?),
            _ => return Ok(None),
        }))
    }

    fn int(&mut self) -> io::Result<i64> {
        let marker = self.byte()?;
        self.int_after(marker)?.ok_or_else(|| invalid("not an integer"))
    }

    /// A number as f64: float32, float64 or an integer; `None` for nil.
    fn number(&mut self) -> io::Result<Option<f64>> {
        let marker = self.byte()?;
        Ok(Some(match marker {
            0xc0 => return Ok(None),
            0xca => f64::from(f32::from_be_bytes(self.bytes()?)),
            0xcb => f64::from_be_bytes(self.bytes()?),
            _ => self.int_after(marker)?.ok_or_else(|| invalid("not a number"))? as f64,
        }))
    }

    /// A sketch's rows; one of another length is not one the bounds hold for.
    fn sketch(&mut self, summary: &mut Summary) -> io::Result<()> {
        let marker = self.byte()?;
        let len = match marker {
            0xc0 => return Ok(()),
            0x90..=0x9f => u64::from(marker & 0x0f),
            0xdc => self.length(2)?,
            0xdd => self.length(4)?,
            _ => return Err(invalid("not an array")),
        };
        for i in 0..len {
            let value = self.number()?.ok_or_else(|| invalid("nil in a sketch"))?;
            if let Some(row) = usize::try_from(i).ok().and_then(|i| summary.sketch.get_mut(i)) {
                *row = value;
            }
        }
        summary.sketched = len == summary.sketch.len() as u64;
        Ok(())
    }

    fn stats(&mut self, summary: &mut Summary) -> io::Result<()> {
        for _ in 0..self.map_len()? {
            match self.text()?.as_str() {
                "rms" => summary.rms = self.number()?,
                "nan_count" => summary.nan_count = self.int()?,
                "inf_count" => summary.inf_count = self.int()?,
                _ => self.skip()?,
            }
        }
        Ok(())
    }

    /// A key part: null, an integer, a text or a boolean.
    fn key_value(&mut self) -> io::Result<KeyValue> {
        let marker = self.byte()?;
        match marker {
            0xc0 => Ok(KeyValue::Null),
            0xc2 | 0xc3 => Ok(KeyValue::Flag(marker == 0xc3)),
            _ => match self.int_after(marker)? {
                Some(n) => Ok(KeyValue::Int(n)),
                None => self.text_after(marker)?.map(KeyValue::Text).ok_or_else(|| invalid("not a key part")),
            },
        }
    }

    /// A bin's (offset, length), its bytes skipped; `None` for nil.
    fn bin_skipped(&mut self) -> io::Result<Option<(u64, u64)>> {
        let len = match self.byte()? {
            0xc0 => return Ok(None),
            0xc4 => self.length(1)?,
            0xc5 => self.length(2)?,
            0xc6 => self.length(4)?,
            _ => return Err(invalid("not a bin")),
        };
        let offset = self.pos;
        self.advance(len)?;
        Ok(Some((offset, len)))
    }

    /// Skips one value of any type (iteratively: a hostile file's nesting
    /// must not exhaust the stack).
    fn skip(&mut self) -> io::Result<()> {
        let mut pending: u64 = 1;
        while pending > 0 {
            pending -= 1;
            let marker = self.byte()?;
            let (bytes, items) = match marker {
                0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
                0x80..=0x8f => (0, 2 * u64::from(marker & 0x0f)),
                0x90..=0x9f => (0, u64::from(marker & 0x0f)),
                0xa0..=0xbf => (u64::from(marker & 0x1f), 0),
                0xc4 | 0xd9 => (self.length(1)?, 0),
                0xc5 | 0xda => (self.length(2)?, 0),
                0xc6 | 0xdb => (self.length(4)?, 0),
                0xc7 => (self.length(1)? + 1, 0),
                0xc8 => (self.length(2)? + 1, 0),
                0xc9 => (self.length(4)? + 1, 0),
                0xca | 0xce | 0xd2 => (4, 0),
                0xcb | 0xcf | 0xd3 => (8, 0),
                0xcc | 0xd0 => (1, 0),
                0xcd | 0xd1 => (2, 0),
                0xd4..=0xd8 => (1 + (1u64 << (marker - 0xd4)), 0),
                0xdc => (0, self.length(2)?),
                0xdd => (0, self.length(4)?),
                0xde => (0, 2 * self.length(2)?),
                0xdf => (0, 2 * self.length(4)?),
                _ => return Err(invalid("unknown msgpack marker")),
            };
            self.advance(bytes)?;
            pending += items;
        }
        Ok(())
    }
}
