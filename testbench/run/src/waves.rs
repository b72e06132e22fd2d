//! Waveform output: the model's probed signals, with ECM on the registers of every
//! NIC's reaction point (`top.nic.pNN.rp.*`), and the reaction-point registers of every
//! DCQCN flow (`top.nic.pNN.dcqcn.fFFF.*`, [`DcqcnReg`]), sampled after every cycle into a
//! VCD or an FST, and a GTKWave save file beside it (same stem, `.gtkw`) that opens the
//! dump with the signal groups already laid out.

use hw_model::config::QUEUES;
use hw_model::Mmu;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use stimulus::dcqcn::{DcqcnFlows, DcqcnReg};
use stimulus::link_partner::LinkPartner;
use stimulus::reaction_point::{LimiterReg, LimiterState};
use wave::{
    write_gtkw, AnyWriter, Format, GtkwGroup, GtkwTrace, GtkwView, SignalFilter, SignalSpec,
    Translate, WaveError, Window,
};

/// The `.gtkw` path that goes with a dump path.
pub fn gtkw_path(dump: &Path) -> PathBuf {
    dump.with_extension("gtkw")
}

/// Where a reaction-point signal comes from.
#[derive(Debug, Clone, Copy)]
enum RpSig {
    Lfsr(usize),
    InUse(usize),
    Limiter(usize, usize, LimiterReg),
    /// NIC, DCQCN flow (index in flow order), register.
    Dcqcn(usize, usize, DcqcnReg),
}

/// Every signal a VCD of this run can hold: the model's, then, with ECM on, the registers
/// of each NIC's reaction point (its LFSR, its count of limiters in use, and the registers
/// of its fine limiters and of the coarse limiters of the ECM priorities), then the
/// reaction-point registers of the DCQCN flows.
pub struct WaveSignals {
    specs: Vec<SignalSpec>,
    /// Signals below this index are the model's; the rest are `rp_src`.
    n_mmu: usize,
    rp_src: Vec<RpSig>,
}

impl WaveSignals {
    pub fn new(mmu: &Mmu, partners: &[LinkPartner], dcqcn: &DcqcnFlows) -> Self {
        let mut specs: Vec<SignalSpec> = mmu
            .signals()
            .iter()
            .map(|s| SignalSpec::new(s.path.clone(), s.width))
            .collect();
        let n_mmu = specs.len();
        let mut rp_src = Vec::new();
        let mask = mmu.config().ecm.mask;
        for (nic, partner) in partners.iter().enumerate().filter(|_| mask != 0) {
            let rp = partner.rp();
            let at = format!("top.nic.p{nic:02}.rp");
            specs.push(SignalSpec::new(format!("{at}.lfsr"), 32));
            rp_src.push(RpSig::Lfsr(nic));
            specs.push(SignalSpec::new(format!("{at}.in_use"), 7));
            rp_src.push(RpSig::InUse(nic));
            let fine = rp.params().fine_limiters as usize;
            let coarse = (0..8).filter(|p| mask >> p & 1 != 0).map(|p| fine + p);
            for i in (0..fine).chain(coarse) {
                let name = rp.limiter_name(i);
                for r in LimiterReg::ALL {
                    let path = format!("{at}.{name}.{}", r.name());
                    specs.push(SignalSpec::new(path, r.width(rp.params())));
                    rp_src.push(RpSig::Limiter(nic, i, r));
                }
            }
        }
        for (i, (nic, flow)) in dcqcn.places().enumerate() {
            for r in DcqcnReg::ALL {
                let path = format!("top.nic.p{nic:02}.dcqcn.f{flow:03}.{}", r.name());
                specs.push(SignalSpec::new(path, r.width()));
                rp_src.push(RpSig::Dcqcn(nic as usize, i, r));
            }
        }
        Self {
            specs,
            n_mmu,
            rp_src,
        }
    }

    pub fn specs(&self) -> &[SignalSpec] {
        &self.specs
    }

    /// Where reaction-point signal `i` comes from; `None` for the model's signals.
    fn rp_sig(&self, i: usize) -> Option<RpSig> {
        self.rp_src.get(i.checked_sub(self.n_mmu)?).copied()
    }

    /// The NIC, and the limiter if any, that ECM reaction-point signal `i` belongs to;
    /// `None` for the model's and the DCQCN signals.
    fn rp_place(&self, i: usize) -> Option<(usize, Option<usize>)> {
        match self.rp_sig(i)? {
            RpSig::Lfsr(nic) | RpSig::InUse(nic) => Some((nic, None)),
            RpSig::Limiter(nic, l, _) => Some((nic, Some(l))),
            RpSig::Dcqcn(..) => None,
        }
    }

