//! The reference trace a graft or `ORCH_LOG_AGAINST` reads from, indexed once
//! (checkpoint and key parts -> each record's place and what its summary
//! proves), so that a graft costs one read of the frame it takes its tensor
//! from and a comparison against a summary none.
//!
//! A graft reads a full-mode binary stream and indexes the records that
//! carry their tensor. `ORCH_LOG_AGAINST` indexes every record, with what its
//! summary proves (stats, sketch, BLAKE3) and where its tensor lies when it
//! has one, from a binary stream (full or summary frames, held to the same
//! checks as a graft's) or a JSONL trace.
//!
//! A key that occurs several times in the reference (a checkpoint logged at
//! every decode step without a step number) is matched by occurrence: the
//! n-th call under that key takes the n-th reference record under it.
//!
//! The reference is input the engine did not make, read inside the engine:
//! the rules are the C++ logger's (`detail/graft/frame_reader.hpp`,
//! `reference.hpp`). Every frame must end with its CRC-32C, which is checked
//! while the index is built and again, with the BLAKE3 of the tensor bytes,
//! before a byte reaches the engine's tensor; the first frame that fails a
//! check ends the index (a damaged frame's key is unknown, so later records
//! under it could be another call's). No length a frame claims is allocated
//! before it is checked against the limits below and the bytes the file
//! holds; what is skipped is streamed past, never held. A JSONL reference
//! ends its index the same way at its first line that is no orchlog record.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;

use super::json::Json;
use crate::encoding::crc32c;
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

/// The rows of a sketch the bounds hold for.
const SKETCH_ROWS: usize = 64;

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
    pub(crate) sketch: [f64; SKETCH_ROWS],
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            rms: None,
            nan_count: 0,
            inf_count: 0,
            blake3: String::new(),
            sketched: false,
            sketch: [0.0; SKETCH_ROWS],
        }
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

/// At most this many entries in a frame's map (the schema's record has 26).
const MAX_ENTRIES: u64 = 256;
/// Field names and dtype names at most this long.
const MAX_FIELD_NAME: u64 = 64;
/// Texts (the checkpoint, text key parts) at most this long.
const MAX_TEXT: u64 = 64 << 10;
/// At most this many dimensions (NumPy's own limit).
const MAX_DIMS: u64 = 64;
/// Values skipped nest at most this deep.
const MAX_DEPTH: usize = 32;
/// The read buffer.
const CHUNK: usize = 1 << 16;

/// Where one reference record lies in the file, and what it holds.
#[derive(Clone, Debug)]
pub(crate) struct ReferenceTensor {
    /// Offset of the frame's first byte (binary streams).
    pub(crate) frame: u64,
    offset: u64,
    pub(crate) nbytes: u64,
    /// The record carries its tensor (a JSONL record never does).
    pub(crate) has_data: bool,
    seq: i64,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<i64>,
    /// Read for `ORCH_LOG_AGAINST` only.
    pub(crate) summary: Summary,
}

/// The records of a reference trace by key, in file order under each key.
#[derive(Debug)]
pub(crate) struct ReferenceIndex {
    file: File,
    size: u64,
    purpose: Use,
    by_key: HashMap<GraftKey, Vec<ReferenceTensor>>,
}

/// What indexing a reference gave: an index (with a note when part of the
/// file could not be used), or why there is none.
pub(crate) struct Indexed {
    pub(crate) index: Option<ReferenceIndex>,
    pub(crate) note: Option<String>,
}

