//! `--vcd`/`--wave` of a network: one dump with a scope per switch, `top.swNN.mmu...` (the
//! single switch's `top.mmu...` under the switch's name), per NIC of a switch,
//! `top.swNN.nic.pPP.*` (the host's NIC on port PP), and per link between two switches,
//! `top.link.swAA_pPP__swBB_pQQ.*` (its two directions), and a GTKWave view that opens on
//! the first PAUSE a switch sends to another switch.
//!
//! A link's signals are recorded by the switch that sees them (the sender its cells sent,
//! its pause state and the frames it received; the receiver the cells it took), so no
//! switch reads another's state; the cells in flight, the difference, are made when the
//! recordings are merged.
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

/// A signal of one direction of a link between two switches, `from -> to`: the cells go
/// that way, the PFC frames that pause them the other way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkSig {
    /// Cells `from` has put on the link (32 bits, wrapping).
    TxCells,
    /// Cells `to` has taken off it (32 bits, wrapping).
    RxCells,
    /// `tx_cells - rx_cells`: cells on the wire (made at the merge).
    InFlight,
    /// Per class, whether `from`'s egress is paused by the frames `to` sent.
    Paused,
    /// PFC frames (PAUSE and RESUME) `from` has received from `to` (16 bits, wrapping).
    PfcRxFrames,
}

impl LinkSig {
    /// In the order of the dump and the view: what is on the wire and what holds it, then
    /// the counters.
    const ALL: [LinkSig; 5] = [
        LinkSig::InFlight,
        LinkSig::Paused,
        LinkSig::PfcRxFrames,
        LinkSig::TxCells,
        LinkSig::RxCells,
    ];

    fn name(self) -> &'static str {
        match self {
            LinkSig::TxCells => "tx_cells",
            LinkSig::RxCells => "rx_cells",
            LinkSig::InFlight => "in_flight",
            LinkSig::Paused => "paused",
            LinkSig::PfcRxFrames => "pfc_rx_frames",
        }
    }

    fn width(self) -> u32 {
        match self {
            LinkSig::TxCells | LinkSig::RxCells | LinkSig::InFlight => 32,
            LinkSig::Paused => 8,
            LinkSig::PfcRxFrames => 16,
        }
    }

    /// Whether the receiving end (`to`) records it, not the sender.
    fn at_receiver(self) -> bool {
        self == LinkSig::RxCells
    }
}

/// One direction of a link between two switches: switch indices and their ports.
#[derive(Debug, Clone, Copy)]
struct LinkDir {
    from: usize,
    from_port: u8,
    to: usize,
    to_port: u8,
}

/// The links between switches, each as its two directions (the lower switch id's first),
/// links in the order of that switch's id and port: the order of their scopes.
fn link_dirs(switches: &[Switch]) -> Vec<LinkDir> {
    let mut dirs = Vec::new();
    for s in by_id(switches) {
        for (p, port) in switches[s].ports.iter().enumerate() {
            let PortEnd::Switch { switch, port: q } = port.end else {
                continue;
            };
            if switches[switch].node > switches[s].node {
                let ab = LinkDir {
                    from: s,
                    from_port: p as u8,
                    to: switch,
                    to_port: q,
                };
                let ba = LinkDir {
                    from: switch,
                    from_port: q,
                    to: s,
                    to_port: p as u8,
                };
                dirs.extend([ab, ba]);
            }
        }
    }
    dirs
}

/// The scope of the link of direction `d`, `top.link.swAA_pPP__swBB_pQQ` (the lower id
/// first), and the direction's name in it, `swAA_to_swBB`.
fn link_scope(switches: &[Switch], d: &LinkDir) -> (String, String) {
    let end = |s: usize, p: u8| format!("{}_p{p:02}", switch_name(switches[s].node));
    let (a, b) = (end(d.from, d.from_port), end(d.to, d.to_port));
    let (from, to) = (
        switch_name(switches[d.from].node),
        switch_name(switches[d.to].node),
    );
    let scope = if switches[d.from].node < switches[d.to].node {
        format!("top.link.{a}__{b}")
    } else {
        format!("top.link.{b}__{a}")
    };
    (scope, format!("{from}_to_{to}"))
}

/// The links' signals, after every switch's: per direction of [`link_dirs`], [`LinkSig::ALL`].
fn link_signals(switches: &[Switch]) -> Vec<SignalSpec> {
    link_dirs(switches)
        .iter()
        .flat_map(|d| {
            let (scope, dir) = link_scope(switches, d);
            LinkSig::ALL.map(|s| SignalSpec::new(format!("{scope}.{dir}.{}", s.name()), s.width()))
        })
        .collect()
}

/// What a switch records of one link signal: its network-wide index, the signal, the
/// switch's port on the link, and the value it last recorded.
#[derive(Debug, Clone)]
struct LinkProbe {
    index: u32,
    sig: LinkSig,
    port: u8,
    value: u64,
}

