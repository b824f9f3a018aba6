//! orchlog for Rust engines.

#[rustfmt::skip]
pub mod schema_gen;
