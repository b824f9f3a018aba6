//! What a logger is told: the `ORCH_LOG_*` env knobs, parsed as every
//! orchlog emitter parses them, or the same settings given in code.
//!
//! A malformed knob never stops the host: it falls back to its default with
//! one warning, counted in [`crate::error_count`]. Numbers are ASCII digits
//! and only spaces and tabs around a value are ignored, as in every emitter;
//! text knobs that are not valid UTF-8 are repaired (U+FFFD), as names are.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::encoding::record::KeepValues;
use crate::schema_gen::{
    MetaEntry, MetaValue, ORCH_LOG_FILE, ORCH_LOG_GIT_COMMIT, ORCH_LOG_MODE, ORCH_LOG_MODEL, ORCH_LOG_MODE_DEFAULT,
    ORCH_LOG_RANK, ORCH_LOG_RANK_DEFAULT, ORCH_LOG_SELECT, ORCH_LOG_TEAM, ORCH_LOG_TEAM_DEFAULT, ORCH_LOG_VALUES,
    ORCH_LOG_VALUES_DEFAULT, ORCH_LOG_WORLD_SIZE, ORCH_LOG_WORLD_SIZE_DEFAULT,
};
use crate::selector::trim_blanks;
use crate::warn::warn;

/// The largest `SOURCE_DATE_EPOCH`, 9999-12-31T23:59:59Z: `created` has a
/// four-digit year.
const MAX_SOURCE_DATE_EPOCH: i64 = 253_402_300_799;

/// Malformed knobs warned about by [`Config::from_env`]; part of the
/// process-wide error count, as in the C++ logger.
static KNOB_WARNINGS: AtomicU64 = AtomicU64::new(0);

pub(crate) fn knob_warnings() -> u64 {
    KNOB_WARNINGS.load(Ordering::Relaxed)
}

/// Which files a logger writes (`ORCH_LOG_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// JSONL summaries at the path.
    Summary,
    /// The binary stream, with full tensors, at the path.
    Full,
    /// JSONL at the path and the binary stream at the path plus `.bin`.
    Both,
}

impl Mode {
    fn from_name(name: &str) -> Option<Mode> {
        match name {
            "summary" => Some(Mode::Summary),
            "full" => Some(Mode::Full),
            "both" => Some(Mode::Both),
            _ => None,
        }
    }

    pub(crate) fn writes_jsonl(self) -> bool {
        self != Mode::Full
    }

    pub(crate) fn writes_frames(self) -> bool {
        self != Mode::Summary
    }
}

/// An owned scalar of the run header's `config`.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl ConfigValue {
    pub(crate) fn as_meta(&self) -> MetaValue<'_> {
        match self {
            ConfigValue::Bool(b) => MetaValue::Bool(*b),
            ConfigValue::Int(i) => MetaValue::Int(*i),
            ConfigValue::Float(f) => MetaValue::Float(*f),
            ConfigValue::Str(s) => MetaValue::Str(s),
        }
    }
}

impl From<MetaValue<'_>> for ConfigValue {
    fn from(v: MetaValue<'_>) -> Self {
        match v {
            MetaValue::Bool(b) => ConfigValue::Bool(b),
            MetaValue::Int(i) => ConfigValue::Int(i),
            MetaValue::Float(f) => ConfigValue::Float(f),
            MetaValue::Str(s) => ConfigValue::Str(s.to_owned()),
        }
    }
}

/// Everything a logger needs to know before it opens its files.
///
/// [`Config::from_env`] reads the env knobs; in code, start from
/// `Config::default()` (logging off) and set what you need.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Output path (`ORCH_LOG_FILE`); `{rank}` and `{pid}` are substituted.
    /// `None` keeps logging off.
    pub file: Option<PathBuf>,
    /// The `team` of every record (`ORCH_LOG_TEAM`).
    pub team: String,
    /// Leading values per record (`ORCH_LOG_VALUES`).
    pub values: KeepValues,
    /// Which encodings to write (`ORCH_LOG_MODE`).
    pub mode: Mode,
    /// Which records to write (`ORCH_LOG_SELECT`); `None` writes all.
    pub select: Option<String>,
    /// Rank of this process (`ORCH_LOG_RANK`).
    pub rank: i32,
    /// Number of ranks (`ORCH_LOG_WORLD_SIZE`).
    pub world_size: i32,
    /// The header's `model` (`ORCH_LOG_MODEL`).
    pub model: Option<String>,
    /// The header's `git_commit` (`ORCH_LOG_GIT_COMMIT`).
    pub git_commit: Option<String>,
    /// The header's `created`, in seconds since the Unix epoch
    /// (`SOURCE_DATE_EPOCH`); `None` is the time the file is opened.
    pub created_at: Option<i64>,
    /// The header's `config`: free-form run configuration.
    pub run_config: Vec<(String, ConfigValue)>,
}

