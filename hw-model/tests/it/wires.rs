//! A probe visitor for the tests: the widths and values of the wires a block shows.

use rtl::{Name, Visit};

/// The wires a block showed, in order, as (width, value); names are left out.
#[derive(Default)]
pub struct Wires(pub Vec<(u32, u64)>);

impl Visit for Wires {
    fn wire(&mut self, _: impl Into<Name>, width: u32, value: u64) {
        self.0.push((width, value));
    }

    fn scope(&mut self, _: impl Into<Name>, inside: impl FnOnce(&mut Self)) {
        inside(self);
    }
}
