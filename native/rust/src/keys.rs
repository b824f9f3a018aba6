//! What a call site has at hand turned into key parts and meta: the traits
//! behind the setters of [`Keys`](crate::Keys) (generated from the schema in
//! fields_gen.rs, one setter per key part) and `orchlog::meta`.
//!
//! This module is compiled with and without the `orch_logging` feature, so
//! that `orch_log!` type-checks its named parts the same way in both builds.

use crate::schema_gen::{MetaEntry, MetaValue};

/// An index as an i32 key part: `None` beyond i32.
pub(crate) fn narrow(index: Option<i64>) -> Option<i32> {
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

/// A flag key part that may be absent: `bool` or `Option<bool>`.
pub trait Flag {
    /// The flag, or `None` for null.
    fn flag(self) -> Option<bool>;
}

impl Flag for bool {
    fn flag(self) -> Option<bool> {
        Some(self)
    }
}

impl Flag for Option<bool> {
    fn flag(self) -> Option<bool> {
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
    use crate::Keys;

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
