//! The shared conformance vectors in `schema/vectors/`, for unit tests.

use std::path::PathBuf;

pub(crate) fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/vectors").join(name)
}

pub(crate) fn load(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}
