//! `--vcd`/`--wave` of a network: one dump with a scope per switch, `top.swNN.mmu...` (the
//! single switch's `top.mmu...` under the switch's name), and per NIC of a switch,
//! `top.swNN.nic.pPP.*` (the host's NIC on port PP), and a GTKWave view that opens on the
//! first PAUSE a switch sends to another switch.
//!
//! Each switch records its own changes ([`SwitchWaves`], a field of its `Switch`): after
//! each of its steps, the blocks of signals its MMU touched are read and compared with
//! the values it last saw, and the signals that moved are buffered as `(cycle, signal,
//! value)`. An idle switch is not stepped and records nothing. Outside the switches'
//! steps, [`FabricWaves::flush`] merges the buffers into the one writer by cycle, then by
//! switch id, so the dump is the same whatever order the switches stepped in.

use crate::switch::{Nic, Port, PortEnd, Switch};
use crate::trace::switch_name;
use hw_model::{Mmu, Outputs};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use switch_run::waves::{gtkw_path, held_queues, mmu_groups_held, pause_view, trace};
use wave::{
    write_gtkw, AnyWriter, Format, GtkwGroup, GtkwTrace, GtkwView, SignalFilter, SignalSpec,
    WaveError, Window,
};

/// A NIC's signals, after its switch's model signals, per NIC in port order.
#[derive(Debug, Clone, Copy)]
enum NicSig {
    /// Cells the NIC has put on its link to the switch (32 bits, wrapping).
    TxCells,
    /// Messages and packet runs waiting in its class queues.
    QueuedRuns,
}

impl NicSig {
    const ALL: [NicSig; 2] = [NicSig::TxCells, NicSig::QueuedRuns];

    fn name(self) -> &'static str {
        match self {
            NicSig::TxCells => "tx_cells",
            NicSig::QueuedRuns => "queued_runs",
        }
    }

    fn width(self) -> u32 {
        match self {
            NicSig::TxCells => 32,
            NicSig::QueuedRuns => 16,
        }
    }

    fn value(self, nic: &Nic) -> u64 {
        match self {
            NicSig::TxCells => nic.cells_sent,
            NicSig::QueuedRuns => nic.partner.queued_runs() as u64,
        }
    }
}

/// A switch's signals: its model's under `top.swNN.`, then its NICs'.
fn switch_signals(sw: &Switch) -> Vec<SignalSpec> {
    let name = switch_name(sw.node);
    let mmu = sw.mmu.signals().iter().map(|s| {
        let rest = s.path.strip_prefix("top.").unwrap_or(&s.path);
        SignalSpec::new(format!("top.{name}.{rest}"), s.width)
    });
    let nics = sw.nics.iter().flat_map(|n| {
        let at = format!("top.{name}.nic.p{:02}", n.port);
        NicSig::ALL.map(|s| SignalSpec::new(format!("{at}.{}", s.name()), s.width()))
    });
    mmu.chain(nics).collect()
}

/// The current values of the NICs' signals, in signal order.
fn nic_values(nics: &[Nic]) -> impl Iterator<Item = u64> + '_ {
    nics.iter().flat_map(|n| NicSig::ALL.map(|s| s.value(n)))
}

/// The switches' indices by switch id: the order of the dump's scopes and of the merge.
fn by_id(switches: &[Switch]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..switches.len()).collect();
    order.sort_by_key(|&s| switches[s].node);
    order
}

/// Every signal a dump of the network can hold, switch by switch in id order.
pub(crate) fn signals(switches: &[Switch]) -> Vec<SignalSpec> {
    by_id(switches)
        .into_iter()
        .flat_map(|s| switch_signals(&switches[s]))
        .collect()
}

/// What one switch records of its signals (see the module doc).
pub(crate) struct SwitchWaves {
    /// The network-wide index of its first signal.
    base: u32,
    /// Per model signal block, whether any of its signals is dumped; per signal (model,
    /// then NIC), whether it is dumped.
    block_selected: Vec<bool>,
    selected: Vec<bool>,
    /// The values last recorded, per signal; `fresh` holds a block just read.
    values: Vec<u64>,
    fresh: Vec<u64>,
    n_mmu: usize,
    /// Changes since the last flush: (cycle, network-wide signal index, value).
    changes: Vec<(u64, u32, u64)>,
    /// The first PAUSE it sent to another switch: (cycle, port, classes paused).
    first_pause: Option<(u64, u8, u8)>,
    /// Per egress queue, whether it held cells, when the switch ran on another MPI rank
    /// (`crate::ranks`); `None`: read from its own model.
    held: Option<Vec<bool>>,
}

