//! From what a call knows to the generated `RecordView` the writers walk:
//! the whole-tensor summary (stats and BLAKE3), the leading values, and meta
//! in canonical order.

use std::borrow::Cow;

use crate::encoding::stats;
use crate::schema_gen::{MetaEntry, RecordView, Stats, ValuesView};
use crate::tensor::Tensor;

/// How many leading values a record keeps (`ORCH_LOG_VALUES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepValues {
    /// Every element (`all`; written as -1 in the header).
    All,
    /// At most this many.
    First(u32),
}

impl KeepValues {
    /// The header's `values` field: N, or -1 for all.
    pub(crate) fn header_value(self) -> i32 {
        match self {
            KeepValues::All => -1,
            KeepValues::First(n) => i32::try_from(n).unwrap_or(i32::MAX),
        }
    }

    fn count(self, numel: usize) -> usize {
        match self {
            KeepValues::All => numel,
            KeepValues::First(n) => numel.min(n as usize),
        }
    }
}

/// Where a record was taken: the key fields before `seq`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecordKey<'a> {
    pub checkpoint: &'a str,
    pub team: &'a str,
    pub token_idx: Option<i64>,
    pub layer: Option<i32>,
    pub stage: Option<&'a str>,
    pub step: Option<i32>,
    pub rank: i32,
    pub world_size: i32,
}

/// What a record says about its whole tensor; computed outside the writer's
/// lock, since it is the expensive part.
pub(crate) struct Summary {
    pub stats: Stats,
    blake3_hex: [u8; 64],
}

impl Summary {
    pub(crate) fn of(tensor: &Tensor<'_>) -> Summary {
        let hash = blake3::hash(tensor.bytes());
        let mut blake3_hex = [0u8; 64];
        for (pair, byte) in blake3_hex.chunks_exact_mut(2).zip(hash.as_bytes()) {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            pair.copy_from_slice(&[HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]]);
        }
        Summary { stats: stats::compute(tensor.dtype(), tensor.bytes()), blake3_hex }
    }

    pub(crate) fn blake3(&self) -> &str {
        // Only ASCII hex digits are ever stored.
        std::str::from_utf8(&self.blake3_hex).unwrap_or_default()
    }
}

/// The record the writers encode.
pub(crate) fn record_view<'a>(
    key: &RecordKey<'a>,
    seq: i64,
    tensor: &'a Tensor<'a>,
    keep: KeepValues,
    summary: &'a Summary,
    meta: &'a [MetaEntry<'a>],
) -> RecordView<'a> {
    RecordView {
        checkpoint: key.checkpoint,
        team: key.team,
        token_idx: key.token_idx,
        layer: key.layer,
        stage: key.stage,
        step: key.step,
        rank: key.rank,
        world_size: key.world_size,
        seq,
        dtype: tensor.dtype(),
        shape: tensor.shape(),
        numel: tensor.numel() as i64,
        values: ValuesView { dtype: tensor.dtype(), data: tensor.bytes(), count: keep.count(tensor.numel()) },
        stats: summary.stats,
        blake3: summary.blake3(),
        meta,
        data: tensor.bytes(),
    }
}

/// Meta as the format writes it: sorted by the keys' UTF-8 bytes; of two
/// entries with one key the later wins, as in a map built in call order.
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

#[cfg(test)]
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
