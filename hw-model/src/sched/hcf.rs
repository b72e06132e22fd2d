//! HCF (Hashed Credits Fair) egress discipline: the control block of one HCF queue.
//!
//! Source: "HCF: Hashed Credits Fair", sections III and IV. The queue's packets sit in two
//! linked lists of the shared buffer (`packet_queue.rs`), HP and LP; this block holds the
//! registers that decide which list a packet joins and when a priority period ends:
//!
//! - `credit[k]`, `k < K`: the credit bins, `ceil(log2(c0 + 1))` bits each (III-C: with
//!   `c0 = 1`, K bins fit in K bits). Kept as one bit vector of exactly `K * width` bits.
//! - `stamp`: the 32-bit time stamp of the period start. The hash of a period is a fixed
//!   hash of the 5-tuple XOR `stamp` (IV-D), so every period has its own function.
//! - `len[list]`: occupancy of each physical list, in packets or cells (`unit`), counted
//!   from admission (start of packet) to departure, so a packet still being written
//!   counts. "HP empty" therefore means no HP packet anywhere in the switch, which
//!   Theorem 1's proof needs: were HP declared empty while an HP packet was still being
//!   written, the swap would turn that packet's list into LP behind a later packet of its
//!   flow that joined the new HP.
//!
//! Which physical list is HP (the role bit, swapped at each period start, III-D) is the
//! dequeue mux select: [`Hcf`] holds it for every HCF queue and the packet queues take it
//! as an input (`PacketQueues::dequeue`).
//!
//! Arrival (Algorithm 1, `arrive`): the packet's bins are `s` hashes of its 5-tuple (`s =
//! 1`: HCF; `s > 1`: the Bloom-counter variant of IV-A). If any bin has credit and HP has
//! room, the packet joins HP and every bin is decremented by its size in units, saturating
//! at 0 (with `unit = packet`, `c(k) <- c(k) - 1`; IV-A's conservative update decrements
//! only positive bins). Else if LP has room it joins LP and its bins are zeroed (footnote 1:
//! later packets of the flow in this period must not overtake it through HP; the
//! conference version, `zero_on_lp_join = false`, lacks the rule and can reorder). Else it
//! is dropped, counted as `hcf_full`. The decision is a value ([`Classification`]) that
//! admission takes to its decision source first: the registers take it ([`HcfQueue::take`])
//! only once the switch admitted the packet, or dropped it on HCF's verdict, so a packet
//! the source refuses leaves the credits, lengths and counters as they were.
//!
//! Departure (Algorithm 1, `transmit`): HP is always served first (the mux). The period
//! ends when a departure from HP leaves it empty (dynamic, III-B), or, with a fixed period
//! (IV-C), at the first cycle at or after each `period_cycles` boundary when HP is empty.
//! A fixed period that started while HP held packets would swap a non-empty HP into LP and
//! reorder (the proof of Theorem 1 starts from an empty HP), so the boundary waits for it.
//! A new period resets every credit to `c0`, takes a new stamp and swaps HP and LP.
//!
//! Several packets may arrive at one HCF queue in a cycle (from different ingress ports):
//! they are decided in port order, each seeing the credits and lengths the previous ones
//! left, a chain like the shared-buffer grant sum (classification is part of admission's
//! chain). A period that ends in the cycle takes effect after them: its reset overrides
//! their credit updates. Fixed-period boundaries are this block's own work, in the
//! flow-control phase, and a new HP select is what the dequeue mux serves from then on (the
//! chain "HCF period start -> dequeue mux" of the phase table). The departures, and the
//! period starts they trigger, are the transmitters' dequeues, applied at the edge
//! ([`Hcf::departures`]).

use crate::config::{Derived, HcfParams, HcfUnit, HCF_MAX_HASHES, QUEUES};
use crate::dirty::Dirty;
use crate::ports::Dequeue;
use crate::wires::FiveTuple;
use bitvec::prelude::*;
use rtl::{Block, BlockError, Clocked, Name, Visit};

/// The verdict of [`HcfQueue::classify`] (also the `last_verdict` register).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Hp = 1,
    Lp = 2,
    Drop = 3,
}

