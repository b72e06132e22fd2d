//! End-to-end checks of the model with a minimal driver: beats are presented one cell
//! time apart (rounded up), which is enough to exercise admission, the SRAM lists,
//! scheduling, PFC generation and the invariant checker. The full link-partner timing
//! lives in the testbench.

use hw_model::{
    Beat, CellFate, DropReason, Fault, Inputs, Mmu, Outputs, PacketHdr, PfcFrame, Policy, Segment,
    SwitchConfig,
};
use std::collections::VecDeque;

/// Which PFC frames the driver's upstream devices obey (at once, at packet boundaries).
#[derive(Clone, Copy, PartialEq)]
enum Honour {
    All,
    /// Only DSH port-level frames: queue-level PAUSE is ignored.
    PortOnly,
    Nothing,
}

struct Driver {
    queues: Vec<VecDeque<Beat>>,
    gap: u64,
    honour: Honour,
    /// Class pauses and port-level pauses, kept apart as a DSH upstream does (Fig. 9).
    paused_class: Vec<u8>,
    paused_port: Vec<bool>,
    /// Cycles between a frame leaving the switch and the upstream acting on it.
    delay: u64,
    in_flight: VecDeque<(u64, u8, PfcFrame)>,
}

impl Driver {
    fn new(mmu: &Mmu, honour: Honour) -> Self {
        let d = mmu.config();
        let gap = (d.cfg.cell_bytes as u64 * 8 * d.clock_hz).div_ceil(d.rate_bps[0]);
        Self {
            queues: vec![VecDeque::new(); d.ports],
            gap,
            honour,
            paused_class: vec![0; d.ports],
            paused_port: vec![false; d.ports],
            delay: 0,
            in_flight: VecDeque::new(),
        }
    }

    /// Classes of port `p` that may not start a packet: `QOFF OR POFF`.
    fn paused(&self, p: usize) -> u8 {
        self.paused_class[p] | if self.paused_port[p] { 0xFF } else { 0 }
    }

    /// The beats of cycle `c`: one per cell time per port, a paused class holding back
    /// only at packet boundaries.
    fn present(&mut self, c: u64, ingress: &mut [Option<Beat>]) {
        for (p, slot) in ingress.iter_mut().enumerate() {
            *slot = None;
            if c.is_multiple_of(self.gap) {
                if let Some(b) = self.queues[p].front() {
                    if !(b.sop() && self.paused(p) & (1 << b.hdr.prio) != 0) {
                        *slot = self.queues[p].pop_front();
                    }
                }
            }
        }
    }

    /// Take the frames the switch sent in cycle `c`; act on those whose delay is over.
    fn obey(&mut self, c: u64, frames: &[(u8, PfcFrame)]) {
        self.in_flight
            .extend(frames.iter().map(|&(p, f)| (c + self.delay, p, f)));
        while self.in_flight.front().is_some_and(|f| f.0 <= c) {
            let (_, p, f) = self.in_flight.pop_front().unwrap();
            let p = p as usize;
            match (f.port_level, self.honour) {
                (true, Honour::All | Honour::PortOnly) => self.paused_port[p] = f.paused() != 0,
                (false, Honour::All) => {
                    self.paused_class[p] = (self.paused_class[p] | f.paused()) & !f.resumed()
                }
                _ => {}
            }
        }
    }

    /// The 6:1 incast most tests use: ports 0..6 each queue 400 lossless 1500 B packets
    /// of priority 2 for port 7.
    fn fan_in(&mut self, mmu: &Mmu) {
        for src in 0..6u8 {
            for s in 0..400 {
                self.packet(mmu, hdr(src as u32, s, src, 7, 2, 1500));
            }
        }
    }

    fn packet(&mut self, mmu: &Mmu, hdr: PacketHdr) {
        let n = mmu.config().cells_for(hdr.len as u32) as u16;
        for idx in 0..n {
            self.queues[hdr.src as usize].push_back(Beat {
                hdr,
                idx,
                ncells: n,
            });
        }
    }

