//! Lockstep mode: the model is stepped every cycle with the DUT's input beats and received
//! PFC frames, and every event it produces (its own stream, [`crate::record`]) is compared
//! with the DUT's events of the same cycle. For RTL built to the model's own timing (its
//! scheduler, line rate and pipeline); any other DUT diverges at its first departure.
//!
//! A `counters` snapshot's `t` and `total` are compared with the model's registers at the
//! start of its cycle (what the cycle's decisions read).
//!
//! Idle stretches are jumped with `Mmu::next_event`/`Mmu::skip_to` (docs/cosim.md). The
//! model runs up to the stream's last `counters` snapshot, the last cycle the DUT ran.
//! The payload CRCs are not the model's to compare ([`crate::payload`] does).

use crate::events::{Arrive, Counters, Dir, Event, Pfc};
use crate::record::Recorder;
use crate::{Decisions, Divergence, Replay};
use hw_model::{Beat, Derived, Ecn, FiveTuple, Inputs, Mmu, Outputs, PacketHdr, PfcFrame};

/// How the DUT's stream is written, learnt from its first events: the model's events are
/// shown the same way (cells listed or implied, tuples and pause quanta or not).
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    cells: Option<bool>,
    tuples: Option<bool>,
    quanta: Option<bool>,
    /// The DUT reports no decision (`--decisions inferred`): the model's are not compared.
    no_decisions: bool,
}

pub struct Lockstep {
    d: Derived,
    mmu: Mmu,
    rec: Recorder,
    out_buf: Outputs,
    ingress: Vec<Option<Beat>>,
    /// Per port, the packet whose cells the stream implies: its next beat.
    implied: Vec<Option<Beat>>,
    batch: Vec<(usize, Event)>,
    batch_cycle: u64,
    shape: Shape,
    out: Vec<Divergence>,
    stopped: bool,
}

impl Lockstep {
    pub fn new(d: Derived, decisions: Decisions) -> Self {
        let ports = d.ports;
        Self {
            mmu: Mmu::new(d.clone()),
            rec: Recorder::new(&d),
            out_buf: Outputs::with_ports(ports),
            ingress: vec![None; ports],
            implied: vec![None; ports],
            batch: Vec::new(),
            batch_cycle: 0,
            shape: Shape {
                no_decisions: decisions == Decisions::Inferred,
                ..Shape::default()
            },
            out: Vec::new(),
            stopped: false,
            d,
        }
    }

    /// The last batch. A stream that ends at the start of a cycle (its snapshot, and the
    /// PFC changes of the cycle before, stamped one later) gets them compared with the
    /// model's without stepping that cycle: the DUT did not run it.
    fn last_batch(&mut self) {
        let batch = std::mem::take(&mut self.batch);
        let c = self.batch_cycle;
        if self.stopped || batch.is_empty() {
            return;
        }
        let at_start = batch.iter().all(|(_, e)| match e {
            Event::Pfc(p) => p.dir == Dir::Sent,
            Event::Counters(_) => true,
            _ => false,
        });
        if !at_start || c == 0 {
            self.run_to(c, batch);
            return;
        }
        if self.mmu.cycle() < c {
            self.run_to(c - 1, Vec::new());
        }
        if self.stopped {
            return;
        }
        self.snapshots(&batch);
        let mut model = Vec::new();
        self.rec.finish(c, &self.mmu, |e| model.push(e.clone()));
        self.compare(c, &batch, model);
    }

    /// The batch's `counters` snapshots against the model's registers, which stand at the
    /// start of the snapshot's cycle.
    fn snapshots(&mut self, batch: &[(usize, Event)]) {
        for (line, ev) in batch {
            let Event::Counters(k) = ev else { continue };
            let (t, total) = (self.mmu.threshold(), self.mmu.buffered_cells());
            if k.t != t {
                self.snapshot(*line, k, "threshold", format!("T = {t}"));
            }
            if k.total != total {
                self.snapshot(
                    *line,
                    k,
                    "accounting",
                    format!("{total} cells charged and not released"),
                );
            }
        }
    }