impl SwitchWaves {
    /// The recorder of `sw`, whose signals start at network-wide index `base`; `selected`
    /// says which of them are dumped. Its values start as they are now (the reset state).
    fn new(sw: &Switch, base: usize, selected: &[bool]) -> Self {
        let mmu = &sw.mmu;
        let n_mmu = mmu.signals().len();
        let mut values = vec![0; selected.len()];
        for b in 0..mmu.signal_blocks() {
            mmu.sample_block(b, &mut values[mmu.block_signals(b)]);
        }
        let block_selected = (0..mmu.signal_blocks())
            .map(|b| selected[mmu.block_signals(b)].iter().any(|&s| s))
            .collect();
        let widest = (0..mmu.signal_blocks())
            .map(|b| mmu.block_signals(b).len())
            .max()
            .unwrap_or(0);
        for (v, n) in values[n_mmu..].iter_mut().zip(nic_values(&sw.nics)) {
            *v = n;
        }
        Self {
            base: base as u32,
            block_selected,
            selected: selected.to_vec(),
            values,
            fresh: vec![0; widest],
            n_mmu,
            changes: Vec::new(),
            first_pause: None,
            held: None,
        }
    }

    /// Signal `i` has value `v` after cycle `now`: a change if it is dumped and moved.
    fn record(&mut self, now: u64, i: usize, v: u64) {
        if self.selected[i] && self.values[i] != v {
            self.values[i] = v;
            self.changes.push((now, self.base + i as u32, v));
        }
    }

    /// After the switch's step of cycle `now`: record the dumped signals that moved, and
    /// the first PAUSE sent to another switch.
    pub(crate) fn step(
        &mut self,
        now: u64,
        mmu: &Mmu,
        out: &Outputs,
        ports: &[Port],
        nics: &[Nic],
    ) {
        for (w, &word) in mmu.dirty_blocks().iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.block_selected.get(b) != Some(&true) {
                    continue;
                }
                let r = mmu.block_signals(b);
                let mut fresh = std::mem::take(&mut self.fresh);
                mmu.sample_block(b, &mut fresh[..r.len()]);
                for (i, &v) in r.zip(fresh.iter()) {
                    self.record(now, i, v);
                }
                self.fresh = fresh;
            }
        }
        for (j, v) in nic_values(nics).enumerate() {
            self.record(now, self.n_mmu + j, v);
        }
        if self.first_pause.is_none() {
            self.first_pause = out
                .pfc_tx
                .iter()
                .find(|(p, f)| {
                    f.paused() != 0 && matches!(ports[*p as usize].end, PortEnd::Switch { .. })
                })
                .map(|&(p, f)| (now, p, f.paused()));
        }
    }
}

/// What a switch on one MPI rank recorded since the last flush, for the dump on rank 0
/// (`crate::ranks`): its changes, its first PAUSE to a switch and, at the end, the queues
/// that held cells.
#[cfg(feature = "mpi")]
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Recorded {
    changes: Vec<(u64, u32, u64)>,
    first_pause: Option<(u64, u8, u8)>,
    held: Option<Vec<bool>>,
}

/// What `sw` recorded since the last flush, taken from it; its held queues if `held`.
#[cfg(feature = "mpi")]
pub(crate) fn take_recorded(sw: &mut Switch, held: bool) -> Recorded {
    let w = sw
        .waves
        .as_mut()
        .expect("a recorder on every switch of a dump");
    Recorded {
        changes: std::mem::take(&mut w.changes),
        first_pause: w.first_pause,
        held: held.then(|| held_queues(&sw.mmu)),
    }
}

/// Give `sw` (as built here, run on another rank) what it recorded there.
#[cfg(feature = "mpi")]
pub(crate) fn put_recorded(sw: &mut Switch, r: Recorded) {
    let w = sw
        .waves
        .as_mut()
        .expect("a recorder on every switch of a dump");
    w.changes.extend(r.changes);
    w.first_pause = r.first_pause;
    if r.held.is_some() {
        w.held = r.held;
    }
}

