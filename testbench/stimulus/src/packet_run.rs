//! Packet runs: what a source hands to its link partner at once (a burst, a `poisson`
//! message, one packet of a rate or TCP flow), generated one packet at a time as the
//! partner's transmitter or a rate limiter takes them.
//!
//! A run holds its next packet and a description of the rest (a count, the bytes left),
//! never the packets themselves, so a 2^40-byte burst costs what one packet does. The
//! packets, their sizes and the order of the random draws are exactly those of handing
//! every packet over when the source fires: a burst with drawn sizes owns the flow's
//! random stream, which the flow never draws from again.
//!
//! [`RunQueue`] is the FIFO of runs of a partner's class queue and of a limiter: a single
//! packet that continues the run at the tail (same flow and length, next `seq`) joins it,
//! so one flow's backlog is one entry. Interleaved packets of several flows cost one entry
//! each, the size of a packet header (40 bytes).

use crate::source::{draw_steps, unit};
use hw_model::PacketHdr;
use rand_chacha::ChaCha8Rng;
use scenario::MIN_PACKET_BYTES;
use std::collections::VecDeque;

/// Packets of one flow, handed over together, in `seq` order: a single packet inline (no
/// larger than its header), more behind a box.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketRun(Run);

#[derive(Debug, Clone, PartialEq)]
enum Run {
    One(PacketHdr),
    Many(Box<Many>),
}

#[derive(Debug, Clone, PartialEq)]
struct Many {
    /// The next packet.
    head: PacketHdr,
    /// The packets after it.
    rest: Rest,
}

#[derive(Debug, Clone, PartialEq)]
enum Rest {
    /// This many more packets of the head's length.
    Same(u64),
    /// A message: `left` more bytes in packets of at most `mtu` bytes; a shorter last
    /// packet is padded to the minimum frame.
    Cut { left: u64, mtu: u32 },
    /// Drawn sizes: more packets until `left` more bytes are covered.
    Drawn { left: u64, sizes: Box<StepSizes> },
}

/// Sizes drawn from a step CDF on a flow's random stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSizes {
    pub rng: ChaCha8Rng,
    pub cdf: Vec<(u32, f64)>,
}

impl StepSizes {
    pub fn draw(&mut self) -> u32 {
        let u = unit(&mut self.rng);
        draw_steps(&self.cdf, u)
    }
}

impl From<PacketHdr> for PacketRun {
    /// A run of one packet.
    fn from(head: PacketHdr) -> Self {
        Self(Run::One(head))
    }
}

impl PacketRun {
    fn many(head: PacketHdr, rest: Rest) -> Self {
        match rest {
            Rest::Same(0) | Rest::Cut { left: 0, .. } | Rest::Drawn { left: 0, .. } => head.into(),
            rest => Self(Run::Many(Box::new(Many { head, rest }))),
        }
    }

    /// `count >= 1` packets of `head.len` bytes, `seq` counting up from `head.seq`.
    pub fn repeat(head: PacketHdr, count: u64) -> Self {
        debug_assert!(count >= 1);
        Self::many(head, Rest::Same(count - 1))
    }

    /// A message of `bytes >= 1` cut into packets of at most `mtu` bytes (the last one at
    /// least the minimum frame); `template.len` is ignored.
    pub fn message(template: PacketHdr, bytes: u64, mtu: u32) -> Self {
        let first = bytes.min(mtu as u64);
        let head = PacketHdr {
            len: (first as u32).max(MIN_PACKET_BYTES) as u16,
            ..template
        };
        let left = bytes - first;
        Self::many(head, Rest::Cut { left, mtu })
    }

    /// Packets with sizes from `sizes` until they total at least `bytes >= 1`;
    /// `template.len` is ignored.
    pub fn drawn(template: PacketHdr, bytes: u64, mut sizes: StepSizes) -> Self {
        let first = sizes.draw();
        let head = PacketHdr {
            len: first as u16,
            ..template
        };
        let left = bytes.saturating_sub(first as u64);
        let sizes = Box::new(sizes);
        Self::many(head, Rest::Drawn { left, sizes })
    }

    /// Packets of a message of `bytes` cut at `mtu` (as [`message`](Self::message) does).
    pub fn message_packets(bytes: u64, mtu: u32) -> u64 {
        bytes.div_ceil(mtu as u64)
    }

