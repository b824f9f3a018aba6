//! A logger: the files of one run and the rules for writing records to them.
//!
//! Nothing here may harm the host. Every call is wrapped in
//! `catch_unwind`; a file that cannot be created or written gives one
//! warning, adds to the error count and turns the logger off, and the host
//! carries on.

use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::against::{AgainstReference, Said, Verdict, WholeRecords};
use crate::config::{expand_path, trim_blanks};
use crate::created::created;
use crate::encoding::record::canonical_meta;
use crate::encoding::record::KeepValues;
use crate::encoding::{json, msgpack};
use crate::fields_gen::{header_view, record_view, Config, Digest, Keys, OnNonfinite, RecordKey, Stop};
use crate::graft::reference::GraftKey;
use crate::graft::{GraftState, Problem};
use crate::schema_gen::{RecordView, BOTH_MODE_SUFFIX};
use crate::selector::Selector;
use crate::sink::Sink;
use crate::tensor::{AsTensor, Tensor};
use crate::tensor_mut::AsTensorMut;
use crate::warn::warn;

/// Buffers that grew past this for one huge record are given back.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// Writes records as one [`Config`] says; usually reached through the
/// process-wide logger that `orch_log!` uses, but usable on its own.
pub struct Logger {
    /// The run's settings: what every record takes from the run.
    config: Config,
    selector: Option<Selector>,
    /// Which graft calls overwrite their tensor; none grafts nothing.
    graft_selector: Option<Selector>,
    graft: Mutex<GraftState>,
    /// The graft problems reported so far (bits of `Problem`).
    warned_graft: AtomicU8,
    /// `ORCH_LOG_AGAINST`'s reference, read on the first record.
    against: Mutex<AgainstReference>,
    /// Whether records go to a binary stream, whose bin holds at most 4 GiB.
    writes_frames: bool,
    outputs: Mutex<Outputs>,
    on: AtomicBool,
    errors: AtomicU64,
    warned_invalid_call: AtomicBool,
    /// Whether a device tensor that could not be read was reported.
    #[cfg(feature = "cuda")]
    warned_device: AtomicBool,
    /// Where the run writes (JSONL, or the binary stream in full mode) and
    /// the process that opened it, and the fork count then (fork.rs): a call
    /// that sees another count runs in a forked child.
    path: PathBuf,
    pid: AtomicU32,
    forks: AtomicU64,
}

/// The open files and what is written under the lock.
struct Outputs {
    /// The next record's `seq`: the number of records written so far.
    seq: i64,
    /// What `ORCH_LOG_AGAINST` and `ORCH_LOG_ON_NONFINITE` have written whole.
    whole: WholeRecords,
    /// `ORCH_LOG_STOP` or `ORCH_LOG_ON_NONFINITE=stop`: no record is written any more.
    stopped: bool,
    jsonl: Option<Sink>,
    frames: Option<Sink>,
    line: Vec<u8>,
    frame: Vec<u8>,
}

/// Why a call wrote nothing.
enum Failure {
    /// The call itself was wrong (a shape that does not fit its values):
    /// that record is skipped, logging goes on.
    InvalidCall(String),
    /// A file could not be written: logging turns off.
    Output(String),
}

