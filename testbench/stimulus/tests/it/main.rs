//! Integration tests of the `stimulus` crate, in one binary.

mod link_partner;