/// One packet's classification in an HCF queue ([`HcfQueue::classify`]): a value that
/// changes no register until [`HcfQueue::take`] applies it, so that admission can ask its
/// decision source first and a packet the switch does not take leaves the credits, the
/// lengths and the counters as they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classification {
    pub verdict: Verdict,
    /// The physical list it joins (HP or LP verdict).
    pub list: u8,
    /// Its size in the queue's unit.
    pub n: u32,
    /// Its bins in the current period (the first `hashes` entries are valid).
    pub bins: [u32; HCF_MAX_HASHES],
}

/// Per-hash salts: hash `i` of the Bloom variant is the same mixer on `x ^ stamp ^ SALT[i]`.
const SALT: [u32; HCF_MAX_HASHES] = [0, 0x9E37_79B9, 0x7F4A_7C15, 0xF39C_C060];

/// Hash `i` of a 5-tuple in the period stamped `stamp`: CRC-32 folds the 13 header bytes to
/// 32 bits, the stamp is XORed in (IV-D) and the murmur3 finaliser mixes the result.
///
/// The finaliser is there because CRC is linear over GF(2): with `crc(x ^ stamp)` alone,
/// two tuples that share a bin in one period share it in every period whenever the bin
/// index is a bit slice of the CRC, which is the persistent collision IV-D's new hash per
/// period is meant to break. The multiplies make the map from stamp to bin non-linear.
pub fn hash(t: &FiveTuple, stamp: u32, i: usize) -> u32 {
    let mut x = crc32fast::hash(&t.bytes()) ^ stamp ^ SALT[i];
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^ (x >> 16)
}

/// Bin of a 32-bit hash among `k`: the high half of `h * k` (a small multiplier, uniform
/// for any `k`, not only powers of two).
#[inline]
pub fn bin_of(h: u32, k: u32) -> u32 {
    ((h as u64 * k as u64) >> 32) as u32
}

/// The registers of one HCF queue.
#[derive(Debug, Clone)]
pub struct HcfQueue {
    pub p: HcfParams,
    credits: BitVec<u64, Lsb0>,
    /// Time stamp (low 32 bits of the cycle) of the current period's start.
    pub stamp: u32,
    /// Occupancy of physical list 0 and 1, in units, from admission to departure.
    pub len: [u32; 2],
    /// Fixed period: a boundary has passed and the period ends once HP is empty.
    due: bool,
    /// Fixed period: the cycle of the next boundary (`u64::MAX` under a dynamic period).
    pub next_boundary: u64,
    /// Periods started since reset.
    pub periods: u32,
    /// Bin (first hash) and verdict of the last arrival, for the waveform.
    pub last_bin: u32,
    pub last_verdict: Verdict,
    /// HP and LP swap roles at a period start (III-D). Only the companion tests turn it off.
    pub swap: bool,
    /// Statistics counters: packets sent to HP, to LP, and dropped.
    pub to_hp: u64,
    pub to_lp: u64,
    pub dropped: u64,
}

impl HcfQueue {
    pub fn new(p: HcfParams) -> Self {
        let mut q = Self {
            p,
            credits: bitvec![u64, Lsb0; 0; (p.bins * p.credit_bits) as usize],
            stamp: 0,
            len: [0; 2],
            due: false,
            next_boundary: p.period_cycles.unwrap_or(u64::MAX),
            periods: 0,
            last_bin: 0,
            last_verdict: Verdict::Drop,
            swap: true,
            to_hp: 0,
            to_lp: 0,
            dropped: 0,
        };
        q.init(0);
        q
    }

    /// Size of a packet of `ncells` cells in this queue's unit.
    #[inline]
    pub fn units(&self, ncells: u16) -> u32 {
        match self.p.unit {
            HcfUnit::Packet => 1,
            HcfUnit::Cell => ncells as u32,
        }
    }

    fn field(&self, k: u32) -> std::ops::Range<usize> {
        let w = self.p.credit_bits as usize;
        k as usize * w..(k as usize + 1) * w
    }

    /// `c(k)`.
    pub fn credit(&self, k: u32) -> u32 {
        self.credits[self.field(k)].load_le::<u32>()
    }

    fn set_credit(&mut self, k: u32, v: u32) {
        let r = self.field(k);
        self.credits[r].store_le(v);
    }

    /// Overwrite `c(k)` with any value its register can hold (companion tests only).
    pub fn force_credit(&mut self, k: u32, v: u32) {
        self.set_credit(k, v & ((1 << self.p.credit_bits) - 1));
    }

