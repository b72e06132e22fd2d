//! The arithmetic units of DSH section IV-D, one small block each.
//!
//! Each unit is combinational: `eval` computes its output from its inputs and remembers
//! every wire so a probe can show them. Widths are set at construction and every input is
//! checked against them (an input wider than its bus is a wiring bug in the model).

use crate::probe::{Probed, Wire};
use std::fmt;

#[inline]
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

#[inline]
fn check_fits(block: &str, wire: &str, v: u64, width: u32) {
    debug_assert!(
        v <= mask(width),
        "{block}.{wire} = {v} does not fit in {width} bits"
    );
}

/// `y = a - b`, saturating at zero, with the borrow out of the subtraction.
///
/// Used for the free shared buffer `B_s - sum(omega_s)` feeding Eq. 2, for
/// `X_qoff = T - eta` (Eq. 5, subtractor 1), `X_qon = X_qoff - delta_q` (subtractor 2),
/// `X_pon = X_poff - delta_p` (subtractor 3) and the SIH `X_on = T - delta`.
#[derive(Debug, Clone)]
pub struct SatSub {
    width: u32,
    a: u64,
    b: u64,
    borrow: bool,
    y: u64,
    wires: [Wire; 4],
}

impl SatSub {
    pub fn new(width: u32) -> Self {
        assert!((1..=64).contains(&width), "subtractor width {width}");
        Self {
            width,
            a: 0,
            b: 0,
            borrow: false,
            y: 0,
            wires: [
                Wire { name: "a", width },
                Wire { name: "b", width },
                Wire {
                    name: "borrow",
                    width: 1,
                },
                Wire { name: "y", width },
            ],
        }
    }

    #[inline]
    pub fn eval(&mut self, a: u64, b: u64) -> u64 {
        check_fits("sat_sub", "a", a, self.width);
        check_fits("sat_sub", "b", b, self.width);
        self.a = a;
        self.b = b;
        self.borrow = a < b;
        self.y = a.saturating_sub(b);
        self.y
    }

    pub fn borrow(&self) -> bool {
        self.borrow
    }

    pub fn y(&self) -> u64 {
        self.y
    }
}

impl Probed for SatSub {
    fn wires(&self) -> &[Wire] {
        &self.wires
    }
    fn wire_value(&self, i: usize) -> u64 {
        [self.a, self.b, self.borrow as u64, self.y][i]
    }
}

/// Why a shifter could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShifterError {
    pub k: i32,
}

impl fmt::Display for ShifterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "alpha = 2^{} is outside the shifter's range 2^{}..=2^{} (1/128 to 8)",
            self.k,
            Shifter::K_MIN,
            Shifter::K_MAX
        )
    }
}

impl std::error::Error for ShifterError {}

/// `y = a * 2^k`: the DT threshold `T = alpha * free` (Eq. 2) with `alpha = 2^k`, and
/// `X_poff = N_q * T` (Eq. 6) when `N_q` is a power of two. A right shift truncates (as a
/// barrel shifter does); a left shift saturates at the bus maximum and raises `sat`.
#[derive(Debug, Clone)]
pub struct Shifter {
    width: u32,
    k: i32,
    a: u64,
    y: u64,
    sat: bool,
    wires: [Wire; 4],
}

impl Shifter {
    /// The range of `k` that real chips offer for alpha: 1/128 to 8.
    pub const K_MIN: i32 = -7;
    pub const K_MAX: i32 = 3;

    pub fn new(width: u32, k: i32) -> Result<Self, ShifterError> {
        assert!((1..=64).contains(&width), "shifter width {width}");
        if !(Self::K_MIN..=Self::K_MAX).contains(&k) {
            return Err(ShifterError { k });
        }
        Ok(Self {
            width,
            k,
            a: 0,
            y: 0,
            sat: false,
            wires: [
                Wire { name: "a", width },
                // k as a 4-bit two's complement control input.
                Wire {
                    name: "k",
                    width: 4,
                },
                Wire {
                    name: "sat",
                    width: 1,
                },
                Wire { name: "y", width },
            ],
        })
    }

    pub fn k(&self) -> i32 {
        self.k
    }

    #[inline]
    pub fn eval(&mut self, a: u64) -> u64 {
        check_fits("shifter", "a", a, self.width);
        self.a = a;
        let (y, sat) = if self.k >= 0 {
            let shifted = (a as u128) << self.k;
            let max = mask(self.width) as u128;
            if shifted > max {
                (max as u64, true)
            } else {
                (shifted as u64, false)
            }
        } else {
            (a >> (-self.k), false)
        };
        self.y = y;
        self.sat = sat;
        y
    }

    pub fn y(&self) -> u64 {
        self.y
    }
}

impl Probed for Shifter {
    fn wires(&self) -> &[Wire] {
        &self.wires
    }
    fn wire_value(&self, i: usize) -> u64 {
        [self.a, (self.k as u64) & 0xF, self.sat as u64, self.y][i]
    }
}

/// `y = a * n`, saturating at the bus maximum: `X_poff = N_q * T` (Eq. 6) when `N_q` is
/// not a power of two.
#[derive(Debug, Clone)]
pub struct Multiplier {
    width: u32,
    n: u64,
    a: u64,
    y: u64,
    sat: bool,
    wires: [Wire; 3],
}

impl Multiplier {
    pub fn new(width: u32, n: u64) -> Self {
        assert!((1..=64).contains(&width), "multiplier width {width}");
        Self {
            width,
            n,
            a: 0,
            y: 0,
            sat: false,
            wires: [
                Wire { name: "a", width },
                Wire {
                    name: "sat",
                    width: 1,
                },
                Wire { name: "y", width },
            ],
        }
    }

