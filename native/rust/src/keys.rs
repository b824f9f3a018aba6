//! Where a tensor was taken, as a call site says it: the optional key fields
//! of a record, an explicit shape and free-form meta.
//!
//! This module is compiled with and without the `orch_logging` feature, so
//! that `orch_log!` type-checks its named parts the same way in both builds.

use crate::schema_gen::{MetaEntry, MetaValue};

/// The optional parts of one `orch_log!` call (or of [`log`](crate::log)).
///
/// Built with chained setters; every setter accepts the integer types engines
/// use for positions (`usize`, `u32`, `i64`, ...) and their `Option`s.
/// A negative or out-of-range index means "none" (null in the record), so
/// that engines which write `-1` for "outside the transformer blocks" get the
/// schema's meaning of that.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Keys<'a> {
    /// Position in the sequence (`token_idx`).
    pub token_idx: Option<i64>,
    /// Transformer block index.
    pub layer: Option<i32>,
    /// Sub-stage within the checkpoint.
    pub stage: Option<&'a str>,
    /// Forward-call index: 0 for the prompt pass, then one per decode step.
    pub step: Option<i32>,
    /// Overrides `ORCH_LOG_RANK` for this record.
    pub rank: Option<i32>,
    /// Dimensions, outermost first; the values' own shape when absent.
    pub shape: Option<&'a [usize]>,
    /// Free-form scalars; written sorted by key.
    pub meta: &'a [MetaEntry<'a>],
}

impl<'a> Keys<'a> {
    /// No key parts: every optional field null, the values' own shape, no meta.
    pub const fn new() -> Self {
        Keys { token_idx: None, layer: None, stage: None, step: None, rank: None, shape: None, meta: &[] }
    }

    /// The record's `token_idx`.
    pub fn token(mut self, index: impl KeyIndex) -> Self {
        self.token_idx = index.key_index();
        self
    }

    /// The record's `layer`.
    pub fn layer(mut self, index: impl KeyIndex) -> Self {
        self.layer = narrow(index.key_index());
        self
    }

    /// The record's `stage`.
    pub fn stage(mut self, stage: impl OptionalStr<'a>) -> Self {
        self.stage = stage.optional_str();
        self
    }

    /// The record's `step`.
    pub fn step(mut self, index: impl KeyIndex) -> Self {
        self.step = narrow(index.key_index());
        self
    }

    /// The record's `rank`, instead of `ORCH_LOG_RANK`.
    pub fn rank(mut self, index: impl KeyIndex) -> Self {
        self.rank = narrow(index.key_index());
        self
    }

    /// An explicit shape; its product must equal the number of values.
    pub fn shape(mut self, dims: &'a [usize]) -> Self {
        self.shape = Some(dims);
        self
    }

    /// Meta entries, e.g. `&[orchlog::meta("seed", 42)]`.
    pub fn meta(mut self, entries: &'a [MetaEntry<'a>]) -> Self {
        self.meta = entries;
        self
    }
}

fn narrow(index: Option<i64>) -> Option<i32> {
    index.and_then(|i| i32::try_from(i).ok())
}

/// One meta entry: `orchlog::meta("kv_aligned", true)`.
///
/// Values may be `bool`, any integer that fits in `i64` (wider unsigned
/// values saturate at `i64::MAX`), `f64` or `f32` (widened exactly, so
/// `0.7f32` is written as `0.699999988079071`), `&str` or `&String`.
pub fn meta<'a>(key: &'a str, value: impl Into<MetaValue<'a>>) -> MetaEntry<'a> {
    MetaEntry { key, value: value.into() }
}

/// A position-like key part: integers of any width, or an `Option` of one.
pub trait KeyIndex {
    /// The index as the record holds it; `None` when absent, negative or
    /// beyond `i64`.
    fn key_index(self) -> Option<i64>;
}

macro_rules! key_index_for_integers {
    ($($t:ty),*) => {$(
        impl KeyIndex for $t {
            fn key_index(self) -> Option<i64> {
                i64::try_from(self).ok().filter(|i| *i >= 0)
            }
        }
    )*};
}
key_index_for_integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl<T: KeyIndex> KeyIndex for Option<T> {
    fn key_index(self) -> Option<i64> {
        self.and_then(KeyIndex::key_index)
    }
}

