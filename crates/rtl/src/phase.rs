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
        Self {
            acc: 0,
            step: rate_bps / g,
            unit: clock_hz / g,
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

    /// Ticks still needed until `reached(bits)`; zero if already there.
    #[inline]
    pub fn ticks_until(&self, bits: u64) -> u64 {
        (bits * self.unit)
            .saturating_sub(self.acc)
            .div_ceil(self.step)
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

    #[test]
    fn cycles_for_rounds_up() {
        let p = PhaseAccumulator::new(100_000_000_000, 1_000_000_000);
        assert_eq!(p.cycles_for(1000 * 208 * 8), 16_640);
        assert_eq!(p.cycles_for(208 * 8), 17, "16.64 cycles round up to 17");
    }
}
