//! `orch_log!` and `orch_graft!`, the macros engines call; their internals
//! are in `__macro_support`.

/// Log a tensor at a checkpoint.
///
/// ```
/// # use orchlog::orch_log;
/// # let (hidden, x, token_idx, t, l, s, r) = (vec![0.5f32; 896], vec![1.0f32; 896], 5usize, 5u32, 3, 0, 0);
/// orch_log!("embedding", &hidden);                    // no key parts
/// orch_log!("embedding", &hidden, token_idx);         // positional token index
/// orch_log!("attn_norm", &x, token_idx, layer = l, stage = "rope");
/// orch_log!("attn_norm", &x, token = t, layer = l, step = s, rank = r,
///           shape = [1, 896], meta = [("kv_aligned", true), ("seed", 42)]);
/// ```
///
/// The checkpoint is anything that is `AsRef<str>` (a literal, a `String`, a
/// `format!`); the values are a slice, `Vec`, array or scalar of `f32`, `f64`,
/// `half::f16`, `half::bf16`, `i8`, `u8`, `i32` or `i64`, an `ndarray` array
/// (feature `ndarray`) or an `orchlog::Tensor`.
/// Named parts are `token`, `layer`, `stage`, `step`, `rank`, `shape` and
/// `meta` (a bracketed list of `(key, value)` pairs, or `&entries` built with
/// [`orchlog::meta`](crate::meta)), in any order; see [`Keys`](crate::Keys).
///
/// Without the `orch_logging` feature the call compiles to nothing and
/// evaluates none of its arguments (they are still type-checked, so a build
/// without the feature does not hide mistakes or warn about unused
/// variables). With it, a call costs one relaxed atomic load while logging
/// is off at run time, and evaluates its arguments only when it is on.
#[macro_export]
macro_rules! orch_log {
    ($checkpoint:expr, $values:expr $(,)?) => {
        $crate::__orch_log_emit!($checkpoint, $values, $crate::Keys::new())
    };
    ($checkpoint:expr, $values:expr, $part:ident = $($rest:tt)*) => {
        $crate::__orch_log_keys!(__orch_log_emit ($checkpoint, $values) ($crate::Keys::new()) $part = $($rest)*)
    };
    ($checkpoint:expr, $values:expr, $token_idx:expr $(, $($rest:tt)*)?) => {
        $crate::__orch_log_keys!(__orch_log_emit ($checkpoint, $values) ($crate::Keys::new().token($token_idx)) $($($rest)*)?)
    };
}

/// Graft a tensor at a checkpoint: when `ORCH_GRAFT_SELECT` accepts the key,
/// overwrite the values with the matching record of the reference run
/// (`ORCH_GRAFT_FROM`, a full-mode binary stream), then log them as
/// `orch_log!` does, marked `grafted`. Evaluates to whether the values were
/// overwritten.
///
/// ```
/// # use orchlog::orch_graft;
/// # let (mut x, t, l) = (vec![1.0f32; 896], 5usize, 3);
/// let grafted: bool = orch_graft!("attn_norm", &mut x, t, layer = l, stage = "rope", shape = [1, 896]);
/// ```
///
/// The key forms are `orch_log!`'s; the values are a mutable slice, `Vec`
/// or array of the same element types, or an
/// [`orchlog::TensorMut`](crate::TensorMut) over raw bytes. The reference
/// record under the same checkpoint and key parts (the n-th call under a key
/// takes the n-th record under it) must have the same shape; f32, f16, bf16
/// and f64 convert among themselves (round to nearest even), an integer
/// tensor takes only its own dtype. A missing or mismatched record leaves
/// the values alone, with one warning per kind, each counted in
/// [`orchlog::error_count`](crate::error_count).
///
/// Compiled out and off exactly like `orch_log!`: without the
/// `orch_logging` feature it evaluates none of its arguments and is `false`;
/// with it, while logging is off at run time, it costs one relaxed load.
#[macro_export]
macro_rules! orch_graft {
    ($checkpoint:expr, $values:expr $(,)?) => {
        $crate::__orch_graft_emit!($checkpoint, $values, $crate::Keys::new())
    };
    ($checkpoint:expr, $values:expr, $part:ident = $($rest:tt)*) => {
        $crate::__orch_log_keys!(__orch_graft_emit ($checkpoint, $values) ($crate::Keys::new()) $part = $($rest)*)
    };
    ($checkpoint:expr, $values:expr, $token_idx:expr $(, $($rest:tt)*)?) => {
        $crate::__orch_log_keys!(__orch_graft_emit ($checkpoint, $values) ($crate::Keys::new().token($token_idx)) $($($rest)*)?)
    };
}

/// Log a tensor that may be in CUDA device memory: a raw pointer, its dtype,
/// its shape and the stream whose queued work must finish before it is read
/// (see [`orchlog::cuda`](crate::cuda)). Key parts as in `orch_log!`.
///
/// ```no_run
/// # let (d_logits, stream, t): (*const std::ffi::c_void, orchlog::cuda::Stream, usize) =
/// #     (std::ptr::null(), std::ptr::null_mut(), 5);
/// // SAFETY: d_logits holds 151936 f32 values on the device, written on `stream`.
/// unsafe { orchlog::orch_log_cuda!("logits", d_logits, orchlog::DType::F32, [151936], stream, t) };
/// ```
///
/// The call reads raw memory, so it sits in an `unsafe` block whose caller
/// promises what [`cuda::log`](crate::cuda::log) asks. Device tensors are
/// read only with the feature `cuda`; without it (whatever `orch_logging`
/// says) the call compiles to nothing and evaluates none of its arguments.
#[macro_export]
macro_rules! orch_log_cuda {
    ($checkpoint:expr, $data:expr, $dtype:expr, $shape:expr, $stream:expr $(,)?) => {
        $crate::__orch_log_keys!(__orch_log_cuda_emit ($checkpoint, ($data, $dtype, $shape, $stream)) ($crate::Keys::new()))
    };
    ($checkpoint:expr, $data:expr, $dtype:expr, $shape:expr, $stream:expr, $part:ident = $($rest:tt)*) => {
        $crate::__orch_log_keys!(__orch_log_cuda_emit ($checkpoint, ($data, $dtype, $shape, $stream)) ($crate::Keys::new()) $part = $($rest)*)
    };
    ($checkpoint:expr, $data:expr, $dtype:expr, $shape:expr, $stream:expr, $token_idx:expr $(, $($rest:tt)*)?) => {
        $crate::__orch_log_keys!(__orch_log_cuda_emit ($checkpoint, ($data, $dtype, $shape, $stream)) ($crate::Keys::new().token($token_idx)) $($($rest)*)?)
    };
}
