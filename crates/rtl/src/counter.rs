//! Fixed-width occupancy counters.
//!
//! A hardware counter that wraps is a silent corruption; in the model it is a bug that
//! must be reported. `Counter` stores its value in an `arbitrary-int` type of exactly
//! `BITS` bits and refuses any update that would leave that range.

use arbitrary_int::UInt;
use std::fmt;

/// An update that would have wrapped a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterError {
    Overflow { value: u32, add: u32, bits: usize },
    Underflow { value: u32, sub: u32 },
}

impl fmt::Display for CounterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overflow { value, add, bits } => {
                write!(
                    f,
                    "counter overflow: {value} + {add} does not fit in {bits} bits"
                )
            }
            Self::Underflow { value, sub } => write!(f, "counter underflow: {value} - {sub}"),
        }
    }
}

impl std::error::Error for CounterError {}

/// An unsigned counter of exactly `BITS` bits (1..=32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter<const BITS: usize>(UInt<u32, BITS>);

impl<const BITS: usize> Default for Counter<BITS> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const BITS: usize> Counter<BITS> {
    pub const ZERO: Self = Self(UInt::<u32, BITS>::new(0));
    /// Largest value the register can hold.
    pub const MAX: u32 = ((1u64 << BITS) - 1) as u32;
    pub const BITS: usize = BITS;

    /// A counter holding `v`, or `None` if `v` needs more than `BITS` bits.
    pub fn try_new(v: u32) -> Option<Self> {
        UInt::<u32, BITS>::try_new(v).ok().map(Self)
    }

    #[inline]
    pub fn get(self) -> u32 {
        self.0.value()
    }

    #[inline]
    pub fn add(&mut self, n: u32) -> Result<(), CounterError> {
        let v = self.get();
        // Summed in 64 bits, which cannot wrap: one comparison with the top.
        let s = v as u64 + n as u64;
        if s <= Self::MAX as u64 {
            self.0 = UInt::<u32, BITS>::extract_u32(s as u32, 0);
            Ok(())
        } else {
            Err(CounterError::Overflow {
                value: v,
                add: n,
                bits: BITS,
            })
        }
    }

    #[inline]
    pub fn sub(&mut self, n: u32) -> Result<(), CounterError> {
        let v = self.get();
        match v.checked_sub(n) {
            // The difference of two in-range values is in range: the mask keeps it.
            Some(d) => {
                self.0 = UInt::<u32, BITS>::extract_u32(d, 0);
                Ok(())
            }
            None => Err(CounterError::Underflow { value: v, sub: n }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_wrap_at_the_top() {
        let mut c = Counter::<4>::try_new(14).unwrap();
        c.add(1).unwrap();
        assert_eq!(c.get(), 15);
        assert_eq!(
            c.add(1),
            Err(CounterError::Overflow {
                value: 15,
                add: 1,
                bits: 4
            })
        );
        assert_eq!(c.get(), 15, "a refused update leaves the value unchanged");
    }

    /// A 32-bit counter: the sum that would wrap `u32` itself is refused too.
    #[test]
    fn refuses_to_wrap_a_full_width_counter() {
        let mut c = Counter::<32>::try_new(u32::MAX - 1).unwrap();
        assert_eq!(
            c.add(2),
            Err(CounterError::Overflow {
                value: u32::MAX - 1,
                add: 2,
                bits: 32
            })
        );
        c.add(1).unwrap();
        assert_eq!(c.get(), u32::MAX);
    }

    #[test]
    fn refuses_to_wrap_at_the_bottom() {
        let mut c = Counter::<8>::try_new(2).unwrap();
        assert_eq!(c.sub(3), Err(CounterError::Underflow { value: 2, sub: 3 }));
        c.sub(2).unwrap();
        assert_eq!(c.get(), 0);
    }

    #[test]
    fn try_new_checks_the_width() {
        assert!(Counter::<3>::try_new(8).is_none());
        assert_eq!(Counter::<3>::MAX, 7);
    }
}