    fn snapshot(&mut self, line: usize, k: &Counters, check: &'static str, expected: String) {
        self.out.push(Divergence {
            queue: None,
            cycle: k.cycle,
            line,
            check,
            event: Event::Counters(k.clone()).to_line(),
            expected,
            history: Vec::new(),
        });
    }

    fn learn(&mut self, ev: &Event) {
        let s = &mut self.shape;
        match ev {
            Event::Arrive(a) => {
                s.cells.get_or_insert(a.cell.is_some());
                s.tuples.get_or_insert(a.tuple.is_some());
            }
            Event::Depart(d) => {
                s.cells.get_or_insert(d.cell.is_some());
            }
            Event::Pfc(p) if p.dir == Dir::Received => {
                s.quanta.get_or_insert(p.quanta.is_some());
            }
            _ => {}
        }
    }

    /// The model's event as the DUT's stream would show it; `None` if it would not.
    fn shaped(&self, mut ev: Event) -> Option<Event> {
        let cells = self.shape.cells.unwrap_or(true);
        match &mut ev {
            Event::Arrive(a) => {
                if !cells {
                    if a.cell != Some(0) {
                        return None;
                    }
                    a.cell = None;
                }
                if !self.shape.tuples.unwrap_or(true) {
                    a.tuple = None;
                }
            }
            Event::Depart(d) if !cells => {
                if d.cell != Some(0) {
                    return None;
                }
                d.cell = None;
            }
            Event::Pfc(p) if p.dir == Dir::Received && !self.shape.quanta.unwrap_or(true) => {
                p.quanta = None;
            }
            Event::Counters(_) => return None,
            Event::Admit(_) | Event::Drop(_) if self.shape.no_decisions => return None,
            _ => {}
        }
        Some(ev)
    }

    /// Step the model through cycle `c`, whose DUT events are `batch`.
    fn run_to(&mut self, c: u64, batch: Vec<(usize, Event)>) {
        while !self.stopped && self.mmu.cycle() < c {
            let next = self.mmu.next_event().min(c);
            if next > self.mmu.cycle() && self.implied.iter().all(Option::is_none) {
                if let Err(e) = self.mmu.skip_to(next) {
                    self.stop(next, format!("{e}"));
                }
                continue;
            }
            let now = self.mmu.cycle();
            self.step(now, &[]);
        }
        if !self.stopped {
            self.step(c, &batch);
        }
    }

    fn step(&mut self, now: u64, batch: &[(usize, Event)]) {
        self.snapshots(batch);
        let mut frames: Vec<(u8, PfcFrame)> = Vec::new();
        for (p, beat) in self.ingress.iter_mut().enumerate() {
            *beat = self.implied[p].take();
        }
        for (_, ev) in batch {
            match ev {
                Event::Arrive(a) => self.arrive(a),
                Event::Pfc(p) if p.dir == Dir::Received => self.frame(p, &mut frames),
                _ => {}
            }
        }
        let inputs = Inputs {
            ingress: &self.ingress,
            pfc_rx: &frames,
        };
        if let Err(e) = self.mmu.step(&inputs, &mut self.out_buf) {
            self.stop(now, format!("the model refused the DUT's inputs: {e}"));
            return;
        }
        for (p, beat) in self.ingress.iter().enumerate() {
            if let Some(b) = beat.filter(|b| !self.shape.cells.unwrap_or(true) && !b.eop()) {
                self.implied[p] = Some(Beat {
                    idx: b.idx + 1,
                    ..b
                });
            }
        }
        let mut model = Vec::new();
        self.rec.step(now, &inputs, &self.out_buf, &self.mmu, |e| {
            model.push(e.clone())
        });
        self.compare(now, batch, model);
    }

    fn arrive(&mut self, a: &Arrive) {
        self.ingress[a.port as usize] = Some(beat(a));
    }

    fn frame(&self, p: &Pfc, frames: &mut Vec<(u8, PfcFrame)>) {
        add_frame(&self.d, p, frames);
    }

