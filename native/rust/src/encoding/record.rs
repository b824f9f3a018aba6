//! The record's parts that are not one field each: how many leading values
//! it keeps, and meta in canonical order. The fields themselves go from a
//! call to the `RecordView` the writers walk in fields_gen.rs.

#[cfg(feature = "orch_logging")]
use std::borrow::Cow;

#[cfg(feature = "orch_logging")]
use crate::schema_gen::MetaEntry;

/// How many leading values a record keeps (`ORCH_LOG_VALUES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepValues {
    /// Every element (`all`; written as -1 in the header).
    All,
    /// At most this many.
    First(u32),
}

#[cfg(feature = "orch_logging")]
impl KeepValues {
    /// The header's `values` field: N, or -1 for all.
    pub(crate) fn header_value(self) -> i32 {
        match self {
            KeepValues::All => -1,
            KeepValues::First(n) => i32::try_from(n).unwrap_or(i32::MAX),
        }
    }

    pub(crate) fn count(self, numel: usize) -> usize {
        match self {
            KeepValues::All => numel,
            KeepValues::First(n) => numel.min(n as usize),
        }
    }
}

/// Meta as the format writes it: sorted by the keys' UTF-8 bytes; of two
/// entries with one key the later wins, as in a map built in call order.
#[cfg(feature = "orch_logging")]
pub(crate) fn canonical_meta<'m, 'a>(meta: &'m [MetaEntry<'a>]) -> Cow<'m, [MetaEntry<'a>]> {
    if meta.windows(2).all(|w| w[0].key < w[1].key) {
        return Cow::Borrowed(meta);
    }
    let mut sorted = meta.to_vec();
    // A stable sort keeps equal keys in call order; keep the last of each run.
    sorted.sort_by(|a, b| a.key.cmp(b.key));
    let mut canonical: Vec<MetaEntry<'a>> = Vec::with_capacity(sorted.len());
    for entry in sorted {
        match canonical.last_mut() {
            Some(last) if last.key == entry.key => *last = entry,
            _ => canonical.push(entry),
        }
    }
    Cow::Owned(canonical)
}

#[cfg(all(test, feature = "orch_logging"))]
mod tests {
    use super::*;
    use crate::keys::meta;

    #[test]
    fn meta_is_sorted_by_utf8_bytes() {
        let given = [meta("é", 1), meta("b", 2), meta("Z", 3), meta("a", 4)];
        let keys: Vec<&str> = canonical_meta(&given).iter().map(|e| e.key).collect();
        assert_eq!(keys, ["Z", "a", "b", "é"]);
    }

    #[test]
    fn of_two_meta_entries_with_one_key_the_later_wins() {
        let given = [meta("seed", 1), meta("a", true), meta("seed", 2)];
        assert_eq!(canonical_meta(&given).as_ref(), [meta("a", true), meta("seed", 2)]);
    }

    #[test]
    fn sorted_meta_is_not_copied() {
        let given = [meta("a", 1), meta("b", 2)];
        assert!(matches!(canonical_meta(&given), Cow::Borrowed(_)));
    }

    #[test]
    fn the_values_kept_never_exceed_the_element_count() {
        assert_eq!(KeepValues::First(10).count(3), 3);
        assert_eq!(KeepValues::First(0).count(3), 0);
        assert_eq!(KeepValues::All.count(3), 3);
        assert_eq!(KeepValues::All.header_value(), -1);
    }
}
