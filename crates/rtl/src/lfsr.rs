//! A 32-bit Galois linear-feedback shift register: the random source of hardware blocks
//! (ECM's random sampling interval), reproducible from its seed.

/// Taps of `x^32 + x^22 + x^2 + x + 1`, a primitive polynomial: every non-zero seed
/// walks all `2^32 - 1` non-zero states.
const TAPS: u32 = 0x8020_0003;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lfsr32 {
    state: u32,
}

impl Lfsr32 {
    /// A register loaded with `seed` (0 is the lock-up state and is mapped to 1).
    pub fn new(seed: u32) -> Self {
        Self {
            state: if seed == 0 { 1 } else { seed },
        }
    }

    /// The register's value.
    #[inline]
    pub fn value(&self) -> u32 {
        self.state
    }

    /// One shift: the output bit leaves at bit 0 and, if set, the taps are XORed in.
    #[inline]
    pub fn step(&mut self) -> u32 {
        let out = self.state & 1;
        self.state >>= 1;
        if out != 0 {
            self.state ^= TAPS;
        }
        self.state
    }

    /// `n` shifts in one clock (a hardware LFSR unrolled `n` times), returning the new value.
    pub fn advance(&mut self, n: u32) -> u32 {
        for _ in 0..n {
            self.step();
        }
        self.state
    }

    /// A value uniform in `0..=max`: the high half of `(low 16 bits) * (max + 1)` after
    /// 16 fresh shifts, a small multiplier rather than a divider.
    pub fn draw(&mut self, max: u32) -> u32 {
        let r = self.advance(16) & 0xFFFF;
        ((r as u64 * (max as u64 + 1)) >> 16) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_seed_does_not_lock_up() {
        let mut l = Lfsr32::new(0);
        assert_ne!(l.step(), 0);
    }

    #[test]
    fn no_short_cycle_and_draws_cover_the_range() {
        let mut l = Lfsr32::new(0xACE1);
        let start = l.value();
        let mut hist = [0u32; 8];
        for _ in 0..100_000 {
            assert_ne!(l.step(), start, "cycle shorter than 100k");
        }
        for _ in 0..8_000 {
            hist[l.draw(7) as usize] += 1;
        }
        assert!(hist.iter().all(|&h| (800..1200).contains(&h)), "{hist:?}");
    }

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (Lfsr32::new(42), Lfsr32::new(42));
        assert_eq!(a.advance(1000), b.advance(1000));
    }
}
