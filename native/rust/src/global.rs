//! The process-wide logger behind `orch_log!`, set up from the env knobs on
//! first use (or by [`install`]).
//!
//! A call site's whole cost while logging is off is one relaxed load of
//! `STATE` and a branch; set-up is cold and happens once.

use std::panic;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::fields_gen::Config;
use crate::fields_gen::Keys;
use crate::logger::Logger;
use crate::tensor::AsTensor;
use crate::tensor_mut::AsTensorMut;

const OFF: u8 = 0;
const ON: u8 = 1;
const UNINITIALISED: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNINITIALISED);
static GLOBAL: OnceLock<Logger> = OnceLock::new();

/// Whether `orch_log!` writes records now. Cheap enough to guard work done
/// only for logging, such as copying a tensor from the device.
#[inline(always)]
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        OFF => false,
        ON => true,
        _ => initialise(),
    }
}

#[cold]
#[inline(never)]
fn initialise() -> bool {
    global().is_some_and(Logger::is_on)
}

/// The process-wide logger, set up from the env knobs if nothing else set it.
fn global() -> Option<&'static Logger> {
    // Set-up reads the env and opens files; a panic there must not escape.
    let logger = panic::catch_unwind(|| GLOBAL.get_or_init(|| Logger::new(Config::from_env()))).ok();
    settle_state(logger);
    logger
}

/// Tells the fast path whether the newly set logger is on. Only the first
/// call counts: by a later one, a failure may already have said OFF.
fn settle_state(logger: Option<&Logger>) {
    let state = if logger.is_some_and(Logger::is_on) { ON } else { OFF };
    let _ = STATE.compare_exchange(UNINITIALISED, state, Ordering::Relaxed, Ordering::Relaxed);
}

/// Sets the process-wide logger from `config` instead of the env knobs.
/// Returns `false` (and changes nothing) once a logger is set, including by
/// an earlier `orch_log!`.
pub fn install(config: Config) -> bool {
    let mut installed = false;
    let result = panic::catch_unwind(panic::AssertUnwindSafe(|| {
        GLOBAL.get_or_init(|| {
            installed = true;
            Logger::new(config)
        })
    }));
    settle_state(result.ok());
    installed
}

/// Writes one record through the process-wide logger; what `orch_log!`
/// calls once [`enabled`] said yes.
#[cold]
#[inline(never)]
pub fn log<C: AsRef<str> + ?Sized, V: AsTensor + ?Sized>(checkpoint: &C, values: &V, keys: Keys<'_>) {
    if let Some(logger) = GLOBAL.get().or_else(global) {
        logger.log(checkpoint.as_ref(), values, keys);
    }
}

/// Grafts through the process-wide logger: overwrites `values` from the
/// reference run when `ORCH_GRAFT_SELECT` takes the key, then writes the
/// record (see [`Logger::graft`]); what `orch_graft!` calls once
/// [`enabled`] said yes. Returns whether `values` were overwritten.
#[cold]
#[inline(never)]
pub fn graft<C: AsRef<str> + ?Sized, V: AsTensorMut + ?Sized>(checkpoint: &C, values: &mut V, keys: Keys<'_>) -> bool {
    match GLOBAL.get().or_else(global) {
        Some(logger) => logger.graft(checkpoint.as_ref(), values, keys),
        None => false,
    }
}

/// Failures of the process-wide logger so far (malformed env knobs, an
/// invalid selector, files that could not be opened or written, invalid
/// calls, internal errors).
pub fn error_count() -> u64 {
    crate::config::knob_warnings() + GLOBAL.get().map_or(0, Logger::error_count)
}

/// A device tensor the process-wide logger could not be given (feature `cuda`).
#[cfg(feature = "cuda")]
pub(crate) fn device_refused(checkpoint: &str, why: &str) {
    if let Some(logger) = GLOBAL.get().or_else(global) {
        logger.device_refused(checkpoint, why);
    }
}

/// Makes the fast path see that the process-wide logger turned itself off.
pub(crate) fn note_turned_off(logger: &Logger) {
    if GLOBAL.get().is_some_and(|global| std::ptr::eq(global, logger)) {
        STATE.store(OFF, Ordering::Relaxed);
    }
}
