//! One output file: created with its run header, then appended one whole
//! record per call. The file is unbuffered, so every record is in the
//! kernel's hands before the call returns and survives a crash of the host.
//!
//! As in the C++ logger, the file is opened without blocking (a FIFO with
//! no reader is an error, not a host that hangs), and a regular file is
//! claimed with an exclusive `flock` before it is emptied: a second process
//! given the same path gets an error and writes nothing, instead of
//! truncating and overwriting the first one's records.

use std::fs::{File, OpenOptions};
use std::io::{self, IoSlice, Write};
use std::path::{Path, PathBuf};

pub(crate) struct Sink {
    file: File,
    path: PathBuf,
}

impl Sink {
    /// Creates (or truncates) `path` and writes the header; the error says
    /// what failed, for the one warning the host gets.
    pub(crate) fn create(path: PathBuf, header: &[u8]) -> Result<Sink, String> {
        let file = open(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        claim(&file, &path)?;
        let mut sink = Sink { file, path };
        sink.write(&[header])?;
        Ok(sink)
    }

    /// Writes the pieces in order as one record, with as few system calls as
    /// the kernel allows (one `writev` unless it writes short).
    pub(crate) fn write(&mut self, pieces: &[&[u8]]) -> Result<(), String> {
        write_all_vectored(&mut self.file, pieces).map_err(|e| format!("writing {} failed: {e}", self.path.display()))
    }
}

/// Opens for writing without truncating (that waits for the claim) and
/// without blocking, then switches the descriptor back to blocking writes.
#[cfg(unix)]
fn open(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;

    let file =
        OpenOptions::new().write(true).create(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path)?;
    // SAFETY: fcntl on a descriptor this function owns, with integer arguments only.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create(true).open(path)
}

/// Takes a regular file for this process and empties it; pipes, sockets and
/// devices are written as they are.
fn claim(file: &File, path: &Path) -> Result<(), String> {
    let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
    if !regular {
        return Ok(());
    }
    if !lock(file) {
        return Err(format!(
            "{} is being written by another process; not writing to it \
             (put {{pid}} or {{rank}} in ORCH_LOG_FILE to give each process its own file)",
            path.display()
        ));
    }
    file.set_len(0).map_err(|e| format!("cannot truncate {}: {e}", path.display()))
}

/// An exclusive, non-blocking flock; false only when another holder has it
/// (a file system without locks leaves the file unclaimed but usable).
#[cfg(unix)]
fn lock(file: &File) -> bool {
    use std::os::unix::io::AsRawFd;

    loop {
        // SAFETY: flock on a descriptor the caller owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return true;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return false,
            _ => return true,
        }
    }
}

#[cfg(not(unix))]
fn lock(_file: &File) -> bool {
    true
}

/// At most this many pieces a record (a frame: before the tensor bytes, the tensor bytes, after them).
const MAX_PIECES: usize = 3;

fn write_all_vectored(out: &mut impl Write, pieces: &[&[u8]]) -> io::Result<()> {
    debug_assert!(pieces.len() <= MAX_PIECES);
    let mut left: [&[u8]; MAX_PIECES] = [&[]; MAX_PIECES];
    let mut count = 0;
    for piece in pieces.iter().filter(|p| !p.is_empty()).take(MAX_PIECES) {
        left[count] = piece;
        count += 1;
    }
    let mut first = 0;
    while first < count {
        let slices: [IoSlice<'_>; MAX_PIECES] =
            std::array::from_fn(|i| IoSlice::new(left.get(first + i).copied().unwrap_or(&[])));
        match out.write_vectored(&slices[..count - first]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(mut n) => {
                while first < count && n >= left[first].len() {
                    n -= left[first].len();
                    first += 1;
                }
                if first < count {
                    left[first] = &left[first][n..];
                }
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
    fn short_writes_are_resumed_until_every_piece_is_whole() {
        let mut out = Trickle { written: Vec::new(), step: 3 };
        write_all_vectored(&mut out, &[b"head-", b"and-", b"tail"]).unwrap();
        assert_eq!(out.written, b"head-and-tail");
    }

    #[test]
    fn a_writer_that_takes_nothing_is_an_error_not_a_hang() {
        let mut out = Trickle { written: Vec::new(), step: 0 };
        assert_eq!(write_all_vectored(&mut out, &[b"x", b""]).unwrap_err().kind(), io::ErrorKind::WriteZero);
    }

    #[test]
    fn a_second_sink_on_the_same_file_refuses_and_leaves_the_first_ones_records() {
        let path = std::env::temp_dir().join(format!("orchlog-sink-claim-{}.jsonl", std::process::id()));
        let mut first = Sink::create(path.clone(), b"header\n").unwrap();
        first.write(&[b"record 0\n"]).unwrap();
        let error = Sink::create(path.clone(), b"other\n").err().unwrap();
        assert!(error.contains("is being written by another process"), "{error}");
        first.write(&[b"record 1\n"]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"header\nrecord 0\nrecord 1\n");
        drop(first);
        let again = Sink::create(path.clone(), b"new run\n").unwrap();
        drop(again);
        assert_eq!(std::fs::read(&path).unwrap(), b"new run\n");
        let _ = std::fs::remove_file(&path);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_reader_is_an_error_not_a_hang() {
        let path = std::env::temp_dir().join(format!("orchlog-sink-fifo-{}", std::process::id()));
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let error = Sink::create(path.clone(), b"{}\n").err().unwrap();
        assert!(error.starts_with("cannot create"), "{error}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_header_that_cannot_be_written_is_reported_with_its_path() {
        if std::path::Path::new("/dev/full").exists() {
            let error = Sink::create(PathBuf::from("/dev/full"), b"{}\n").err().unwrap();
            assert!(error.starts_with("writing /dev/full failed: "), "{error}");
        }
    }
}
