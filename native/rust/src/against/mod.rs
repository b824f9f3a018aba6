//! `ORCH_LOG_AGAINST` and `ORCH_LOG_ON_NONFINITE`: which records a run writes
//! whole, and when it stops writing. The rules are the C++ core's
//! (detail/against/), decided alike so that both write the same bytes.
//!
//! Each record is compared on arrival with the reference's record of its key
//! ([`proof`]). The first record not proven within tolerance at its token, or
//! at an earlier one, is written whole (`full_reason` "against"), and so are
//! the `ORCH_LOG_AGAINST_CONTEXT` records after it: whole tensors at the first
//! divergence `orchlog compare` will name, and a bounded number of them. The
//! first record holding NaN or Inf is said once on stderr and, asked, written
//! whole.

mod proof;

use std::collections::HashMap;
use std::path::Path;

use crate::encoding::digest::DigestField;
use crate::fields_gen::{Digest, RecordKey};
use crate::graft::reference::{GraftKey, ReferenceIndex, Use};
use crate::tensor::Tensor;

pub(crate) const FULL_AGAINST: &str = "against";
pub(crate) const FULL_CONTEXT: &str = "against_context";
pub(crate) const FULL_NONFINITE: &str = "nonfinite";

/// The verdict on one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No reference, or no record of its key there.
    NotCompared,
    Within,
    NotWithin,
}

/// The reference, indexed on the first record, and how many records each key has had.
#[derive(Debug, Default)]
pub(crate) struct AgainstReference {
    loaded: bool,
    index: Option<ReferenceIndex>,
    counts: HashMap<GraftKey, usize>,
    warned_missing: bool,
    warned_damaged: bool,
}

/// What a problem with the reference is: one to count as an error, or a note.
pub(crate) enum Said {
    Counted(String),
    Note(String),
}

impl AgainstReference {
    /// Compares the record (its resolved key, tensor and digest) with the
    /// reference's record of the same key and occurrence; `say` hears of an
    /// unreadable reference (counted) and, once, of a key it lacks (a note:
    /// an engine may log more than the reference did).
    pub(crate) fn verdict(
        &mut self,
        path: &str,
        tolerance: f64,
        key: &RecordKey<'_>,
        tensor: &Tensor<'_>,
        digest: &Digest,
        say: &mut dyn FnMut(Said),
    ) -> Verdict {
        if !self.loaded {
            self.loaded = true;
            let indexed = ReferenceIndex::build(Path::new(path), Use::Against);
            if let Some(note) = indexed.note {
                let usable = indexed.index.is_some();
                say(Said::Counted(if usable { note } else { note + "; records are written as without it" }));
            }
            self.index = indexed.index;
        }
        let Some(index) = &self.index else { return Verdict::NotCompared };
        let graft_key = GraftKey::of(key);
        let count = self.counts.entry(graft_key.clone()).or_insert(0);
        let occurrence = *count;
        *count += 1;
        let Some(found) = index.find(&graft_key, occurrence) else {
            if !self.warned_missing {
                self.warned_missing = true;
                say(Said::Note(format!(
                    "ORCH_LOG_AGAINST: the reference holds no record {} (call {} under its key); records it lacks \
                     are written as summaries (said for the first only)",
                    graft_key.describe(),
                    occurrence + 1
                )));
            }
            return Verdict::NotCompared;
        };
        let s = &found.summary;
        let same_shape = found.shape.len() == tensor.shape().len()
            && found.shape.iter().zip(tensor.shape()).all(|(&r, &t)| u64::try_from(r) == Ok(t as u64));
        if !same_shape {
            return Verdict::NotWithin;
        }
        if found.dtype == tensor.dtype() && !s.blake3.is_empty() && s.blake3 == digest.blake3.view() {
            return Verdict::Within; // the same bytes
        }
        if s.nan_count != 0 || s.inf_count != 0 || digest.stats.nan_count != 0 || digest.stats.inf_count != 0 {
            return Verdict::NotWithin;
        }
        let numel = tensor.numel();
        let ref_bytes = (numel as u64).checked_mul(found.dtype.size() as u64);
        if found.has_data
            && Some(found.nbytes) == ref_bytes
            && proof::is_float(found.dtype)
            && proof::is_float(tensor.dtype())
        {
            // Checked whole (checksum, key, BLAKE3) as a graft's is; a frame that fails its checks now
            // (the file changed since it was indexed) leaves the summary read then, which passed them.
            match index.read(found, &graft_key) {
                Ok(bytes) => {
                    return match proof::within_by_tensors(
                        found.dtype,
                        &bytes,
                        tensor.dtype(),
                        tensor.bytes(),
                        numel,
                        tolerance,
                    ) {
                        true => Verdict::Within,
                        false => Verdict::NotWithin,
                    };
                }
                Err(why) if !self.warned_damaged => {
                    self.warned_damaged = true;
                    say(Said::Counted(format!(
                        "ORCH_LOG_AGAINST: the reference record {} at byte {} of '{path}' is refused: {why}; it is \
                         compared by its summary (said for the first only)",
                        graft_key.describe(),
                        found.frame
                    )));
                }
                Err(_) => {}
            }
        }
        match proof::within_by_sketch(s, digest, numel, tolerance) {
            true => Verdict::Within,
            false => Verdict::NotWithin,
        }
    }
}

/// What a run has written whole so far (guarded by the logger's output lock).
#[derive(Debug, Default)]
pub(crate) struct WholeRecords {
    /// The smallest token of an "against" record.
    first_failed_token: Option<i64>,
    /// An "against" record without a token was written.
    tokenless_failed: bool,
    context_left: i64,
    /// `ORCH_LOG_STOP=first_fail`, once the first "against" record is written.
    stop_after_context: bool,
    pub(crate) nonfinite_seen: bool,
}

impl WholeRecords {
    /// Why this record is written whole (`None`: as the mode says), given its
    /// verdict, whether it is the run's first holding NaN or Inf, and its
    /// token; call in the order records are written.
    pub(crate) fn because(
        &mut self,
        verdict: Verdict,
        first_nonfinite: bool,
        on_nonfinite_whole: bool,
        token: Option<i64>,
        context: i64,
        stop_first_fail: bool,
    ) -> Option<&'static str> {
        let mut why = None;
        if verdict == Verdict::NotWithin {
            let earliest = match token {
                Some(t) => self.first_failed_token.is_none_or(|first| t < first),
                None => !self.tokenless_failed,
            };
            if earliest {
                match token {
                    Some(t) => self.first_failed_token = Some(t),
                    None => self.tokenless_failed = true,
                }
                why = Some(FULL_AGAINST);
                self.context_left = context;
                self.stop_after_context |= stop_first_fail;
            }
        }
        if why.is_none() && self.context_left > 0 {
            why = Some(FULL_CONTEXT);
            self.context_left -= 1;
        }
        if first_nonfinite && on_nonfinite_whole {
            why = Some(FULL_NONFINITE);
        }
        why
    }

    /// Whether `ORCH_LOG_STOP=first_fail` has written what it waits for.
    pub(crate) fn stop_due(&self) -> bool {
        self.stop_after_context && self.context_left == 0
    }
}
