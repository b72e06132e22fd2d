//! The signal list under `top.mmu`, assembled from the probes each block declares
//! (`rtl::Probed`: name, width and value in one place) as a `Hierarchy` visits them
//! (`mmu.rs` walks the blocks), and the signal blocks a waveform writer samples.
//!
//! A signal block is a scope whose signals change together: 0 is the global block
//! (thresholds and buffer totals), `1 + p` ingress port `p`,
//! `1 + ports + p` egress port `p`. The blocks of the model mark the signal blocks they
//! change in a cycle ([`crate::dirty::Dirty`]); a block not marked holds the values of
//! the last sample.
//! The order of the signals (global, then per port its ingress and egress scopes) is the
//! order of the first waveforms, kept so that dumps stay byte-identical.

use rtl::{Declare, Read, Visit};
use std::cell::RefCell;
use std::ops::Range;

/// One probed signal of the model: dot-separated path under `top.mmu` and width in bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalDesc {
    pub path: String,
    pub width: u32,
}

/// What the probes read: the model's signal hierarchy, one block at a time.
pub(crate) trait Hierarchy {
    /// Ports of the switch (blocks `1 + p` and `1 + ports + p`).
    fn ports(&self) -> usize;

    /// Visit the signals of block `block` (0 global, `1 + p` ingress port `p`,
    /// `1 + ports + p` egress port `p`), in their order.
    fn visit_block<V: Visit>(&self, block: usize, v: &mut V);
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
    pub(crate) fn new(h: &impl Hierarchy) -> Self {
        let ports = h.ports();
        let mut declare = Declare::new("top.mmu");
        let mut ranges = vec![0..0; 1 + 2 * ports];
        let mut visit = |block: usize, d: &mut Declare| {
            let start = d.wires.len();
            h.visit_block(block, d);
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
    pub(crate) fn value(&self, h: &impl Hierarchy, gen: u64, i: usize) -> u64 {
        let b = self.block_of(i);
        let mut cache = self.cache.borrow_mut();
        if cache.stamp[b] != gen {
            let r = self.range(b);
            h.visit_block(b, &mut Read::new(&mut cache.values[r]));
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
                "int: the last hop record per egress port".into(),
                pick(&|s| s.contains(".int.")),
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
    pub(crate) fn read_block(&self, h: &impl Hierarchy, b: usize, out: &mut [u64]) {
        h.visit_block(b, &mut Read::new(out));
    }
}