    /// Run `cycles`; returns departures in order and all cell events.
    fn run(
        &mut self,
        mmu: &mut Mmu,
        cycles: u64,
        rx: &[(u64, u8, PfcFrame)],
    ) -> (Vec<(u64, u8, Beat)>, Vec<CellFate>) {
        let mut out = Outputs::with_ports(mmu.config().ports);
        let mut deps = vec![];
        let mut fates = vec![];
        let mut ingress = vec![None; mmu.config().ports];
        for _ in 0..cycles {
            let c = mmu.cycle();
            self.present(c, &mut ingress);
            let frames: Vec<(u8, PfcFrame)> =
                rx.iter().filter(|r| r.0 == c).map(|r| (r.1, r.2)).collect();
            mmu.step(
                &Inputs {
                    ingress: &ingress,
                    pfc_rx: &frames,
                },
                &mut out,
            )
            .unwrap();
            deps.extend(out.departures.iter().map(|d| (c, d.port, d.beat)));
            fates.extend(out.cell_events.iter().map(|e| e.fate));
            self.obey(c, &out.pfc_tx);
            if c.is_multiple_of(997) {
                mmu.check_invariants().unwrap();
            }
        }
        (deps, fates)
    }
}

fn hdr(flow: u32, seq: u32, src: u8, dst: u8, prio: u8, len: u16) -> PacketHdr {
    PacketHdr {
        flow,
        seq,
        src,
        dst,
        prio,
        len,
        ..Default::default()
    }
}

#[test]
fn packets_cross_the_switch_in_order_and_the_buffer_empties() {
    let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::All);
    for s in 0..50 {
        drv.packet(&mmu, hdr(1, s, 0, 3, 1, 64 + (s as u16 * 97) % 1400));
        drv.packet(&mmu, hdr(2, s, 1, 3, 7, 300));
    }
    let (deps, fates) = drv.run(&mut mmu, 40_000, &[]);
    assert!(fates.iter().all(|f| matches!(f, CellFate::Admitted(_))));
    let total: usize = fates.len();
    assert_eq!(deps.len(), total, "every admitted cell departs");
    let flow1: Vec<(u32, u16)> = deps
        .iter()
        .filter(|d| d.2.hdr.flow == 1)
        .map(|d| (d.2.hdr.seq, d.2.idx))
        .collect();
    let mut sorted = flow1.clone();
    sorted.sort();
    assert_eq!(flow1, sorted, "flow 1 departs in order");
    assert_eq!(mmu.buffered_cells(), 0);
    mmu.check_invariants().unwrap();
    assert_eq!(mmu.stats().packets_out, 100);
}

#[test]
fn egress_line_rate_is_exact() {
    // 200 back-to-back 1500 B packets to one 100G port: 200 * 1520 * 8 / 100 cycles.
    let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::All);
    for s in 0..100 {
        drv.packet(&mmu, hdr(1, s, 0, 2, 1, 1500));
        drv.packet(&mmu, hdr(2, s, 1, 2, 1, 1500));
    }
    let (deps, _) = drv.run(&mut mmu, 40_000, &[]);
    let first_of = |seq: u32| {
        deps.iter()
            .find(|d| d.2.hdr.flow == 1 && d.2.hdr.seq == seq && d.2.idx == 0)
            .unwrap()
            .0
    };
    // Two flows share the port equally once both are backlogged: a packet of flow 1
    // every two packet times.
    let span = first_of(90) - first_of(40);
    let expected = 50 * 2 * 1520 * 8 / 100;
    assert!(span.abs_diff(expected) <= 2, "span {span} vs {expected}");
}

#[test]
fn fan_in_pauses_upstream_and_loses_nothing_when_pause_is_honoured() {
    let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::All);
    drv.fan_in(&mmu);
    let (deps, fates) = drv.run(&mut mmu, 300_000, &[]);
    assert!(mmu.stats().pfc_pause_frames_tx > 0, "6:1 fan-in must pause");
    assert!(
        fates.iter().all(|f| matches!(f, CellFate::Admitted(_))),
        "no drop with pause honoured"
    );
    assert_eq!(mmu.stats().dropped_lossless(), 0);
    assert_eq!(deps.len(), fates.len());
    assert!(mmu.stats().pfc_resume_frames_tx > 0);
    // Every frame is counted under each priority it carries: the fan-in pauses one class
    // per frame.
    let tx = &mmu.stats().pfc_tx;
    let pauses: u64 = tx.iter().flatten().map(|c| c.pause).sum();
    let resumes: u64 = tx.iter().flatten().map(|c| c.resume).sum();
    assert_eq!(pauses, mmu.stats().pfc_pause_events);
    assert_eq!(resumes, mmu.stats().pfc_resume_events);
    mmu.check_invariants().unwrap();
}

