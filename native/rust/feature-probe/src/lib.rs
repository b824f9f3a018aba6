//! An engine-shaped crate that depends on orchlog the way engines do: its own
//! `orch_logging` feature forwards to orchlog's. Its tests prove that
//! without the feature `orch_log!` leaves no code and evaluates nothing, and
//! that with it the same calls run.

use orchlog::orch_log;

/// A forward step that logs one tensor; `probe` sees every argument the
/// call evaluates.
pub fn forward(hidden: &[f32], token_idx: usize, probe: &mut dyn FnMut(&'static str)) {
    orch_log!(
        {
            probe("checkpoint");
            "zz-probe-checkpoint-5d1c"
        },
        {
            probe("values");
            hidden
        },
        {
            probe("token");
            token_idx
        },
        layer = {
            probe("layer");
            0
        },
        meta = [("seed", {
            probe("meta");
            42
        })]
    );
}