    /// The period start (Algorithm 1, `init`): every `c(k) = c0`, a new hash.
    fn init(&mut self, now: u64) {
        for k in 0..self.p.bins {
            self.set_credit(k, self.p.c0);
        }
        self.stamp = now as u32;
        self.periods = self.periods.wrapping_add(1);
        self.due = false;
    }

    /// The bins of a 5-tuple in the current period (the first `hashes` entries are valid).
    pub fn bins(&self, t: &FiveTuple) -> [u32; HCF_MAX_HASHES] {
        let mut b = [0; HCF_MAX_HASHES];
        for (i, x) in b.iter_mut().enumerate().take(self.p.hashes as usize) {
            *x = bin_of(hash(t, self.stamp, i), self.p.bins);
        }
        b
    }

    /// Algorithm 1, `arrive(p)`, decided from the registers without changing them: the
    /// verdict, and the bins and units [`HcfQueue::take`] applies once the switch has acted
    /// on it (`hp` is the physical list now HP).
    pub fn classify(&self, t: &FiveTuple, ncells: u16, hp: u8) -> Classification {
        let n = self.units(ncells);
        let bins = self.bins(t);
        let lp = hp ^ 1;
        let has_credit = bins[..self.p.hashes as usize]
            .iter()
            .any(|&k| self.credit(k) > 0);
        let (verdict, list) = if has_credit && self.len[hp as usize] + n <= self.p.hp_limit {
            (Verdict::Hp, hp)
        } else if self.len[lp as usize] + n <= self.p.lp_limit {
            (Verdict::Lp, lp)
        } else {
            (Verdict::Drop, lp)
        };
        Classification {
            verdict,
            list,
            n,
            bins,
        }
    }

    /// The registers take classification `c`: an HP join takes its size from every bin,
    /// saturating at 0 (with `unit = packet`, `c(k) <- c(k) - 1`; IV-A's conservative
    /// update decrements only positive bins), an LP join zeroes them (footnote 1: later
    /// packets of the flow in this period must not overtake it through HP; the conference
    /// version, `zero_on_lp_join = false`, lacks the rule and can reorder), a join adds to
    /// its list's length, and the verdict is counted.
    pub fn take(&mut self, c: &Classification) {
        let bins = &c.bins[..self.p.hashes as usize];
        self.last_bin = bins[0];
        self.last_verdict = c.verdict;
        match c.verdict {
            Verdict::Hp => {
                for &k in bins {
                    let v = self.credit(k);
                    self.set_credit(k, v.saturating_sub(c.n));
                }
                self.to_hp += 1;
            }
            Verdict::Lp => {
                if self.p.zero_on_lp_join {
                    for &k in bins {
                        self.set_credit(k, 0);
                    }
                }
                self.to_lp += 1;
            }
            Verdict::Drop => {
                self.dropped += 1;
                return;
            }
        }
        self.len[c.list as usize] += c.n;
    }

    /// Algorithm 1, `transmit()`: a packet of `ncells` leaves physical list `list` in cycle
    /// `now`. Returns whether a new period starts (the caller swaps the lists if `swap`).
    pub fn depart(&mut self, list: u8, ncells: u16, hp: u8, now: u64) -> Result<bool, String> {
        let n = self.units(ncells);
        let l = &mut self.len[list as usize];
        *l = l.checked_sub(n).ok_or_else(|| {
            format!("HCF list {list} length {l} is less than the departing packet's {n} units")
        })?;
        let ends = list == hp && self.len[hp as usize] == 0 && self.ends_on_empty_hp();
        if ends {
            self.init(now);
        }
        Ok(ends)
    }

    fn ends_on_empty_hp(&self) -> bool {
        self.p.period_cycles.is_none() || self.due
    }

    /// Fixed period: the boundary at `now` (call when `now == next_boundary`). Returns
    /// whether a new period starts now (HP is empty); otherwise it starts when HP empties.
    pub fn boundary(&mut self, now: u64, hp: u8) -> bool {
        let t = self.p.period_cycles.unwrap_or(u64::MAX);
        self.next_boundary = now.saturating_add(t);
        self.due = true;
        if self.len[hp as usize] == 0 {
            self.init(now);
            return true;
        }
        false
    }

