//! One output file: created with its run header, then appended one whole
//! record per call. The file is unbuffered, so every record is in the
//! kernel's hands before the call returns and survives a crash of the host.

use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::path::PathBuf;

pub(crate) struct Sink {
    file: File,
    path: PathBuf,
}

impl Sink {
    /// Creates (or truncates) `path` and writes the header; the error says
    /// what failed, for the one warning the host gets.
    pub(crate) fn create(path: PathBuf, header: &[u8]) -> Result<Sink, String> {
        let file = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut sink = Sink { file, path };
        sink.write(header, &[])?;
        Ok(sink)
    }

    /// Writes `head` then `tail` as one record, with as few system calls as
    /// the kernel allows (one `writev` unless it writes short).
    pub(crate) fn write(&mut self, head: &[u8], tail: &[u8]) -> Result<(), String> {
        write_all_vectored(&mut self.file, head, tail)
            .map_err(|e| format!("writing {} failed: {e}", self.path.display()))
    }
}

fn write_all_vectored(out: &mut impl Write, mut head: &[u8], mut tail: &[u8]) -> io::Result<()> {
    while !head.is_empty() || !tail.is_empty() {
        match out.write_vectored(&[IoSlice::new(head), IoSlice::new(tail)]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                let from_head = n.min(head.len());
                head = &head[from_head..];
                tail = &tail[n - from_head..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that accepts at most `step` bytes per call.
    struct Trickle {
        written: Vec<u8>,
        step: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step);
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn short_writes_are_resumed_until_head_and_tail_are_whole() {
        let mut out = Trickle { written: Vec::new(), step: 3 };
        write_all_vectored(&mut out, b"head-", b"and-tail").unwrap();
        assert_eq!(out.written, b"head-and-tail");
    }

    #[test]
    fn a_writer_that_takes_nothing_is_an_error_not_a_hang() {
        let mut out = Trickle { written: Vec::new(), step: 0 };
        assert_eq!(write_all_vectored(&mut out, b"x", b"").unwrap_err().kind(), io::ErrorKind::WriteZero);
    }

    #[test]
    fn a_header_that_cannot_be_written_is_reported_with_its_path() {
        if std::path::Path::new("/dev/full").exists() {
            let error = Sink::create(PathBuf::from("/dev/full"), b"{}\n").err().unwrap();
            assert!(error.starts_with("writing /dev/full failed: "), "{error}");
        }
    }
}