    /// Current value of signal `i`.
    #[inline]
    pub fn value(&self, i: usize, mmu: &Mmu, partners: &[LinkPartner], dcqcn: &DcqcnFlows) -> u64 {
        match i.checked_sub(self.n_mmu) {
            None => mmu.signal_value(i),
            Some(j) => match self.rp_src[j] {
                RpSig::Lfsr(nic) => partners[nic].rp().lfsr().value() as u64,
                RpSig::InUse(nic) => partners[nic].rp().in_use() as u64,
                RpSig::Limiter(nic, l, r) => partners[nic].rp().limiter_reg(l, r),
                RpSig::Dcqcn(_, f, r) => dcqcn.reg(f, r),
            },
        }
    }

    /// GTKWave groups: the model's, then one per NIC for its ECM reaction point and one
    /// per NIC for its DCQCN flows; every trace under its [`display_name`], occupancies,
    /// thresholds and rates drawn as analog.
    fn gtkw_groups(&self, mmu: &Mmu) -> Vec<GtkwGroup> {
        let mut groups = mmu_groups(mmu);
        for (i, spec) in self.specs.iter().enumerate().skip(self.n_mmu) {
            let name = match self.rp_sig(i) {
                Some(RpSig::Dcqcn(nic, ..)) => format!("dcqcn nic p{nic:02}"),
                _ => format!("rp nic p{:02}", self.rp_place(i).map_or(0, |(nic, _)| nic)),
            };
            match groups.last_mut() {
                Some((g, v)) if *g == name => v.push(spec.path.clone()),
                _ => groups.push((name, vec![spec.path.clone()])),
            }
        }
        groups
            .into_iter()
            .map(|(name, signals)| GtkwGroup::new(name, signals.into_iter().map(trace)))
            .collect()
    }
}

/// The model's GTKWave groups (`Mmu::gtkw_groups`), as (name, signal paths): the QOFF
/// masks first, then the occupancy of the egress queues that held cells in the run.
pub fn mmu_groups(mmu: &Mmu) -> Vec<(String, Vec<String>)> {
    mmu_groups_held(mmu, &held_queues(mmu))
}

/// Per egress queue (`port * 8 + queue`), whether it held cells in the run (its
/// watermark): the queues whose occupancy the view shows.
pub fn held_queues(mmu: &Mmu) -> Vec<bool> {
    let watermarks = &mmu.accounting().watermarks.egress;
    watermarks.iter().map(|&w| w > 0).collect()
}

/// [`mmu_groups`] with the queues that held cells given (`held`, as [`held_queues`]), for
/// a model whose run took place elsewhere (an MPI rank's switch, in the fabric).
pub fn mmu_groups_held(mmu: &Mmu, held: &[bool]) -> Vec<(String, Vec<String>)> {
    let mut groups = mmu.gtkw_groups();
    // What a PAUSE is about first: the QOFF masks, then the egress queues' occupancy.
    if let Some(i) = groups
        .iter()
        .position(|(_, v)| v.iter().any(|p| is_qoff(p)))
    {
        let qoff = groups.remove(i);
        groups.insert(0, qoff);
    }
    // Only the queues that held cells in the run: 8 per port would bury the rest.
    let occupancy: Vec<String> = mmu
        .signals()
        .iter()
        .map(|s| s.path.clone())
        .filter(|p| queue_cells(p).is_some_and(|(port, q)| held[port * QUEUES + q]))
        .collect();
    groups.insert(1, ("egress queue occupancy (cells)".into(), occupancy));
    groups
}

/// The name GTKWave shows for a signal: the path without `top.`, `mmu.` and the `ingress`
/// or `egress` scope (the port number and the leaf tell them apart), its components joined
/// by spaces (GTKWave shows only what follows the last dot of a name), and the global
/// blocks in capitals: `p03 qoff`, `p00 pg2 shared_cells`, `DT sub_free y`,
/// `p07 q3 ecm qlen`, `nic p01 rp f00 rate_bps`. Distinct paths give distinct names (a
/// test checks every built-in under every policy).
pub fn display_name(path: &str) -> String {
    let rest = path.strip_prefix("top.").unwrap_or(path);
    let rest = rest.strip_prefix("mmu.").unwrap_or(rest);
    let rest = ["ingress.", "egress."]
        .iter()
        .find_map(|s| rest.strip_prefix(s))
        .unwrap_or(rest);
    let mut name = String::new();
    for (i, part) in rest.split('.').enumerate() {
        if i > 0 {
            name.push(' ');
        }
        match part {
            "dt" | "dt_lossy" | "pfc" | "dsh" | "l2bm" if i == 0 => {
                name.push_str(&part.to_ascii_uppercase())
            }
            p => name.push_str(p),
        }
    }
    name
}