/// A string key part that may be absent: `&str`, `&String` or an `Option` of `&str`.
pub trait OptionalStr<'a> {
    /// The text, or `None` for null.
    fn optional_str(self) -> Option<&'a str>;
}

impl<'a> OptionalStr<'a> for &'a str {
    fn optional_str(self) -> Option<&'a str> {
        Some(self)
    }
}

impl<'a> OptionalStr<'a> for &'a String {
    fn optional_str(self) -> Option<&'a str> {
        Some(self.as_str())
    }
}

impl<'a> OptionalStr<'a> for Option<&'a str> {
    fn optional_str(self) -> Option<&'a str> {
        self
    }
}

impl From<bool> for MetaValue<'_> {
    fn from(v: bool) -> Self {
        MetaValue::Bool(v)
    }
}

macro_rules! meta_int_from {
    ($($t:ty),*) => {$(
        impl From<$t> for MetaValue<'_> {
            fn from(v: $t) -> Self {
                MetaValue::Int(i64::from(v))
            }
        }
    )*};
}
meta_int_from!(i8, i16, i32, i64, u8, u16, u32);

macro_rules! meta_saturating_int_from {
    ($($t:ty),*) => {$(
        impl From<$t> for MetaValue<'_> {
            fn from(v: $t) -> Self {
                MetaValue::Int(i64::try_from(v).unwrap_or(if v as i128 > 0 { i64::MAX } else { i64::MIN }))
            }
        }
    )*};
}
meta_saturating_int_from!(isize, u64, usize);

impl From<f64> for MetaValue<'_> {
    fn from(v: f64) -> Self {
        MetaValue::Float(v)
    }
}

impl From<f32> for MetaValue<'_> {
    fn from(v: f32) -> Self {
        MetaValue::Float(f64::from(v))
    }
}

impl<'a> From<&'a str> for MetaValue<'a> {
    fn from(v: &'a str) -> Self {
        MetaValue::Str(v)
    }
}

impl<'a> From<&'a String> for MetaValue<'a> {
    fn from(v: &'a String) -> Self {
        MetaValue::Str(v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_key_parts_of_any_width_become_i64() {
        let k = Keys::new().token(7usize).layer(3u8).step(2i64).rank(1u32);
        assert_eq!((k.token_idx, k.layer, k.step, k.rank), (Some(7), Some(3), Some(2), Some(1)));
    }

    #[test]
    fn negative_indices_mean_none() {
        let k = Keys::new().token(-1i64).layer(-1i32).step(-5isize);
        assert_eq!((k.token_idx, k.layer, k.step), (None, None, None));
    }

    #[test]
    fn indices_beyond_the_field_range_mean_none() {
        let k = Keys::new().token(u64::MAX).layer(i64::from(i32::MAX) + 1);
        assert_eq!((k.token_idx, k.layer), (None, None));
        assert_eq!(Keys::new().layer(i32::MAX).layer, Some(i32::MAX));
    }

    #[test]
    fn optional_key_parts_accept_option() {
        let k = Keys::new().token(Some(4u32)).layer(None::<usize>).stage(None);
        assert_eq!((k.token_idx, k.layer, k.stage), (Some(4), None, None));
    }

    #[test]
    fn stages_accept_str_and_string() {
        let owned = String::from("rope");
        assert_eq!(Keys::new().stage(&owned).stage, Some("rope"));
        assert_eq!(Keys::new().stage("add").stage, Some("add"));
    }

    #[test]
    fn meta_values_convert_from_every_scalar_type() {
        let name = String::from("prefill");
        assert_eq!(meta("a", true).value, MetaValue::Bool(true));
        assert_eq!(meta("a", 42).value, MetaValue::Int(42));
        assert_eq!(meta("a", u64::MAX).value, MetaValue::Int(i64::MAX));
        assert_eq!(meta("a", 0.5f32).value, MetaValue::Float(0.5));
        assert_eq!(meta("a", 0.7).value, MetaValue::Float(0.7));
        assert_eq!(meta("a", &name).value, MetaValue::Str("prefill"));
        assert_eq!(meta("a", "x").value, MetaValue::Str("x"));
    }
}