/// The network's dump: the writer and the values it was last given.
pub(crate) struct FabricWaves {
    writer: AnyWriter<BufWriter<File>>,
    path: PathBuf,
    /// The dumped signals (what the `.gtkw` may reference).
    dumped: Vec<SignalSpec>,
    /// Per network-wide signal, its writer slot (the dumped ones) and its value.
    slot_of: Vec<u32>,
    values: Vec<u64>,
    /// Switch indices by id.
    order: Vec<usize>,
    /// This flush's slots of one cycle, and per switch how many of its changes it
    /// merged (kept for their allocations).
    todo: Vec<usize>,
    at: Vec<usize>,
    /// The window's first and last cycle: sampled whatever happens, as the dump starts
    /// with every value at the first and closes one cycle after the last.
    first: u64,
    last: u64,
    /// The last cycle given to the writer.
    sampled: Option<u64>,
    /// The first write error, reported at [`finish`](Self::finish).
    err: Option<WaveError>,
    view: GtkwView,
}

impl FabricWaves {
    /// Write the header of the signals of `switches` that pass `filter` (every glob must
    /// match one) into `file`, created at `path`, in `format`, for a run of `cycles`
    /// cycles at `clock_hz`, and give each switch its recorder.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        switches: &mut [Switch],
        clock_hz: u64,
        file: File,
        path: &Path,
        format: Format,
        filter: &SignalFilter,
        window: Window,
        cycles: u64,
    ) -> Result<Self, WaveError> {
        window.check_within(cycles)?;
        let specs = signals(switches);
        let writer = AnyWriter::with_format(
            BufWriter::new(file),
            format,
            &specs,
            clock_hz,
            filter,
            window,
        )?;
        let mut slot_of = vec![u32::MAX; specs.len()];
        let mut selected = vec![false; specs.len()];
        for (slot, &i) in writer.selected().iter().enumerate() {
            slot_of[i] = slot as u32;
            selected[i] = true;
        }
        let order = by_id(switches);
        let mut values = Vec::with_capacity(specs.len());
        for &s in &order {
            let sw = &mut switches[s];
            let (base, n) = (values.len(), switch_signals(sw).len());
            let rec = SwitchWaves::new(sw, base, &selected[base..base + n]);
            values.extend_from_slice(&rec.values);
            sw.waves = Some(rec);
        }
        let tpc = writer.timescale().ticks_per_cycle();
        let end = window.to.unwrap_or(cycles).min(cycles);
        Ok(Self {
            view: GtkwView::new(window.from * tpc, end * tpc),
            first: window.from,
            last: end.saturating_sub(1),
            writer,
            path: path.to_path_buf(),
            dumped: filter.apply(&specs),
            slot_of,
            values,
            order,
            todo: Vec::new(),
            at: vec![0; switches.len()],
            sampled: None,
            err: None,
        })
    }

    /// Give the writer cycle `cycle`, with the changes in `todo` already in `values`.
    fn sample(&mut self, cycle: u64) {
        if self.err.is_some() {
            return;
        }
        let values = &self.values;
        let r = self
            .writer
            .sample_slots(cycle, self.todo.drain(..), |i| values[i]);
        self.err = r.err();
        self.sampled = Some(cycle);
    }

    /// The window's first cycle, if it has not been given yet and comes before `cycle`:
    /// the dump's initial values.
    fn open_before(&mut self, cycle: u64) {
        if self.sampled.is_none_or(|c| c < self.first) && self.first < cycle {
            self.sample(self.first);
        }
    }

    /// Merge what the switches recorded since the last flush into the dump, cycle by
    /// cycle, each cycle's changes by switch id. Called outside the switches' steps, once
    /// every switch has stepped every cycle it recorded.
    pub(crate) fn flush(&mut self, switches: &mut [&mut Switch]) {
        let mut at = std::mem::take(&mut self.at);
        at.fill(0);
        let changes = |s: usize| {
            switches[s]
                .waves
                .as_ref()
                .map_or(&[][..], |w| &w.changes[..])
        };
        loop {
            let next = self
                .order
                .iter()
                .filter_map(|&s| changes(s).get(at[s]).map(|c| c.0))
                .min();
            let Some(cycle) = next else { break };
            self.open_before(cycle);
            for &s in &self.order {
                let list = changes(s);
                while let Some(&(_, i, v)) = list.get(at[s]).filter(|c| c.0 == cycle) {
                    self.values[i as usize] = v;
                    self.todo.push(self.slot_of[i as usize] as usize);
                    at[s] += 1;
                }
            }
            self.sample(cycle);
        }
        self.at = at;
        for w in switches.iter_mut().filter_map(|s| s.waves.as_mut()) {
            w.changes.clear();
        }
    }

    /// Close the dump at the end of the run (`end`, the first cycle not run) and write the
    /// `.gtkw` beside it, opening on the first PAUSE a switch sent to another switch.
    pub(crate) fn finish(mut self, switches: &mut [Switch], end: u64) -> Result<(), WaveError> {
        self.flush(&mut switches.iter_mut().collect::<Vec<_>>());
        self.open_before(end);
        if self.sampled.is_none_or(|c| c < self.last) && self.last < end {
            self.sample(self.last);
        }
        if let Some(e) = self.err {
            return Err(e);
        }
        let tpc = self.writer.timescale().ticks_per_cycle();
        self.writer.finish()?;
        let pause = switches
            .iter()
            .filter_map(|s| Some((s.waves.as_ref()?.first_pause?, s.node, s.index)))
            .min();
        // The PAUSE across the boundary, then the switch that sent it and the one it
        // paused, then the others.
        let mut groups = Vec::new();
        let mut shown = Vec::new();
        if let Some(((_, port, classes), _, s)) = pause {
            shown.push(s);
            if let PortEnd::Switch { switch, port: q } = switches[s].ports[port as usize].end {
                groups.push(crossing(&switches[s], port, &switches[switch], q, classes));
                shown.push(switch);
            }
        }
        let others: Vec<usize> = self
            .order
            .into_iter()
            .filter(|s| !shown.contains(s))
            .collect();
        for s in shown.into_iter().chain(others) {
            groups.extend(switch_groups(&switches[s]));
        }
        let view = pause_view(self.view, tpc, pause.map(|((c, ..), ..)| c));
        write_gtkw(
            &gtkw_path(&self.path),
            &self.path,
            &groups,
            &self.dumped,
            &view,
        )
    }
}

