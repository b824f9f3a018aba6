//! What a logger is told: the `ORCH_LOG_*` env knobs, parsed as every
//! orchlog emitter parses them, or the same settings given in code.
//!
//! A malformed knob never stops the host: it falls back to its default with
//! one warning, counted in [`crate::error_count`]. Numbers are ASCII digits
//! and only spaces and tabs around a value are ignored, as in every emitter;
//! text knobs that are not valid UTF-8 are repaired (U+FFFD), as names are.

#[cfg(feature = "orch_logging")]
use std::ffi::OsStr;
use std::ffi::OsString;
use std::path::PathBuf;
#[cfg(feature = "orch_logging")]
use std::sync::atomic::{AtomicU64, Ordering};

use crate::encoding::record::KeepValues;
use crate::fields_gen::Config;
#[cfg(feature = "orch_logging")]
use crate::fields_gen::Mode;
use crate::schema_gen::{KnobSpec, KnobType, MetaEntry, MetaValue};
#[cfg(feature = "orch_logging")]
use crate::warn::warn;

/// Malformed knobs warned about by [`Config::from_env`]; part of the
/// process-wide error count, as in the C++ logger.
#[cfg(feature = "orch_logging")]
static KNOB_WARNINGS: AtomicU64 = AtomicU64::new(0);

#[cfg(feature = "orch_logging")]
pub(crate) fn knob_warnings() -> u64 {
    KNOB_WARNINGS.load(Ordering::Relaxed)
}

/// Text without the spaces and tabs around it: the only whitespace a knob
/// value or a selector part may carry.
pub(crate) fn trim_blanks(text: &str) -> &str {
    text.trim_matches([' ', '\t'])
}

#[cfg(feature = "orch_logging")]
impl Mode {
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
    #[cfg_attr(not(feature = "orch_logging"), allow(dead_code))]
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
    #[cfg(feature = "orch_logging")]
    pub fn from_env() -> Config {
        let (config, warnings) = Config::from_lookup(|name| std::env::var_os(name));
        warnings.iter().for_each(|w| warn(w));
        KNOB_WARNINGS.fetch_add(warnings.len() as u64, Ordering::Relaxed);
        config
    }

    /// Without the `orch_logging` feature nothing reads the knobs: the
    /// defaults, which log nothing, and no warning.
    #[cfg(not(feature = "orch_logging"))]
    pub fn from_env() -> Config {
        Config::default()
    }

    /// Adds a scalar to the header's `config`, e.g. `("prompt_len", 512)`.
    pub fn with_run_config<'v>(mut self, key: &str, value: impl Into<MetaValue<'v>>) -> Self {
        self.run_config.push((key.to_owned(), value.into().into()));
        self
    }

    #[cfg_attr(not(feature = "orch_logging"), allow(dead_code))]
    pub(crate) fn run_config_entries(&self) -> Vec<MetaEntry<'_>> {
        self.run_config.iter().map(|(key, value)| MetaEntry { key, value: value.as_meta() }).collect()
    }
}

/// Reads knobs by the rule of their type (schema `env`), collecting a
/// warning for each malformed one; the generated `Config::from_lookup`
/// calls one method per knob of the table.
pub(crate) struct Knobs<F> {
    lookup: F,
    warnings: Vec<String>,
}

// One rule per knob type, whether or not the schema has a knob of it now.
#[allow(dead_code)]
impl<F: Fn(&str) -> Option<OsString>> Knobs<F> {
    pub(crate) fn new(lookup: F) -> Self {
        Knobs { lookup, warnings: Vec::new() }
    }

    pub(crate) fn into_warnings(self) -> Vec<String> {
        self.warnings
    }

    /// A text knob, invalid UTF-8 replaced by U+FFFD per maximal subpart.
    fn text(&self, knob: &KnobSpec) -> Option<String> {
        (self.lookup)(knob.name).map(|v| v.to_string_lossy().into_owned())
    }

    /// A number, flag or choice: unset or blank is `None`; anything
    /// unparsable warns and gives the default (`None` for an epoch).
    fn number(&mut self, knob: &KnobSpec) -> Option<i64> {
        let raw = (self.lookup)(knob.name)?;
        let lossy = raw.to_string_lossy();
        let text = trim_blanks(&lossy);
        if text.is_empty() {
            return None;
        }
        match raw.to_str().and_then(|t| knob_number(knob, trim_blanks(t))) {
            Some(v) => Some(v),
            None => {
                self.warnings.push(knob_warning(knob, &lossy));
                knob.default.and_then(|d| knob_number(knob, d))
            }
        }
    }

    fn number_or_default(&mut self, knob: &KnobSpec) -> i64 {
        self.number(knob).or_else(|| knob.default.and_then(|d| knob_number(knob, d))).unwrap_or(0)
    }

    pub(crate) fn path(&mut self, knob: &KnobSpec) -> Option<PathBuf> {
        (self.lookup)(knob.name).filter(|path| !path.is_empty()).map(PathBuf::from)
    }

    pub(crate) fn str(&mut self, knob: &KnobSpec) -> String {
        self.text(knob).unwrap_or_else(|| knob.default.unwrap_or_default().to_owned())
    }

