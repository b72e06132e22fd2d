//! The model's own event stream: what one [`Mmu::step`] did, as events (docs/cosim.md).
//! `mmu-sim run --trace-events` writes it, and lockstep mode compares it with the DUT's.
//!
//! The model lists every cell (`cell` on `arrive` and `depart`), since its cells do not
//! follow one per cycle: they arrive and leave at the port's line rate.

use crate::events::{
    Admit, Arrive, Counters, Depart, Dir, Drop, Event, Meta, Pfc, Segments, Tuple, SCHEMA,
};
use hw_model::{Beat, Derived, Inputs, Mmu, Outputs};

/// Turns the model's cycles into events, in the stream's order.
pub struct Recorder {
    /// QOFF bits per port and POFF ports after the last recorded step.
    qoff: Vec<u8>,
    poff: u64,
    /// QOFF/POFF changes of the last step, stamped with the next cycle.
    pending: Vec<Event>,
    /// Whether arrivals carry their 5-tuple (HCF hashes it).
    tuples: bool,
    cycle: Vec<Event>,
}

/// The `meta` line of the model's stream.
pub fn meta(d: &Derived, config: &str, seed: u64) -> Event {
    let mut params = serde_json::Map::new();
    params.insert("ports".into(), d.ports.into());
    params.insert("policy".into(), d.cfg.policy.name().into());
    params.insert("cells".into(), d.total_cells.into());
    Event::Meta(Meta {
        cycle: 0,
        schema: SCHEMA.into(),
        seed,
        bug: None,
        config: config.into(),
        params,
        tool: Some(format!("mmu-sim {}", env!("CARGO_PKG_VERSION"))),
    })
}

impl Recorder {
    pub fn new(d: &Derived) -> Self {
        Self {
            qoff: vec![0; d.ports],
            poff: 0,
            pending: Vec::new(),
            tuples: !d.hcf.is_empty(),
            cycle: Vec::with_capacity(4 * d.ports),
        }
    }

    fn arrive(tuples: bool, now: u64, port: usize, b: &Beat) -> Event {
        let h = &b.hdr;
        Event::Arrive(Arrive {
            cycle: now,
            port: port as u8,
            prio: h.prio,
            flow: h.flow,
            seq: h.seq,
            bytes: h.len as u32,
            dst: h.dst,
            ncells: b.ncells,
            cell: Some(b.idx),
            tuple: tuples.then_some(Tuple {
                src_ip: h.tuple.src_ip,
                dst_ip: h.tuple.dst_ip,
                src_port: h.tuple.src_port,
                dst_port: h.tuple.dst_port,
                proto: h.tuple.proto,
            }),
            crc: None,
        })
    }

    /// The events of cycle `now`, which `mmu` has just stepped with `inp` into `out`, in
    /// order; every event of earlier cycles was emitted before.
    pub fn step(
        &mut self,
        now: u64,
        inp: &Inputs,
        out: &Outputs,
        mmu: &Mmu,
        mut emit: impl FnMut(&Event),
    ) {
        let (early, due): (Vec<Event>, Vec<Event>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|e| e.cycle() < now);
        early.iter().for_each(&mut emit);
        let ev = &mut self.cycle;
        ev.clear();
        ev.extend(due);
        for &(port, f) in inp.pfc_rx {
            let paused = f.paused();
            for class in (0..8).filter(|c| f.class_enable >> c & 1 != 0) {
                ev.push(Event::Pfc(Pfc {
                    cycle: now,
                    port,
                    class,
                    pause: paused >> class & 1 != 0,
                    dir: Dir::Received,
                    quanta: Some(f.quanta[class as usize]),
                    port_level: f.port_level.then_some(true),
                }));
                if f.port_level {
                    break;
                }
            }
        }
        for (port, b) in inp.ingress.iter().enumerate() {
            let Some(b) = b else { continue };
            ev.push(Self::arrive(self.tuples, now, port, b));
            if !b.sop() {
                continue;
            }
            let (h, port) = (&b.hdr, port as u8);
            ev.push(match mmu.started(port as usize) {
                Some(Ok(plan)) => Event::Admit(Admit {
                    cycle: now,
                    port,
                    flow: h.flow,
                    seq: h.seq,
                    segments: Segments {
                        private: plan.seg0 as u32,
                        shared: plan.seg1 as u32,
                        headroom: plan.headroom as u32,
                    },
                }),
                Some(Err(r)) => Event::Drop(Drop {
                    cycle: now,
                    port,
                    flow: h.flow,
                    seq: h.seq,
                    reason: r.name().into(),
                }),
                None => unreachable!("a start of packet was decided"),
            });
        }
        for dep in &out.departures {
            let h = &dep.beat.hdr;
            ev.push(Event::Depart(Depart {
                cycle: now,
                port: dep.port,
                queue: h.prio,
                flow: h.flow,
                seq: h.seq,
                src: h.src,
                ncells: dep.beat.ncells,
                cell: Some(dep.beat.idx),
                crc: None,
            }));
        }
        ev.sort_by_key(Event::rank);
        ev.iter().for_each(&mut emit);
        self.pfc_changes(now + 1, mmu);
    }

    /// QOFF and POFF changes made in the step just taken, stamped `at`.
    fn pfc_changes(&mut self, at: u64, mmu: &Mmu) {
        for (port, old) in self.qoff.iter_mut().enumerate() {
            let new = mmu.qoff(port);
            let changed = *old ^ new;
            for class in (0..8).filter(|c| changed >> c & 1 != 0) {
                self.pending.push(Event::Pfc(Pfc {
                    cycle: at,
                    port: port as u8,
                    class,
                    pause: new >> class & 1 != 0,
                    dir: Dir::Sent,
                    quanta: None,
                    port_level: None,
                }));
            }
            *old = new;
        }
        let poff = mmu.poff();
        let changed = poff ^ self.poff;
        for port in (0..self.qoff.len()).filter(|p| changed >> p & 1 != 0) {
            self.pending.push(Event::Pfc(Pfc {
                cycle: at,
                port: port as u8,
                class: 0,
                pause: poff >> port & 1 != 0,
                dir: Dir::Sent,
                quanta: None,
                port_level: Some(true),
            }));
        }
        self.poff = poff;
        self.pending.sort_by_key(Event::rank);
    }

    /// The end of the stream at cycle `now` (the next cycle, not run): the changes of the
    /// last step and a `counters` snapshot of the registers as cycle `now` would read them.
    pub fn finish(&mut self, now: u64, mmu: &Mmu, mut emit: impl FnMut(&Event)) {
        self.pending.iter().for_each(&mut emit);
        self.pending.clear();
        emit(&Event::Counters(Counters {
            cycle: now,
            t: mmu.threshold(),
            total: mmu.buffered_cells(),
            free: None,
            other: serde_json::Map::new(),
        }));
    }
}