impl ReferenceIndex {
    /// Reads every record of `path` once, checking each frame of a binary
    /// stream. A file that is not a regular file (a FIFO) is refused without
    /// blocking.
    pub(crate) fn build(path: &Path, purpose: Use) -> Indexed {
        let shown = path.display();
        let what = purpose.what();
        let none = |note: String| Indexed { index: None, note: Some(note) };
        let file = match open_nonblocking(path) {
            Ok(file) => file,
            Err(e) => return none(format!("cannot open the {what} '{shown}': {e}")),
        };
        let size = match file.metadata() {
            Ok(m) if m.is_file() => m.len(),
            _ => return none(format!("the {what} '{shown}' is not a regular file")),
        };
        let mut index = ReferenceIndex { file, size, purpose, by_key: HashMap::new() };
        // A JSONL trace: its header line opens with {"orchlog":
        let note = if index.first_byte() == Some(b'{') {
            if purpose == Use::Graft {
                return none(format!(
                    "the graft reference '{shown}' is JSONL; a graft needs a full-mode binary stream"
                ));
            }
            index.build_jsonl(path)
        } else {
            match index.build_frames(path) {
                Ok(note) => note,
                Err(refused) => return none(refused),
            }
        };
        if index.by_key.is_empty() {
            let why = note.unwrap_or_else(|| match purpose {
                Use::Graft => {
                    format!("the graft reference '{shown}' holds no record with its tensor (a full-mode trace)")
                }
                Use::Against => format!("the ORCH_LOG_AGAINST reference '{shown}' holds no record"),
            });
            return none(why);
        }
        Indexed { index: Some(index), note }
    }

    fn first_byte(&self) -> Option<u8> {
        let mut file = &self.file;
        let mut b = [0];
        loop {
            match file.seek(SeekFrom::Start(0)).and_then(|_| file.read(&mut b)) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Ok(1) => return Some(b[0]),
                _ => return None,
            }
        }
    }

    /// A binary stream, one checked frame at a time: the note when a frame
    /// ends the index, or Err when the file is refused whole.
    fn build_frames(&mut self, path: &Path) -> Result<Option<String>, String> {
        let shown = path.display();
        let what = self.purpose.what();
        let against = self.purpose == Use::Against;
        let stop = |at: u64, why: &str| {
            format!("the {what} '{shown}' is unusable from byte {at} on: {why} (records before it are used)")
        };
        let (mut next_seq, mut headed) = (0i64, false);
        let mut source = Source::new(&self.file, self.size, 0);
        while source.left() > 0 {
            let at = source.pos;
            source.restart_crc();
            let frame = match Parser::new(&mut source, against).frame(None) {
                Ok(frame) => frame,
                Err(why) => return Ok(Some(stop(at, &why))),
            };
            if frame.header {
                if headed {
                    return Ok(Some(stop(at, "a second run header (two runs in one file?)")));
                }
                if frame.schema_version < 2 {
                    self.by_key.clear();
                    return Err(format!(
                        "the {what} '{shown}' is schema {}: its frames carry no checksum, so a damaged \
                         record could not be told from a sound one; record the reference again with this orchlog",
                        frame.schema_version
                    ));
                }
                headed = true;
                continue;
            }
            if !headed {
                return Ok(Some(stop(at, "a record before the run header")));
            }
            if frame.seq != Some(next_seq) {
                let seq = frame.seq.map_or("(none)".to_owned(), |s| s.to_string());
                return Ok(Some(stop(
                    at,
                    &format!("a record numbered {seq} where {next_seq} was next (records missing, repeated or moved)"),
                )));
            }
            next_seq += 1;
            // A graft needs the tensor; a comparison takes a summary record too.
            if !against && frame.data.is_none() {
                continue;
            }
            if let (Some(checkpoint), Some(dtype), Some(shape)) = (frame.checkpoint, frame.dtype, frame.shape) {
                let (offset, nbytes) = frame.data.unwrap_or_default();
                let mut summary = frame.summary;
                summary.blake3 = frame.blake3.unwrap_or_default();
                let tensor = ReferenceTensor {
                    frame: at,
                    offset,
                    nbytes,
                    has_data: frame.data.is_some(),
                    seq: next_seq - 1,
                    dtype,
                    shape,
                    summary,
                };
                self.by_key.entry(GraftKey { checkpoint, parts: frame.parts }).or_default().push(tensor);
            }
        }
        Ok(None)
    }

    /// A JSONL trace, one line at a time through the opened file: each record
    /// line with its summary (a line's values are not read as a tensor); the
    /// note when a line ends the index.
    fn build_jsonl(&mut self, path: &Path) -> Option<String> {
        let shown = path.display();
        let (mut file, by_key) = (&self.file, &mut self.by_key);
        if file.seek(SeekFrom::Start(0)).is_err() {
            return Some(format!("reading the ORCH_LOG_AGAINST reference '{shown}' failed"));
        }
        // As large as when it was opened: a writer still at work adds nothing.
        let mut inner = BufReader::new(file.take(self.size));
        let mut line = Vec::new();
        let mut number: u64 = 0;
        loop {
            line.clear();
            match (&mut inner).take(MAX_LINE + 1).read_until(b'\n', &mut line) {
                Ok(0) => return None,
                Ok(n) if n as u64 > MAX_LINE => {
                    return Some(format!(
                        "the ORCH_LOG_AGAINST reference '{shown}' has a line longer than 256 MiB after line \
                         {number} (records before it are used)"
                    ));
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    return Some(format!(
                        "reading the ORCH_LOG_AGAINST reference '{shown}' failed after line {number} (records \
                         before it are used)"
                    ));
                }
            }
            number += 1;
            if !index_line(by_key, &line) {
                // A last line without its newline: a whole record is used, one cut short (a crash, a
                // writer still at work) is said as a note.
                return Some(if line.last() == Some(&b'\n') {
                    format!(
                        "the ORCH_LOG_AGAINST reference '{shown}' has no orchlog record at line {number} (records \
                         before it are used)"
                    )
                } else {
                    format!("the ORCH_LOG_AGAINST reference '{shown}' ends inside line {number} (records before it are used)")
                });
            }
        }
    }
}

