//! Warnings go to stderr, one line each, and never fail: a closed stderr
//! must not become the host's problem.

pub(crate) fn warn(message: &str) {
    #[cfg(not(test))]
    {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "orchlog: warning: {message}");
    }
    // Under `cargo test`, through the test harness's capture instead.
    #[cfg(test)]
    eprintln!("orchlog: warning: {message}");
}
