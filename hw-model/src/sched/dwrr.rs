//! Egress scheduler of one port: strict priority for the control queue, Deficit Weighted
//! Round Robin (Shreedhar and Varghese) for the rest.
//!
//! A queue's turn adds one quantum to its deficit; it sends head packets while the head
//! fits in the deficit, then the pointer moves on to the next eligible queue. A queue that
//! goes empty loses its deficit; a paused queue keeps it and is skipped. The decision is
//! combinational over at most eight queues and as many rounds as a packet larger than the
//! quantum needs. With one queue eligible, its turns follow one another: the pick adds
//! the quanta its head needs without stepping the pointer.

use rtl::Visit;

#[derive(Debug, Clone)]
pub struct Dwrr {
    quantum: u32,
    /// Turns a queue needs at most to send a head of up to 65535 bytes from no deficit:
    /// `ceil(65535 / quantum)`. A pick takes at most `eligible * turns + 1` steps (each
    /// step but the first lands on an eligible queue and gives it a quantum, in turn).
    turns: u32,
    control: u8,
    ptr: u8,
    turn_open: bool,
    deficit: [u32; 8],
}

impl Dwrr {
    pub fn new(quantum_bytes: u32, control_queue: u8) -> Self {
        Self {
            quantum: quantum_bytes,
            turns: (u16::MAX as u32).div_ceil(quantum_bytes),
            control: control_queue,
            ptr: 0,
            turn_open: false,
            deficit: [0; 8],
        }
    }

    pub fn deficit(&self, q: usize) -> u32 {
        self.deficit[q]
    }

    /// Pick the queue to send next. `eligible`: the queues that may send now (nonempty,
    /// head ready, not paused); `head_len(q)`: head packet bytes.
    pub fn pick(&mut self, eligible: u8, head_len: impl Fn(usize) -> u32) -> Option<usize> {
        let c = self.control as usize;
        if eligible & (1 << c) != 0 {
            return Some(c);
        }
        let rr = eligible & !(1 << c);
        if rr == 0 {
            return None;
        }
        if rr & (rr - 1) == 0 {
            let q = rr.trailing_zeros() as usize;
            return Some(self.pick_only(q, head_len(q)));
        }
        for _ in 0..rr.count_ones() * self.turns + 1 {
            let q = self.ptr as usize;
            if rr & (1 << q) != 0 {
                if !self.turn_open {
                    self.deficit[q] += self.quantum;
                    self.turn_open = true;
                }
                let len = head_len(q);
                if len <= self.deficit[q] {
                    self.deficit[q] -= len;
                    return Some(q);
                }
            }
            // The pointer goes straight to the next eligible queue: the queues it passes
            // change nothing, a paused one keeps its deficit and an empty one has none
            // (its deficit went to 0 with the dequeue that emptied it, `queue_emptied`).
            let after = rr.rotate_right((q as u32 + 1) % 8);
            self.ptr = ((q as u32 + 1 + after.trailing_zeros()) % 8) as u8;
            self.turn_open = false;
        }
        unreachable!("DWRR found no packet within the bounded number of rounds")
    }

    /// The pick when `q` is the only eligible queue, with head `len` bytes: the pointer
    /// lands on it (a new turn if it was elsewhere) and each turn that cannot send moves
    /// the pointer back to it, with a new quantum.
    #[inline(always)]
    fn pick_only(&mut self, q: usize, len: u32) -> usize {
        if self.ptr as usize != q {
            self.ptr = q as u8;
            self.turn_open = false;
        }
        if !self.turn_open {
            self.deficit[q] += self.quantum;
            self.turn_open = true;
        }
        while len > self.deficit[q] {
            self.deficit[q] += self.quantum;
        }
        self.deficit[q] -= len;
        q
    }

    /// A queue that went empty after a dequeue forfeits its deficit.
    pub fn queue_emptied(&mut self, q: usize) {
        self.deficit[q] = 0;
    }