/// Occupancies, thresholds and rates: their shape over time reads better as a plot.
fn is_analog(path: &str) -> bool {
    let mut parts = path.rsplit('.');
    let leaf = parts.next().unwrap_or_default();
    let unit = parts.next().unwrap_or_default();
    leaf.ends_with("cells")
        || [
            "t",
            "hp_len",
            "lp_len",
            "qlen",
            "qold",
            "rate_bps",
            "fifo_len",
            "rc_mbps",
            "rt_mbps",
            "alpha_q16",
        ]
        .contains(&leaf)
        || (leaf == "y"
            && ["sub_", "shift_", "mul_"]
                .iter()
                .any(|u| unit.starts_with(u)))
}

/// An ingress port's QOFF mask (`top.mmu.ingress.pNN.qoff`).
fn is_qoff(path: &str) -> bool {
    path.starts_with("top.mmu.ingress.") && path.ends_with(".qoff")
}

/// The port and queue of an egress queue's cell counter (`top.mmu.egress.pNN.qQ.cells`).
fn queue_cells(path: &str) -> Option<(usize, usize)> {
    let rest = path
        .strip_prefix("top.mmu.egress.p")?
        .strip_suffix(".cells")?;
    let (port, queue) = rest.split_once(".q")?;
    Some((port.parse().ok()?, queue.parse().ok()?))
}

/// Per-class masks (bit `c` for class `c`): read bit by bit, so shown in binary.
fn is_mask(path: &str) -> bool {
    let leaf = path.rsplit('.').next().unwrap_or_default();
    ["qoff", "rx_qoff", "paused"].contains(&leaf)
}

/// The names of an enum signal's values: `tx_state` is `Tx::code` (egress_port.rs),
/// `last_verdict` HCF's `Verdict` (sched/hcf.rs; 0 before the first arrival).
fn enum_names(path: &str) -> Option<Translate> {
    match path.rsplit('.').next()? {
        "tx_state" => Some(Translate::new(
            "tx_state",
            &[(0, "idle"), (1, "pfc"), (2, "data")],
        )),
        "last_verdict" => Some(Translate::new(
            "last_verdict",
            &[(0, "none"), (1, "hp"), (2, "lp"), (3, "drop")],
        )),
        _ => None,
    }
}

/// The trace of `path` in a generated view.
pub fn trace(path: String) -> GtkwTrace {
    let mut t = GtkwTrace::new(path.clone()).named(display_name(&path));
    if is_analog(&path) {
        t = t.analog();
    }
    if is_mask(&path) {
        t = t.binary();
    }
    match enum_names(&path) {
        Some(names) => t.translated(names),
        None => t,
    }
}

/// The writer slots of one NIC's reaction point. Its registers change only while it is
/// busy and in the cycle it stops being busy, and a limiter's only while it is in use, in
/// the cycle it is reclaimed, and in a cycle in which the RP took an ECM frame (the only
/// way to instantiate a limiter, which may be reclaimed in the same cycle): only those
/// slots are compared.
struct NicSlots {
    nic: usize,
    /// `lfsr` and `in_use`.
    common: Vec<usize>,
    /// Per limiter (index into `ReactionPoint::limiters`), its slots.
    limiters: Vec<(usize, Vec<usize>)>,
    was_busy: bool,
    /// Bit `l`: limiter `l` was in use at the last sample.
    was_in_use: u128,
    /// `RpStats::ecm_rx` at the last sample.
    ecm_rx: u64,
    /// This cycle: compare `common`, and the limiters of `mask`.
    sample: bool,
    mask: u128,
}

/// Cycles a view opened on the first PAUSE shows, a tenth of them before it: the queue
/// building up to XOFF, the frame, and the drain that follows (10 us at a 1 GHz clock).
const PAUSE_VIEW_CYCLES: u64 = 10_000;

/// `Waves::slot_of` of a model signal the filter left out.
const NO_SLOT: u32 = u32::MAX;

