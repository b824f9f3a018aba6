//! Tensors in CUDA device memory, for Rust+CUDA engines.
//!
//! ```no_run
//! # let (d_x, stream, token_idx): (*const std::ffi::c_void, orchlog::cuda::Stream, usize) =
//! #     (std::ptr::null(), std::ptr::null_mut(), 5);
//! // d_x: a device pointer (from cudarc, cust or the engine's own bindings); stream: its cudaStream_t.
//! unsafe { orchlog::orch_log_cuda!("attn_out", d_x, orchlog::DType::F16, [1, 896], stream, token_idx, layer = 3) };
//! ```
//!
//! With the feature `cuda` (which turns on `orch_logging`) the crate loads
//! liborchlog_c built against the CUDA runtime (`-DORCHLOG_C_CUDA=ON`) on the
//! first device tensor: the file `ORCHLOG_C_LIBRARY` names, else
//! `liborchlog_c.so.0` from the loader's path (so a build needs neither the
//! library nor CUDA). Its `orchlog_cuda_read` reads the tensor after the work
//! queued on the stream,
//! as `ORCH_LOG_CUDA` does in C++: a capturing stream is never touched, an
//! error the engine has not read is left for it, host pointers are read as
//! they are. The record itself is written by this crate's logger, so the
//! process keeps one trace. A tensor that could not be read is skipped, the
//! first one reported, each counted in [`error_count`](crate::error_count).
//! Without the feature, [`log`] and `orch_log_cuda!` do nothing and read
//! nothing.

use std::ffi::c_void;

use crate::fields_gen::Keys;
use crate::schema_gen::DType;

/// A `cudaStream_t` as the engine's CUDA bindings hand it out; null is the
/// legacy default stream (`cudaStreamPerThread` is the pointer value 2).
pub type Stream = *mut c_void;

/// Whether device tensors can be read: the feature `cuda` is on and
/// liborchlog_c was built against the CUDA runtime.
pub fn available() -> bool {
    imp::available()
}

/// Logs the `shape` elements of `dtype` at `data`, which may be device or
/// host memory, read after the work queued on `stream`.
///
/// # Safety
///
/// `data` must point to the whole tensor (its C-contiguous little-endian
/// bytes, `shape`'s product times `dtype`'s size) in device memory of the
/// current CUDA context or in host memory, and stay valid until the call
/// returns; `stream` must be a stream of that context, or null.
pub unsafe fn log(
    checkpoint: &str,
    data: *const c_void,
    dtype: DType,
    shape: &[usize],
    stream: Stream,
    keys: Keys<'_>,
) {
    // SAFETY: the caller's promise, passed on.
    unsafe { imp::log(checkpoint, data, dtype, shape, stream, keys) }
}

#[cfg(feature = "cuda")]
mod imp {
    use std::cell::RefCell;
    use std::ffi::{c_char, c_int, c_void, CStr, CString};
    use std::sync::OnceLock;

    use super::Stream;
    use crate::fields_gen::Keys;
    use crate::schema_gen::DType;
    use crate::tensor::Tensor;

    type Read = unsafe extern "C" fn(*const c_void, usize, *mut c_void, *mut c_void, *mut c_char, usize) -> c_int;
    type Available = unsafe extern "C" fn() -> c_int;

    /// liborchlog_c's functions, or why they could not be had.
    struct Library {
        read: Read,
        available: Available,
    }

    static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();