    /// `egress.pNN.qQ.deficit`, 17 bits.
    pub fn probe_queue<V: Visit>(&self, q: usize, v: &mut V) {
        v.wire("deficit", 17, self.deficit[q] as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_queue_has_strict_priority() {
        let mut s = Dwrr::new(1600, 7);
        assert_eq!(s.pick(0xFF, |_| 1500), Some(7));
    }

    #[test]
    fn equal_quanta_share_bytes_equally() {
        let mut s = Dwrr::new(1600, 7);
        let lens = [1500u32, 300, 64, 0, 0, 0, 0, 0];
        let mut bytes = [0u64; 8];
        for _ in 0..30_000 {
            let q = s.pick(0b111, |q| lens[q]).unwrap();
            bytes[q] += lens[q] as u64;
        }
        let (a, b, c) = (bytes[0] as f64, bytes[1] as f64, bytes[2] as f64);
        assert!(
            (a / b - 1.0).abs() < 0.02 && (b / c - 1.0).abs() < 0.02,
            "{bytes:?}"
        );
    }

    #[test]
    fn paused_queue_is_skipped() {
        let mut s = Dwrr::new(1600, 7);
        for _ in 0..10 {
            assert_eq!(s.pick(0b10, |_| 1000), Some(1));
        }
    }

    /// The walk of the pointer one queue at a time (the scheduler before it jumped to the
    /// next eligible queue), zeroing the deficit of each empty queue it passes.
    fn pick_by_walking(s: &mut Dwrr, nonempty: u8, eligible: u8, len: &[u32; 8]) -> usize {
        let c = s.control as usize;
        if eligible & (1 << c) != 0 {
            return c;
        }
        let rr = eligible & !(1 << c);
        loop {
            let q = s.ptr as usize;
            if rr & (1 << q) != 0 {
                if !s.turn_open {
                    s.deficit[q] += s.quantum;
                    s.turn_open = true;
                }
                if len[q] <= s.deficit[q] {
                    s.deficit[q] -= len[q];
                    return q;
                }
            } else if nonempty & (1 << q) == 0 {
                s.deficit[q] = 0;
            }
            s.ptr = (s.ptr + 1) % 8;
            s.turn_open = false;
        }
    }

    #[test]
    fn jumping_to_the_next_eligible_queue_is_the_walk() {
        let (mut fast, mut walk) = (Dwrr::new(300, 7), Dwrr::new(300, 7));
        let mut lfsr = rtl::Lfsr32::new(12);
        let mut packets = [0u32; 8];
        for _ in 0..20_000 {
            let q = lfsr.draw(7) as usize;
            packets[q] += 1;
            let nonempty = (0..8).fold(0u8, |m, q| m | ((packets[q] > 0) as u8) << q);
            let eligible = nonempty & lfsr.draw(255) as u8;
            if eligible == 0 {
                continue;
            }
            let len = std::array::from_fn(|q| 64 + 97 * q as u32 * (1 + lfsr.draw(3)));
            let picked = fast.pick(eligible, |q| len[q]);
            assert_eq!(
                picked,
                Some(pick_by_walking(&mut walk, nonempty, eligible, &len))
            );
            let q = picked.unwrap();
            packets[q] -= 1;
            if packets[q] == 0 {
                fast.queue_emptied(q);
                walk.queue_emptied(q);
            }
            assert_eq!((fast.deficit, fast.ptr), (walk.deficit, walk.ptr));
        }
    }

    /// The longest pick: seven queues eligible, every head 65535 bytes, no deficit, the
    /// pointer on a queue whose turn is open (a step without a quantum). It needs
    /// `7 * (turns - 1) + 2` steps; a bound one step below `eligible * (turns - 1) + 2`
    /// would end in `unreachable!`.
    #[test]
    fn the_step_bound_covers_the_longest_pick() {
        let mut s = Dwrr::new(64, 7);
        s.turn_open = true;
        assert_eq!(s.pick(0x7F, |_| u16::MAX as u32), Some(1));
        assert_eq!(s.deficit[1], 1024 * 64 - u16::MAX as u32);
        assert_eq!(s.deficit[0], 1023 * 64);
    }

    #[test]
    fn packet_larger_than_quantum_is_served_after_enough_rounds() {
        let mut s = Dwrr::new(64, 7);
        assert_eq!(s.pick(1, |_| 9000), Some(0));
    }
}