impl Default for Config {
    /// The knobs' defaults, with no file: logging off.
    fn default() -> Self {
        let (config, _) = Config::from_lookup(|_| None);
        config
    }
}

impl Config {
    /// The settings the `ORCH_LOG_*` env knobs (and `SOURCE_DATE_EPOCH`)
    /// give; each malformed knob prints one warning and keeps its default.
    pub fn from_env() -> Config {
        let (config, warnings) = Config::from_lookup(|name| std::env::var_os(name));
        warnings.iter().for_each(|w| warn(w));
        KNOB_WARNINGS.fetch_add(warnings.len() as u64, Ordering::Relaxed);
        config
    }

    /// Adds a scalar to the header's `config`, e.g. `("prompt_len", 512)`.
    pub fn with_run_config<'v>(mut self, key: &str, value: impl Into<MetaValue<'v>>) -> Self {
        self.run_config.push((key.to_owned(), value.into().into()));
        self
    }

    pub(crate) fn run_config_entries(&self) -> Vec<MetaEntry<'_>> {
        self.run_config.iter().map(|(key, value)| MetaEntry { key, value: value.as_meta() }).collect()
    }

    /// Settings from any source of knob values, and the warnings to print.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> (Config, Vec<String>) {
        let mut knobs = Knobs { lookup, warnings: Vec::new() };
        let config = Config {
            file: (knobs.lookup)(ORCH_LOG_FILE).filter(|path| !path.is_empty()).map(PathBuf::from),
            team: knobs.text(ORCH_LOG_TEAM).unwrap_or_else(|| ORCH_LOG_TEAM_DEFAULT.to_owned()),
            values: knobs.parsed(ORCH_LOG_VALUES, defaults::values(), parse_values),
            mode: knobs.parsed(ORCH_LOG_MODE, defaults::mode(), Mode::from_name),
            select: knobs.text(ORCH_LOG_SELECT).filter(|s| !trim_blanks(s).is_empty()),
            rank: knobs.parsed(ORCH_LOG_RANK, defaults::rank(), |t| parse_count(t, 0)),
            world_size: knobs.parsed(ORCH_LOG_WORLD_SIZE, defaults::world_size(), |t| parse_count(t, 1)),
            model: knobs.text(ORCH_LOG_MODEL).filter(|s| !s.is_empty()),
            git_commit: knobs.text(ORCH_LOG_GIT_COMMIT).filter(|s| !s.is_empty()),
            created_at: knobs.parsed("SOURCE_DATE_EPOCH", None, parse_source_date_epoch),
            run_config: Vec::new(),
        };
        (config, knobs.warnings)
    }
}

/// Reads knobs, collecting a warning for each malformed one.
struct Knobs<F> {
    lookup: F,
    warnings: Vec<String>,
}

impl<F: Fn(&str) -> Option<OsString>> Knobs<F> {
    /// Unset or blank keeps the default silently; anything unparsable keeps
    /// it with a warning.
    fn parsed<T>(&mut self, name: &str, default: T, parse: impl Fn(&str) -> Option<T>) -> T {
        let Some(raw) = (self.lookup)(name) else { return default };
        match raw.to_str().map(trim_blanks) {
            Some("") => default,
            Some(text) => parse(text).unwrap_or_else(|| {
                self.warnings.push(format!("{name}={raw:?} is malformed; using the default"));
                default
            }),
            None => {
                self.warnings.push(format!("{name}={raw:?} is not valid UTF-8; using the default"));
                default
            }
        }
    }

    /// A text knob, invalid UTF-8 replaced by U+FFFD per maximal subpart.
    fn text(&self, name: &str) -> Option<String> {
        (self.lookup)(name).map(|v| v.to_string_lossy().into_owned())
    }
}

/// ORCH_LOG_VALUES: a count up to i32::MAX, or `all`.
fn parse_values(text: &str) -> Option<KeepValues> {
    if text == "all" {
        return Some(KeepValues::All);
    }
    parse_count(text, 0).map(|n| KeepValues::First(n as u32))
}

/// Plain ASCII digits, at least `minimum`, at most i32::MAX.
fn parse_count(text: &str, minimum: i32) -> Option<i32> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i32>().ok().filter(|n| *n >= minimum)
}

/// SOURCE_DATE_EPOCH: plain ASCII digits (no sign), at most
/// [`MAX_SOURCE_DATE_EPOCH`].
fn parse_source_date_epoch(text: &str) -> Option<Option<i64>> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i64>().ok().filter(|s| *s <= MAX_SOURCE_DATE_EPOCH).map(Some)
}

/// The schema's knob defaults, parsed once from the generated strings.
mod defaults {
    use super::*;

    pub fn values() -> KeepValues {
        parse_values(ORCH_LOG_VALUES_DEFAULT).unwrap_or(KeepValues::First(10))
    }

    pub fn mode() -> Mode {
        Mode::from_name(ORCH_LOG_MODE_DEFAULT).unwrap_or(Mode::Summary)
    }

