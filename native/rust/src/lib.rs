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
//! ## Features
//!
//! * `orch_logging` (off by default): without it `orch_log!` compiles to
//!   nothing and evaluates none of its arguments, and the crate has no
//!   dependencies; the rest of the API ([`install`], [`Config`], [`Logger`],
//!   [`log`], [`enabled`], [`error_count`], [`Tensor`]) keeps its names and
//!   signatures and does nothing, so engine code needs no `#[cfg]` of its own.
//!   With it, the env knobs below decide at run time; while logging is off a
//!   call costs one relaxed atomic load.
//! * `half`: `half::f16` and `half::bf16` elements (on with `orch_logging`).
//! * `ndarray`: `orch_log!` also takes `ndarray` arrays.
//! * `cuda` (turns on `orch_logging`): `orch_log_cuda!` and [`cuda::log`]
//!   read tensors in CUDA device memory through liborchlog_c, loaded at run
//!   time; without it they do nothing.
//!
//! ```
//! // Builds with and without `orch_logging`; logs only with it.
//! let config = orchlog::Config { team: "my-engine".into(), ..orchlog::Config::from_env() };
//! orchlog::install(config);
//! orchlog::orch_log!("logits", &[0.25f32, -1.0], 0usize);
//! assert_eq!(orchlog::error_count(), 0);
//! ```
//!
//! The measured costs and the other emitters are in `docs/rust.md` of the
//! orchlog repository.
//!
#![doc = include_str!("knobs_gen.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[rustfmt::skip]
mod schema_gen;
#[rustfmt::skip]
mod fields_gen;

#[doc(hidden)]
pub mod __macro_support;
mod config;
pub mod cuda;
mod encoding;
mod keys;
mod macros;
mod tensor;
mod tensor_mut;

pub use config::ConfigValue;
pub use encoding::record::KeepValues;
pub use fields_gen::{Config, Keys, Mode};
pub use keys::{meta, Flag, KeyIndex, OptionalStr};
pub use schema_gen::{DType, DTypeKind, MetaEntry, MetaValue, LIBRARY_VERSION, SCHEMA_VERSION};
pub use tensor::{AsTensor, Element, ShapeError, Tensor};
pub use tensor_mut::{AsTensorMut, TensorMut};

#[cfg(feature = "orch_logging")]
mod against;
#[cfg(feature = "orch_logging")]
mod created;
#[cfg(feature = "orch_logging")]
mod fork;
#[cfg(feature = "orch_logging")]
mod global;
#[cfg(feature = "orch_logging")]
mod graft;
#[cfg(feature = "orch_logging")]
mod logger;
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
mod ndarray_support;
#[cfg(not(feature = "orch_logging"))]
mod noop;
#[cfg(feature = "orch_logging")]
mod selector;
#[cfg(feature = "orch_logging")]
mod sink;
#[cfg(all(test, feature = "orch_logging"))]
mod test_vectors;
#[cfg(feature = "orch_logging")]
mod warn;

#[cfg(feature = "orch_logging")]
pub use global::{enabled, error_count, graft, install, log};
#[cfg(feature = "orch_logging")]
pub use logger::Logger;
#[cfg(not(feature = "orch_logging"))]
pub use noop::{enabled, error_count, graft, install, log, Logger};