    /// The DUT's events of cycle `c` against the model's.
    fn compare(&mut self, c: u64, batch: &[(usize, Event)], model: Vec<Event>) {
        let mut model: Vec<Event> = model.into_iter().filter_map(|e| self.shaped(e)).collect();
        model.sort_by_key(|e| (e.rank(), e.to_line()));
        let mut dut: Vec<&(usize, Event)> = batch
            .iter()
            .filter(|(_, e)| !matches!(e, Event::Counters(_)))
            .collect();
        dut.sort_by_key(|(_, e)| (e.rank(), e.to_line()));
        let (mut i, mut j) = (0, 0);
        while i < dut.len() || j < model.len() {
            let (line, d) = match dut.get(i) {
                Some((l, e)) => (*l, Some(e)),
                None => (0, None),
            };
            let m = model.get(j);
            match (d, m) {
                (Some(d), Some(m)) if d == m => {
                    i += 1;
                    j += 1;
                    continue;
                }
                (Some(d), Some(m)) if (d.rank(), d.to_line()) < (m.rank(), m.to_line()) => {
                    self.diverge(c, line, d.to_line(), "no such event".into());
                    i += 1;
                }
                (Some(d), None) => {
                    self.diverge(c, line, d.to_line(), "no such event".into());
                    i += 1;
                }
                (_, Some(m)) => {
                    self.diverge(c, line, "(none)".into(), m.to_line());
                    j += 1;
                }
                (None, None) => break,
            }
        }
    }

    fn diverge(&mut self, cycle: u64, line: usize, event: String, expected: String) {
        self.out.push(Divergence {
            queue: None,
            cycle,
            line,
            check: "lockstep",
            event,
            expected,
            history: Vec::new(),
        });
    }

    fn stop(&mut self, cycle: u64, why: String) {
        self.stopped = true;
        self.diverge(cycle, 0, "the model's step".into(), why);
    }
}

impl Replay for Lockstep {
    fn feed(&mut self, line: usize, mut ev: Event) {
        if matches!(ev, Event::Meta(_)) || self.stopped {
            return;
        }
        match &mut ev {
            Event::Arrive(a) => a.crc = None,
            Event::Depart(d) => d.crc = None,
            _ => {}
        }
        self.learn(&ev);
        if ev.cycle() != self.batch_cycle && !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            self.run_to(self.batch_cycle, batch);
        }
        self.batch_cycle = ev.cycle();
        self.batch.push((line, ev));
    }

    fn finish(&mut self) {
        self.last_batch();
    }

    fn take(&mut self) -> Vec<Divergence> {
        std::mem::take(&mut self.out)
    }

    fn count(&self) -> usize {
        self.out.len()
    }
}

/// The model's input beat for an `arrive` event (its cell, or the start of packet).
pub fn beat(a: &Arrive) -> Beat {
    let t = a.tuple.map_or(FiveTuple::default(), |t| FiveTuple {
        src_ip: t.src_ip,
        dst_ip: t.dst_ip,
        src_port: t.src_port,
        dst_port: t.dst_port,
        proto: t.proto,
    });
    Beat {
        hdr: PacketHdr {
            flow: a.flow,
            seq: a.seq,
            src: a.port,
            dst: a.dst,
            prio: a.prio,
            len: a.bytes as u16,
            tuple: t,
            cm_tag: None,
            // Not in the stream: the ECN marker's CE marks are not compared.
            ecn: Ecn::default(),
        },
        idx: a.cell.unwrap_or(0),
        ncells: a.ncells,
    }
}