    /// Credit registers out of `0..=c0` (the registers cannot go below 0).
    pub fn check_credits(&self) -> Result<(), String> {
        match (0..self.p.bins).find(|&k| self.credit(k) > self.p.c0) {
            Some(k) => Err(format!(
                "HCF credit bin {k} holds {}, above c0 = {}",
                self.credit(k),
                self.p.c0
            )),
            None => Ok(()),
        }
    }

    /// Probed registers; `hp` is the physical list now HP.
    pub fn probe<V: Visit>(&self, hp: u8, v: &mut V) {
        v.wire("hp_len", 21, self.len[hp as usize] as u64);
        v.wire("lp_len", 21, self.len[(hp ^ 1) as usize] as u64);
        v.wire("period_start", 32, self.stamp as u64);
        v.wire("periods", 32, self.periods as u64);
        v.wire("last_bin", 6, self.last_bin as u64);
        v.wire("last_verdict", 2, self.last_verdict as u64);
        v.scope("credit", |v| {
            for k in 0..self.p.bins {
                v.wire(
                    Name::indexed("b", k, 2),
                    self.p.credit_bits,
                    self.credit(k) as u64,
                );
            }
        });
    }
}

/// The HCF control blocks of the switch, and the HP select of every HCF queue.
#[derive(Debug, Clone)]
pub struct Hcf {
    /// Sorted by (port, queue).
    pub queues: Vec<HcfQueue>,
    /// Per egress queue `port * 8 + q`, the index of its block (`u16::MAX`: a FIFO queue).
    slot: Vec<u16>,
    /// Per egress port, bit `q`: physical list 1 is the HP list of queue `q`.
    hp_sel: Vec<u8>,
    /// Earliest fixed-period boundary of any queue (`u64::MAX`: none).
    next_boundary: u64,
}

impl Hcf {
    pub fn new(d: &Derived) -> Self {
        let mut slot = vec![u16::MAX; d.ports * QUEUES];
        for (i, h) in d.hcf.iter().enumerate() {
            slot[h.port as usize * QUEUES + h.queue as usize] = i as u16;
        }
        Self {
            queues: d.hcf.iter().map(|&h| HcfQueue::new(h)).collect(),
            slot,
            hp_sel: vec![0; d.ports],
            next_boundary: d
                .hcf
                .iter()
                .filter_map(|h| h.period_cycles)
                .min()
                .unwrap_or(u64::MAX),
        }
    }

    /// The egress queues (`port * 8 + q`) that are HCF, in order.
    pub fn queue_ids(&self) -> Vec<usize> {
        self.queues
            .iter()
            .map(|h| h.p.port as usize * QUEUES + h.p.queue as usize)
            .collect()
    }

    /// The HCF block of queue `q` of `port`.
    pub fn queue(&self, port: usize, q: usize) -> Option<&HcfQueue> {
        let slot = *self.slot.get(port * QUEUES + q)?;
        (slot != u16::MAX).then(|| &self.queues[slot as usize])
    }

    /// The dequeue mux selects of `port`: bit `q` set when list 1 is queue `q`'s HP list.
    #[inline]
    pub fn hp_sel(&self, port: usize) -> u8 {
        self.hp_sel[port]
    }

    /// The physical list that is HP in queue `q` of `port`.
    #[inline]
    pub fn hp_list(&self, port: usize, q: usize) -> u8 {
        (self.hp_sel[port] >> q) & 1
    }

    /// Admission: the classification of a packet of `ncells` for queue `q` of `port`
    /// (`None`: a FIFO queue), from the registers; [`Hcf::take`] applies it.
    #[inline]
    pub fn classify(
        &self,
        port: usize,
        q: usize,
        tuple: &FiveTuple,
        ncells: u16,
    ) -> Option<(u16, Classification)> {
        let slot = self.slot[port * QUEUES + q];
        if slot == u16::MAX {
            return None;
        }
        let hp = self.hp_list(port, q);
        Some((slot, self.queues[slot as usize].classify(tuple, ncells, hp)))
    }

    /// The HCF block `slot` takes classification `c` ([`HcfQueue::take`]).
    #[inline]
    pub fn take(&mut self, slot: u16, c: &Classification) {
        self.queues[slot as usize].take(c);
    }