    /// Empty is unset.
    pub(crate) fn opt_str(&mut self, knob: &KnobSpec) -> Option<String> {
        self.text(knob).filter(|s| !s.is_empty())
    }

    /// Spaces and tabs only select everything: no selector.
    pub(crate) fn selector(&mut self, knob: &KnobSpec) -> Option<String> {
        self.text(knob).filter(|s| !trim_blanks(s).is_empty())
    }

    pub(crate) fn int(&mut self, knob: &KnobSpec) -> i32 {
        i32::try_from(self.number_or_default(knob)).unwrap_or(i32::MAX)
    }

    pub(crate) fn bool(&mut self, knob: &KnobSpec) -> bool {
        self.number_or_default(knob) != 0
    }

    pub(crate) fn count_or_all(&mut self, knob: &KnobSpec) -> KeepValues {
        match self.number_or_default(knob) {
            ALL => KeepValues::All,
            n => KeepValues::First(u32::try_from(n).unwrap_or(u32::MAX)),
        }
    }

    /// The index of the choice given (`None`: unset).
    pub(crate) fn choice(&mut self, knob: &KnobSpec) -> Option<usize> {
        self.number(knob).and_then(|i| usize::try_from(i).ok())
    }

    pub(crate) fn epoch(&mut self, knob: &KnobSpec) -> Option<i64> {
        self.number(knob)
    }
}

/// `all` of a count_or_all knob.
const ALL: i64 = -1;

/// A trimmed number, flag or choice as the number it stands for (a choice's
/// index, a flag's 0 or 1), or `None` when it is malformed: ASCII digits
/// only, from the knob's min to its max.
fn knob_number(knob: &KnobSpec, text: &str) -> Option<i64> {
    match knob.kind {
        KnobType::CountOrAll if text == "all" => Some(ALL),
        KnobType::Int | KnobType::CountOrAll | KnobType::Epoch => {
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            text.parse::<i64>().ok().filter(|v| (knob.min..=knob.max).contains(v))
        }
        KnobType::Bool => match text {
            "0" => Some(0),
            "1" => Some(1),
            _ => None,
        },
        KnobType::Choice => knob.choices.iter().position(|c| *c == text).map(|i| i as i64),
        _ => None,
    }
}

/// "NAME='raw' is not <expectation>; using <default>", as every emitter words it.
fn knob_warning(knob: &KnobSpec, raw: &str) -> String {
    let expected = match knob.kind {
        KnobType::Int => format!("an integer >= {}", knob.min),
        KnobType::CountOrAll => "a count or 'all'".to_owned(),
        KnobType::Bool => "0 or 1".to_owned(),
        KnobType::Epoch => format!("a number of seconds up to {}", knob.max),
        KnobType::Choice => format!("one of {}", knob.choices.join(", ")),
        _ => "valid".to_owned(),
    };
    let fallback = if knob.kind == KnobType::Epoch { "the current time" } else { knob.default.unwrap_or_default() };
    format!("{}='{raw}' is not {expected}; using {fallback}", knob.name)
}

/// The output path: `{rank}` and `{pid}` replaced, every other byte kept.
#[cfg(feature = "orch_logging")]
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

#[cfg(all(test, feature = "orch_logging"))]
mod tests {
    use super::*;
    use crate::schema_gen::{KNOBS, KNOB_MODE, MODES, ORCH_LOG_FILE, ORCH_LOG_SELECT};
    use crate::test_vectors;

    fn config_with(name: &str, raw: Option<&str>) -> (Config, Vec<String>) {
        Config::from_lookup(|n| if n == name { raw.map(OsString::from) } else { None })
    }

    #[test]
    fn every_knob_vector_parses_to_its_value_and_warns_exactly_as_the_vector_says() {
        let doc = test_vectors::load("env.json");
        let cases = doc["knobs"].as_array().unwrap();
        assert!(cases.len() > 20);
        for case in cases {
            let (name, raw) = (case["knob"].as_str().unwrap(), case["raw"].as_str());
            let knob = KNOBS.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no knob {name}"));
            let mut knobs = Knobs::new(|n: &str| if n == name { raw.map(OsString::from) } else { None });
            let expected = &case["value"];
            let parsed_as_expected = match knob.kind {
                KnobType::CountOrAll => expected.as_i64() == Some(i64::from(knobs.count_or_all(knob).header_value())),
                KnobType::Int => expected.as_i64() == Some(i64::from(knobs.int(knob))),
                KnobType::Bool => expected.as_bool() == Some(knobs.bool(knob)),
                KnobType::Choice => {
                    let index =
                        knobs.choice(knob).or_else(|| knob.choices.iter().position(|c| Some(*c) == knob.default));
                    expected.as_str() == index.map(|i| knob.choices[i])
                }
                other => panic!("no vectors expected for a {other:?} knob"),
            };
            assert!(parsed_as_expected, "{name}={raw:?}: want {expected}");
            let warnings = knobs.into_warnings();
            assert_eq!(warnings.first().map(String::as_str), case["warning"].as_str(), "{name}={raw:?}");
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
        assert_eq!(Some(Config::default().mode), KNOB_MODE.default.and_then(Mode::from_name));
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