    /// The next packet.
    pub fn head(&self) -> &PacketHdr {
        match &self.0 {
            Run::One(h) => h,
            Run::Many(m) => &m.head,
        }
    }

    /// The packet, if the run is a single one.
    #[inline]
    pub fn single(&self) -> Option<&PacketHdr> {
        match &self.0 {
            Run::One(h) => Some(h),
            Run::Many(_) => None,
        }
    }

    /// Packets in the run. Drawn sizes are drawn ahead on a copy of the random stream, so
    /// that costs time in proportion to the packets (once, when a rate limiter takes the
    /// run).
    pub fn packets(&self) -> u64 {
        let Run::Many(m) = &self.0 else { return 1 };
        match &m.rest {
            Rest::Same(n) => 1 + n,
            Rest::Cut { left, mtu } => 1 + Self::message_packets(*left, *mtu),
            Rest::Drawn { left, sizes } => {
                let mut ahead = sizes.clone();
                let mut n = 1;
                let mut left = *left;
                while left > 0 {
                    left = left.saturating_sub(ahead.draw() as u64);
                    n += 1;
                }
                n
            }
        }
    }

    /// Packets of one header (`seq` counting up), if the run is that.
    fn repeats(&self) -> Option<u64> {
        match &self.0 {
            Run::One(_) => Some(1),
            Run::Many(m) => match m.rest {
                Rest::Same(n) => Some(1 + n),
                _ => None,
            },
        }
    }

    /// Hand out the next packet, and whether more follow.
    fn take(&mut self) -> (PacketHdr, bool) {
        let m = match &mut self.0 {
            Run::One(h) => return (*h, false),
            Run::Many(m) => m,
        };
        let out = m.head;
        let len = match &mut m.rest {
            Rest::Same(0) | Rest::Cut { left: 0, .. } | Rest::Drawn { left: 0, .. } => {
                return (out, false)
            }
            Rest::Same(n) => {
                *n -= 1;
                out.len as u32
            }
            Rest::Cut { left, mtu } => {
                let len = (*left).min(*mtu as u64);
                *left -= len;
                (len as u32).max(MIN_PACKET_BYTES)
            }
            Rest::Drawn { left, sizes } => {
                let len = sizes.draw();
                *left = left.saturating_sub(len as u64);
                len
            }
        };
        m.head.seq = m.head.seq.wrapping_add(1);
        m.head.len = len as u16;
        (out, true)
    }

    /// Append `next` if it continues this run exactly: both repeat one header, `next`
    /// starts at the `seq` after this run's last packet. Otherwise hand it back.
    fn join(&mut self, next: PacketRun) -> Option<PacketRun> {
        let (Some(a), Some(b)) = (self.repeats(), next.repeats()) else {
            return Some(next);
        };
        let head = *self.head();
        let seq = head.seq.wrapping_add(a as u32);
        if *next.head() != (PacketHdr { seq, ..head }) {
            return Some(next);
        }
        match &mut self.0 {
            Run::Many(m) => m.rest = Rest::Same(a + b - 1),
            Run::One(_) => *self = Self::repeat(head, a + b),
        }
        None
    }
}

/// A FIFO of packet runs; see the module doc.
///
/// The first run is held apart from the others: a queue of one run (a partner's class
/// queue between packets at line rate, one packet handed over and taken in the same cycle)
/// is a slot written and emptied, without the ring buffer's bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct RunQueue {
    /// The first run; `None` only when the queue is empty.
    first: Option<PacketRun>,
    /// The runs after it.
    rest: VecDeque<PacketRun>,
}

impl RunQueue {
    /// A queue with room for `runs` runs before it allocates.
    pub fn with_capacity(runs: usize) -> Self {
        Self {
            first: None,
            rest: VecDeque::with_capacity(runs.saturating_sub(1)),
        }
    }

