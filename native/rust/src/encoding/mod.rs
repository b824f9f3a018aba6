//! The canonical encodings (FORMAT.md): JSONL lines and msgpack frames,
//! byte for byte what every other orchlog emitter writes.

//!
//! Only `record` (what `Config` names: `KeepValues`) is compiled without the
//! `orch_logging` feature.

#[cfg(feature = "orch_logging")]
pub(crate) mod crc32c;
#[cfg(feature = "orch_logging")]
pub(crate) mod digest;
#[cfg(feature = "orch_logging")]
pub(crate) mod hash;
#[cfg(feature = "orch_logging")]
pub(crate) mod isa;
#[cfg(feature = "orch_logging")]
pub(crate) mod json;
#[cfg(feature = "orch_logging")]
pub(crate) mod msgpack;
#[cfg(feature = "orch_logging")]
pub(crate) mod numbers;
pub(crate) mod record;
#[cfg(feature = "orch_logging")]
pub(crate) mod shortest;
#[cfg(feature = "orch_logging")]
pub(crate) mod sketch;
#[cfg(feature = "orch_logging")]
pub(crate) mod stats;
#[cfg(feature = "orch_logging")]
pub(crate) mod text;
#[cfg(feature = "orch_logging")]
pub(crate) mod values;

#[cfg(all(test, feature = "orch_logging"))]
mod conformance;