#[test]
fn ignored_pause_overflows_headroom_and_every_drop_is_counted() {
    let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::Nothing);
    drv.fan_in(&mmu);
    let (deps, fates) = drv.run(&mut mmu, 300_000, &[]);
    let dropped = fates
        .iter()
        .filter(|f| matches!(f, CellFate::Dropped(DropReason::HeadroomFull)))
        .count() as u64;
    assert!(dropped > 0);
    assert_eq!(mmu.stats().dropped_lossless(), dropped);
    // Headroom drops are charged to the ingress groups, none to an egress queue.
    let st = mmu.stats();
    let pg_cells: u64 = st
        .pg_drops
        .iter()
        .map(|d| d.cells.iter().sum::<u64>())
        .sum();
    assert_eq!(pg_cells, dropped);
    assert!(st.pg_drops.iter().map(|d| d.packets).sum::<u64>() > 0);
    assert!(st
        .queue_drops
        .iter()
        .all(|d| d.packets == 0 && d.cells == [0; 4]));
    assert_eq!(
        deps.len() as u64 + dropped + mmu.buffered_cells() as u64,
        fates.len() as u64
    );
    mmu.check_invariants().unwrap();
}

#[test]
fn received_pause_stops_the_queue_until_resume() {
    let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::All);
    for s in 0..20 {
        drv.packet(&mmu, hdr(1, s, 0, 4, 3, 500));
    }
    let mut pause = PfcFrame {
        class_enable: 1 << 3,
        ..Default::default()
    };
    pause.quanta[3] = 0xFFFF;
    let resume = PfcFrame {
        class_enable: 1 << 3,
        ..Default::default()
    };
    let (deps, _) = drv.run(&mut mmu, 20_000, &[(0, 4, pause), (10_000, 4, resume)]);
    assert!(!deps.is_empty());
    assert!(
        deps.iter().all(|d| d.0 > 10_000),
        "nothing leaves a paused class before RESUME"
    );
    let rx = &mmu.stats().pfc_rx;
    assert_eq!((rx[4][3].pause, rx[4][3].resume), (1, 1));
    let others: u64 = rx.iter().flatten().map(|c| c.pause + c.resume).sum();
    assert_eq!(others, 2, "only port 4 priority 3 received frames");
}

#[test]
fn invariant_checker_catches_each_fault() {
    for fault in [
        Fault::DoubleFreeCell,
        Fault::LeakCell,
        Fault::SkewCounter,
        Fault::LowWatermark,
    ] {
        let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
        let mut drv = Driver::new(&mmu, Honour::All);
        for s in 0..10 {
            drv.packet(&mmu, hdr(1, s, 0, 1, 0, 900));
        }
        drv.run(&mut mmu, 300, &[]);
        mmu.check_invariants().unwrap();
        mmu.inject_fault(fault);
        let e = mmu
            .check_invariants()
            .expect_err(&format!("{fault:?} must be caught"));
        assert!(!e.what.is_empty());
        if fault == Fault::LowWatermark {
            assert!(e.what.contains("watermark"), "{}", e.what);
        }
    }
}