/// One line of a JSONL reference: a header or a blank line is skipped, a record indexed; false for anything else.
fn index_line(by_key: &mut HashMap<GraftKey, Vec<ReferenceTensor>>, line: &[u8]) -> bool {
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
    match doc.get("sketch") {
        // Schema 2: the rows as numbers.
        Some(Json::Array(rows)) if rows.len() == summary.sketch.len() => {
            summary.sketched = true;
            for (row, value) in summary.sketch.iter_mut().zip(rows) {
                // Written as the shortest text of an f32: parsed to the nearest f64, then to that f32.
                match value.real() {
                    Some(v) => *row = f64::from(v as f32),
                    None => summary.sketched = false,
                }
            }
        }
        // Schema 3: the rows' f32 bits in hex, exact.
        Some(text @ Json::Text(_)) => {
            if let Some(rows) = text.hex_f32s(summary.sketch.len()) {
                summary.sketched = true;
                for (row, v) in summary.sketch.iter_mut().zip(rows) {
                    *row = f64::from(v);
                }
            }
        }
        _ => {}
    }
    let tensor = ReferenceTensor { frame: 0, offset: 0, nbytes: 0, has_data: false, seq: 0, dtype, shape, summary };
    by_key.entry(GraftKey { checkpoint: checkpoint.clone(), parts }).or_default().push(tensor);
    true
}

impl ReferenceIndex {
    /// The n-th reference record under `key`, if there is one.
    pub(crate) fn find(&self, key: &GraftKey, occurrence: usize) -> Option<&ReferenceTensor> {
        self.by_key.get(key).and_then(|records| records.get(occurrence))
    }

    /// A record's tensor bytes, after its frame is read again and checked
    /// whole: its checksum, that it is the record indexed under `key`, and
    /// the BLAKE3 of the bytes. Never more than `tensor.nbytes` are held,
    /// which the caller has checked against the engine's tensor.
    pub(crate) fn read(&self, tensor: &ReferenceTensor, key: &GraftKey) -> Result<Vec<u8>, String> {
        if !tensor.has_data {
            return Err("it has no tensor".into());
        }
        let mut source = Source::new(&self.file, self.size, tensor.frame);
        let mut bytes = Vec::new();
        let frame = Parser::new(&mut source, false).frame(Some((tensor.nbytes, &mut bytes)))?;
        let same = !frame.header
            && frame.checkpoint.as_deref() == Some(key.checkpoint.as_str())
            && frame.parts == key.parts
            && frame.dtype == Some(tensor.dtype)
            && frame.shape.as_ref() == Some(&tensor.shape)
            && frame.seq == Some(tensor.seq)
            && frame.data.map(|(offset, _)| offset) == Some(tensor.offset);
        if !same {
            return Err("it is not the record indexed there (was the file changed?)".into());
        }
        let Some(stated) = frame.blake3 else { return Err("it has no BLAKE3 of its tensor".into()) };
        if blake3::hash(&bytes).to_hex().as_str() != stated {
            return Err("its tensor bytes do not match their BLAKE3".into());
        }
        Ok(bytes)
    }
}

