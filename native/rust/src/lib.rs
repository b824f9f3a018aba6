//! orchlog for Rust engines: `orch_log!` writes the records every other
//! orchlog emitter writes, byte for byte.
#![allow(dead_code)]

#[rustfmt::skip]
pub mod schema_gen;

#[doc(hidden)]
pub mod __macro_support;
mod keys;
mod macros;

pub use keys::{meta, KeyIndex, Keys, OptionalStr};

#[cfg(feature = "orch_logging")]
mod encoding;
#[cfg(all(feature = "orch_logging", feature = "ndarray"))]
mod ndarray_support;
#[cfg(feature = "orch_logging")]
mod tensor;
#[cfg(all(test, feature = "orch_logging"))]
mod test_vectors;

#[cfg(feature = "orch_logging")]
pub use tensor::{AsTensor, Element, ShapeError, Tensor};

pub fn enabled() -> bool { false }