/// Every watermark equals the highest value its counter showed after any cycle, sampled
/// from outside through the counter accessors, under a fan-in with PFC and ignored pauses
/// (headroom fills too).
#[test]
fn watermarks_are_the_highest_registered_counts() {
    for honour in [Honour::All, Honour::Nothing] {
        let mut mmu = Mmu::new(SwitchConfig::small().build().unwrap());
        let ports = mmu.config().ports;
        let mut drv = Driver::new(&mmu, honour);
        drv.fan_in(&mmu);
        let mut out = Outputs::with_ports(ports);
        let mut ingress = vec![None; ports];
        let mut pg = vec![[0u32; 3]; ports * 8];
        let mut eg = vec![0u32; ports * 8];
        let mut pools = [0u32; 4];
        for _ in 0..60_000 {
            let c = mmu.cycle();
            drv.present(c, &mut ingress);
            let inp = Inputs {
                ingress: &ingress,
                pfc_rx: &[],
            };
            mmu.step(&inp, &mut out).unwrap();
            drv.obey(c, &out.pfc_tx);
            for p in 0..ports {
                for q in 0..8 {
                    let g = mmu.ingress_counters(p, q);
                    let now = [g.iter().sum(), g[1], g[2]];
                    for (m, v) in pg[p * 8 + q].iter_mut().zip(now) {
                        *m = (*m).max(v);
                    }
                    eg[p * 8 + q] = eg[p * 8 + q].max(mmu.egress_cells(p, q));
                }
            }
            let a = mmu.accounting();
            let now = [
                a.shared_total.get(),
                a.headroom_total.get(),
                a.lossy_shared_total.get(),
                a.total.get(),
            ];
            for (m, v) in pools.iter_mut().zip(now) {
                *m = (*m).max(v);
            }
        }
        let wm = &mmu.accounting().watermarks;
        assert_eq!(wm.ingress, pg);
        assert_eq!(wm.egress, eg);
        assert_eq!(
            [
                wm.shared_total,
                wm.headroom_total,
                wm.lossy_shared_total,
                wm.total
            ],
            pools
        );
        assert!(pools[1] > 0, "the fan-in reaches headroom");
        mmu.check_invariants().unwrap();
    }
}

/// The waveform writer samples only blocks the model reports dirty; a change outside them
/// would be lost from the VCD. Compare every signal every cycle under fan-in with PFC,
/// mixed priorities and a received pause.
#[test]
fn every_changed_signal_is_in_a_dirty_block() {
    let mut cfg = SwitchConfig::small();
    cfg.pfc_pause_quanta = 120;
    let mut mmu = Mmu::new(cfg.build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::All);
    for src in 0..5u8 {
        for s in 0..60 {
            drv.packet(
                &mmu,
                hdr(
                    src as u32,
                    s,
                    src,
                    6,
                    (src + s as u8) % 8,
                    200 + 37 * (s as u16 % 30),
                ),
            );
        }
    }
    let mut pause = PfcFrame {
        class_enable: 0b110,
        ..Default::default()
    };
    pause.quanta[1] = 20;
    pause.quanta[2] = 20;
    let n = mmu.signals().len();
    let mut prev: Vec<u64> = (0..n).map(|i| mmu.signal_value(i)).collect();
    let mut out = Outputs::with_ports(mmu.config().ports);
    let mut ingress = vec![None; mmu.config().ports];
    let mut changes = 0u64;
    for _ in 0..30_000 {
        let c = mmu.cycle();
        drv.present(c, &mut ingress);
        let rx: Vec<(u8, PfcFrame)> = if c % 3000 == 100 {
            vec![(6, pause)]
        } else {
            vec![]
        };
        mmu.step(
            &Inputs {
                ingress: &ingress,
                pfc_rx: &rx,
            },
            &mut out,
        )
        .unwrap();
        drv.obey(c, &out.pfc_tx);
        let dirty = mmu.dirty_blocks().to_vec();
        for (i, old) in prev.iter_mut().enumerate() {
            let v = mmu.signal_value(i);
            if v != *old {
                changes += 1;
                let b = mmu.signal_block(i);
                assert!(
                    dirty[b / 64] & (1 << (b % 64)) != 0,
                    "cycle {c}: {} changed {old} -> {v} but block {b} is not dirty",
                    mmu.signals()[i].path
                );
                *old = v;
            }
        }
    }
    assert!(
        changes > 10_000,
        "the stimulus must move many signals ({changes})"
    );
}

fn dsh_switch() -> SwitchConfig {
    SwitchConfig {
        policy: Policy::Dsh,
        ..SwitchConfig::small()
    }
}

