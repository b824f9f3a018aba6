//! The canonical encodings (FORMAT.md): JSONL lines and msgpack frames,
//! byte for byte what every other orchlog emitter writes.

pub(crate) mod digest;
pub(crate) mod json;
pub(crate) mod msgpack;
pub(crate) mod numbers;
pub(crate) mod record;
pub(crate) mod shortest;
pub(crate) mod sketch;
pub(crate) mod stats;
pub(crate) mod text;
pub(crate) mod values;

#[cfg(test)]
mod conformance;