impl Logger {
    /// Opens the files `config` names and writes their run headers. A
    /// logger without a file, with an invalid selector, or whose files
    /// cannot be created is off (with one warning for the latter two).
    pub fn new(config: Config) -> Logger {
        let selector = config.select.as_deref().filter(|s| !is_blank(s)).map(Selector::parse).transpose();
        let mut logger = Logger {
            config: config.clone(),
            selector: None,
            graft_selector: None,
            graft: Mutex::new(GraftState::default()),
            warned_graft: AtomicU8::new(0),
            against: Mutex::new(AgainstReference::default()),
            writes_frames: config.mode.writes_frames(),
            outputs: Mutex::new(Outputs {
                seq: 0,
                whole: WholeRecords::default(),
                stopped: false,
                jsonl: None,
                frames: None,
                line: Vec::new(),
                frame: Vec::new(),
            }),
            on: AtomicBool::new(false),
            errors: AtomicU64::new(0),
            warned_invalid_call: AtomicBool::new(false),
            #[cfg(feature = "cuda")]
            warned_device: AtomicBool::new(false),
            path: PathBuf::new(),
            pid: AtomicU32::new(std::process::id()),
            forks: AtomicU64::new(crate::fork::generation()),
        };
        let Some(template) = &config.file else { return logger };
        match selector {
            Ok(selector) => logger.selector = selector,
            Err(why) => {
                logger.errors.fetch_add(1, Ordering::Relaxed);
                warn(&format!("ORCH_LOG_SELECT is invalid ({why}); logging is off"));
                return logger;
            }
        }
        // Grafting is opt-in: an unset or blank selector grafts nothing (a
        // blank ORCH_LOG_SELECT selects everything, but grafting everything
        // by accident would hide every difference). An invalid one grafts
        // nothing, with a warning; logging goes on. A reference named with
        // no selector grafts nothing too, and says so.
        if config.graft_from.is_some() && config.graft_select.is_none() {
            logger.errors.fetch_add(1, Ordering::Relaxed);
            warn(
                "ORCH_GRAFT_FROM names a reference but ORCH_GRAFT_SELECT selects nothing to graft; grafting nothing \
                 (e.g. ORCH_GRAFT_SELECT=checkpoint=attn_norm,layer=3)",
            );
        }
        if let Some(text) = config.graft_select.as_deref().filter(|s| !is_blank(s)) {
            match Selector::parse(text) {
                Ok(selector) => logger.graft_selector = Some(selector),
                Err(why) => {
                    logger.errors.fetch_add(1, Ordering::Relaxed);
                    warn(&format!("graft selector '{text}' is invalid ({why}); grafting nothing"));
                }
            }
        }
        let path = expand_path(template.as_os_str(), config.rank, std::process::id());
        if let Some((output, reference)) = output_that_is_a_reference(&logger, &path) {
            logger.errors.fetch_add(1, Ordering::Relaxed);
            warn(&format!(
                "ORCH_LOG_FILE names the {reference} ({}): writing the run would empty it; logging is off \
                 and the file is left as it is",
                output.display()
            ));
            return logger;
        }
        logger.path = path.clone();
        match open_outputs(&config, path) {
            Ok((jsonl, frames)) => {
                let outputs = logger.outputs.get_mut().unwrap_or_else(PoisonError::into_inner);
                (outputs.jsonl, outputs.frames) = (jsonl, frames);
                *logger.on.get_mut() = true;
                crate::fork::watch();
            }
            Err(why) => {
                logger.errors.fetch_add(1, Ordering::Relaxed);
                warn(&format!("{why}; logging is off"));
            }
        }
        logger
    }