/// Add a received `pfc` event to the frames of its cycle: one frame per port and kind
/// (queue- or port-level); without `quanta`, a PAUSE carries the switch's pause time.
pub fn add_frame(d: &Derived, p: &Pfc, frames: &mut Vec<(u8, PfcFrame)>) {
    let port_level = p.port_level == Some(true);
    let quanta = p
        .quanta
        .unwrap_or(if p.pause { d.cfg.pfc_pause_quanta } else { 0 });
    let i = match frames
        .iter()
        .position(|(q, f)| *q == p.port && f.port_level == port_level)
    {
        Some(i) => i,
        None => {
            frames.push((
                p.port,
                PfcFrame {
                    port_level,
                    ..PfcFrame::default()
                },
            ));
            frames.len() - 1
        }
    };
    let f = &mut frames[i].1;
    if port_level {
        f.class_enable = 0xFF;
        f.quanta = [quanta; 8];
    } else {
        f.class_enable |= 1 << p.class;
        f.quanta[p.class as usize] = quanta;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check, record, Mode, Options};
    use hw_model::SwitchConfig;

    /// The model's own stream of two packets, with a `counters` snapshot every 10 cycles
    /// (the registers at the start of the cycle) and at the end.
    fn model_stream(d: &Derived) -> Vec<Event> {
        let mut mmu = Mmu::new(d.clone());
        let mut rec = Recorder::new(d);
        let mut out = Outputs::with_ports(d.ports);
        let mut evs = vec![record::meta(d, "small", 1)];
        let arrive = |seq, cell| Arrive {
            cycle: 0,
            port: 0,
            prio: 0,
            flow: 1,
            seq,
            bytes: 2 * d.cfg.cell_bytes,
            dst: 1,
            ncells: 2,
            cell: Some(cell),
            tuple: None,
            crc: None,
        };
        for now in 0..200 {
            let mut ingress = vec![None; d.ports];
            if now < 4 {
                ingress[0] = Some(beat(&arrive(now as u32 / 2, now as u16 % 2)));
            }
            let snapshot = Event::Counters(Counters {
                cycle: now,
                t: mmu.threshold(),
                total: mmu.buffered_cells(),
                free: None,
                other: serde_json::Map::new(),
            });
            let inp = Inputs {
                ingress: &ingress,
                pfc_rx: &[],
            };
            mmu.step(&inp, &mut out).unwrap();
            rec.step(now, &inp, &out, &mmu, |e| evs.push(e.clone()));
            if now % 10 == 0 {
                evs.push(snapshot);
            }
        }
        rec.finish(mmu.cycle(), &mmu, |e| evs.push(e.clone()));
        evs
    }

    fn lockstep(d: &Derived, evs: &[Event]) -> Vec<Divergence> {
        let text: String = evs.iter().map(|e| e.to_line() + "\n").collect();
        let opts = Options {
            mode: Mode::Lockstep,
            ..Options::default()
        };
        check(d.clone(), text.as_bytes(), opts, true)
            .unwrap()
            .divergences
    }

    #[test]
    fn snapshots_values_are_compared_with_the_models_registers() {
        let d = SwitchConfig::small().build().unwrap();
        let evs = model_stream(&d);
        let busy = evs
            .iter()
            .position(|e| matches!(e, Event::Counters(k) if k.total > 0))
            .expect("a snapshot with cells buffered");
        assert_eq!(lockstep(&d, &evs), vec![]);
        let last = evs.len() - 1;
        for (i, field) in [(busy, "t"), (busy, "total"), (last, "t"), (last, "total")] {
            let mut bad = evs.clone();
            let Event::Counters(k) = &mut bad[i] else {
                panic!("a snapshot")
            };
            match field {
                "t" => k.t = u32::MAX,
                _ => k.total += 1,
            }
            let divs = lockstep(&d, &bad);
            let want = if field == "t" {
                "threshold"
            } else {
                "accounting"
            };
            assert_eq!(divs.len(), 1, "{field} at {i}: {divs:?}");
            assert_eq!((divs[0].check, divs[0].line), (want, i + 1), "{}", divs[0]);
        }
    }

    #[test]
    fn payload_crcs_are_left_out_of_the_comparison() {
        let d = SwitchConfig::small().build().unwrap();
        let mut evs = model_stream(&d);
        for e in &mut evs {
            match e {
                Event::Arrive(a) if a.cell == Some(0) => a.crc = Some(a.seq),
                Event::Depart(x) if x.cell == Some(0) => x.crc = Some(x.seq),
                _ => {}
            }
        }
        assert_eq!(lockstep(&d, &evs), vec![]);
        let i = evs
            .iter()
            .rposition(|e| matches!(e, Event::Depart(x) if x.crc.is_some()))
            .unwrap();
        if let Event::Depart(x) = &mut evs[i] {
            x.crc = Some(99);
        }
        let divs = lockstep(&d, &evs);
        assert_eq!(divs.len(), 1, "{divs:?}");
        assert_eq!((divs[0].check, divs[0].line), ("payload", i + 1));
    }
}
