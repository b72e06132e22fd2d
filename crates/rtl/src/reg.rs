//! A D flip-flop bank: `q` is what the rest of the chip sees this cycle, `d` is what it
//! will see after the edge.

use crate::block::{BlockError, Clocked};

/// A register with an explicit next value. Reading `q()` always returns the value latched
/// at the last edge, whatever has been written to `d` this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reg<T: Copy> {
    q: T,
    d: T,
}

impl<T: Copy> Reg<T> {
    pub const fn new(reset: T) -> Self {
        Self { q: reset, d: reset }
    }

    /// The registered output, valid for the whole cycle.
    #[inline]
    pub fn q(&self) -> T {
        self.q
    }

    /// Drive the D input; takes effect at the next `commit`.
    #[inline]
    pub fn set(&mut self, d: T) {
        self.d = d;
    }

    /// The value that will be latched at the next edge.
    #[inline]
    pub fn next(&self) -> T {
        self.d
    }
}

impl<T: Copy> Clocked for Reg<T> {
    #[inline]
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        self.q = self.d;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_changes_only_at_the_edge() {
        let mut r = Reg::new(3u32);
        r.set(7);
        assert_eq!(r.q(), 3, "D must not leak to Q before the edge");
        assert_eq!(r.next(), 7);
        r.commit(0).unwrap();
        assert_eq!(r.q(), 7);
        r.commit(1).unwrap();
        assert_eq!(r.q(), 7, "a register holds its value with no new D");
    }
}