    /// The edge of cycle `now`: the cycle's dequeues (the transmitters' wire) leave their
    /// lists, in the order they were dequeued; a departure that starts a period swaps the
    /// select. A later dequeue of the same cycle from a queue whose period a departure
    /// starts serves the same list as with the swap made at the dequeue: the swap makes
    /// the old LP list HP, and with the old select HP is empty, so the mux serves LP.
    pub fn departures(&mut self, dequeues: &[Dequeue], now: u64) -> Result<(), String> {
        for dq in dequeues {
            let (port, q) = (dq.port as usize, dq.queue as usize);
            self.depart(port, q, dq.list, dq.ncells, now)
                .map_err(|e| format!("egress p{port} q{q}: {e}"))?;
        }
        Ok(())
    }

    /// A packet of `ncells` leaves physical list `list` of queue `q` of `port` in cycle
    /// `now` (one departure of [`Hcf::departures`]); a new period swaps the select.
    #[inline]
    pub fn depart(
        &mut self,
        port: usize,
        q: usize,
        list: u8,
        ncells: u16,
        now: u64,
    ) -> Result<(), String> {
        let slot = self.slot[port * QUEUES + q];
        if slot == u16::MAX {
            return Ok(());
        }
        let hp = self.hp_list(port, q);
        let h = &mut self.queues[slot as usize];
        if h.depart(list, ncells, hp, now)? && h.swap {
            self.hp_sel[port] ^= 1 << q;
        }
        Ok(())
    }

    /// The first cycle at or after the last evaluation with a fixed-period boundary.
    pub fn next_boundary(&self) -> u64 {
        self.next_boundary
    }

    /// `egress.pNN.qQ.hcf.*` of an HCF queue.
    #[inline]
    pub fn probe_queue<V: Visit>(&self, port: usize, q: usize, v: &mut V) {
        if let Some(h) = self.queue(port, q) {
            let hp = self.hp_list(port, q);
            v.scope("hcf", |v| {
                v.wire("hp_sel", 1, hp as u64);
                h.probe(hp, v);
            });
        }
    }
}

impl<'a> Block<(), &'a mut Dirty> for Hcf {
    /// The fixed-period boundaries of this cycle (IV-C), after its arrivals: one test in
    /// the phase when none is due.
    #[inline(always)]
    fn eval(&mut self, now: u64, _: (), dirty: &'a mut Dirty) -> Result<(), BlockError> {
        if now >= self.next_boundary {
            self.boundaries(now, dirty);
        }
        Ok(())
    }
}

impl Hcf {
    /// The boundaries due in cycle `now`, and the next one.
    #[inline(never)]
    fn boundaries(&mut self, now: u64, dirty: &mut Dirty) {
        let mut next = u64::MAX;
        for h in &mut self.queues {
            if h.next_boundary == now {
                let (p, q) = (h.p.port as usize, h.p.queue as usize);
                let hp = (self.hp_sel[p] >> q) & 1;
                if h.boundary(now, hp) && h.swap {
                    self.hp_sel[p] ^= 1 << q;
                }
                dirty.egress(p);
            }
            next = next.min(h.next_boundary);
        }
        self.next_boundary = next;
    }
}

impl Clocked for Hcf {
    /// Arrivals (admission's chain) and boundaries (this block's phase) change the
    /// registers during the cycle, in the order of the phase table; the departures land at
    /// the edge through [`Hcf::departures`], so the transmitters only read the select.
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::EcnLook;

    /// Algorithm 1's `arrive` as admission runs it: classified, then taken with the
    /// switch acting on the verdict. The list joined, or `None`: dropped.
    fn arrive(q: &mut HcfQueue, t: &FiveTuple, ncells: u16, hp: u8) -> Option<u8> {
        let c = q.classify(t, ncells, hp);
        q.take(&c);
        (c.verdict != Verdict::Drop).then_some(c.list)
    }

    fn params(bins: u32, c0: u32, hp: u32, lp: u32) -> HcfParams {
        HcfParams {
            port: 0,
            queue: 0,
            bins,
            c0,
            credit_bits: 32 - c0.leading_zeros(),
            hp_limit: hp,
            lp_limit: lp,
            unit: HcfUnit::Packet,
            period_cycles: None,
            hashes: 1,
            zero_on_lp_join: true,
        }
    }

    fn flow(i: u32) -> FiveTuple {
        FiveTuple::for_flow(i, 1, 2, FiveTuple::TCP)
    }

