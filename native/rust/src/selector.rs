//! `ORCH_LOG_SELECT`: which records a logger writes.
//!
//! Comma-separated `key=spec` clauses (schema `selector`). Numeric keys take
//! `N`, `A-B` (inclusive) or `A-`; glob keys take a pattern where `*` matches
//! any run of characters and `?` one code point. Clauses on one key are
//! OR-ed, different keys AND-ed; a null field matches no clause on it.
//!
//! The rule is ASCII in every emitter: digits are `0`-`9`, and the only
//! whitespace ignored around clauses, keys and specs is space and tab
//! (`str::trim` would also take U+00A0, U+3000 ...).

use crate::config::trim_blanks;
use crate::fields_gen::RecordKey;
use crate::schema_gen::{SELECTOR_GLOB_KEYS, SELECTOR_NUMERIC_KEYS};

/// The record field a clause tests, by its schema name.
type Field = &'static str;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Test {
    /// Inclusive; `None` has no upper bound.
    Range(u64, Option<u64>),
    Glob(String),
}

/// A parsed selector: for each field, the tests one of which must pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Selector {
    fields: Vec<(Field, Vec<Test>)>,
}

impl Selector {
    /// Parses selector text; the error names the first bad clause.
    pub(crate) fn parse(text: &str) -> Result<Selector, String> {
        let mut fields: Vec<(Field, Vec<Test>)> = Vec::new();
        for raw in text.split(',') {
            let clause = trim_blanks(raw);
            let (key, spec) = match clause.split_once('=') {
                Some((key, spec)) if !trim_blanks(spec).is_empty() => (trim_blanks(key), trim_blanks(spec)),
                _ => return Err(format!("clause {clause:?} is not key=value")),
            };
            let field_of =
                |table: &[(&'static str, &'static str)]| table.iter().find(|(k, _)| *k == key).map(|(_, f)| *f);
            let (field, test) = if let Some(field) = field_of(&SELECTOR_NUMERIC_KEYS) {
                let range = parse_range(spec);
                (
                    field,
                    range.ok_or_else(|| {
                        format!("clause {clause:?}: want N, A-B or A- with non-negative integers, A <= B")
                    })?,
                )
            } else if let Some(field) = field_of(&SELECTOR_GLOB_KEYS) {
                (field, Test::Glob(spec.to_owned()))
            } else {
                let known: Vec<&str> =
                    SELECTOR_NUMERIC_KEYS.iter().chain(&SELECTOR_GLOB_KEYS).map(|(k, _)| *k).collect();
                return Err(format!("clause {clause:?}: unknown key {key:?} (known: {})", known.join(", ")));
            };
            match fields.iter_mut().find(|(f, _)| *f == field) {
                Some((_, tests)) => tests.push(test),
                None => fields.push((field, vec![test])),
            }
        }
        Ok(Selector { fields })
    }

    pub(crate) fn matches(&self, key: &RecordKey<'_>) -> bool {
        self.fields.iter().all(|(field, tests)| {
            tests.iter().any(|test| match test {
                Test::Range(lo, hi) => key
                    .number(field)
                    .and_then(|v| u64::try_from(v).ok())
                    .is_some_and(|v| v >= *lo && hi.is_none_or(|hi| v <= hi)),
                Test::Glob(pattern) => key.text(field).is_some_and(|text| glob_matches(pattern, text)),
            })
        })
    }
}

/// `N`, `A-B` or `A-`, ASCII digits only; numbers beyond u64 saturate.
fn parse_range(spec: &str) -> Option<Test> {
    let number = |digits: &str| -> Option<u64> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(digits.bytes().fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
    };
    match spec.split_once('-') {
        None => number(spec).map(|n| Test::Range(n, Some(n))),
        Some((lo, "")) => number(lo).map(|lo| Test::Range(lo, None)),
        Some((lo, hi)) => match (number(lo), number(hi)) {
            (Some(lo), Some(hi)) if lo <= hi => Some(Test::Range(lo, Some(hi))),
            _ => None,
        },
    }
}

/// `*` any run of characters, `?` one code point, everything else literal;
/// the whole text must match.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let char_len = |lead: u8| match lead {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    };
    // Classic backtracking: remember the last `*` and how much it has eaten.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi + 1, ti));
                pi += 1;
            }
            Some(b'?') => {
                pi += 1;
                ti += char_len(t[ti]);
            }
            // Literal bytes of valid UTF-8 compared from a character boundary
            // stay on character boundaries.
            Some(&c) if c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((after_star, eaten_to)) => {
                    let next = eaten_to + char_len(t[eaten_to]);
                    star = Some((after_star, next));
                    (pi, ti) = (after_star, next);
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields_gen::record_key_from_vector as key_from;
    use crate::test_vectors;

    #[test]
    fn every_valid_selector_vector_matches_exactly_the_listed_keys() {
        let doc = test_vectors::load("selector.json");
        let keys: Vec<RecordKey<'_>> = doc["keys"].as_array().unwrap().iter().map(key_from).collect();
        for case in doc["valid"].as_array().unwrap() {
            let text = case["selector"].as_str().unwrap();
            let expected: Vec<bool> =
                case["matches"].as_array().unwrap().iter().map(|m| m.as_bool().unwrap()).collect();
            // A blank selector is no selector: every record is written.
            let got: Vec<bool> = match trim_blanks(text) {
                "" => vec![true; keys.len()],
                _ => {
                    let selector = Selector::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
                    keys.iter().map(|k| selector.matches(k)).collect()
                }
            };
            assert_eq!(got, expected, "{text:?}");
        }
    }

    #[test]
    fn every_invalid_selector_vector_is_rejected() {
        let doc = test_vectors::load("selector.json");
        for text in doc["invalid"].as_array().unwrap() {
            let text = text.as_str().unwrap();
            assert!(Selector::parse(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn the_error_names_the_bad_clause() {
        assert_eq!(
            Selector::parse("layer=1, colour=red").unwrap_err(),
            "clause \"colour=red\": unknown key \"colour\" (known: layer, token, step, rank, checkpoint, stage)"
        );
    }

    #[test]
    fn globs_backtrack_over_stars_and_count_code_points() {
        assert!(glob_matches("a*b*c", "aXbYbZc"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("a*b", "aXbYc"));
        assert!(glob_matches("??", "注意"));
        assert!(!glob_matches("?", "注意"));
        assert!(glob_matches("注*", "注意力"));
    }

    #[test]
    fn huge_numbers_saturate_instead_of_failing() {
        assert_eq!(parse_range("99999999999999999999999"), Some(Test::Range(u64::MAX, Some(u64::MAX))));
    }
}