    /// Whether records are being written.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Failures so far: files that could not be opened or written, invalid
    /// calls, internal errors.
    pub fn error_count(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Records written so far (the next record's `seq`).
    pub fn records_written(&self) -> u64 {
        self.lock_outputs().seq as u64
    }

    /// Writes one record, if this logger is on and its selector takes it.
    pub fn log<V: AsTensor + ?Sized>(&self, checkpoint: &str, values: &V, keys: Keys<'_>) {
        if !self.is_on() || !self.in_its_own_process() {
            return;
        }
        let outcome =
            panic::catch_unwind(AssertUnwindSafe(|| self.write_record(checkpoint, values.as_tensor(), keys, false)));
        self.settle(checkpoint, outcome);
    }

    /// A log call on a writable tensor: when the graft selector takes its
    /// key, the values are first overwritten with the reference record's
    /// (`graft_from`), then the record is written, marked `grafted`.
    /// Returns whether the values were overwritten. A reference without the
    /// key, or with a record of another shape or dtype, leaves them alone
    /// (one warning per kind, each counted).
    pub fn graft<V: AsTensorMut + ?Sized>(&self, checkpoint: &str, values: &mut V, keys: Keys<'_>) -> bool {
        if !self.is_on() || !self.in_its_own_process() {
            return false;
        }
        let mut grafted = false;
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let mut target = values.as_tensor_mut();
            if let Some(shape) = keys.shape {
                match target.reshaped(shape) {
                    Ok(reshaped) => target = reshaped,
                    // The record is refused as a log call's would be.
                    Err(e) => return Err(Failure::InvalidCall(e.to_string())),
                }
            }
            let key = RecordKey::new(checkpoint, &keys, &self.config);
            if self.graft_selector.as_ref().is_some_and(|s| s.matches(&key)) {
                let mut state = self.graft.lock().unwrap_or_else(PoisonError::into_inner);
                let mut report = |problem, message: String| self.graft_problem(problem, &message);
                grafted = state.overwrite(self.config.graft_from.as_deref(), &key, &mut target, &mut report);
            }
            self.write_record(checkpoint, target.as_tensor(), Keys { shape: None, ..keys }, grafted)
        }));
        self.settle(checkpoint, outcome);
        grafted
    }

    /// Whether the logger may write here: true unless this is a forked child
    /// of the process that opened its files and settling that (once) turned
    /// logging off.
    fn in_its_own_process(&self) -> bool {
        let now = crate::fork::generation();
        let then = self.forks.load(Ordering::Relaxed);
        if now == then || self.forks.compare_exchange(then, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return self.is_on();
        }
        self.after_fork();
        self.is_on()
    }

    /// In a forked child: with `{pid}` in the path, a run of its own at its
    /// own path; else logging off, with one warning. The parent's files are
    /// never written; its locks may have been held by a thread that does
    /// not exist here, so they are only tried.
    #[cold]
    fn after_fork(&self) {
        let parent = self.pid.swap(std::process::id(), Ordering::Relaxed);
        let here = std::process::id();
        let template = self.config.file.as_deref().map(|f| f.as_os_str().to_string_lossy().into_owned());
        let mine = template.filter(|t| t.contains("{pid}"));
        let why = match (mine, self.outputs.try_lock(), self.graft.try_lock(), self.against.try_lock()) {
            (Some(template), Ok(mut outputs), Ok(mut graft), Ok(mut against)) => {
                let path = expand_path(std::ffi::OsStr::new(&template), self.config.rank, here);
                match open_outputs(&self.config, path) {
                    Ok((jsonl, frames)) => {
                        *outputs = Outputs {
                            seq: 0,
                            whole: WholeRecords::default(),
                            stopped: false,
                            jsonl,
                            frames,
                            line: Vec::new(),
                            frame: Vec::new(),
                        };
                        *graft = GraftState::default();
                        *against = AgainstReference::default();
                        return;
                    }
                    Err(why) => why,
                }
            }
            (Some(_), ..) => format!("this process (pid {here}) was forked from pid {parent} while it was writing"),
            (None, ..) => format!(
                "this process (pid {here}) was forked from pid {parent}, which writes {}; it writes nothing there \
                 (put {{pid}} in ORCH_LOG_FILE to give each process its own file)",
                self.path.display()
            ),
        };
        self.turn_off(&why);
    }

    /// Acts on how writing a record went.
    fn settle(&self, checkpoint: &str, outcome: std::thread::Result<Result<(), Failure>>) {
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(Failure::InvalidCall(why))) => self.invalid_call(checkpoint, &why),
            Ok(Err(Failure::Output(why))) => self.turn_off(&why),
            Err(_) => self.turn_off("an internal error occurred while logging (the panic message is above)"),
        }
    }

    /// Counts a graft problem; prints the first of each kind.
    fn graft_problem(&self, problem: Problem, message: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if self.warned_graft.fetch_or(problem as u8, Ordering::Relaxed) & problem as u8 == 0 {
            warn(message);
        }
    }

    fn write_record(&self, checkpoint: &str, tensor: Tensor<'_>, keys: Keys<'_>, grafted: bool) -> Result<(), Failure> {
        let key = RecordKey { grafted, ..RecordKey::new(checkpoint, &keys, &self.config) };
        if self.selector.as_ref().is_some_and(|s| !s.matches(&key)) {
            return Ok(());
        }
        let tensor = match keys.shape {
            Some(shape) => tensor.reshaped(shape).map_err(|e| Failure::InvalidCall(e.to_string()))?,
            None => tensor,
        };
        if self.writes_frames && u32::try_from(tensor.bytes().len()).is_err() {
            let why = format!("{} bytes do not fit in one msgpack bin (at most 4 GiB)", tensor.bytes().len());
            return Err(Failure::InvalidCall(why));
        }
        let digest = Digest::of(&tensor);
        let meta = canonical_meta(keys.meta);
        let verdict = self.compare_with_reference(&key, &tensor, &digest);
        let nonfinite = digest.stats.nan_count != 0 || digest.stats.inf_count != 0;
        let mut outputs = self.lock_outputs();
        if outputs.stopped {
            return Ok(());
        }
        let first_nonfinite =
            nonfinite && !outputs.whole.nonfinite_seen && self.config.on_nonfinite != OnNonfinite::Off;
        if first_nonfinite {
            outputs.whole.nonfinite_seen = true;
            warn(&format!(
                "the first tensor holding NaN or Inf: {} ({} NaN, {} Inf; ORCH_LOG_ON_NONFINITE)",
                GraftKey::of(&key).describe(),
                digest.stats.nan_count,
                digest.stats.inf_count
            ));
        }
        let whole = matches!(self.config.on_nonfinite, OnNonfinite::Full | OnNonfinite::Stop);
        let why = outputs.whole.because(
            verdict,
            first_nonfinite,
            whole,
            key.token_idx,
            i64::from(self.config.against_context),
            self.config.stop == Stop::FirstFail,
        );
        let key = RecordKey { full_reason: why, ..key };
        // A record written whole keeps every value in JSONL (the binary stream holds the tensor anyway).
        let values = if why.is_some() { KeepValues::All } else { self.config.values };
        let record = record_view(&key, outputs.seq, &tensor, values, &digest, &meta);
        outputs.write(&record).map_err(Failure::Output)?;
        let stop_now = (first_nonfinite && self.config.on_nonfinite == OnNonfinite::Stop) || outputs.whole.stop_due();
        if stop_now {
            outputs.stopped = true;
            self.on.store(false, Ordering::Relaxed);
            warn(&format!(
                "logging stopped after {} records, as ORCH_LOG_STOP or ORCH_LOG_ON_NONFINITE=stop asked; the engine runs on",
                outputs.seq
            ));
        }
        Ok(())
    }

    /// The record's verdict against `ORCH_LOG_AGAINST`'s reference (not compared without one).
    fn compare_with_reference(&self, key: &RecordKey<'_>, tensor: &Tensor<'_>, digest: &Digest) -> Verdict {
        let Some(path) = self.config.against.as_deref() else { return Verdict::NotCompared };
        let tolerance = f64::from(self.config.against_ppm) * 1e-6;
        let mut say = |said: Said| match said {
            Said::Counted(message) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                warn(&message);
            }
            Said::Note(message) => warn(&message),
        };
        let mut reference = self.against.lock().unwrap_or_else(PoisonError::into_inner);
        reference.verdict(path, tolerance, key, tensor, digest, &mut say)
    }

    fn lock_outputs(&self) -> MutexGuard<'_, Outputs> {
        // A panic while the lock was held left whole records only (a record
        // is written by one call), so the files are still good to append to.
        self.outputs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Skips the record; the first invalid call is reported, each is counted.
    fn invalid_call(&self, checkpoint: &str, why: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if !self.warned_invalid_call.swap(true, Ordering::Relaxed) {
            warn(&format!(
                "orch_log!({checkpoint:?}, ...) skipped: {why} (further invalid calls are counted, not reported)"
            ));
        }
    }

    /// A device tensor was not read (a capturing stream, a pending CUDA
    /// error, a failed copy): the first is reported, each is counted.
    #[cfg(feature = "cuda")]
    pub(crate) fn device_refused(&self, checkpoint: &str, why: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if !self.warned_device.swap(true, Ordering::Relaxed) {
            warn(&format!("record {checkpoint:?} not written: {why} (printed once)"));
        }
    }

    fn turn_off(&self, why: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if self.on.swap(false, Ordering::Relaxed) {
            warn(&format!("{why}; logging is off"));
            crate::global::note_turned_off(self);
        }
    }
}

