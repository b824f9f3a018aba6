//! The logging API in a build without the `orch_logging` feature: the same
//! names and signatures as `global.rs` and `logger.rs`, doing nothing, so
//! that engine code calls them without `#[cfg]` and the feature decides at
//! compile time, as `log` and `tracing` do with their level features.

use crate::fields_gen::{Config, Keys};
use crate::tensor::AsTensor;
use crate::tensor_mut::AsTensorMut;

/// Whether `orch_log!` writes records now: never, in a build without the
/// `orch_logging` feature.
#[inline(always)]
pub const fn enabled() -> bool {
    false
}

/// Sets the process-wide logger from `config` instead of the env knobs.
/// Without the `orch_logging` feature there is no logger to set: returns
/// `false`.
#[inline(always)]
pub fn install(config: Config) -> bool {
    let _ = config;
    false
}

/// Writes one record through the process-wide logger: nothing, without the
/// `orch_logging` feature.
#[inline(always)]
pub fn log<C: AsRef<str> + ?Sized, V: AsTensor + ?Sized>(checkpoint: &C, values: &V, keys: Keys<'_>) {
    let _ = (checkpoint, values, keys);
}

/// Grafts through the process-wide logger: leaves `values` alone and writes
/// nothing, without the `orch_logging` feature; returns `false`.
#[inline(always)]
pub fn graft<C: AsRef<str> + ?Sized, V: AsTensorMut + ?Sized>(checkpoint: &C, values: &mut V, keys: Keys<'_>) -> bool {
    let _ = (checkpoint, values, keys);
    false
}

/// Failures of the process-wide logger so far: none, without the
/// `orch_logging` feature.
#[inline(always)]
pub const fn error_count() -> u64 {
    0
}

/// Writes records as one [`Config`] says; without the `orch_logging` feature
/// it is always off and writes nothing.
#[derive(Debug)]
pub struct Logger {
    _private: (),
}

impl Logger {
    /// A logger that is off: nothing is opened, nothing written.
    pub fn new(config: Config) -> Logger {
        let _ = config;
        Logger { _private: () }
    }

    /// Whether records are being written: never.
    #[inline(always)]
    pub fn is_on(&self) -> bool {
        false
    }

    /// Failures so far: none.
    #[inline(always)]
    pub fn error_count(&self) -> u64 {
        0
    }

    /// Records written so far: none.
    #[inline(always)]
    pub fn records_written(&self) -> u64 {
        0
    }

    /// Writes one record: nothing.
    #[inline(always)]
    pub fn log<V: AsTensor + ?Sized>(&self, checkpoint: &str, values: &V, keys: Keys<'_>) {
        let _ = (checkpoint, values, keys);
    }

    /// Grafts one tensor: leaves it alone and writes nothing; returns `false`.
    #[inline(always)]
    pub fn graft<V: AsTensorMut + ?Sized>(&self, checkpoint: &str, values: &mut V, keys: Keys<'_>) -> bool {
        let _ = (checkpoint, values, keys);
        false
    }
}
