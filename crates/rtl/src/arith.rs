//! The arithmetic units of DSH section IV-D, and L2BM's divider, one small block each.
//!
//! Each unit is combinational: `eval` computes its output from its inputs and remembers
//! every wire so a probe can show them. Widths are set at construction and every input is
//! checked against them (an input wider than its bus is a wiring bug in the model).

use crate::probe::{Probed, Visit};
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

    /// The inputs of the last evaluation, `(a, b)`.
    pub fn inputs(&self) -> (u64, u64) {
        (self.a, self.b)
    }
}

impl Probed for SatSub {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("a", self.width, self.a);
        v.wire("b", self.width, self.b);
        v.wire("borrow", 1, self.borrow as u64);
        v.wire("y", self.width, self.y);
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
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("a", self.width, self.a);
        // k as a 4-bit two's complement control input.
        v.wire("k", 4, (self.k as u64) & 0xF);
        v.wire("sat", 1, self.sat as u64);
        v.wire("y", self.width, self.y);
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

impl Multiplier {
    pub fn y(&self) -> u64 {
        self.y
    }
}

impl Probed for Multiplier {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("a", self.width, self.a);
        v.wire("sat", 1, self.sat as u64);
        v.wire("y", self.width, self.y);
    }
}

/// `lt = a < b`: threshold checks (occupancy against `T`, `X_off`, `X_on`).
#[derive(Debug, Clone)]
pub struct Comparator {
    width: u32,
    a: u64,
    b: u64,
    lt: bool,
}

impl Comparator {
    pub fn new(width: u32) -> Self {
        assert!((1..=64).contains(&width), "comparator width {width}");
        Self {
            width,
            a: 0,
            b: 0,
            lt: false,
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
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("a", self.width, self.a);
        v.wire("b", self.width, self.b);
        v.wire("lt", 1, self.lt as u64);
    }
}

/// `y = a[0] | a[1] | ...`: the egress pause gate `QOFF[q] OR POFF[port]` of DSH IV-D, and
/// "any bit set" reductions over bitmaps.
#[derive(Debug, Clone)]
pub struct OrReduce {
    width: u32,
    a: u64,
    y: bool,
}

impl OrReduce {
    pub fn new(width: u32) -> Self {
        assert!((1..=64).contains(&width), "or-reduce width {width}");
        Self {
            width,
            a: 0,
            y: false,
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
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("a", self.width, self.a);
        v.wire("y", 1, self.y as u64);
    }
}

/// Index bits of the reciprocal ROM: the mantissa of the divisor, rounded to this many
/// bits after its leading one, selects one of `2^RECIP_M` words.
pub const RECIP_M: u32 = 10;
/// Fraction bits of a reciprocal ROM word: `R[m] = round(2^RECIP_F / (1 + m / 2^RECIP_M))`,
/// a UQ1.16 value in `(1/2, 1]` (17 bits: `R[0] = 2^16`).
pub const RECIP_F: u32 = 16;

const fn recip_rom() -> [u32; 1 << RECIP_M] {
    let mut r = [0u32; 1 << RECIP_M];
    let mut m = 0;
    while m < (1 << RECIP_M) {
        let d = (1u64 << RECIP_M) + m as u64;
        r[m] = (((1u64 << (RECIP_F + RECIP_M)) + d / 2) / d) as u32;
        m += 1;
    }
    r
}

/// The reciprocal ROM of [`RecipDivider`]: 1024 words of 17 bits.
pub static RECIP_ROM: [u32; 1 << RECIP_M] = recip_rom();

/// `q = floor(a / x)` the way a pipeline without a divider does it: a leading-one detector
/// writes `x = 2^e * (1 + f)`, the fraction `f` is rounded to `RECIP_M` bits (`m`; a carry
/// out of the rounding bumps `e`), a ROM gives `R[m] ~ 2^RECIP_F / (1 + m / 2^RECIP_M)`,
/// and `q = (a * R[m]) >> (RECIP_F + e)` is one multiplier and one barrel shifter.
///
/// Error bound (derived in `docs/l2bm.md`, checked by `recip_divider_error_bound`): with
/// `eps = 2^-(M+1) + 2^-F + 2^-(M+1+F)` ([`RecipDivider::REL_ERROR`], about 5.04e-4 for
/// `M = 10`, `F = 16`),
/// `a/x * (1 - eps) - 1 < q <= a/x * (1 + eps)` before saturation. A divisor with at most
/// `M + 1` significant bits is not rounded, and only the ROM's `2^-F` remains.
///
/// `x = 0`, or a quotient wider than `q`'s bus, saturates `q` at its maximum and raises
/// `sat`.
#[derive(Debug, Clone)]
pub struct RecipDivider {
    a_width: u32,
    x_width: u32,
    q_width: u32,
    a: u64,
    x: u64,
    e: u32,
    m: u32,
    r: u32,
    sat: bool,
    q: u64,
}

impl RecipDivider {
    /// Relative error bound of the reciprocal, `2^-(M+1) + 2^-F + 2^-(M+1+F)`.
    pub const REL_ERROR: f64 = 1.0 / (1u64 << (RECIP_M + 1)) as f64
        + 1.0 / (1u64 << RECIP_F) as f64
        + 1.0 / (1u64 << (RECIP_M + 1 + RECIP_F)) as f64;

