//! The signal hierarchy under `top.mmu`, assembled from the probes each block declares
//! (`rtl::Probed`: name, width and value in one place), and the signal blocks a waveform
//! writer samples.
//!
//! A signal block is a scope whose signals change together: 0 is the global block
//! (thresholds and buffer totals), `1 + p` ingress port `p`,
//! `1 + ports + p` egress port `p`. The blocks of the model mark the signal blocks they
//! change in a cycle ([`Dirty`]); a block not marked holds the values of the last sample.
//! The order of the signals (global, then per port its ingress and egress scopes) is the
//! order of the first waveforms, kept so that dumps stay byte-identical.

use crate::config::{MAX_PORTS, QUEUES};
use crate::mmu::Core;
use crate::policy::BufferPolicy;
use crate::ports::mask;
use rtl::{interleave, Declare, Name, Read, Visit};
use std::cell::RefCell;
use std::ops::Range;

/// One probed signal of the model: dot-separated path under `top.mmu` and width in bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalDesc {
    pub path: String,
    pub width: u32,
}

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

/// Visit the signals of block `block`, in their order.
pub(crate) fn visit_block<P: BufferPolicy, V: Visit>(
    c: &Core,
    policy: &P,
    block: usize,
    v: &mut V,
) {
    let ports = c.d.ports;
    match block {
        0 => {
            // `dt` and `dt_lossy` side by side, wire by wire (the first waveforms' order).
            interleave(
                v,
                (Name::word("dt"), &c.dt),
                (Name::word("dt_lossy"), &c.dt_lossy),
            );
            policy.probe_pfc_thresholds(v);
            v.scope("buffer", |v| {
                c.free.probe(v);
                c.acct.probe_totals(v);
            });
            policy.probe_pool_units(v);
        }
        b if b <= ports => {
            let p = b - 1;
            v.scope("ingress", |v| {
                v.scope(Name::indexed("p", p as u32, 2), |v| {
                    c.ingress.probe_port(p, v);
                    c.fsm.probe_port(p, v);
                    policy.probe_port(p, &c.fsm, &c.acct, v);
                    for pg in 0..QUEUES {
                        v.scope(Name::indexed("pg", pg as u32, 1), |v| {
                            c.acct.probe_group(p, pg, c.d.is_lossless(pg as u8), v);
                            policy.probe_group(p, pg, v);
                        });
                    }
                })
            });
        }
        b => {
            let p = b - 1 - ports;
            v.scope("egress", |v| {
                v.scope(Name::indexed("p", p as u32, 2), |v| {
                    c.egress.probe_port(p, v);
                    c.rx.probe_port(p, v);
                    for q in 0..QUEUES {
                        v.scope(Name::indexed("q", q as u32, 1), |v| {
                            c.acct.probe_egress(p, q, v);
                            c.egress.sched(p).probe_queue(q, v);
                            c.ecm.probe_queue(p, q, v);
                            c.ecn.probe_queue(p, q, v);
                            c.hcf.probe_queue(p, q, v);
                            policy.probe_egress_queue(p, q, v);
                        });
                    }
                })
            });
        }
    }
}

/// The signal list, where each signal block sits in it, and the values of the blocks read
/// since the model last changed.
#[derive(Debug)]
pub struct Signals {
    descs: Vec<SignalDesc>,
    ranges: Vec<Range<usize>>,
    block_of: Vec<u32>,
    cache: RefCell<Cache>,
}

/// Values of whole signal blocks, each stamped with the state generation it was read at:
/// a writer reading a block signal by signal walks the block's probes once.
#[derive(Debug)]
struct Cache {
    values: Vec<u64>,
    stamp: Vec<u64>,
}

impl Signals {
    /// The signal list of a model: global, then per port its ingress and egress blocks.
    pub(crate) fn new<P: BufferPolicy>(c: &Core, policy: &P) -> Self {
        let ports = c.d.ports;
        let mut declare = Declare::new("top.mmu");
        let mut ranges = vec![0..0; 1 + 2 * ports];
        let mut visit = |block: usize, d: &mut Declare| {
            let start = d.wires.len();
            visit_block(c, policy, block, d);
            ranges[block] = start..d.wires.len();
        };
        visit(0, &mut declare);
        for p in 0..ports {
            visit(1 + p, &mut declare);
            visit(1 + ports + p, &mut declare);
        }
        let mut block_of = vec![0u32; declare.wires.len()];
        for (b, r) in ranges.iter().enumerate() {
            block_of[r.clone()].fill(b as u32);
        }
        let n = declare.wires.len();
        Self {
            descs: declare
                .wires
                .into_iter()
                .map(|(path, width)| SignalDesc { path, width })
                .collect(),
            cache: RefCell::new(Cache {
                values: vec![0; n],
                stamp: vec![0; ranges.len()],
            }),
            ranges,
            block_of,
        }
    }