/// Opened without blocking: a FIFO with no writer must not hang the host.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// What a frame says, as far as a graft or `ORCH_LOG_AGAINST` needs it.
#[derive(Default)]
struct Frame {
    header: bool,
    schema_version: i64,
    checkpoint: Option<String>,
    parts: Vec<KeyValue>,
    dtype: Option<DType>,
    shape: Option<Vec<i64>>,
    seq: Option<i64>,
    blake3: Option<String>,
    /// The tensor bytes' (offset, length).
    data: Option<(u64, u64)>,
    /// Stats and sketch: read only by a parser asked for summaries (blake3 is above).
    summary: Summary,
}

/// Reads the file from an offset through a small buffer, keeping the
/// CRC-32C of every byte consumed since the last `restart_crc`. Every read
/// is checked against the size the file had when it was indexed.
struct Source<'f> {
    file: &'f File,
    size: u64,
    pos: u64,
    buf: Vec<u8>,
    at: usize,
    have: usize,
    folded: usize,
    crc: u32,
    /// The file ended inside what was asked for.
    cut: bool,
    /// A read failed.
    failed: bool,
}

impl<'f> Source<'f> {
    fn new(file: &'f File, size: u64, pos: u64) -> Self {
        Source { file, size, pos, buf: vec![0; CHUNK], at: 0, have: 0, folded: 0, crc: 0, cut: false, failed: false }
    }

    fn left(&self) -> u64 {
        self.size - self.pos
    }

    fn fold(&mut self) {
        if self.at > self.folded {
            self.crc = crc32c::update(self.crc, &self.buf[self.folded..self.at]);
        }
        self.folded = self.at;
    }

    fn restart_crc(&mut self) {
        self.fold();
        self.crc = 0;
    }

    fn crc(&mut self) -> u32 {
        self.fold();
        self.crc
    }

    fn refill(&mut self) -> bool {
        self.fold();
        let want = CHUNK.min(usize::try_from(self.left()).unwrap_or(CHUNK));
        let mut file = self.file;
        let got = file.seek(SeekFrom::Start(self.pos)).and_then(|_| loop {
            match file.read(&mut self.buf[..want]) {
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                other => break other,
            }
        });
        match got {
            Ok(0) => {
                self.cut = true; // shorter than when it was opened
                false
            }
            Ok(n) => {
                (self.have, self.at, self.folded) = (n, 0, 0);
                true
            }
            Err(_) => {
                self.failed = true;
                false
            }
        }
    }

    fn bytes(&mut self, out: &mut [u8]) -> bool {
        if out.len() as u64 > self.left() {
            self.cut = true;
            return false;
        }
        let mut done = 0;
        while done < out.len() {
            if self.at == self.have && !self.refill() {
                return false;
            }
            let take = (out.len() - done).min(self.have - self.at);
            out[done..done + take].copy_from_slice(&self.buf[self.at..self.at + take]);
            (done, self.at) = (done + take, self.at + take);
            self.pos += take as u64;
        }
        true
    }

    /// Streams past `n` bytes (through the CRC), holding none of them.
    fn skip(&mut self, mut n: u64) -> bool {
        if n > self.left() {
            self.cut = true;
            return false;
        }
        while n > 0 {
            if self.at == self.have && !self.refill() {
                return false;
            }
            let take = usize::try_from(n).unwrap_or(usize::MAX).min(self.have - self.at);
            self.at += take;
            self.pos += take as u64;
            n -= take as u64;
        }
        true
    }

    /// Passes up to `most` bytes of what the buffer holds that are each a whole one-byte msgpack value, and
    /// returns how many: a long array of small values is then passed a buffer at a time, not a value at a
    /// time (a hostile reference's array of 3 x 2^30 zeros took the graft 12 s).
    fn pass_one_byte_values(&mut self, most: u64) -> u64 {
        let held = &self.buf[self.at..self.have];
        let most = usize::try_from(most).unwrap_or(usize::MAX).min(held.len());
        let n = held[..most].iter().take_while(|&&b| one_byte_value(b)).count();
        self.at += n;
        self.pos += n as u64;
        n as u64
    }