impl Outputs {
    fn write(&mut self, record: &RecordView<'_>) -> Result<(), String> {
        if let Some(sink) = &mut self.jsonl {
            self.line.clear();
            json::record_line(&mut self.line, record);
            sink.write(&[&self.line])?;
        }
        if let Some(sink) = &mut self.frames {
            let frame = msgpack::record_frame(&mut self.frame, record);
            sink.write(&[frame.head, frame.data, frame.rest])?;
        }
        self.seq += 1;
        for buffer in [&mut self.line, &mut self.frame] {
            if buffer.capacity() > KEPT_BUFFER_BYTES {
                *buffer = Vec::new();
            }
        }
        Ok(())
    }
}

/// The output file (the JSONL or the binary stream) that is the run's graft
/// reference or its `ORCH_LOG_AGAINST` reference, the same file however it is
/// named, and which reference it is; checked before an output is opened,
/// since opening claims and empties it.
fn output_that_is_a_reference(logger: &Logger, path: &std::path::Path) -> Option<(std::path::PathBuf, &'static str)> {
    let graft_from = logger.graft_selector.as_ref().and(logger.config.graft_from.as_deref());
    let references =
        [(graft_from, "graft reference"), (logger.config.against.as_deref(), "ORCH_LOG_AGAINST reference")];
    let mut binary = path.as_os_str().to_owned();
    binary.push(BOTH_MODE_SUFFIX);
    let outputs = [path.to_owned(), binary.into()];
    references.into_iter().find_map(|(named, what)| {
        let reference = std::fs::metadata(named?).ok()?;
        let output = outputs.iter().find(|output| {
            std::fs::metadata(output).is_ok_and(|m| same_file(&m, &reference))
                && (output.as_path() == path || logger.config.mode.writes_jsonl() && logger.config.mode.writes_frames())
        })?;
        Some((output.clone(), what))
    })
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    false
}

