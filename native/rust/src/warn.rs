//! Warnings go to stderr, one line each, and never fail: a closed stderr
//! must not become the host's problem.

use std::io::Write;

pub(crate) fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "orchlog: warning: {message}");
}