    fn byte(&mut self) -> Option<u8> {
        if self.at < self.have {
            // The common case, without bytes()'s loop: a long array of small values is skipped a byte at a time.
            let b = self.buf[self.at];
            self.at += 1;
            self.pos += 1;
            return Some(b);
        }
        let mut b = [0];
        self.bytes(&mut b).then_some(b[0])
    }

    fn be<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut b = [0; N];
        self.bytes(&mut b).then_some(b)
    }

    /// A big-endian length of `width` bytes.
    fn length(&mut self, width: u8) -> Option<u64> {
        Some(match width {
            1 => u64::from(self.byte()?),
            2 => u64::from(u16::from_be_bytes(self.be()?)),
            _ => u64::from(u32::from_be_bytes(self.be()?)),
        })
    }
}

/// A positive or negative fixint, nil, false or true: a value that is its type byte alone.
fn one_byte_value(b: u8) -> bool {
    matches!(b, 0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3)
}

/// The msgpack of one frame, read with a one-byte lookahead.
struct Parser<'s, 'f> {
    s: &'s mut Source<'f>,
    /// Read each record's stats and sketch (`ORCH_LOG_AGAINST`); a graft skips them.
    summaries: bool,
    pending: Option<u8>,
}

impl<'s, 'f> Parser<'s, 'f> {
    fn new(s: &'s mut Source<'f>, summaries: bool) -> Self {
        Parser { s, summaries, pending: None }
    }

    /// Why a read stopped: the file's end or a failed read, else `what`.
    fn why(&self, what: &str) -> String {
        if self.s.failed {
            "reading it failed".into()
        } else if self.s.cut {
            "the file ends inside it".into()
        } else {
            what.into()
        }
    }

    /// Reads one whole frame; the tensor bytes go into `keep` only when they
    /// are exactly the length it expects.
    fn frame(&mut self, mut keep: Option<(u64, &mut Vec<u8>)>) -> Result<Frame, String> {
        let entries = self.container(true).ok_or_else(|| self.why("not a msgpack map"))?;
        if entries > MAX_ENTRIES {
            return Err(self.why(&format!("a map of {entries} entries")));
        }
        let mut frame = Frame { parts: vec![KeyValue::Null; KEY_PART_NAMES.len()], ..Frame::default() };
        let mut seen: Vec<String> = Vec::new();
        for i in 0..entries {
            let crc_before = self.s.crc(); // every value was read whole: no byte is pending
            let name = self.text(MAX_FIELD_NAME).ok_or_else(|| self.why("a field name that is not a short text"))?;
            if name == "crc32c" {
                let stored = match self.next() {
                    Some(0xce) => self.s.be::<4>().map(u32::from_be_bytes),
                    _ => None,
                };
                let stored = stored.ok_or_else(|| self.why("a checksum that is not a uint32"))?;
                if i + 1 != entries {
                    return Err("fields after the checksum".into());
                }
                if stored != crc_before {
                    return Err("it fails its checksum (CRC-32C)".into());
                }
                return Ok(frame);
            }
            if seen.contains(&name) {
                return Err(format!("the field '{name}' twice"));
            }
            let ok = match name.as_str() {
                "orchlog" => {
                    frame.header = true;
                    self.int().map(|v| frame.schema_version = v).is_some()
                }
                "checkpoint" => {
                    frame.checkpoint = self.text(MAX_TEXT);
                    frame.checkpoint.is_some()
                }
                "dtype" => self.text(MAX_FIELD_NAME).map(|s| frame.dtype = DType::from_name(&s)).is_some(),
                "shape" => {
                    frame.shape = self.shape();
                    frame.shape.is_some()
                }
                "seq" => {
                    frame.seq = self.int();
                    frame.seq.is_some()
                }
                "blake3" => self.blake3(&mut frame),
                "data" => {
                    frame.data = self.data(keep.as_mut().map(|(n, out)| (*n, &mut **out)))?;
                    true
                }
                "stats" if self.summaries => self.stats(&mut frame.summary),
                "sketch" if self.summaries => self.sketch(&mut frame.summary),
                _ => match KEY_PART_NAMES.iter().position(|part| *part == name) {
                    Some(i) => self.key_value().map(|v| frame.parts[i] = v).is_some(),
                    None => self.skip(),
                },
            };
            if !ok {
                return Err(self.why(&format!("a malformed field '{name}'")));
            }
            seen.push(name);
        }
        Err(self.why("no checksum (crc32c) at its end"))
    }