fn is_blank(select: &str) -> bool {
    trim_blanks(select).is_empty()
}

/// Creates the files the mode asks for, each starting with its header.
fn open_outputs(config: &Config, path: std::path::PathBuf) -> Result<(Option<Sink>, Option<Sink>), String> {
    let created = created(config.created_at);
    let run_config = config.run_config_entries();
    let run_config = canonical_meta(&run_config);
    let header = header_view(config, &created, "rust", &run_config);
    let jsonl = match config.mode.writes_jsonl() {
        true => {
            let mut line = Vec::new();
            json::header_line(&mut line, &header);
            Some(Sink::create(path.clone(), &line)?)
        }
        false => None,
    };
    let frames = match config.mode.writes_frames() {
        true => {
            let mut frame = Vec::new();
            msgpack::header_frame(&mut frame, &header);
            let mut frames_path = path.into_os_string();
            if jsonl.is_some() {
                frames_path.push(BOTH_MODE_SUFFIX);
            }
            Some(Sink::create(frames_path.into(), &frame)?)
        }
        false => None,
    };
    Ok((jsonl, frames))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::fields_gen::Mode;
    use crate::keys::meta;
    use crate::schema_gen::SCHEMA_VERSION;
    use crate::warn::take_printed;

    /// A directory for one test's files, removed when the test ends.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("orchlog-logger-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn trace(&self) -> PathBuf {
            self.0.join("trace")
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn config(path: &Path, mode: Mode) -> Config {
        Config { file: Some(path.to_owned()), mode, created_at: Some(0), team: "t".into(), ..Config::default() }
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
    }

    #[test]
    fn a_logger_without_a_file_is_off_and_writes_nothing() {
        let logger = Logger::new(Config::default());
        logger.log("x", &[1.0f32], Keys::new());
        assert!(!logger.is_on());
        assert_eq!((logger.records_written(), logger.error_count()), (0, 0));
    }

    #[test]
    fn summary_mode_writes_a_header_line_then_one_line_per_record() {
        let scratch = Scratch::new("summary");
        let path = scratch.trace();
        let logger = Logger::new(config(&path, Mode::Summary));
        logger.log("embedding", &[1.0f32, 2.0], Keys::new().token(0usize));
        logger.log("logits", &vec![3i32], Keys::new().layer(1u8).meta(&[meta("seed", 42)]));
        let lines = lines(&path);
        assert_eq!(lines.len(), 3);
        let header = format!(r#"{{"orchlog":{SCHEMA_VERSION},"producer":{{"language":"rust","#);
        assert!(lines[0].starts_with(&header), "{}", lines[0]);
        assert!(lines[1].starts_with(r#"{"checkpoint":"embedding","team":"t","token_idx":0,"#), "{}", lines[1]);
        assert!(
            lines[2].contains(r#""seq":1,"#)
                && lines[2].ends_with(r#""meta":{"seed":42},"grafted":false,"full_reason":null}"#),
            "{}",
            lines[2]
        );
    }

    #[test]
    fn both_mode_writes_the_binary_stream_beside_the_jsonl() {
        let scratch = Scratch::new("both");
        let path = scratch.trace();
        let logger = Logger::new(config(&path, Mode::Both));
        logger.log("x", &[7u8; 5], Keys::new());
        let frames = std::fs::read(format!("{}.bin", path.display())).unwrap();
        assert_eq!(lines(&path).len(), 2);
        // The header map (12 fields) comes first; the tensor bytes end the record but for its checksum.
        let (record, checksum) = frames.split_at(frames.len() - 12);
        assert_eq!((frames[0], &record[record.len() - 7..]), (0x8c, &[0xc4, 5, 7, 7, 7, 7, 7][..]));
        assert_eq!(&checksum[..8], b"\xa6crc32c\xce");
    }

    #[test]
    fn a_shape_that_does_not_fit_skips_the_record_and_counts_an_error() {
        let scratch = Scratch::new("shape");
        let path = scratch.trace();
        let logger = Logger::new(config(&path, Mode::Summary));
        logger.log("x", &[1.0f32; 6], Keys::new().shape(&[4, 2]));
        logger.log("x", &[1.0f32; 6], Keys::new().shape(&[3, 2]));
        assert!(logger.is_on());
        assert_eq!((logger.records_written(), logger.error_count()), (1, 1));
        assert!(lines(&path)[1].contains(r#""shape":[3,2],"numel":6"#));
    }

    #[test]
    fn the_selector_decides_and_seq_counts_only_written_records() {
        let scratch = Scratch::new("select");
        let path = scratch.trace();
        let logger = Logger::new(Config { select: Some("layer=1-".into()), ..config(&path, Mode::Summary) });
        for layer in 0..3u8 {
            logger.log("x", &[0i8], Keys::new().layer(layer));
        }
        let lines = lines(&path);
        assert_eq!(lines.len(), 3);
        assert!(lines[1].contains(r#""layer":1,"#) && lines[1].contains(r#""seq":0,"#));
        assert!(lines[2].contains(r#""layer":2,"#) && lines[2].contains(r#""seq":1,"#));
    }

    #[test]
    fn an_invalid_selector_keeps_logging_off() {
        let scratch = Scratch::new("bad-select");
        let path = scratch.trace();
        let logger = Logger::new(Config { select: Some("colour=red".into()), ..config(&path, Mode::Summary) });
        assert!(!logger.is_on());
        assert_eq!(logger.error_count(), 1);
        assert!(!path.exists());
    }

    #[test]
    fn an_unwritable_path_turns_logging_off_with_an_error_counted() {
        let logger = Logger::new(config(&PathBuf::from("/proc/orchlog-cannot-exist/trace"), Mode::Full));
        logger.log("x", &[1.0f32], Keys::new());
        assert!(!logger.is_on());
        assert_eq!(logger.error_count(), 1);
    }

    /// Forks; the child runs `child` and exits 0 when it returns true; the parent gets the child's pid.
    #[cfg(unix)]
    fn in_a_child(child: impl FnOnce() -> bool) -> u32 {
        // SAFETY: the child runs `child` (logging through an existing logger) and leaves with _exit, never
        // returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(false);
            // SAFETY: ends the child at once, without running the parent's destructors or atexit handlers.
            unsafe { libc::_exit(i32::from(!ok)) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child failed: status {status}");
        pid as u32
    }

    #[cfg(unix)]
    #[test]
    fn a_forked_child_writes_nothing_into_its_parents_file_and_says_so_once() {
        let scratch = Scratch::new("fork");
        let path = scratch.trace();
        let logger = Logger::new(config(&path, Mode::Summary));
        logger.log("parent", &[1.0f32], Keys::new().token(0usize));
        let parent = std::process::id();
        in_a_child(|| {
            take_printed();
            logger.log("child", &[2.0f32], Keys::new().token(1usize));
            logger.log("child", &[2.0f32], Keys::new().token(2usize));
            let want = format!(
                "this process (pid {}) was forked from pid {parent}, which writes {}; it writes nothing there (put \
                 {{pid}} in ORCH_LOG_FILE to give each process its own file); logging is off",
                std::process::id(),
                path.display()
            );
            !logger.is_on() && take_printed() == [want] && logger.error_count() == 1
        });
        logger.log("parent", &[1.0f32], Keys::new().token(3usize));
        let lines = lines(&path);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.contains(r#""checkpoint":"parent""#)), "{lines:?}");
        assert!(lines[2].contains(r#""seq":1,"#));
    }

    #[cfg(unix)]
    #[test]
    fn with_pid_in_the_path_a_forked_child_writes_a_run_of_its_own() {
        let scratch = Scratch::new("fork-pid");
        let logger = Logger::new(config(&scratch.0.join("run-{pid}.jsonl"), Mode::Summary));
        logger.log("parent", &[1.0f32], Keys::new().token(0usize));
        let child = in_a_child(|| {
            take_printed();
            logger.log("child", &[2.0f32], Keys::new().token(1usize));
            logger.log("child", &[2.0f32], Keys::new().token(2usize));
            logger.is_on() && take_printed().is_empty() && logger.records_written() == 2
        });
        logger.log("parent", &[1.0f32], Keys::new().token(3usize));
        let ours = lines(&scratch.0.join(format!("run-{}.jsonl", std::process::id())));
        let theirs = lines(&scratch.0.join(format!("run-{child}.jsonl")));
        assert_eq!((ours.len(), theirs.len()), (3, 3));
        assert!(theirs[0].starts_with(r#"{"orchlog":"#));
        assert!(theirs[1].contains(r#""checkpoint":"child""#) && theirs[1].contains(r#""seq":0,"#), "{theirs:?}");
        assert!(ours[2].contains(r#""checkpoint":"parent""#) && ours[2].contains(r#""seq":1,"#), "{ours:?}");
    }

    #[test]
    fn records_from_many_threads_are_whole_and_numbered_in_file_order() {
        let scratch = Scratch::new("threads");
        let path = scratch.trace();
        let logger = Logger::new(config(&path, Mode::Summary));
        std::thread::scope(|scope| {
            for thread in 0..4u32 {
                let logger = &logger;
                scope.spawn(move || {
                    for i in 0..50u32 {
                        logger.log(
                            "t",
                            &vec![thread as f32; 300],
                            Keys::new().token(i).meta(&[meta("thread", thread)]),
                        );
                    }
                });
            }
        });
        let lines = lines(&path);
        assert_eq!(lines.len(), 201);
        for (seq, line) in lines[1..].iter().enumerate() {
            assert!(line.starts_with('{') && line.ends_with('}'), "a torn line: {line}");
            assert!(line.contains(&format!(r#""seq":{seq},"#)), "seq out of file order: {line}");
        }
    }

    #[test]
    fn a_graft_reference_without_a_selector_is_one_error_and_grafts_nothing() {
        let scratch = Scratch::new("graft-no-select");
        let reference = scratch.0.join("ref.bin");
        let full = Logger::new(config(&reference, Mode::Full));
        full.log("x", &[5.0f32, 6.0], Keys::new().layer(0u8));
        drop(full);
        let path = scratch.trace();
        let logger =
            Logger::new(Config { graft_from: Some(reference.display().to_string()), ..config(&path, Mode::Summary) });
        assert_eq!(logger.error_count(), 1);
        let mut x = [1.0f32, 2.0];
        assert!(!logger.graft("x", &mut x[..], Keys::new().layer(0u8)));
        assert_eq!(x, [1.0, 2.0]);
    }

    #[test]
    fn the_first_nonfinite_record_is_whole_and_stop_ends_the_records() {
        let scratch = Scratch::new("nonfinite");
        let path = scratch.trace();
        let logger = Logger::new(Config { on_nonfinite: OnNonfinite::Stop, ..config(&path, Mode::Summary) });
        logger.log("a", &[1.0f32, 2.0], Keys::new().layer(0u8));
        logger.log("b", &[1.0f32, f32::NAN], Keys::new().layer(1u8));
        assert!(!logger.is_on(), "stopped after the first non-finite record");
        logger.log("c", &[1.0f32, 2.0], Keys::new().layer(2u8));
        let lines = lines(&path);
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with(r#""full_reason":null}"#), "{}", lines[1]);
        assert!(
            lines[2].contains(r#""values":[1,"NaN"]"#) && lines[2].ends_with(r#""full_reason":"nonfinite"}"#),
            "{}",
            lines[2]
        );
        assert_eq!(logger.error_count(), 0, "a non-finite tensor is no error of the emitter");
    }

    #[test]
    fn against_a_reference_the_first_failure_and_its_context_are_whole() {
        let scratch = Scratch::new("against");
        let reference = scratch.0.join("ref.jsonl");
        let r = Logger::new(config(&reference, Mode::Summary));
        for token in 0..4u32 {
            r.log("x", &vec![token as f32 + 1.0; 100], Keys::new().token(token));
        }
        drop(r);
        let path = scratch.trace();
        let logger = Logger::new(Config {
            against: Some(reference.display().to_string()),
            against_context: 1,
            ..config(&path, Mode::Summary)
        });
        for token in 0..4u32 {
            let scale = if token >= 1 { 1.5 } else { 1.0 };
            logger.log("x", &vec![(token as f32 + 1.0) * scale; 100], Keys::new().token(token));
        }
        let reasons: Vec<String> =
            lines(&path)[1..].iter().map(|l| l.rsplit_once("\"full_reason\":").unwrap().1.to_owned()).collect();
        assert_eq!(reasons, [r#"null}"#, r#""against"}"#, r#""against_context"}"#, r#"null}"#]);
    }

    #[test]
    fn against_a_binary_reference_damaged_after_indexing_the_record_is_compared_by_its_summary() {
        let scratch = Scratch::new("against-damaged");
        let reference = scratch.0.join("ref.bin");
        let r = Logger::new(config(&reference, Mode::Full));
        for token in 0..4u32 {
            r.log("x", &vec![token as f32 + 1.0; 100], Keys::new().token(token));
        }
        drop(r);
        let path = scratch.trace();
        let logger = Logger::new(Config {
            against: Some(reference.display().to_string()),
            against_context: 0,
            ..config(&path, Mode::Summary)
        });
        let _ = take_printed();
        // Within (not the same bytes), but for token 2's: 1.5 times its reference.
        let ours = |token: u32| vec![(token as f32 + 1.0) * if token == 2 { 1.5 } else { 1.00002 }; 100];
        logger.log("x", &ours(0), Keys::new().token(0u32)); // the reference is indexed: every frame sound
        let mut bytes = std::fs::read(&reference).unwrap();
        let three: Vec<u8> = 3.0f32.to_le_bytes().repeat(100);
        let at = bytes.windows(three.len()).position(|w| w == three.as_slice()).unwrap();
        bytes[at] ^= 0x04; // token 2's tensor, one bit flipped under the run
        std::fs::write(&reference, &bytes).unwrap();
        for token in 1..4u32 {
            logger.log("x", &ours(token), Keys::new().token(token));
        }
        let reasons: Vec<String> =
            lines(&path)[1..].iter().map(|l| l.rsplit_once("\"full_reason\":").unwrap().1.to_owned()).collect();
        // The sketches prove the others within and token 2's beyond: it was compared, by its summary.
        assert_eq!(reasons, [r#"null}"#, r#"null}"#, r#""against"}"#, r#"null}"#]);
        let said = take_printed();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].ends_with(
                "is refused: it fails its checksum (CRC-32C); it is compared by its summary (said for the first only)"
            ),
            "{said:?}"
        );
        assert_eq!(logger.error_count(), 1);
    }
}
