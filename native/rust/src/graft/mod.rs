//! Grafting: a graft call overwrites the engine's tensor with the matching
//! record of a reference run (`ORCH_GRAFT_FROM`) when `ORCH_GRAFT_SELECT`
//! accepts its key, then logs it marked `grafted`; so a stage whose inputs
//! were grafted shows its own error at its output, not the error it
//! inherited. The rules are the C++ logger's (native/cpp, detail/graft).
//!
//! Nothing here harms the host: a reference that cannot be read, a key it
//! does not hold, a record of another shape or dtype, or one that fails its
//! checks (reference.rs) is a warning (printed once per kind, counted every
//! time) and leaves the tensor as the engine made it.

pub(crate) mod convert;
mod json;
pub(crate) mod reference;

use std::collections::HashMap;
use std::path::Path;

use crate::fields_gen::RecordKey;
use crate::tensor_mut::TensorMut;
use reference::{GraftKey, ReferenceIndex, Use};

/// What went wrong with one graft call: each kind is printed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    /// The reference trace could not be read.
    Reference = 1,
    /// The reference holds no record under the call's key.
    Missing = 2,
    /// ... only one of another shape or dtype.
    Mismatch = 4,
    /// ... one that failed its checks when read again (reference.rs).
    Damaged = 8,
}

/// A run's grafting: the reference, indexed on the first selected call, and
/// how many selected calls each key has had (occurrence matching).
#[derive(Debug, Default)]
pub(crate) struct GraftState {
    loaded: bool,
    reference: Option<ReferenceIndex>,
    counts: HashMap<GraftKey, usize>,
}

impl GraftState {
    /// Overwrites `target` from the reference record under `key` (resolved,
    /// selected); true when it did. `report` hears of each problem.
    pub(crate) fn overwrite(
        &mut self,
        graft_from: Option<&str>,
        key: &RecordKey<'_>,
        target: &mut TensorMut<'_>,
        report: &mut dyn FnMut(Problem, String),
    ) -> bool {
        if !self.loaded {
            self.loaded = true;
            let Some(path) = graft_from else {
                report(
                    Problem::Reference,
                    "ORCH_GRAFT_SELECT is set but ORCH_GRAFT_FROM is not; grafting nothing".into(),
                );
                return false;
            };
            let indexed = ReferenceIndex::build(Path::new(path), Use::Graft);
            if let Some(note) = indexed.note {
                let usable = indexed.index.is_some();
                report(Problem::Reference, if usable { note } else { note + "; grafting nothing" });
            }
            self.reference = indexed.index;
        }
        let Some(reference) = &self.reference else { return false };
        let key = GraftKey::of(key);
        let count = self.counts.entry(key.clone()).or_insert(0);
        let occurrence = *count;
        *count += 1;
        let Some(record) = reference.find(&key, occurrence) else {
            report(
                Problem::Missing,
                format!(
                    "graft {} (call {} under this key): the reference holds no such record; the tensor is left alone",
                    key.describe(),
                    occurrence + 1
                ),
            );
            return false;
        };
        let same_shape = record.shape.len() == target.shape().len()
            && record.shape.iter().zip(target.shape()).all(|(&r, &t)| u64::try_from(r) == Ok(t as u64));
        // The shape comes from a file: its product is checked, never assumed to fit.
        let numel = record.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::try_from(d).ok()?));
        let whole = numel.and_then(|n| n.checked_mul(record.dtype.size() as u64)) == Some(record.nbytes);
        if !same_shape || !whole || !convert::converts(record.dtype, target.dtype()) {
            report(
                Problem::Mismatch,
                format!(
                    "graft {}: the reference record is {} {}, the tensor {} {}; the tensor is left alone",
                    key.describe(),
                    record.dtype.name(),
                    shape_text(record.shape.iter().map(|d| d.to_string())),
                    target.dtype().name(),
                    shape_text(target.shape().iter().map(|d| d.to_string())),
                ),
            );
            return false;
        }
        // Checked whole (checksum, key, BLAKE3) before a byte of it reaches the tensor.
        let bytes = match reference.read(record, &key) {
            Ok(bytes) => bytes,
            Err(why) => {
                report(
                    Problem::Damaged,
                    format!(
                        "graft {}: the reference record at byte {} of '{}' is refused: {why}; the tensor is left alone",
                        key.describe(),
                        record.frame,
                        graft_from.unwrap_or_default()
                    ),
                );
                return false;
            }
        };
        let to = target.dtype();
        target.write_le(|dst| convert::convert_elements(record.dtype, &bytes, to, dst));
        true
    }
}

fn shape_text(dims: impl Iterator<Item = String>) -> String {
    format!("[{}]", dims.collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests;