    pub fn new(a_width: u32, x_width: u32, q_width: u32) -> Self {
        for w in [a_width, x_width, q_width] {
            assert!((1..=64).contains(&w), "divider width {w}");
        }
        Self {
            a_width,
            x_width,
            q_width,
            a: 0,
            x: 0,
            e: 0,
            m: 0,
            r: 0,
            sat: false,
            q: 0,
        }
    }

    /// The normalised divisor: leading-one position `e` and the rounded mantissa index `m`
    /// (`x = 0` gives `(0, 0)`).
    #[inline]
    pub fn normalise(x: u64) -> (u32, u32) {
        if x == 0 {
            return (0, 0);
        }
        let e = 63 - x.leading_zeros();
        let frac = x - (1u64 << e);
        let (mut e, mut m) = if e <= RECIP_M {
            (e, (frac << (RECIP_M - e)) as u32)
        } else {
            let s = e - RECIP_M;
            (e, ((frac + (1u64 << (s - 1))) >> s) as u32)
        };
        if m == 1 << RECIP_M {
            e += 1;
            m = 0;
        }
        (e, m)
    }

    /// `floor(a / x)` as the unit computes it, saturated at `q_width` bits; also whether it
    /// saturated. Pure: the same function the probed [`eval`](Self::eval) uses.
    #[inline]
    pub fn quotient(a: u64, x: u64, q_width: u32) -> (u64, bool) {
        let max = mask(q_width);
        if x == 0 {
            return (max, true);
        }
        let (e, m) = Self::normalise(x);
        let r = RECIP_ROM[m as usize] as u128;
        let q = (a as u128 * r) >> (RECIP_F + e);
        if q > max as u128 {
            (max, true)
        } else {
            (q as u64, false)
        }
    }

    #[inline]
    pub fn eval(&mut self, a: u64, x: u64) -> u64 {
        check_fits("recip_divider", "a", a, self.a_width);
        check_fits("recip_divider", "x", x, self.x_width);
        let (e, m) = Self::normalise(x);
        let (q, sat) = Self::quotient(a, x, self.q_width);
        self.a = a;
        self.x = x;
        self.e = e;
        self.m = m;
        self.r = if x == 0 { 0 } else { RECIP_ROM[m as usize] };
        self.sat = sat;
        self.q = q;
        q
    }

    pub fn q(&self) -> u64 {
        self.q
    }

