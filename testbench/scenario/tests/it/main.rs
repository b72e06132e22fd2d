//! Integration tests of the `scenario` crate, in one binary.

mod int_keys;
mod messages;
mod schema;