    pub fn descs(&self) -> &[SignalDesc] {
        &self.descs
    }

    pub fn blocks(&self) -> usize {
        self.ranges.len()
    }

    #[inline]
    pub fn block_of(&self, i: usize) -> usize {
        self.block_of[i] as usize
    }

    /// The signals of block `b`, as indices into the signal list.
    pub fn range(&self, b: usize) -> Range<usize> {
        self.ranges[b].clone()
    }

    /// Value of signal `i` in state generation `gen` (0 is never current).
    #[inline]
    pub(crate) fn value<P: BufferPolicy>(&self, c: &Core, policy: &P, gen: u64, i: usize) -> u64 {
        let b = self.block_of(i);
        let mut cache = self.cache.borrow_mut();
        if cache.stamp[b] != gen {
            let r = self.range(b);
            visit_block(c, policy, b, &mut Read::new(&mut cache.values[r]));
            cache.stamp[b] = gen;
        }
        cache.values[i]
    }

    /// GTKWave view: the key signals of each block, as (group name, signal paths).
    pub fn gtkw_groups(&self) -> Vec<(String, Vec<String>)> {
        // A signal of an ingress priority group (`...pNN.pgG....`).
        let in_pg = |s: &str| s.split('.').any(|c| c.len() == 3 && c.starts_with("pg"));
        let pick = |f: &dyn Fn(&str) -> bool| -> Vec<String> {
            self.descs
                .iter()
                .filter(|s| f(&s.path))
                .map(|s| s.path.clone())
                .collect()
        };
        vec![
            ("buffer".into(), pick(&|s| s.starts_with("top.mmu.buffer."))),
            ("dt (Eq. 2)".into(), pick(&|s| s.starts_with("top.mmu.dt."))),
            (
                "pfc X_on = T - delta".into(),
                pick(&|s| s.starts_with("top.mmu.pfc.")),
            ),
            (
                "ingress QOFF per port".into(),
                pick(&|s| s.starts_with("top.mmu.ingress.") && s.ends_with(".qoff")),
            ),
            (
                "egress paused per port".into(),
                pick(&|s| s.starts_with("top.mmu.egress.") && s.ends_with(".paused")),
            ),
            (
                "egress tx state".into(),
                pick(&|s| s.starts_with("top.mmu.egress.") && s.ends_with(".tx_state")),
            ),
            (
                "dsh X_poff = N_q * T (Eq. 6), X_pon".into(),
                pick(&|s| s.starts_with("top.mmu.dsh.")),
            ),
            (
                "dsh X_qoff = T - eta (Eq. 5), X_qon, PON/POFF per port".into(),
                pick(&|s| {
                    s.starts_with("top.mmu.ingress.")
                        && (s.contains(".sub_xqoff.")
                            || s.contains(".sub_xqon.")
                            || s.ends_with(".poff")
                            || s.ends_with(".port_shared_cells")
                            || s.ends_with(".insurance_cells"))
                }),
            ),
            (
                "hcf: HP select, sub-queue lengths, period stamp, credit bins".into(),
                pick(&|s| s.contains(".hcf.")),
            ),
            (
                "ecm congestion points: qlen (64 B pages), sampling".into(),
                pick(&|s| s.contains(".ecm.")),
            ),
            (
                "ecn markers: qlen, LFSR, marked packets".into(),
                pick(&|s| s.contains(".ecn.")),
            ),
            (
                "l2bm: C (sum of tau), lossy egress DT".into(),
                pick(&|s| s.starts_with("top.mmu.l2bm.")),
            ),
            (
                "l2bm recorders (Algorithm 1): t_total, N, t_prev, tau".into(),
                pick(&|s| s.contains(".l2bm.") && in_pg(s)),
            ),
            (
                "l2bm units per ingress port: estimate, T_i (Eq. 3) at admission and QON".into(),
                pick(&|s| s.starts_with("top.mmu.ingress.") && s.contains(".l2bm.") && !in_pg(s)),
            ),
            (
                "l2bm drain meters per egress queue (l2bm_mu = measured): 1/mu".into(),
                pick(&|s| s.starts_with("top.mmu.egress.") && s.contains(".l2bm.")),
            ),
            (
                "egress pause = QOFF OR POFF".into(),
                pick(&|s| {
                    s.starts_with("top.mmu.egress.")
                        && (s.ends_with(".rx_qoff") || s.ends_with(".rx_poff"))
                }),
            ),
        ]
        .into_iter()
        .filter(|(_, signals)| !signals.is_empty())
        .collect()
    }

    /// Read block `b` into `out` (its length is the block's).
    pub(crate) fn read_block<P: BufferPolicy>(
        &self,
        c: &Core,
        policy: &P,
        b: usize,
        out: &mut [u64],
    ) {
        visit_block(c, policy, b, &mut Read::new(out));
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
