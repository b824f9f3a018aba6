//! Forks: a child of a process that logs must not write into its parent's
//! files (DataLoader workers, multiprocessing pools, a server's workers).
//!
//! A `pthread_atfork` handler counts forks in the child; a logger made
//! before the last fork notices on its next call (one relaxed load) and
//! settles: with `{pid}` in the path the child writes a run of its own at its
//! own path, else logging is off in the child with one warning
//! (`Logger::after_fork`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// How many forks separate this process from the one that started it.
static FORKS: AtomicU64 = AtomicU64::new(0);

/// The fork count now: a logger made when it was `n` runs in a child of that process when it differs.
pub(crate) fn generation() -> u64 {
    FORKS.load(Ordering::Relaxed)
}

extern "C" fn in_child() {
    FORKS.fetch_add(1, Ordering::Relaxed); // an atomic add: async-signal-safe
}

/// Registers the handler, once per process.
pub(crate) fn watch() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        #[cfg(unix)]
        // SAFETY: registers a handler that only adds to an atomic, which is safe in a forked child.
        unsafe {
            libc::pthread_atfork(None, None, Some(in_child));
        }
    });
}
