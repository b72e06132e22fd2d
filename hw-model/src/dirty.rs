//! The signal blocks a cycle touched: each block of the model marks the signal blocks it
//! changes ([`Dirty`]), and a waveform writer samples only those (`probes.rs`). A leaf,
//! so that every block can mark without knowing the probes.

use crate::config::MAX_PORTS;
use crate::ports::mask;

/// Words of [`DirtyWords`]: the `1 + 2 * MAX_PORTS` blocks of the largest switch.
const DIRTY_WORDS: usize = (1 + 2 * MAX_PORTS).div_ceil(64);

/// Signal blocks touched in a cycle, kept as one bit for the global block and one port
/// set each for the ingress and the egress blocks: marking a block is one `or` into a
/// register, with no block number computed. The words a waveform writer reads
/// ([`DirtyWords`]) are assembled only when asked for.
#[derive(Debug, Clone)]
pub struct Dirty {
    global: bool,
    ingress: u64,
    egress: u64,
    ports: usize,
}

impl Dirty {
    pub fn new(ports: usize) -> Self {
        Self {
            global: false,
            ingress: 0,
            egress: 0,
            ports,
        }
    }

    /// Nothing changed yet (a new cycle, or a jump over idle cycles).
    #[inline]
    pub fn clear(&mut self) {
        self.global = false;
        self.ingress = 0;
        self.egress = 0;
    }

    /// The global block: the DT units, the policy's pool-wide units, the buffer totals.
    #[inline]
    pub fn global(&mut self) {
        self.global = true;
    }

    #[inline]
    pub fn ingress(&mut self, p: usize) {
        self.ingress |= 1 << p;
    }

    #[inline]
    pub fn egress(&mut self, p: usize) {
        self.egress |= 1 << p;
    }

    #[inline]
    pub fn ingress_ports(&mut self, ports: u64) {
        self.ingress |= ports;
    }

    #[inline]
    pub fn egress_ports(&mut self, ports: u64) {
        self.egress |= ports;
    }

    pub fn all_ingress(&mut self) {
        self.ingress |= mask(self.ports);
    }

    /// The touched blocks as words: bit `b % 64` of word `b / 64` for block `b` (0 global,
    /// `1 + p` ingress port `p`, `1 + ports + p` egress port `p`).
    pub fn words(&self) -> DirtyWords {
        let ports = self.ports;
        let low = self.global as u128
            | (self.ingress as u128) << 1
            | (self.egress as u128) << (1 + ports);
        // Egress bits at 128 and above (a switch of 64 ports: its port 63).
        let high = if 1 + 2 * ports > 128 {
            self.egress >> (127 - ports)
        } else {
            0
        };
        let mut bits = [low as u64, (low >> 64) as u64, high];
        let len = (1 + 2 * ports).div_ceil(64);
        bits[len..].fill(0);
        DirtyWords { bits, len }
    }
}

/// The signal blocks touched at the last edge, as words ([`Dirty::words`]); derefs to the
/// slice of the switch's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirtyWords {
    bits: [u64; DIRTY_WORDS],
    len: usize,
}

impl std::ops::Deref for DirtyWords {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        &self.bits[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each block, marked alone, is its own bit `b % 64` of word `b / 64` and nothing else,
    /// for every switch size (a 64-port switch has egress bits in a third word).
    #[test]
    fn words_put_each_block_at_its_bit() {
        for ports in 1..=MAX_PORTS {
            let blocks = 1 + 2 * ports;
            for b in 0..blocks {
                let mut d = Dirty::new(ports);
                match b {
                    0 => d.global(),
                    b if b <= ports => d.ingress(b - 1),
                    b => d.egress(b - 1 - ports),
                }
                let words = d.words();
                assert_eq!(words.len(), blocks.div_ceil(64), "{ports} ports");
                for (w, &word) in words.iter().enumerate() {
                    let want = if w == b / 64 { 1 << (b % 64) } else { 0 };
                    assert_eq!(word, want, "{ports} ports, block {b}, word {w}");
                }
                d.clear();
                assert!(d.words().iter().all(|&w| w == 0));
            }
        }
    }
}