/// The trace of the single switch's signal `path` (`top.mmu...`) of switch `sw`, named
/// and drawn as there, under the switch's name.
fn switch_trace(sw: &Switch, path: String) -> GtkwTrace {
    let name = switch_name(sw.node);
    let mut t = trace(path);
    let rest = t.path.strip_prefix("top.").unwrap_or(&t.path);
    t.path = format!("top.{name}.{rest}");
    t.name = t.name.map(|n| format!("{name} {n}"));
    t
}

/// The group of a PAUSE from port `p` of `from` to port `q` of `to` for `classes`: the
/// sender's QOFF and transmitter, the receiver's received QOFF, paused mask, transmitter
/// and the paused queues' cells.
fn crossing(from: &Switch, p: u8, to: &Switch, q: u8, classes: u8) -> GtkwGroup {
    let mut traces = vec![
        switch_trace(from, format!("top.mmu.ingress.p{p:02}.qoff")),
        switch_trace(from, format!("top.mmu.egress.p{p:02}.tx_state")),
    ];
    for leaf in ["rx_qoff", "paused", "tx_state"] {
        traces.push(switch_trace(to, format!("top.mmu.egress.p{q:02}.{leaf}")));
    }
    for c in (0..8).filter(|c| classes >> c & 1 != 0) {
        traces.push(switch_trace(
            to,
            format!("top.mmu.egress.p{q:02}.q{c}.cells"),
        ));
    }
    let title = format!(
        "PAUSE {} p{p:02} -> {} p{q:02}",
        switch_name(from.node),
        switch_name(to.node)
    );
    GtkwGroup::new(title, traces)
}

/// A switch's groups in the view: the single switch's, each named and drawn as there,
/// under the switch's name, then its NICs'.
fn switch_groups(sw: &Switch) -> Vec<GtkwGroup> {
    let name = switch_name(sw.node);
    let held = sw.waves.as_ref().and_then(|w| w.held.clone());
    let held = held.unwrap_or_else(|| held_queues(&sw.mmu));
    let mut groups: Vec<GtkwGroup> = mmu_groups_held(&sw.mmu, &held)
        .into_iter()
        .map(|(group, paths)| {
            let traces = paths.into_iter().map(|p| switch_trace(sw, p));
            GtkwGroup::new(format!("{name} {group}"), traces)
        })
        .collect();
    let specs = switch_signals(sw);
    let nics = specs[sw.mmu.signals().len()..].iter().map(|s| {
        let rest = s.path.strip_prefix("top.").unwrap_or(&s.path);
        trace(s.path.clone()).named(rest.replace('.', " "))
    });
    groups.push(GtkwGroup::new(format!("{name} NICs"), nics));
    groups
}