    fn next(&mut self) -> Option<u8> {
        self.pending.take().or_else(|| self.s.byte())
    }

    fn peek(&mut self) -> Option<u8> {
        if self.pending.is_none() {
            self.pending = Some(self.s.byte()?);
        }
        self.pending
    }

    /// Takes a nil if one is next; anything else stays next.
    fn nil(&mut self) -> bool {
        if self.peek() == Some(0xc0) {
            self.pending = None;
            return true;
        }
        false
    }

    fn container(&mut self, map: bool) -> Option<u64> {
        let (fix, wide16, wide32) = if map { (0x80, 0xde, 0xdf) } else { (0x90, 0xdc, 0xdd) };
        match self.next()? {
            b if (fix..=fix + 0x0f).contains(&b) => Some(u64::from(b & 0x0f)),
            b if b == wide16 => self.s.length(2),
            b if b == wide32 => self.s.length(4),
            _ => None,
        }
    }

    fn text(&mut self, limit: u64) -> Option<String> {
        let len = match self.next()? {
            b @ 0xa0..=0xbf => u64::from(b & 0x1f),
            0xd9 => self.s.length(1)?,
            0xda => self.s.length(2)?,
            0xdb => self.s.length(4)?,
            _ => return None,
        };
        if len > limit || len > self.s.left() {
            return None;
        }
        let mut bytes = vec![0; usize::try_from(len).ok()?];
        self.s.bytes(&mut bytes).then_some(())?;
        String::from_utf8(bytes).ok()
    }

    fn int(&mut self) -> Option<i64> {
        let marker = self.next()?;
        self.int_after(marker)
    }

    fn int_after(&mut self, marker: u8) -> Option<i64> {
        Some(match marker {
            0x00..=0x7f => i64::from(marker),
            0xe0..=0xff => i64::from(marker as i8),
            0xcc => i64::from(self.s.byte()?),
            0xcd => i64::from(u16::from_be_bytes(self.s.be()?)),
            0xce => i64::from(u32::from_be_bytes(self.s.be()?)),
            0xcf => i64::try_from(u64::from_be_bytes(self.s.be()?)).ok()?,
            0xd0 => i64::from(self.s.byte()? as i8),
            0xd1 => i64::from(i16::from_be_bytes(self.s.be()?)),
            0xd2 => i64::from(i32::from_be_bytes(self.s.be()?)),
            0xd3 => i64::from_be_bytes(self.s.be()?),
            _ => return None,
        })
    }

    /// A msgpack float (32 or 64 bits) or int, as f64.
    fn number(&mut self) -> Option<f64> {
        Some(match self.next()? {
            0xca => f64::from(f32::from_be_bytes(self.s.be()?)),
            0xcb => f64::from_be_bytes(self.s.be()?),
            marker => self.int_after(marker)? as f64,
        })
    }