/// A waveform being written for one run.
pub struct Waves {
    writer: AnyWriter<BufWriter<File>>,
    path: PathBuf,
    signals: WaveSignals,
    /// The signals that passed the filter (what the .gtkw may reference).
    dumped: Vec<SignalSpec>,
    /// Per model signal, its writer slot (`NO_SLOT` if the filter left it out); per signal
    /// block, whether any of its signals has a slot. A cycle reads only the blocks the
    /// model touched and that have slots.
    slot_of: Vec<u32>,
    block_selected: Vec<bool>,
    /// The slots that changed in the current cycle (kept to reuse its allocation).
    todo: Vec<u32>,
    /// The model's signal values, read a whole block at a time (`Mmu::sample_block`) into
    /// `fresh`, then compared with these, so the writer sees only the signals that moved;
    /// `primed` once every selected block was read (at the first sample in the window,
    /// which dumps every value).
    values: Vec<u64>,
    fresh: Vec<u64>,
    primed: bool,
    /// The NICs with selected reaction-point signals.
    nics: Vec<NicSlots>,
    /// Per DCQCN flow (in flow order), its selected signals' slots: compared in the cycles
    /// whose events touched the flow (`DcqcnFlows::touched`).
    dcqcn_slots: Vec<Vec<u32>>,
    /// What the `.gtkw` opens on: the dumped cycles.
    view: GtkwView,
    /// The first and the last cycle of the window: sampled whatever happens, as the dump
    /// starts with every value at the first and closes one cycle after the last.
    first: u64,
    last: u64,
}