/// DSH fan-in with every PAUSE obeyed: queue-level flow control alone keeps the buffer
/// lossless, with no insurance used.
#[test]
fn dsh_fan_in_is_lossless_with_queue_level_pause() {
    let mut mmu = Mmu::new(dsh_switch().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::All);
    drv.fan_in(&mmu);
    let (deps, fates) = drv.run(&mut mmu, 300_000, &[]);
    assert!(mmu.stats().pfc_pause_frames_tx > 0, "6:1 fan-in must pause");
    assert_eq!(mmu.stats().dropped_lossless(), 0);
    assert_eq!(deps.len(), fates.len());
    mmu.check_invariants().unwrap();
}

/// Upstream devices that ignore queue-level PAUSE but obey port-level frames: the
/// congested queues keep growing in the shared segment (DSH has no per-queue cap) until
/// a port's occupancy exceeds `X_poff = N_q * T` (Eq. 6); the port-level PAUSE then stops
/// the whole upstream port and its in-flight cells land in the insurance headroom
/// (Eq. 4). The upstream reacts 400 cycles (5 KB at 100G) after a frame leaves, well inside
/// Eq. 1's budget for the small profile (eta = 11840 B). Nothing may be lost.
#[test]
fn dsh_port_level_pause_protects_when_queue_pause_is_ignored() {
    let mut mmu = Mmu::new(dsh_switch().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::PortOnly);
    drv.delay = 400;
    drv.fan_in(&mmu);
    let mut max_poff = 0;
    let mut out = Outputs::with_ports(8);
    let mut ingress = vec![None; 8];
    let mut insurance_used = false;
    for _ in 0..300_000 {
        let c = mmu.cycle();
        drv.present(c, &mut ingress);
        mmu.step(
            &Inputs {
                ingress: &ingress,
                pfc_rx: &[],
            },
            &mut out,
        )
        .unwrap();
        drv.obey(c, &out.pfc_tx);
        insurance_used |= out
            .cell_events
            .iter()
            .any(|e| e.fate == CellFate::Admitted(Segment::Headroom));
        let poff = (0..8).filter(|&p| drv.paused_port[p]).count();
        max_poff = max_poff.max(poff);
        if c.is_multiple_of(997) {
            mmu.check_invariants().unwrap();
        }
    }
    assert!(
        max_poff > 0,
        "port-level PAUSE must have stopped an upstream port"
    );
    assert!(
        insurance_used,
        "in-flight cells of a POFF port go to insurance"
    );
    assert_eq!(mmu.stats().dropped_lossless(), 0);
    assert!(
        mmu.stats().pfc_resume_frames_tx > 0,
        "ports resume (PON) as the queue drains"
    );
    mmu.check_invariants().unwrap();
}

/// Companion: the same stimulus with nothing obeyed overflows the insurance and drops,
/// counted as lossless drops.
#[test]
fn dsh_ignoring_every_pause_drops_and_counts() {
    let mut mmu = Mmu::new(dsh_switch().build().unwrap());
    let mut drv = Driver::new(&mmu, Honour::Nothing);
    drv.fan_in(&mmu);
    let (deps, fates) = drv.run(&mut mmu, 300_000, &[]);
    let dropped = mmu.stats().dropped_lossless();
    assert!(dropped > 0);
    assert_eq!(
        deps.len() as u64 + dropped + mmu.buffered_cells() as u64,
        fates.len() as u64
    );
}

/// `skip_to` accepts the cycles up to `next_event` and refuses a jump past it, or back.
#[test]
fn skip_to_refuses_to_jump_past_the_next_event() {
    let mut m = Mmu::new(SwitchConfig::small().build().unwrap());
    let next = m.next_event();
    assert!(next >= m.cycle());
    assert!(m.skip_to(m.cycle()).is_ok());
    if next < u64::MAX {
        let e = m.skip_to(next + 1).unwrap_err();
        assert!(e.what.contains("the next event"), "{e}");
    }
    let ports = m.config().ports;
    let idle = vec![None; ports];
    let mut out = Outputs::with_ports(ports);
    m.step(
        &Inputs {
            ingress: &idle,
            pfc_rx: &[],
        },
        &mut out,
    )
    .unwrap();
    assert!(m.skip_to(0).is_err(), "a jump back in time");
}
