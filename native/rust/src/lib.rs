//! orchlog for Rust engines: `orch_log!` writes the records every other
//! orchlog emitter (C++, C, Python) writes, byte for byte, so that
//! `orchlog compare` can line a Rust engine up against llama.cpp or
//! transformers and name the first token, layer and stage where they part.
//!
//! ```
//! # let (hidden, x, token_idx, l) = (vec![0.5f32; 896], vec![1.0f64; 4], 5usize, 3);
//! orchlog::orch_log!("embedding", &hidden, token_idx);
//! orchlog::orch_log!("attn_norm", &x, token_idx, layer = l, stage = "rope", meta = [("seed", 42)]);
//! ```
//!
//! * Feature `orch_logging` (off by default): without it `orch_log!`
//!   compiles to nothing and evaluates none of its arguments, and the crate
//!   has no dependencies. With it, the `ORCH_LOG_*` env knobs decide at run
//!   time; while logging is off a call costs one relaxed atomic load.
//! * Feature `ndarray`: `orch_log!` also takes `ndarray` arrays.
//!
//! The env knobs, the API and the measured costs are in `docs/rust.md`.

#[rustfmt::skip]
pub mod schema_gen;
#[rustfmt::skip]
mod fields_gen;

#[doc(hidden)]
pub mod __macro_support;
mod keys;
mod macros;

pub use fields_gen::Keys;
pub use keys::{meta, Flag, KeyIndex, OptionalStr};
pub use schema_gen::{DType, MetaEntry, MetaValue};

#[cfg(feature = "orch_logging")]
mod config;
#[cfg(feature = "orch_logging")]
mod created;
#[cfg(feature = "orch_logging")]
mod encoding;
#[cfg(feature = "orch_logging")]
mod global;
#[cfg(feature = "orch_logging")]
mod logger;
#[cfg(all(feature = "orch_logging", feature = "ndarray"))]
mod ndarray_support;
#[cfg(feature = "orch_logging")]
mod selector;
#[cfg(feature = "orch_logging")]
mod sink;
#[cfg(feature = "orch_logging")]
mod tensor;
#[cfg(all(test, feature = "orch_logging"))]
mod test_vectors;
#[cfg(feature = "orch_logging")]
mod warn;

#[cfg(feature = "orch_logging")]
pub use config::ConfigValue;
#[cfg(feature = "orch_logging")]
pub use encoding::record::KeepValues;
#[cfg(feature = "orch_logging")]
pub use fields_gen::{Config, Mode};
#[cfg(feature = "orch_logging")]
pub use global::{enabled, error_count, install, log};
#[cfg(feature = "orch_logging")]
pub use logger::Logger;
#[cfg(feature = "orch_logging")]
pub use tensor::{AsTensor, Element, ShapeError, Tensor};

/// Whether `orch_log!` writes records now: never, in a build without the
/// `orch_logging` feature.
#[cfg(not(feature = "orch_logging"))]
#[inline(always)]
pub const fn enabled() -> bool {
    false
}

/// The linear sketch of a tensor's little-endian bytes (FORMAT.md, "Sketch"),
/// the 64 rows a record will carry beside its BLAKE3. Public for the
/// benchmark until records carry it; not a stable API.
#[cfg(feature = "orch_logging")]
#[doc(hidden)]
pub fn __sketch(dtype: DType, bytes: &[u8]) -> [f32; 64] {
    encoding::sketch::compute(dtype, bytes)
}
