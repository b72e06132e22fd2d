//! Integration tests of the `scenario` crate, in one binary.

mod schema;