    pub fn rank() -> i32 {
        parse_count(ORCH_LOG_RANK_DEFAULT, 0).unwrap_or(0)
    }

    pub fn world_size() -> i32 {
        parse_count(ORCH_LOG_WORLD_SIZE_DEFAULT, 1).unwrap_or(1)
    }
}

/// The output path: `{rank}` and `{pid}` replaced, every other byte kept.
pub(crate) fn expand_path(template: &OsStr, rank: i32, pid: u32) -> PathBuf {
    let replace = |bytes: &[u8]| -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix(b"{rank}") {
                out.extend_from_slice(rank.to_string().as_bytes());
                rest = after;
            } else if let Some(after) = rest.strip_prefix(b"{pid}") {
                out.extend_from_slice(pid.to_string().as_bytes());
                rest = after;
            } else {
                out.push(rest[0]);
                rest = &rest[1..];
            }
        }
        out
    };
    #[cfg(unix)]
    {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        PathBuf::from(OsString::from_vec(replace(template.as_bytes())))
    }
    #[cfg(not(unix))]
    {
        let text = template.to_string_lossy();
        PathBuf::from(String::from_utf8_lossy(&replace(text.as_bytes())).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema_gen::MODES;
    use crate::test_vectors;

    fn config_with(name: &str, raw: Option<&str>) -> (Config, Vec<String>) {
        Config::from_lookup(|n| if n == name { raw.map(OsString::from) } else { None })
    }

    #[test]
    fn every_knob_vector_parses_to_its_value_and_warns_only_when_malformed() {
        let doc = test_vectors::load("env.json");
        let cases = doc["knobs"].as_array().unwrap();
        assert!(cases.len() > 20);
        for case in cases {
            let (knob, raw) = (case["knob"].as_str().unwrap(), case["raw"].as_str());
            let (config, warnings) = config_with(knob, raw);
            let expected = &case["value"];
            let parsed_as_expected = match knob {
                "ORCH_LOG_VALUES" => expected.as_i64() == Some(i64::from(config.values.header_value())),
                "ORCH_LOG_MODE" => Mode::from_name(expected.as_str().unwrap()) == Some(config.mode),
                "ORCH_LOG_RANK" => expected.as_i64() == Some(i64::from(config.rank)),
                "ORCH_LOG_WORLD_SIZE" => expected.as_i64() == Some(i64::from(config.world_size)),
                other => panic!("no parser for {other}"),
            };
            assert!(parsed_as_expected, "{knob}={raw:?}: want {expected}, got {config:?}");
            assert_eq!(warnings.len(), usize::from(case["warning"].as_bool().unwrap()), "{knob}={raw:?}: {warnings:?}");
        }
    }

    #[test]
    fn every_path_vector_expands_rank_and_pid_only() {
        let doc = test_vectors::load("env.json");
        for case in doc["paths"].as_array().unwrap() {
            let template = OsString::from(case["template"].as_str().unwrap());
            let rank = case["rank"].as_i64().unwrap() as i32;
            let pid = case["pid"].as_u64().unwrap() as u32;
            assert_eq!(expand_path(&template, rank, pid), PathBuf::from(case["path"].as_str().unwrap()));
        }
    }

    #[test]
    fn every_mode_the_schema_names_is_known() {
        assert!(MODES.iter().all(|m| Mode::from_name(m).is_some()));
        assert_eq!(Config::default().mode, defaults::mode());
    }

    #[test]
    fn logging_stays_off_without_a_file_or_with_an_empty_one() {
        assert_eq!(Config::default().file, None);
        assert_eq!(config_with(ORCH_LOG_FILE, Some("")).0.file, None);
        assert_eq!(config_with(ORCH_LOG_FILE, Some("t.jsonl")).0.file, Some(PathBuf::from("t.jsonl")));
    }

    #[test]
    fn source_date_epoch_pins_created_and_warns_when_malformed() {
        assert_eq!(config_with("SOURCE_DATE_EPOCH", Some("1767323045")).0.created_at, Some(1767323045));
        let (config, warnings) = config_with("SOURCE_DATE_EPOCH", Some("yesterday"));
        assert_eq!((config.created_at, warnings.len()), (None, 1));
    }

    #[test]
    fn a_blank_selector_selects_everything() {
        assert_eq!(config_with(ORCH_LOG_SELECT, Some("  ")).0.select, None);
        assert_eq!(config_with(ORCH_LOG_SELECT, Some("layer=1")).0.select.as_deref(), Some("layer=1"));
    }

    #[test]
    fn run_config_keeps_every_scalar_type() {
        let config = Config::default().with_run_config("a", true).with_run_config("b", 512).with_run_config("c", "x");
        let keys: Vec<_> = config.run_config_entries().iter().map(|e| e.value).collect();
        assert_eq!(keys, [MetaValue::Bool(true), MetaValue::Int(512), MetaValue::Str("x")]);
    }
}