    fn library() -> &'static Result<Library, String> {
        LIBRARY.get_or_init(load)
    }

    #[cfg(unix)]
    fn load() -> Result<Library, String> {
        use std::os::unix::ffi::OsStringExt;
        let name =
            std::env::var_os("ORCHLOG_C_LIBRARY").map_or_else(|| b"liborchlog_c.so.0".to_vec(), |p| p.into_vec());
        let shown = String::from_utf8_lossy(&name).into_owned();
        let name = CString::new(name).map_err(|_| format!("ORCHLOG_C_LIBRARY ({shown:?}) holds a NUL byte"))?;
        // SAFETY: a NUL-terminated name; the handle is kept for the life of the process.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!("liborchlog_c ({shown}) could not be loaded; set ORCHLOG_C_LIBRARY to its path"));
        }
        // SAFETY: the symbols are the functions orchlog/orchlog_cuda.h declares, with these signatures.
        unsafe {
            let read = libc::dlsym(handle, c"orchlog_cuda_read".as_ptr());
            let available = libc::dlsym(handle, c"orchlog_cuda_available".as_ptr());
            if read.is_null() || available.is_null() {
                return Err(format!("{shown} has no orchlog_cuda_read: a liborchlog_c older than this crate"));
            }
            Ok(Library {
                read: std::mem::transmute::<*mut c_void, Read>(read),
                available: std::mem::transmute::<*mut c_void, Available>(available),
            })
        }
    }

    #[cfg(not(unix))]
    fn load() -> Result<Library, String> {
        Err("device tensors are read through liborchlog_c, which this crate loads only on Unix".into())
    }

    const HOST: c_int = 0;
    const COPIED: c_int = 1;

    thread_local! {
        /// The host copy of a device tensor, kept for the thread's next one.
        static COPY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn available() -> bool {
        // SAFETY: takes no arguments.
        library().as_ref().is_ok_and(|lib| unsafe { (lib.available)() } == 1)
    }

    pub(super) unsafe fn log(
        checkpoint: &str,
        data: *const c_void,
        dtype: DType,
        shape: &[usize],
        stream: Stream,
        keys: Keys<'_>,
    ) {
        if !crate::enabled() {
            return;
        }
        let lib = match library() {
            Ok(lib) => lib,
            Err(why) => return crate::global::device_refused(checkpoint, why),
        };
        let Some(nbytes) = shape.iter().try_fold(dtype.size(), |n, &d| n.checked_mul(d)) else {
            return crate::global::device_refused(checkpoint, "its shape has more bytes than fit in memory");
        };
        COPY.with(|copy| {
            let Ok(mut copy) = copy.try_borrow_mut() else { return };
            copy.resize(nbytes, 0);
            let mut why = [0 as c_char; 512];
            // SAFETY: `copy` has room for `nbytes`, `why` for its length; `data` and `stream` are the caller's promise.
            let read =
                unsafe { (lib.read)(data, nbytes, stream, copy.as_mut_ptr().cast(), why.as_mut_ptr(), why.len()) };
            let bytes: &[u8] = match read {
                // SAFETY: host memory holding the whole tensor, as the caller promised.
                HOST => unsafe { std::slice::from_raw_parts(data.cast::<u8>(), nbytes) },
                COPIED => &copy,
                _ => {
                    // SAFETY: orchlog_cuda_read NUL-terminates `why` within its length.
                    let why = unsafe { CStr::from_ptr(why.as_ptr()) }.to_string_lossy();
                    return crate::global::device_refused(checkpoint, &why);
                }
            };
            match Tensor::from_bytes(dtype, shape, bytes) {
                Ok(tensor) => crate::log(checkpoint, &tensor, keys),
                Err(e) => crate::global::device_refused(checkpoint, &e.to_string()),
            }
            if copy.capacity() > 256 << 20 {
                *copy = Vec::new();
            }
        });
    }
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use std::ffi::c_void;

    use super::Stream;
    use crate::fields_gen::Keys;
    use crate::schema_gen::DType;

    #[inline(always)]
    pub(super) fn available() -> bool {
        false
    }

    #[inline(always)]
    pub(super) unsafe fn log(
        checkpoint: &str,
        data: *const c_void,
        dtype: DType,
        shape: &[usize],
        stream: Stream,
        keys: Keys<'_>,
    ) {
        let _ = (checkpoint, data, dtype, shape, stream, keys);
    }
}