    fn hcf_on_port_2_queue_7() -> Derived {
        crate::config::SwitchConfig {
            hcf: vec![crate::config::HcfConfig {
                ports: vec![2],
                queue: 7,
                ..Default::default()
            }],
            ..crate::config::SwitchConfig::small()
        }
        .build()
        .unwrap()
    }

    fn dequeue(port: u8, queue: u8, list: u8) -> Dequeue {
        Dequeue {
            port,
            queue,
            list,
            ncells: 1,
            len: 64,
            ecn: EcnLook::default(),
        }
    }

    /// The edge applies the cycle's dequeues in order: the first empties HP and swaps the
    /// select, the second leaves the list that became HP and swaps it back. A dequeue from
    /// a FIFO queue is not HCF's.
    #[test]
    fn departures_at_the_edge_apply_in_order() {
        let d = hcf_on_port_2_queue_7();
        let mut hcf = Hcf::new(&d);
        let t = flow(1);
        for (list, why) in [(0, "credit"), (1, "no credit left")] {
            let (slot, c) = hcf.classify(2, 7, &t, 1).unwrap();
            assert_eq!(c.list, list, "{why}");
            hcf.take(slot, &c);
        }
        let cycle = [dequeue(2, 6, 0), dequeue(2, 7, 0), dequeue(2, 7, 1)];
        hcf.departures(&cycle, 5).unwrap();
        assert_eq!(
            (hcf.hp_list(2, 7), hcf.queue(2, 7).unwrap().periods),
            (0, 3)
        );
        assert_eq!(hcf.queue(2, 7).unwrap().len, [0, 0]);
    }

    /// Companion: a dequeue the lengths cannot hold is refused, naming its queue.
    #[test]
    fn a_departure_from_an_empty_list_is_refused() {
        let d = hcf_on_port_2_queue_7();
        let e = Hcf::new(&d).departures(&[dequeue(2, 7, 1)], 5).unwrap_err();
        assert!(e.starts_with("egress p2 q7: HCF list 1 length 0"), "{e}");
    }

    #[test]
    fn credit_registers_are_exactly_k_times_width_bits() {
        assert_eq!(HcfQueue::new(params(32, 1, 10, 10)).credits.len(), 32);
        assert_eq!(HcfQueue::new(params(20, 3, 10, 10)).credits.len(), 40);
        assert_eq!(HcfQueue::new(params(20, 4, 10, 10)).credits.len(), 60);
        assert_eq!(HcfQueue::new(params(8, 255, 10, 10)).credits.len(), 64);
    }

    #[test]
    fn second_packet_of_a_one_credit_bin_goes_to_lp_and_zeroes_it() {
        let mut q = HcfQueue::new(params(20, 1, 10, 10));
        let t = flow(7);
        let k = q.bins(&t)[0];
        assert_eq!(arrive(&mut q, &t, 1, 0), Some(0), "credit -> HP (list 0)");
        assert_eq!(q.credit(k), 0);
        assert_eq!(arrive(&mut q, &t, 1, 0), Some(1), "no credit -> LP");
        assert_eq!(q.len, [1, 1]);
    }

    /// The conference version keeps the bin's credit when HP is full: the flow's next
    /// packet, once HP has room, joins HP ahead of the one waiting in LP.
    #[test]
    fn without_footnote_1_a_later_packet_overtakes_through_hp() {
        for (zero, second_list) in [(true, 1), (false, 0)] {
            let mut q = HcfQueue::new(HcfParams {
                zero_on_lp_join: zero,
                ..params(64, 255, 2, 2)
            });
            assert_eq!(arrive(&mut q, &flow(1), 1, 0), Some(0));
            assert_eq!(arrive(&mut q, &flow(1), 1, 0), Some(0));
            let t = flow(2);
            assert_eq!(arrive(&mut q, &t, 1, 0), Some(1), "HP full: LP");
            assert_eq!(
                q.depart(0, 1, 0, 9),
                Ok(false),
                "HP has room, the period goes on"
            );
            assert_eq!(arrive(&mut q, &t, 1, 0), Some(second_list), "zero = {zero}");
        }
    }