    #[inline]
    pub fn eval(&mut self, a: u64) -> u64 {
        check_fits("multiplier", "a", a, self.width);
        self.a = a;
        let p = (a as u128) * (self.n as u128);
        let max = mask(self.width) as u128;
        self.sat = p > max;
        self.y = p.min(max) as u64;
        self.y
    }
}

impl Probed for Multiplier {
    fn wires(&self) -> &[Wire] {
        &self.wires
    }
    fn wire_value(&self, i: usize) -> u64 {
        [self.a, self.sat as u64, self.y][i]
    }
}

/// `lt = a < b`: threshold checks (occupancy against `T`, `X_off`, `X_on`).
#[derive(Debug, Clone)]
pub struct Comparator {
    width: u32,
    a: u64,
    b: u64,
    lt: bool,
    wires: [Wire; 3],
}

impl Comparator {
    pub fn new(width: u32) -> Self {
        assert!((1..=64).contains(&width), "comparator width {width}");
        Self {
            width,
            a: 0,
            b: 0,
            lt: false,
            wires: [
                Wire { name: "a", width },
                Wire { name: "b", width },
                Wire {
                    name: "lt",
                    width: 1,
                },
            ],
        }
    }

    #[inline]
    pub fn eval(&mut self, a: u64, b: u64) -> bool {
        check_fits("comparator", "a", a, self.width);
        check_fits("comparator", "b", b, self.width);
        self.a = a;
        self.b = b;
        self.lt = a < b;
        self.lt
    }
}

impl Probed for Comparator {
    fn wires(&self) -> &[Wire] {
        &self.wires
    }
    fn wire_value(&self, i: usize) -> u64 {
        [self.a, self.b, self.lt as u64][i]
    }
}

/// `y = a[0] | a[1] | ...`: the egress pause gate `QOFF[q] OR POFF[port]` of DSH IV-D, and
/// "any bit set" reductions over bitmaps.
#[derive(Debug, Clone)]
pub struct OrReduce {
    width: u32,
    a: u64,
    y: bool,
    wires: [Wire; 2],
}

impl OrReduce {
    pub fn new(width: u32) -> Self {
        assert!((1..=64).contains(&width), "or-reduce width {width}");
        Self {
            width,
            a: 0,
            y: false,
            wires: [
                Wire { name: "a", width },
                Wire {
                    name: "y",
                    width: 1,
                },
            ],
        }
    }

    #[inline]
    pub fn eval(&mut self, a: u64) -> bool {
        check_fits("or_reduce", "a", a, self.width);
        self.a = a;
        self.y = a != 0;
        self.y
    }
}

impl Probed for OrReduce {
    fn wires(&self) -> &[Wire] {
        &self.wires
    }
    fn wire_value(&self, i: usize) -> u64 {
        [self.a, self.y as u64][i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sat_sub_is_saturating_difference(a in 0u64..(1 << 21), b in 0u64..(1 << 21)) {
            let mut s = SatSub::new(21);
            let y = s.eval(a, b);
            prop_assert_eq!(y, (a as i64 - b as i64).max(0) as u64);
            prop_assert_eq!(s.borrow(), a < b);
            prop_assert_eq!(s.wire_value(3), y);
        }

        #[test]
        fn shifter_is_alpha_times_a(a in 0u64..(1 << 21), k in Shifter::K_MIN..=Shifter::K_MAX) {
            let mut s = Shifter::new(21, k).unwrap();
            let y = s.eval(a);
            let exact = if k >= 0 { (a << k).min((1 << 21) - 1) } else { a >> -k };
            prop_assert_eq!(y, exact);
        }

        #[test]
        fn multiplier_saturates(a in 0u64..(1 << 21), n in 1u64..16) {
            let mut m = Multiplier::new(24, n);
            prop_assert_eq!(m.eval(a), (a * n).min((1 << 24) - 1));
        }
    }

    #[test]
    fn shifter_range_is_enforced() {
        assert!(Shifter::new(20, -8).is_err());
        assert!(Shifter::new(20, 4).is_err());
        let err = Shifter::new(20, 4).unwrap_err().to_string();
        assert!(err.contains("2^4"), "{err}");
    }

    #[test]
    fn shifter_saturation_raises_sat() {
        let mut s = Shifter::new(8, 3).unwrap();
        assert_eq!(s.eval(40), 255);
        assert_eq!(s.wire_value(2), 1);
        assert_eq!(s.eval(31), 248);
        assert_eq!(s.wire_value(2), 0);
        // k = -1 is encoded as 4-bit two's complement 0b1111.
        let neg = Shifter::new(8, -1).unwrap();
        assert_eq!(neg.wire_value(1), 0xF);
    }

    #[test]
    fn borrow_at_zero_and_at_the_largest_count() {
        let mut s = SatSub::new(20);
        assert_eq!(s.eval(0, 1), 0);
        assert!(s.borrow());
        assert_eq!(s.eval((1 << 20) - 1, (1 << 20) - 1), 0);
        assert!(!s.borrow());
    }

    #[test]
    fn comparator_and_or_reduce() {
        let mut c = Comparator::new(8);
        assert!(c.eval(3, 4));
        assert!(!c.eval(4, 4));
        let mut o = OrReduce::new(2);
        assert!(!o.eval(0));
        assert!(o.eval(0b10));
    }
}
