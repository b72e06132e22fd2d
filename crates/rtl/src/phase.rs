//! Exact fractional rates in whole clock cycles.
//!
//! A 100 Gb/s port on a 1 GHz core moves 100 bits per cycle, a 208-byte cell every 16.64
//! cycles. The accumulator adds the line rate every cycle and lets a transfer of `bits`
//! complete once `bits * clock_hz` has been collected, so the long-run rate is exact and
//! no rounding error builds up, whatever the ratio of line rate to core clock.

/// A rate expressed as bits per cycle, kept as the exact fraction `step / unit` bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseAccumulator {
    acc: u64,
    step: u64,
    unit: u64,
    /// `ceil(2^64 / step)` for a `step` in `2..2^32`, else 0: `floor(x / step)` of an `x`
    /// below `2^32` is then `(x * inv) >> 64`, a multiply instead of a division (Lemire,
    /// Kaser and Kurz, "Faster remainder by direct computation", 2019, Theorem 1 with
    /// `F = 64 >= N + L`, `N = 32`, `L = ceil(log2 step) <= 32`).
    inv: u64,
}

const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl PhaseAccumulator {
    /// A line of `rate_bps` clocked at `clock_hz`. Both must be non-zero.
    pub fn new(rate_bps: u64, clock_hz: u64) -> Self {
        assert!(
            rate_bps > 0 && clock_hz > 0,
            "rate and clock must be non-zero"
        );
        let g = gcd(rate_bps, clock_hz);
        let step = rate_bps / g;
        Self {
            acc: 0,
            step,
            unit: clock_hz / g,
            inv: if (2..1 << 32).contains(&step) {
                u64::MAX / step + 1
            } else {
                0
            },
        }
    }

    /// One clock cycle of transfer.
    #[inline]
    pub fn tick(&mut self) {
        self.acc += self.step;
    }

    /// `cycles` clock cycles of transfer at once (a line skipped while nothing happens).
    #[inline]
    pub fn advance(&mut self, cycles: u64) {
        self.acc += self.step * cycles;
    }

    /// Whole bits transferred and not yet consumed.
    #[inline]
    pub fn bits(&self) -> u64 {
        self.acc / self.unit
    }

    /// Whether at least `bits` have been transferred (no division: the cycle loop's test).
    #[inline]
    pub fn reached(&self, bits: u64) -> bool {
        self.acc >= bits * self.unit
    }

    /// Ticks still needed until `reached(bits)`; zero if already there. Without a
    /// division when the shortfall fits 32 bits (`inv`), the case of every packet on a
    /// line whose rate and clock are in whole Mb/s and MHz.
    #[inline]
    pub fn ticks_until(&self, bits: u64) -> u64 {
        let x = (bits * self.unit).saturating_sub(self.acc);
        if self.inv != 0 && x >> 32 == 0 {
            let q = ((x as u128 * self.inv as u128) >> 64) as u64;
            q + (q * self.step != x) as u64
        } else {
            x.div_ceil(self.step)
        }
    }

    /// Take `bits` out of the accumulator, keeping the fractional remainder so the next
    /// transfer on a busy line starts exactly where this one ended.
    #[inline]
    pub fn consume(&mut self, bits: u64) {
        let cost = bits * self.unit;
        debug_assert!(cost <= self.acc, "consumed more bits than transferred");
        self.acc -= cost;
    }

    /// Forget any fractional remainder: an idle line cannot bank credit.
    #[inline]
    pub fn clear(&mut self) {
        self.acc = 0;
    }

    /// Cycles (rounded up) to move `bits` from a cleared accumulator.
    pub fn cycles_for(&self, bits: u64) -> u64 {
        (bits * self.unit).div_ceil(self.step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_run_rate_is_exact() {
        // 100 Gb/s at 1 GHz: 1000 cells of 208 B take exactly 16640 cycles.
        let mut p = PhaseAccumulator::new(100_000_000_000, 1_000_000_000);
        let mut cells = 0;
        let mut cycles = 0u64;
        while cells < 1000 {
            p.tick();
            cycles += 1;
            if p.bits() >= 208 * 8 {
                p.consume(208 * 8);
                cells += 1;
            }
        }
        assert_eq!(cycles, 16_640);
    }

    #[test]
    fn mixed_speeds_keep_their_ratio() {
        let mut slow = PhaseAccumulator::new(100_000_000_000, 1_250_000_000);
        let mut fast = PhaseAccumulator::new(400_000_000_000, 1_250_000_000);
        let (mut ns, mut nf) = (0, 0);
        for _ in 0..1_000_000 {
            slow.tick();
            fast.tick();
            while slow.bits() >= 512 {
                slow.consume(512);
                ns += 1;
            }
            while fast.bits() >= 512 {
                fast.consume(512);
                nf += 1;
            }
        }
        assert_eq!(
            nf,
            4 * ns,
            "400G must move exactly four times the cells of 100G"
        );
    }

    #[test]
    fn ticks_until_agrees_with_ticking() {
        let mut p = PhaseAccumulator::new(100_000_000_000, 1_000_000_000);
        p.tick();
        let n = p.ticks_until(1664);
        let mut q = p;
        q.advance(n - 1);
        assert!(!q.reached(1664));
        q.tick();
        assert!(q.reached(1664));
        assert_eq!(q.ticks_until(1664), 0);
    }

    /// The multiply in place of the division gives `div_ceil`'s answer for steps from 1 to
    /// the largest, shortfalls at and around every multiple boundary, the largest 32-bit
    /// one and the first that takes the division.
    #[test]
    fn ticks_until_without_division_is_div_ceil() {
        let steps = [1, 2, 3, 7, 64, 100, 625, 12_345, 1 << 31, u32::MAX as u64];
        for step in steps.into_iter().chain([1 << 32, u64::MAX >> 8]) {
            // A clock of 1 Hz: `unit` 1, so `ticks_until(bits)` is `ceil((bits - acc) / step)`.
            let p = PhaseAccumulator::new(step, 1);
            assert_eq!(p.step, step);
            let mut xs = vec![0, 1, u32::MAX as u64 - 1, u32::MAX as u64, 1 << 32];
            for k in [1, 2, 3, 1000, (u32::MAX as u64 / step).max(1)] {
                if let Some(m) = k.checked_mul(step) {
                    xs.extend([m - 1, m, m + 1]);
                }
            }
            let mut lfsr = crate::Lfsr32::new(step as u32 | 1);
            xs.extend((0..2000).map(|_| lfsr.draw(u32::MAX) as u64));
            for x in xs {
                assert_eq!(p.ticks_until(x), x.div_ceil(step), "step {step}, x {x}");
            }
            let mut q = p;
            q.tick();
            assert_eq!(q.ticks_until(step * 5 + 1), 5, "step {step}, one tick in");
        }
    }

    #[test]
    fn cycles_for_rounds_up() {
        let p = PhaseAccumulator::new(100_000_000_000, 1_000_000_000);
        assert_eq!(p.cycles_for(1000 * 208 * 8), 16_640);
        assert_eq!(p.cycles_for(208 * 8), 17, "16.64 cycles round up to 17");
    }
}