    pub fn sat(&self) -> bool {
        self.sat
    }
}

impl Probed for RecipDivider {
    fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("a", self.a_width, self.a);
        v.wire("x", self.x_width, self.x);
        // Leading-one position, 0..=63.
        v.wire("e", 6, self.e as u64);
        v.wire("m", RECIP_M, self.m as u64);
        v.wire("r", RECIP_F + 1, self.r as u64);
        v.wire("sat", 1, self.sat as u64);
        v.wire("q", self.q_width, self.q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::probes_of;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sat_sub_is_saturating_difference(a in 0u64..(1 << 21), b in 0u64..(1 << 21)) {
            let mut s = SatSub::new(21);
            let y = s.eval(a, b);
            prop_assert_eq!(y, (a as i64 - b as i64).max(0) as u64);
            prop_assert_eq!(s.borrow(), a < b);
            prop_assert_eq!(probes_of(&s)[3].2, y);
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
        assert_eq!(probes_of(&s)[2], ("sat".into(), 1, 1));
        assert_eq!(s.eval(31), 248);
        assert_eq!(probes_of(&s)[2].2, 0);
        // k = -1 is encoded as 4-bit two's complement 0b1111.
        let neg = Shifter::new(8, -1).unwrap();
        assert_eq!(probes_of(&neg)[1], ("k".into(), 4, 0xF));
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

    /// The documented bound of `RecipDivider`: `a/x (1 - eps) - 1 < q <= a/x (1 + eps)`,
    /// over random operands and every ROM word (one divisor per mantissa, at several
    /// exponents, plus the divisors that round up into the next binade).
    fn check_bound(a: u64, x: u64) -> Result<(), TestCaseError> {
        let (q, sat) = RecipDivider::quotient(a, x, 64);
        prop_assert!(!sat);
        let exact = a as f64 / x as f64;
        let eps = RecipDivider::REL_ERROR;
        // f64 has 53 bits: allow its own rounding on top.
        let slack = exact * 1e-12 + 1e-9;
        prop_assert!(
            (q as f64) <= exact * (1.0 + eps) + slack,
            "{a}/{x}: q = {q} above {}",
            exact * (1.0 + eps)
        );
        prop_assert!(
            (q as f64) > exact * (1.0 - eps) - 1.0 - slack,
            "{a}/{x}: q = {q} below {}",
            exact * (1.0 - eps) - 1.0
        );
        Ok(())
    }

    proptest! {
        #[test]
        fn recip_divider_error_bound(
            a in prop_oneof![0u64..1 << 20, 0u64..1 << 40, 0u64..1 << 62],
            x in prop_oneof![1u64..1 << 11, 1u64..1 << 21, 1u64..1 << 40, 1u64..=u64::MAX >> 1],
        ) {
            check_bound(a, x)?;
        }
    }

    #[test]
    fn recip_divider_bound_holds_for_every_rom_word() {
        let a = (1u64 << 50) + 12345;
        for m in 0..(1u64 << RECIP_M) {
            for e in [RECIP_M as u64, RECIP_M as u64 + 5, 30] {
                let x = ((1u64 << RECIP_M) + m) << (e - RECIP_M as u64);
                check_bound(a, x).unwrap();
                // Halfway and just below the next mantissa: the largest rounding.
                if e > RECIP_M as u64 {
                    let half = 1u64 << (e - RECIP_M as u64 - 1);
                    check_bound(a, x + half).unwrap();
                    check_bound(a, x + half - 1).unwrap();
                }
            }
        }
    }

    #[test]
    fn recip_divider_is_exact_for_short_divisors_and_saturates() {
        // x with at most M + 1 significant bits is not rounded: powers of two are exact.
        for e in 0..40 {
            assert_eq!(
                RecipDivider::quotient(1 << 45, 1 << e, 64),
                (1 << (45 - e), false)
            );
        }
        assert_eq!(RecipDivider::quotient(3000, 3, 64).0, 1000);
        assert_eq!(RecipDivider::quotient(2999, 3, 64).0, 999);
        let mut d = RecipDivider::new(40, 21, 10);
        assert_eq!(d.eval(5, 0), 1023);
        assert!(d.sat());
        assert_eq!(d.eval(1 << 30, 2), 1023, "quotient wider than q");
        assert!(d.sat());
        assert_eq!(d.eval(100, 7), 14);
        assert!(!d.sat());
        assert_eq!(probes_of(&d)[2].2, 2, "leading one of 7");
        assert_eq!(probes_of(&d)[3].2, 3 << 8, "7 = 2^2 * 1.75");
        // A carry out of the mantissa rounding bumps the exponent: 2^12 - 1 -> 2^12.
        assert_eq!(RecipDivider::normalise((1 << 12) - 1), (12, 0));
    }

    /// Each unit shows every wire by name, width and value: what a waveform of the unit
    /// holds, and what the RTL co-simulation compares.
    #[test]
    fn every_unit_probes_its_wires() {
        let wires = |v: &[(&str, u32, u64)]| -> Vec<(String, u32, u64)> {
            v.iter().map(|&(n, w, x)| (n.to_string(), w, x)).collect()
        };
        let mut s = SatSub::new(12);
        s.eval(5, 9);
        assert_eq!(
            probes_of(&s),
            wires(&[("a", 12, 5), ("b", 12, 9), ("borrow", 1, 1), ("y", 12, 0)])
        );
        let mut sh = Shifter::new(10, -2).unwrap();
        sh.eval(13);
        assert_eq!(
            probes_of(&sh),
            wires(&[("a", 10, 13), ("k", 4, 0b1110), ("sat", 1, 0), ("y", 10, 3)])
        );
        let mut m = Multiplier::new(9, 5);
        m.eval(200);
        assert_eq!(
            probes_of(&m),
            wires(&[("a", 9, 200), ("sat", 1, 1), ("y", 9, 511)])
        );
        let mut c = Comparator::new(7);
        c.eval(3, 90);
        assert_eq!(
            probes_of(&c),
            wires(&[("a", 7, 3), ("b", 7, 90), ("lt", 1, 1)])
        );
        let mut o = OrReduce::new(3);
        o.eval(0b100);
        assert_eq!(probes_of(&o), wires(&[("a", 3, 0b100), ("y", 1, 1)]));
        let mut d = RecipDivider::new(40, 21, 10);
        d.eval(100, 7);
        assert_eq!(
            probes_of(&d),
            wires(&[
                ("a", 40, 100),
                ("x", 21, 7),
                ("e", 6, 2),
                ("m", 10, 3 << 8),
                ("r", 17, RECIP_ROM[3 << 8] as u64),
                ("sat", 1, 0),
                ("q", 10, 14),
            ])
        );
        // A zero divisor reads no ROM word.
        d.eval(100, 0);
        assert_eq!(probes_of(&d)[4], ("r".into(), 17, 0));
    }

    #[test]
    fn units_hold_their_last_evaluation() {
        let mut s = SatSub::new(8);
        s.eval(200, 13);
        assert_eq!((s.inputs(), s.y(), s.borrow()), ((200, 13), 187, false));
        let mut sh = Shifter::new(8, 2).unwrap();
        sh.eval(21);
        assert_eq!((sh.k(), sh.y()), (2, 84));
        assert_eq!(Shifter::new(8, -3).unwrap().k(), -3);
        let mut m = Multiplier::new(8, 3);
        m.eval(21);
        assert_eq!(m.y(), 63);
        let mut d = RecipDivider::new(20, 20, 20);
        d.eval(1000, 10);
        assert_eq!((d.q(), d.sat()), (100, false));
    }

    /// An output of exactly the bus maximum fits: only a larger one saturates.
    #[test]
    fn an_output_of_exactly_the_bus_maximum_does_not_saturate() {
        let mut sh = Shifter::new(8, 0).unwrap();
        assert_eq!(sh.eval(255), 255);
        assert_eq!(probes_of(&sh)[2].2, 0, "shifter sat");
        let mut m = Multiplier::new(8, 3);
        assert_eq!(m.eval(85), 255);
        assert_eq!(probes_of(&m)[1].2, 0, "multiplier sat");
        assert_eq!(RecipDivider::quotient(1023, 1, 10), (1023, false));
        assert_eq!(RecipDivider::quotient(1024, 1, 10), (1023, true));
    }

    /// Every ROM word is `2^26 / (1024 + m)` rounded to the nearest integer (no word is a
    /// tie: `1024 + m` divides `2^27` only for `m = 0`, where the quotient is exact).
    #[test]
    fn recip_rom_words_round_to_nearest() {
        for (m, &r) in RECIP_ROM.iter().enumerate() {
            let exact = (1u64 << (RECIP_F + RECIP_M)) as f64 / ((1 << RECIP_M) + m) as f64;
            assert_eq!(r, exact.round() as u32, "R[{m}]");
        }
        // Known answers (Python: round(2**26 / (1024 + m))), two of them rounded up.
        assert_eq!(
            [0, 1, 3, 512, 1023].map(|m| RECIP_ROM[m]),
            [65536, 65472, 65345, 43691, 32784]
        );
    }

    #[test]
    fn rel_error_is_the_documented_sum() {
        // 2^-11 + 2^-16 + 2^-27, exact in f64.
        assert_eq!(RecipDivider::REL_ERROR, 0.000_503_547_489_643_096_9);
    }

    /// An input wider than its bus is a wiring bug of the model, caught where debug
    /// assertions are on (the test profile).
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "sat_sub.a = 256 does not fit in 8 bits")]
    fn an_input_wider_than_its_bus_panics() {
        SatSub::new(8).eval(256, 0);
    }

    #[test]
    fn a_64_bit_bus_takes_every_value() {
        let mut s = SatSub::new(64);
        assert_eq!(s.eval(u64::MAX, 1), u64::MAX - 1);
        let mut sh = Shifter::new(64, 1).unwrap();
        assert_eq!(sh.eval(u64::MAX), u64::MAX);
        assert_eq!(probes_of(&sh)[2].2, 1);
    }
}