impl Waves {
    /// Write the header for the signals of `mmu` and `partners` in `format` into `file`
    /// (already created at `path`), for a run of `cycles` cycles.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        mmu: &Mmu,
        partners: &[LinkPartner],
        dcqcn: &DcqcnFlows,
        file: File,
        path: &Path,
        format: Format,
        filter: &SignalFilter,
        window: Window,
        cycles: u64,
    ) -> Result<Self, WaveError> {
        let signals = WaveSignals::new(mmu, partners, dcqcn);
        let writer = AnyWriter::with_format(
            BufWriter::new(file),
            format,
            signals.specs(),
            mmu.config().clock_hz,
            filter,
            window,
        )?;
        let mut slot_of = vec![NO_SLOT; mmu.signals().len()];
        let mut block_selected = vec![false; mmu.signal_blocks()];
        let mut nics: Vec<NicSlots> = (0..partners.len())
            .map(|nic| NicSlots {
                nic,
                common: Vec::new(),
                limiters: Vec::new(),
                was_busy: false,
                was_in_use: 0,
                ecm_rx: 0,
                sample: false,
                mask: 0,
            })
            .collect();
        // Every selected slot can change in one cycle: `todo` never grows after this.
        let selected = writer.selected().len();
        let mut dcqcn_slots = vec![Vec::new(); dcqcn.places().count()];
        for (slot, &i) in writer.selected().iter().enumerate() {
            if let Some(RpSig::Dcqcn(_, f, _)) = signals.rp_sig(i) {
                dcqcn_slots[f].push(slot as u32);
                continue;
            }
            match signals.rp_place(i) {
                None => {
                    slot_of[i] = slot as u32;
                    block_selected[mmu.signal_block(i)] = true;
                }
                Some((nic, None)) => nics[nic].common.push(slot),
                Some((nic, Some(l))) => match nics[nic].limiters.last_mut() {
                    Some((last, s)) if *last == l => s.push(slot),
                    _ => nics[nic].limiters.push((l, vec![slot])),
                },
            }
        }
        nics.retain(|n| !n.common.is_empty() || !n.limiters.is_empty());
        let widest = (0..mmu.signal_blocks())
            .map(|b| mmu.block_signals(b).len())
            .max()
            .unwrap_or(0);
        let tpc = writer.timescale().ticks_per_cycle();
        let end = window.to.unwrap_or(cycles).min(cycles);
        let view = GtkwView::new(window.from * tpc, end * tpc);
        Ok(Self {
            first: window.from,
            last: end.saturating_sub(1),
            view,
            writer,
            path: path.to_path_buf(),
            dumped: filter.apply(signals.specs()),
            signals,
            todo: Vec::with_capacity(selected),
            values: vec![0; mmu.signals().len()],
            fresh: vec![0; widest],
            primed: false,
            slot_of,
            block_selected,
            nics,
            dcqcn_slots,
        })
    }

    /// The first cycle `>= now` that must be sampled even if nothing changes in it (the
    /// window's first and last); `u64::MAX` if none. Values change only in cycles the
    /// simulator clocks, so the cycles it jumps over need no sample.
    pub fn must_sample(&self, now: u64) -> u64 {
        if now <= self.first {
            self.first
        } else if now <= self.last {
            self.last
        } else {
            u64::MAX
        }
    }

    /// Sample the selected signals after the MMU and the partners clocked cycle `cycle`.
    #[inline]
    pub fn sample(
        &mut self,
        cycle: u64,
        mmu: &Mmu,
        partners: &[LinkPartner],
        dcqcn: &DcqcnFlows,
    ) -> Result<(), WaveError> {
        for n in &mut self.nics {
            let rp = partners[n.nic].rp();
            let busy = rp.busy();
            n.sample = busy || n.was_busy;
            n.was_busy = busy;
            let mut in_use = 0u128;
            if busy {
                for &(l, _) in &n.limiters {
                    if rp.limiters()[l].state != LimiterState::Inactive {
                        in_use |= 1 << l;
                    }
                }
            }
            let ecm_rx = rp.stats().ecm_rx;
            n.mask = if ecm_rx != n.ecm_rx {
                u128::MAX
            } else {
                in_use | n.was_in_use
            };
            n.ecm_rx = ecm_rx;
            n.was_in_use = in_use;
        }
        let todo = &mut self.todo;
        todo.clear();
        if cycle >= self.first && !self.primed {
            self.primed = true;
            for b in 0..mmu.signal_blocks() {
                if self.block_selected[b] {
                    mmu.sample_block(b, &mut self.values[mmu.block_signals(b)]);
                }
            }
        } else if self.primed {
            for (w, &word) in mmu.dirty_blocks().iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let b = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if self.block_selected.get(b) == Some(&true) {
                        let r = mmu.block_signals(b);
                        let fresh = &mut self.fresh[..r.len()];
                        mmu.sample_block(b, fresh);
                        let (old, slots) = (&mut self.values[r.clone()], &self.slot_of[r]);
                        for ((o, &f), &slot) in old.iter_mut().zip(fresh.iter()).zip(slots) {
                            if *o != f {
                                *o = f;
                                if slot != NO_SLOT {
                                    todo.push(slot);
                                }
                            }
                        }
                    }
                }
            }
        }
        for n in self.nics.iter().filter(|n| n.sample) {
            todo.extend(n.common.iter().map(|&s| s as u32));
            for (l, slots) in &n.limiters {
                if n.mask >> l & 1 != 0 {
                    todo.extend(slots.iter().map(|&s| s as u32));
                }
            }
        }
        for f in dcqcn.touched(cycle) {
            todo.extend_from_slice(&self.dcqcn_slots[f]);
        }
        let (signals, values) = (&self.signals, &self.values);
        self.writer
            .sample_slots(cycle, todo.iter().map(|&s| s as usize), |i| {
                match values.get(i) {
                    Some(&v) => v,
                    None => signals.value(i, mmu, partners, dcqcn),
                }
            })
    }

    /// Close the dump and write the `.gtkw` beside it, opening on the first PAUSE frame
    /// the MMU sent (`first_pause`, a cycle) if the dump holds it: a marker there and
    /// `PAUSE_VIEW_CYCLES` around it, else the whole dump.
    pub fn finish(self, mmu: &Mmu, first_pause: Option<u64>) -> Result<(), WaveError> {
        let tpc = self.writer.timescale().ticks_per_cycle();
        self.writer.finish()?;
        write_gtkw(
            &gtkw_path(&self.path),
            &self.path,
            &self.signals.gtkw_groups(mmu),
            &self.dumped,
            &pause_view(self.view, tpc, first_pause),
        )
    }
}

/// The view of a dump (`whole`, in dump time of `tpc` ticks a cycle) that opens on the
/// PAUSE frame sent at cycle `pause` if the dump holds it: a marker there and
/// `PAUSE_VIEW_CYCLES` around it; else `whole`.
pub fn pause_view(whole: GtkwView, tpc: u64, pause: Option<u64>) -> GtkwView {
    let (from, to) = whole.times;
    match pause.map(|c| c * tpc).filter(|t| (from..=to).contains(t)) {
        Some(at) => {
            let before = PAUSE_VIEW_CYCLES / 10 * tpc;
            let start = at.saturating_sub(before).max(from);
            let end = (start + PAUSE_VIEW_CYCLES * tpc).min(to);
            GtkwView::new(start, end).with_marker(at)
        }
        None => whole,
    }
}
