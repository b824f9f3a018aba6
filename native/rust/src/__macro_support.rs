//! Macro internals: not a stable API.
//!
//! `orch_log!` and `orch_graft!` hand their parts to `__orch_log_keys!`,
//! which folds every `name = value` into one `Keys` expression, the same in
//! every build, and hands it to the emitting macro it was named. Only the
//! emitting macros (`__orch_log_emit!`, `__orch_graft_emit!`) depend on the
//! `orch_logging` feature. Each is defined twice, with `#[cfg]` on the
//! definitions, because a `#[cfg]` written inside a macro's expansion would
//! test the *calling* crate's features. (`#[macro_export]` places these at
//! the crate root; they live in this file so that the public API stays in
//! `macros.rs`.)

/// Folds `name = value` parts into a `Keys` expression (not a stable API).
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_log_keys {
    ($emit:ident ($checkpoint:expr, $values:expr) ($keys:expr) $(,)?) => {
        $crate::$emit!($checkpoint, $values, $keys)
    };
    ($emit:ident ($checkpoint:expr, $values:expr) ($keys:expr) meta = [$(($key:expr, $value:expr)),* $(,)?] $(, $($rest:tt)*)?) => {
        $crate::__orch_log_keys!($emit ($checkpoint, $values) ($keys.meta(&[$($crate::meta($key, $value)),*])) $($($rest)*)?)
    };
    // Borrowed here so that `shape = [1, 896]` needs no `&`.
    ($emit:ident ($checkpoint:expr, $values:expr) ($keys:expr) shape = $dims:expr $(, $($rest:tt)*)?) => {
        $crate::__orch_log_keys!($emit ($checkpoint, $values) ($keys.shape(&$dims)) $($($rest)*)?)
    };
    ($emit:ident ($checkpoint:expr, $values:expr) ($keys:expr) $part:ident = $value:expr $(, $($rest:tt)*)?) => {
        $crate::__orch_log_keys!($emit ($checkpoint, $values) ($keys.$part($value)) $($($rest)*)?)
    };
}

/// Logs when logging is on at run time (not a stable API).
#[cfg(feature = "orch_logging")]
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_log_emit {
    ($checkpoint:expr, $values:expr, $keys:expr) => {
        if $crate::enabled() {
            $crate::log(&$checkpoint, &$values, $keys);
        }
    };
}

/// Type-checks the call and does nothing (not a stable API): the branch is
/// constant-false, so no argument is evaluated and no code is emitted.
#[cfg(not(feature = "orch_logging"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_log_emit {
    ($checkpoint:expr, $values:expr, $keys:expr) => {
        if false {
            let _ = (&$checkpoint, &$values, $keys);
        }
    };
}

/// Grafts when logging is on at run time; whether the values were
/// overwritten (not a stable API).
#[cfg(feature = "orch_logging")]
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_graft_emit {
    ($checkpoint:expr, $values:expr, $keys:expr) => {
        if $crate::enabled() {
            $crate::graft(&$checkpoint, &mut $values, $keys)
        } else {
            false
        }
    };
}

/// Type-checks the call and does nothing: `false` (not a stable API).
#[cfg(not(feature = "orch_logging"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_graft_emit {
    ($checkpoint:expr, $values:expr, $keys:expr) => {{
        if false {
            let _ = (&$checkpoint, &mut $values, $keys);
        }
        false
    }};
}

/// Logs a tensor that may be in device memory when logging is on at run
/// time (not a stable API). `$values` is the tuple (data, dtype, shape, stream).
#[cfg(feature = "cuda")]
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_log_cuda_emit {
    ($checkpoint:expr, $values:expr, $keys:expr) => {
        if $crate::enabled() {
            let checkpoint = &$checkpoint;
            let (data, dtype, shape, stream) = $values;
            $crate::cuda::log(checkpoint, data, dtype, &shape, stream, $keys);
        }
    };
}

/// Type-checks the call and does nothing (not a stable API); the same
/// unsafe call as with the feature, in a constant-false branch.
#[cfg(not(feature = "cuda"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __orch_log_cuda_emit {
    ($checkpoint:expr, $values:expr, $keys:expr) => {
        if false {
            let checkpoint = &$checkpoint;
            let (data, dtype, shape, stream) = $values;
            $crate::cuda::log(checkpoint, data, dtype, &shape, stream, $keys);
        }
    };
}
