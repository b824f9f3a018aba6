//! Warnings go to stderr, one line each, and never fail: a closed stderr
//! must not become the host's problem.

use std::fmt::Write as _;

pub(crate) fn warn(message: &str) {
    let line = one_line(message);
    #[cfg(not(test))]
    {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "orchlog: warning: {line}");
    }
    // Under `cargo test`, through the test harness's capture instead, and
    // kept for the test that caused it.
    #[cfg(test)]
    {
        eprintln!("orchlog: warning: {line}");
        PRINTED.with(|printed| printed.borrow_mut().push(line));
    }
}

#[cfg(test)]
thread_local! {
    static PRINTED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The warnings this thread printed so far, taken (tests only).
#[cfg(test)]
pub(crate) fn take_printed() -> Vec<String> {
    PRINTED.with(|printed| printed.take())
}

/// The message with ASCII control characters (a newline in a knob's value,
/// say) written as `\xHH`, as the C++ logger writes them, so that a warning
/// stays one line.
fn one_line(message: &str) -> String {
    let mut line = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_ascii_control() {
            let _ = write!(line, "\\x{:02x}", c as u32);
        } else {
            line.push(c);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn control_characters_are_escaped_so_a_warning_stays_one_line() {
        assert_eq!(one_line("layer=3\n, tab\there, del\x7f, ü"), "layer=3\\x0a, tab\\x09here, del\\x7f, ü");
    }
}