    /// The stats map: rms (a number or nil), nan_count and inf_count; other stats are read past.
    fn stats(&mut self, summary: &mut Summary) -> bool {
        let Some(entries) = self.container(true).filter(|&n| n <= MAX_ENTRIES) else { return false };
        for _ in 0..entries {
            let Some(name) = self.text(MAX_FIELD_NAME) else { return false };
            let ok = match name.as_str() {
                "rms" if self.nil() => {
                    summary.rms = None;
                    true
                }
                "rms" => self.number().map(|v| summary.rms = Some(v)).is_some(),
                "nan_count" => self.int().map(|v| summary.nan_count = v).is_some(),
                "inf_count" => self.int().map(|v| summary.inf_count = v).is_some(),
                _ => self.skip(),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// The sketch's rows; one of another length is read past, and is not one the bounds hold for.
    fn sketch(&mut self, summary: &mut Summary) -> bool {
        if self.nil() {
            return true;
        }
        let Some(rows) = self.container(false) else { return false };
        if rows != SKETCH_ROWS as u64 {
            return (0..rows).all(|_| self.skip());
        }
        for row in summary.sketch.iter_mut() {
            let Some(v) = self.number() else { return false };
            *row = v;
        }
        summary.sketched = true;
        true
    }

    fn shape(&mut self) -> Option<Vec<i64>> {
        let dims = self.container(false)?;
        if dims > MAX_DIMS {
            return None;
        }
        (0..dims).map(|_| self.int().filter(|&d| d >= 0)).collect()
    }

    fn blake3(&mut self, frame: &mut Frame) -> bool {
        if self.nil() {
            return true;
        }
        match self.text(64) {
            Some(hex) if hex.len() == 64 && hex.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) => {
                frame.blake3 = Some(hex);
                true
            }
            _ => false,
        }
    }

    /// A key part: null, an integer, a text or a boolean (a value of
    /// another type than the part's is a key no call has).
    fn key_value(&mut self) -> Option<KeyValue> {
        match self.peek()? {
            0xc0 => {
                self.pending = None;
                Some(KeyValue::Null)
            }
            b @ (0xc2 | 0xc3) => {
                self.pending = None;
                Some(KeyValue::Flag(b == 0xc3))
            }
            0xa0..=0xbf | 0xd9..=0xdb => self.text(MAX_TEXT).map(KeyValue::Text),
            _ => self.int().map(KeyValue::Int),
        }
    }

    /// The tensor bytes' (offset, length), None for nil; the bytes go into
    /// `keep` only when they are exactly the length it expects.
    fn data(&mut self, keep: Option<(u64, &mut Vec<u8>)>) -> Result<Option<(u64, u64)>, String> {
        if self.nil() {
            return Ok(None);
        }
        let len = match self.next() {
            Some(0xc4) => self.s.length(1),
            Some(0xc5) => self.s.length(2),
            Some(0xc6) => self.s.length(4),
            _ => None,
        };
        let len = len.ok_or_else(|| self.why("a malformed field 'data'"))?;
        let offset = self.s.pos;
        let read = match keep {
            None => self.s.skip(len),
            Some((expected, _)) if expected != len => {
                return Err(format!("its tensor is {len} bytes where the index said {expected}"));
            }
            Some((_, out)) => {
                // `len` equals what the caller checked against the engine's tensor.
                out.resize(usize::try_from(len).map_err(|_| "a tensor beyond the address space".to_owned())?, 0);
                self.s.bytes(out)
            }
        };
        if !read {
            return Err(self.why("a malformed field 'data'"));
        }
        Ok(Some((offset, len)))
    }

    /// Streams past one value of the types orchlog writes, nested at most
    /// MAX_DEPTH deep (iteratively: a hostile file's nesting must not
    /// exhaust the stack).
    fn skip(&mut self) -> bool {
        let mut stack = [0u64; MAX_DEPTH];
        let mut depth = 0;
        let mut todo: u64 = 1;
        loop {
            while todo == 0 {
                if depth == 0 {
                    return true;
                }
                depth -= 1;
                todo = stack[depth];
            }
            if todo >= 8 && self.pending.is_none() {
                todo -= self.s.pass_one_byte_values(todo);
                if todo == 0 {
                    continue;
                }
            }
            todo -= 1;
            let Some(marker) = self.next() else { return false };
            let counts = match marker {
                m if one_byte_value(m) => Some((0, 0)),
                0x80..=0x8f => Some((0, 2 * u64::from(marker & 0x0f))),
                0x90..=0x9f => Some((0, u64::from(marker & 0x0f))),
                0xa0..=0xbf => Some((u64::from(marker & 0x1f), 0)),
                0xc4 | 0xd9 => self.s.length(1).map(|n| (n, 0)),
                0xc5 | 0xda => self.s.length(2).map(|n| (n, 0)),
                0xc6 | 0xdb => self.s.length(4).map(|n| (n, 0)),
                0xca | 0xce | 0xd2 => Some((4, 0)),
                0xcb | 0xcf | 0xd3 => Some((8, 0)),
                0xcc | 0xd0 => Some((1, 0)),
                0xcd | 0xd1 => Some((2, 0)),
                0xdc => self.s.length(2).map(|n| (0, n)),
                0xdd => self.s.length(4).map(|n| (0, n)),
                0xde => self.s.length(2).map(|n| (0, 2 * n)),
                0xdf => self.s.length(4).map(|n| (0, 2 * n)),
                _ => None, // ext types and 0xc1: never in what orchlog writes
            };
            let Some((bytes, items)) = counts else { return false };
            if !self.s.skip(bytes) {
                return false;
            }
            if items > 0 {
                if items > self.s.left() {
                    self.s.cut = true; // at least a byte each
                    return false;
                }
                if depth == MAX_DEPTH {
                    return false;
                }
                stack[depth] = todo;
                depth += 1;
                todo = items;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields_gen::{Config, Keys, Mode};
    use crate::logger::Logger;
    use crate::schema_gen::BOTH_MODE_SUFFIX;

    #[test]
    fn a_binary_stream_is_indexed_with_the_summaries_its_jsonl_twin_holds() {
        let dir = std::env::temp_dir().join(format!("orchlog-reference-twin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let jsonl = dir.join("ref.jsonl");
        let config = Config { file: Some(jsonl.clone()), mode: Mode::Both, created_at: Some(0), ..Config::default() };
        let logger = Logger::new(config);
        let ramp: Vec<f32> = (0..300).map(|i| ((i * 37) % 101) as f32 / 33.0 - 1.5).collect();
        let mut nonfinite: Vec<f32> = ramp[..40].to_vec();
        (nonfinite[3], nonfinite[7]) = (f32::NAN, f32::INFINITY);
        logger.log("x", &ramp, Keys::new().token(0u32).shape(&[3, 100]));
        logger.log("x", &nonfinite, Keys::new().token(1u32));
        logger.log("x", &[5i32, 7, 11, 13], Keys::new().token(2u32));
        assert_eq!(logger.error_count(), 0);
        drop(logger);
        let mut binary = jsonl.clone().into_os_string();
        binary.push(BOTH_MODE_SUFFIX);
        let frames = ReferenceIndex::build(Path::new(&binary), Use::Against);
        let lines = ReferenceIndex::build(&jsonl, Use::Against);
        assert_eq!((frames.note, lines.note), (None, None));
        let (frames, lines) = (frames.index.unwrap(), lines.index.unwrap());
        assert_eq!(frames.by_key.len(), 3);
        assert_eq!(lines.by_key.len(), 3);
        for (key, records) in &frames.by_key {
            let (f, l) = (&records[0], &lines.by_key[key][0]);
            assert!(f.has_data && !l.has_data);
            assert_eq!(f.nbytes, f.shape.iter().product::<i64>() as u64 * 4);
            let (f, l) = (&f.summary, &l.summary);
            assert_eq!(f.blake3.len(), 64);
            assert_eq!(f.blake3, l.blake3);
            assert!(f.rms.is_some());
            assert_eq!(f.rms.map(f64::to_bits), l.rms.map(f64::to_bits));
            assert_eq!((f.nan_count, f.inf_count), (l.nan_count, l.inf_count));
            assert!(f.sketched && l.sketched);
            assert_eq!(f.sketch.map(f64::to_bits), l.sketch.map(f64::to_bits));
        }
        let token_at = KEY_PART_NAMES.iter().position(|n| *n == "token_idx").unwrap();
        let mut counts: Vec<(i64, i64, i64)> = frames
            .by_key
            .iter()
            .map(|(key, records)| {
                let KeyValue::Int(token) = key.parts[token_at] else { panic!("{key:?}") };
                (token, records[0].summary.nan_count, records[0].summary.inf_count)
            })
            .collect();
        counts.sort_unstable();
        assert_eq!(counts, [(0, 0, 0), (1, 1, 1), (2, 0, 0)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