    /// Append a run, joining it to the tail run if it continues it.
    pub fn push(&mut self, run: PacketRun) {
        let Some(first) = &mut self.first else {
            self.first = Some(run);
            return;
        };
        let tail = self.rest.back_mut().unwrap_or(first);
        if let Some(run) = tail.join(run) {
            self.rest.push_back(run);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Runs held (not packets).
    pub fn runs(&self) -> usize {
        self.first.is_some() as usize + self.rest.len()
    }

    /// The next packet.
    pub fn head(&self) -> Option<&PacketHdr> {
        self.first.as_ref().map(PacketRun::head)
    }

    /// Take the next packet.
    pub fn take(&mut self) -> Option<PacketHdr> {
        let (hdr, more) = self.first.as_mut()?.take();
        if !more {
            self.first = self.rest.pop_front();
        }
        Some(hdr)
    }

    /// Take the whole first run.
    pub fn take_run(&mut self) -> Option<PacketRun> {
        let run = self.first.take()?;
        self.first = self.rest.pop_front();
        Some(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_model::FiveTuple;
    use rand_chacha::rand_core::SeedableRng;

    fn hdr(flow: u32, seq: u32, len: u16) -> PacketHdr {
        PacketHdr {
            flow,
            seq,
            src: 0,
            dst: 1,
            prio: 3,
            len,
            tuple: FiveTuple::for_flow(flow, 0, 1, FiveTuple::UDP),
            cm_tag: None,
            ecn: hw_model::Ecn::NotEct,
        }
    }

    fn drain(q: &mut RunQueue) -> Vec<(u32, u32, u16)> {
        std::iter::from_fn(|| q.take())
            .map(|h| (h.flow, h.seq, h.len))
            .collect()
    }

    #[test]
    fn a_message_is_cut_into_mtu_packets_with_a_padded_tail() {
        let run = PacketRun::message(hdr(2, u32::MAX, 0), 3010, 1500);
        assert_eq!(run.packets(), 3);
        let mut q = RunQueue::default();
        q.push(run);
        assert_eq!(
            drain(&mut q),
            [(2, u32::MAX, 1500), (2, 0, 1500), (2, 1, 64)],
            "seq wraps, the 10-byte tail is padded to 64"
        );
        assert!(q.is_empty());
    }

    #[test]
    fn drawn_sizes_are_the_draws_of_the_stream_in_order() {
        let cdf = vec![(64, 0.3), (700, 0.6), (1500, 1.0)];
        let rng = ChaCha8Rng::seed_from_u64(9);
        let mut direct = StepSizes {
            rng: rng.clone(),
            cdf: cdf.clone(),
        };
        let (mut expect, mut sent) = (Vec::new(), 0u64);
        while sent < 20_000 {
            let len = direct.draw();
            expect.push((0, expect.len() as u32, len as u16));
            sent += len as u64;
        }
        let run = PacketRun::drawn(hdr(0, 0, 0), 20_000, StepSizes { rng, cdf });
        assert_eq!(run.packets(), expect.len() as u64);
        let mut q = RunQueue::default();
        q.push(run);
        assert_eq!(drain(&mut q), expect);
    }

    #[test]
    fn single_packets_join_the_tail_only_when_they_continue_it() {
        let mut q = RunQueue::default();
        q.push(PacketRun::repeat(hdr(1, 5, 100), 2));
        q.push(hdr(1, 7, 100).into());
        q.push(hdr(1, 8, 100).into());
        assert_eq!(q.runs(), 1, "seq 7 and 8 continue 5..=6");
        q.push(hdr(1, 10, 100).into());
        q.push(hdr(1, 11, 200).into());
        q.push(hdr(4, 12, 200).into());
        q.push(PacketRun::message(hdr(4, 13, 0), 200, 1500));
        q.push(PacketRun::message(hdr(4, 14, 0), 3000, 1500));
        assert_eq!(
            q.runs(),
            5,
            "a gap, a new length, a new flow; a one-packet message joins, a longer one not"
        );
        assert_eq!(
            drain(&mut q),
            [
                (1, 5, 100),
                (1, 6, 100),
                (1, 7, 100),
                (1, 8, 100),
                (1, 10, 100),
                (1, 11, 200),
                (4, 12, 200),
                (4, 13, 200),
                (4, 14, 1500),
                (4, 15, 1500)
            ]
        );
    }

    #[test]
    fn a_run_is_small_whatever_it_holds() {
        assert!(std::mem::size_of::<PacketRun>() <= std::mem::size_of::<PacketHdr>());
        let run = PacketRun::repeat(hdr(0, 0, 1500), 1 << 40);
        assert_eq!(run.packets(), 1 << 40);
    }
}