    #[test]
    fn full_hp_sends_to_lp_and_full_both_drops() {
        let mut q = HcfQueue::new(params(64, 255, 1, 1));
        assert_eq!(arrive(&mut q, &flow(1), 1, 0), Some(0));
        let t = flow(2);
        let k = q.bins(&t)[0];
        assert_eq!(arrive(&mut q, &t, 1, 0), Some(1), "HP full");
        assert_eq!(q.credit(k), 0, "footnote 1: the bin is zeroed");
        assert_eq!(arrive(&mut q, &flow(3), 1, 0), None, "both full");
        assert_eq!(q.last_verdict, Verdict::Drop);
    }

    #[test]
    fn hp_emptied_by_a_departure_starts_a_period_with_a_new_hash() {
        let mut q = HcfQueue::new(params(20, 1, 10, 10));
        let t = flow(3);
        arrive(&mut q, &t, 1, 0);
        arrive(&mut q, &t, 1, 0);
        let (stamp, periods) = (q.stamp, q.periods);
        assert_eq!(
            q.depart(1, 1, 0, 50),
            Ok(false),
            "an LP departure ends nothing"
        );
        assert_eq!(q.depart(0, 1, 0, 77), Ok(true));
        assert_eq!((q.stamp, q.periods), (77, periods + 1));
        assert_ne!(q.stamp, stamp);
        assert!((0..20).all(|k| q.credit(k) == 1), "credits back to c0");
    }

    #[test]
    fn fixed_period_waits_for_an_empty_hp() {
        let mut p = params(20, 1, 10, 10);
        p.period_cycles = Some(100);
        let mut q = HcfQueue::new(p);
        arrive(&mut q, &flow(1), 1, 0);
        assert!(!q.boundary(100, 0), "HP holds a packet");
        assert_eq!(q.next_boundary, 200);
        assert_eq!(q.depart(0, 1, 0, 130), Ok(true), "due, and HP just emptied");
        assert_eq!(q.stamp, 130);
        arrive(&mut q, &flow(1), 1, 0);
        assert_eq!(q.depart(0, 1, 0, 150), Ok(false), "not due yet");
        assert!(q.boundary(200, 0), "HP already empty at the boundary");
    }

    #[test]
    fn cell_credits_saturate_at_zero() {
        let mut p = params(4, 3, 100, 100);
        p.unit = HcfUnit::Cell;
        let mut q = HcfQueue::new(p);
        let t = flow(9);
        let k = q.bins(&t)[0];
        assert_eq!(arrive(&mut q, &t, 5, 0), Some(0), "3 credits left: HP");
        assert_eq!(q.credit(k), 0);
        assert_eq!(q.len[0], 5);
        q.check_credits().unwrap();
    }

    #[test]
    fn credit_check_catches_a_register_above_c0() {
        let mut q = HcfQueue::new(params(4, 2, 10, 10));
        q.force_credit(1, 3);
        let e = q.check_credits().unwrap_err();
        assert!(e.contains("bin 1 holds 3"), "{e}");
    }

    #[test]
    fn the_stamp_changes_the_bins_of_some_flows() {
        let q = HcfQueue::new(params(20, 1, 10, 10));
        let moved = (0..200)
            .filter(|&i| {
                let t = flow(i);
                bin_of(hash(&t, 1, 0), 20) != bin_of(hash(&t, 2, 0), 20)
            })
            .count();
        assert!(moved > 150, "{moved} of 200 flows changed bin");
        let used: std::collections::BTreeSet<u32> = (0..200).map(|i| q.bins(&flow(i))[0]).collect();
        assert_eq!(used.len(), 20, "200 flows spread over all 20 bins");
    }

    #[test]
    fn collisions_do_not_persist_across_periods() {
        // Pairs that share a bin under one stamp mostly part under the next one: the
        // linearity trap described on `hash`.
        let mut together = 0;
        let mut pairs = 0;
        for a in 0..60u32 {
            for b in a + 1..60 {
                let (ta, tb) = (flow(a), flow(b));
                if bin_of(hash(&ta, 1000, 0), 16) == bin_of(hash(&tb, 1000, 0), 16) {
                    pairs += 1;
                    if bin_of(hash(&ta, 2000, 0), 16) == bin_of(hash(&tb, 2000, 0), 16) {
                        together += 1;
                    }
                }
            }
        }
        assert!(pairs > 50);
        assert!(
            together * 4 < pairs,
            "{together} of {pairs} collisions persisted"
        );
    }
}