impl LinkProbe {
    /// The signal's value after the switch's step of cycle `now`; `rx` is the cells it
    /// took on the port this step.
    fn read(&self, now: u64, ports: &[Port], rx: u64) -> u64 {
        let stats = &ports[self.port as usize].stats;
        match self.sig {
            LinkSig::TxCells => stats.cells_tx,
            LinkSig::RxCells => self.value + rx,
            // The classes paused in the next cycle: those whose paused time grows in it.
            LinkSig::Paused => {
                let (a, b) = (
                    stats.pause.paused_cycles(now + 1),
                    stats.pause.paused_cycles(now + 2),
                );
                (0..8).filter(|&c| b[c] > a[c]).fold(0, |m, c| m | 1 << c)
            }
            LinkSig::PfcRxFrames => stats.pause_rx + stats.resume_rx,
            LinkSig::InFlight => unreachable!("made at the merge, never probed"),
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
    let mut specs: Vec<SignalSpec> = by_id(switches)
        .into_iter()
        .flat_map(|s| switch_signals(&switches[s]))
        .collect();
    specs.extend(link_signals(switches));
    specs
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
    /// The link signals it records (those dumped, and the counters of a dumped
    /// `in_flight`).
    links: Vec<LinkProbe>,
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
            links: Vec::new(),
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
        for probe in &mut self.links {
            let rx = if probe.sig == LinkSig::RxCells {
                let port = probe.port;
                out.cell_events
                    .iter()
                    .filter(|e| e.beat.hdr.src == port)
                    .count() as u64
            } else {
                0
            };
            let v = probe.read(now, ports, rx);
            if v != probe.value {
                probe.value = v;
                self.changes.push((now, probe.index, v));
            }
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
    /// Per direction of a link whose `in_flight` is dumped: the network-wide indices of its
    /// `tx_cells`, `rx_cells` and `in_flight`.
    flights: Vec<[usize; 3]>,
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
        let flights = give_link_probes(switches, values.len(), &selected);
        values.resize(specs.len(), 0);
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
            flights,
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

    /// Signal `i` (network-wide) has value `v` from this cycle; a dumped one is written.
    fn set(&mut self, i: usize, v: u64) {
        self.values[i] = v;
        if self.slot_of[i] != u32::MAX {
            self.todo.push(self.slot_of[i] as usize);
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
            for o in 0..self.order.len() {
                let s = self.order[o];
                let list = changes(s);
                while let Some(&(_, i, v)) = list.get(at[s]).filter(|c| c.0 == cycle) {
                    self.set(i as usize, v);
                    at[s] += 1;
                }
            }
            for k in 0..self.flights.len() {
                let [tx, rx, flight] = self.flights[k];
                let v = self.values[tx].saturating_sub(self.values[rx]);
                if v != self.values[flight] {
                    self.set(flight, v);
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
        // The PAUSE across the boundary and its link, then the switch that sent it and
        // the one it paused, then the others, then the other links.
        let dirs = link_dirs(switches);
        let mut links: Vec<Option<GtkwGroup>> = dirs
            .chunks(2)
            .map(|pair| Some(link_group(switches, pair)))
            .collect();
        let mut groups = Vec::new();
        let mut shown = Vec::new();
        if let Some(((_, port, classes), _, s)) = pause {
            shown.push(s);
            if let PortEnd::Switch { switch, port: q } = switches[s].ports[port as usize].end {
                groups.push(crossing(&switches[s], port, &switches[switch], q, classes));
                let link = dirs.iter().position(|d| d.from == s && d.from_port == port);
                groups.extend(link.and_then(|d| links[d / 2].take()));
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
        groups.extend(links.into_iter().flatten());
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

/// Give each switch the probes of the link signals it records, the links' signals starting
/// at network-wide index `base`, `selected` saying which are dumped; returns the
/// directions whose `in_flight` is dumped (their two counters are recorded for it).
fn give_link_probes(switches: &mut [Switch], base: usize, selected: &[bool]) -> Vec<[usize; 3]> {
    let n = LinkSig::ALL.len();
    let at = |d: usize, sig: LinkSig| {
        base + d * n + LinkSig::ALL.iter().position(|&s| s == sig).unwrap_or(0)
    };
    let mut flights = Vec::new();
    for (d, dir) in link_dirs(switches).iter().enumerate() {
        let flight = selected[at(d, LinkSig::InFlight)];
        if flight {
            flights.push([
                at(d, LinkSig::TxCells),
                at(d, LinkSig::RxCells),
                at(d, LinkSig::InFlight),
            ]);
        }
        for sig in LinkSig::ALL {
            let counter = matches!(sig, LinkSig::TxCells | LinkSig::RxCells);
            if sig == LinkSig::InFlight || !(selected[at(d, sig)] || counter && flight) {
                continue;
            }
            let (s, port) = if sig.at_receiver() {
                (dir.to, dir.to_port)
            } else {
                (dir.from, dir.from_port)
            };
            let rec = switches[s]
                .waves
                .as_mut()
                .expect("every switch has its recorder before its links' probes");
            rec.links.push(LinkProbe {
                index: at(d, sig) as u32,
                sig,
                port,
                value: 0,
            });
        }
    }
    flights
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

/// The group of a link (its two directions, `pair`): per direction its cells in flight
/// (analog), the classes paused and the frames that paused them, and its two counters.
fn link_group(switches: &[Switch], pair: &[LinkDir]) -> GtkwGroup {
    let (scope, _) = link_scope(switches, &pair[0]);
    let traces = pair.iter().flat_map(|d| {
        let (_, dir) = link_scope(switches, d);
        LinkSig::ALL.map(|sig| {
            let t = GtkwTrace::new(format!("{scope}.{dir}.{}", sig.name())).named(format!(
                "{} {}",
                dir.replace('_', " "),
                sig.name()
            ));
            match sig {
                LinkSig::InFlight => t.analog(),
                LinkSig::Paused => t.binary(),
                _ => t,
            }
        })
    });
    let title = scope.trim_start_matches("top.link.").replace("__", " -- ");
    GtkwGroup::new(format!("link {}", title.replace('_', " ")), traces)
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

#[cfg(test)]
mod tests {
    use crate::build::{build, Overrides};
    use crate::link::LinkFault;
    use std::collections::BTreeMap;
    use std::path::Path;
    use wave::{Format, SignalFilter, Window};

    /// Two switches (4, 5; link 4 between them) and two hosts each; hosts 0 and 2 send 1 MB
    /// each to host 3 under switch 5, whose lossless class 3 pauses the link from switch 4.
    const NET: &str = "name = \"t\"\n[switch]\nprofile = \"small\"\nlossless_priorities = [3]\n\
        buffer_bytes = 1048576\n[run]\ncycles = 60000\n[fabric.links]\nnodes = 6\nswitches = [4, 5]\n\
        list = [[0, 4, 100, 200], [1, 4, 100, 200], [2, 5, 100, 200], [3, 5, 100, 200], [4, 5, 100, 1000]]\n\
        [[fabric.workload]]\nkind = \"fan_in\"\npg = 3\nreceiver = 3\nfrom = [0, 2]\nsize_bytes = 1000000\n";

    /// The changes of every signal of a VCD, by full name: the number of value changes.
    fn changes(vcd: &str) -> BTreeMap<String, usize> {
        let (mut scope, mut names, mut count) = (Vec::new(), BTreeMap::new(), BTreeMap::new());
        for line in vcd.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["$scope", _, name, "$end"] => scope.push(*name),
                ["$upscope", "$end"] => {
                    scope.pop();
                }
                ["$var", _, _, id, name, ..] => {
                    names.insert(id.to_string(), format!("{}.{name}", scope.join(".")));
                }
                [value, id] if value.starts_with('b') => {
                    *count.entry(names[*id].clone()).or_insert(0) += 1;
                }
                _ => {}
            }
        }
        count
    }

    /// The frames switch 4 received from switch 5 on the link, with every frame reaching it
    /// and with every frame lost on the link (the companion: the link's scope shows the
    /// loss while switch 5 goes on pausing).
    fn link_frames(fault: Option<LinkFault>) -> (usize, usize) {
        let mut built = build(
            &scenario::Scenario::parse(NET, "t").unwrap(),
            Path::new("."),
            Overrides::default(),
        )
        .unwrap();
        if let Some(f) = fault {
            built.net.inject_fault(f);
        }
        let path = std::env::temp_dir().join(format!(
            "fabric-link-waves-{}-{}.vcd",
            std::process::id(),
            fault.is_some()
        ));
        let file = std::fs::File::create(&path).unwrap();
        built
            .net
            .attach_waves(
                file,
                &path,
                Format::Vcd,
                &SignalFilter::all(),
                Window::default(),
                60_000,
            )
            .unwrap();
        built.net.run(&built.options).unwrap();
        built.net.finish_outputs().unwrap();
        let vcd = std::fs::read_to_string(&path).unwrap();
        for p in [path.clone(), path.with_extension("gtkw")] {
            let _ = std::fs::remove_file(p);
        }
        let c = changes(&vcd);
        let link = "top.link.sw04_p02__sw05_p02.sw04_to_sw05.pfc_rx_frames";
        (c[link], c["top.sw05.mmu.ingress.p02.qoff"])
    }

    #[test]
    fn the_link_scope_shows_the_frames_that_reached_the_sender() {
        let (received, qoff) = link_frames(None);
        assert!(
            qoff > 2 && received > 2,
            "{received} frames, {qoff} QOFF changes"
        );
        let (received, qoff) = link_frames(Some(LinkFault::DropPfc { link: 4, from: 4 }));
        assert!(qoff > 0, "switch 5 still pauses");
        // The initial value only.
        assert_eq!(received, 1, "no frame reached switch 4");
    }
}
