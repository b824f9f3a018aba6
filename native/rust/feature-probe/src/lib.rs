//! An engine-shaped crate that depends on orchlog the way engines do: its own
//! `orch_logging` feature forwards to orchlog's. Its tests prove that
//! without the feature `orch_log!` leaves no code and evaluates nothing, and
//! that with it the same calls run.

use orchlog::{orch_graft, orch_log, orch_log_cuda};

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

/// A forward step that grafts one tensor; `probe` sees every argument the
/// call evaluates. Returns what the call said (whether it overwrote).
pub fn graft_forward(hidden: &mut [f32], token_idx: usize, probe: &mut dyn FnMut(&'static str)) -> bool {
    orch_graft!(
        {
            probe("checkpoint");
            "zz-probe-graft-checkpoint-8e2a"
        },
        {
            probe("values");
            &mut *hidden
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
    )
}

/// A forward step that logs a tensor through `orch_log_cuda!` (host memory
/// here, which the call may be given too); `probe` sees every argument the
/// call evaluates.
pub fn device_forward(hidden: &[f32], token_idx: usize, probe: &mut dyn FnMut(&'static str)) {
    // SAFETY: `hidden` is host memory holding the elements the shape describes.
    unsafe {
        orch_log_cuda!(
            {
                probe("checkpoint");
                "zz-probe-cuda-checkpoint-3f7b"
            },
            {
                probe("data");
                hidden.as_ptr().cast()
            },
            orchlog::DType::F32,
            [hidden.len()],
            std::ptr::null_mut(),
            {
                probe("token");
                token_idx
            }
        )
    };
}

/// An engine's start-up: the logging API it calls is the same with and
/// without the feature (no `#[cfg]` here); without it every call does
/// nothing. Returns what each part said: (installed, a logger of its own on,
/// records that logger wrote, errors so far).
pub fn start_up(trace: &std::path::Path) -> (bool, bool, u64, u64) {
    let config = orchlog::Config {
        file: Some(trace.to_path_buf()),
        team: "probe".into(),
        values: orchlog::KeepValues::First(4),
        mode: orchlog::Mode::Summary,
        ..orchlog::Config::from_env()
    }
    .with_run_config("seed", 42);
    let installed = orchlog::install(config.clone());
    let own = orchlog::Logger::new(orchlog::Config { file: Some(trace.with_extension("own.jsonl")), ..config });
    let tensor = orchlog::Tensor::from_bytes(orchlog::DType::F32, &[2], &[0, 0, 128, 63, 0, 0, 0, 64]).unwrap();
    own.log("probe_own", &tensor, orchlog::Keys::new().token(0usize).layer(1));
    orchlog::log("probe_global", &[1.0f32, 2.0], orchlog::Keys::new());
    if orchlog::enabled() {
        orchlog::log("probe_guarded", &tensor, orchlog::Keys::new());
    }
    // Grafting without a selector: logged as a log call, nothing overwritten.
    let mut bits = [0u8; 4];
    let mut raw = orchlog::TensorMut::from_bytes(orchlog::DType::F16, &[2], &mut bits).unwrap();
    let grafted = own.graft("probe_own_graft", &mut raw, orchlog::Keys::new())
        | orchlog::graft("probe_graft", &mut [1.0f32], orchlog::Keys::new());
    assert!(!grafted && bits == [0; 4]);
    (installed, own.is_on(), own.records_written(), orchlog::error_count() + own.error_count())
}
