//! The phase table of `Mmu::step` is checked, not claimed: the blocks of one phase read
//! only registered state and what earlier phases drove, so evaluating them, and the
//! commits of the edge, in any order gives the same cycle.
//!
//! Two models see the same stimulus, one in the table's order and one shuffled anew every
//! cycle (`Mmu::shuffle_phases`). After every cycle their outputs (cell fates, departures,
//! PFC and ECM frames), their statistics, every probed signal and the dirty blocks must be
//! equal. The configurations are drawn over the three buffer policies, HCF, ECM and ECN queues,
//! PFC reception modes and SRAM widths; the stimulus over bursts of mixed sizes and
//! priorities and PFC frames received from downstream.
//!
//! Companion: a block that reads the next state of another block of its own phase
//! (`Fault::XonFromNextT`: the policy's threshold units read the D input of `T` while the
//! DT block computes it) makes the two models disagree, and the test reports it.

use hw_model::{
    Beat, EcmConfig, Ecn, EcnConfig, EcnUnit, Fault, HcfConfig, HcfUnit, Inputs, MarkOn, Mmu,
    Outputs, PacketHdr, PfcFrame, PfcRxMode, Policy, SwitchConfig,
};
use proptest::prelude::*;
use std::collections::VecDeque;

/// Back-to-back packets on one ingress port, from a cycle on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Burst {
    pub port: u8,
    pub prio: u8,
    pub dst: u8,
    pub len: u16,
    pub count: u8,
    pub start: u32,
}

/// A PFC frame received on egress `port` in cycle `at`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rx {
    pub at: u32,
    pub port: u8,
    pub frame: PfcFrame,
}

#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub cfg: SwitchConfig,
    pub bursts: Vec<Burst>,
    pub rx: Vec<Rx>,
    pub seed: u32,
}

fn config() -> impl Strategy<Value = SwitchConfig> {
    (
        (
            prop::sample::select(vec![Policy::Sih, Policy::Dsh, Policy::L2bm]),
            2usize..=4,
            1u8..16,
            prop_oneof![
                Just(None),
                (
                    4u32..=20,
                    1u32..=3,
                    6u32..=30,
                    prop::option::of(300u64..3000)
                )
                    .prop_map(Some)
            ],
            prop::option::of(0u8..4),
            prop::option::of((0u8..4, any::<bool>(), any::<bool>())),
        ),
        (
            150_000u64..400_000,
            -2i32..=1,
            1u32..=3,
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(vec![3000u32, 6000, 12_000]),
        ),
    )
        .prop_filter_map(
            "a valid switch",
            |(
                (policy, ports, lossless, hcf, ecm, ecn),
                (buffer, alpha, latency, on_off, hybrid, eta),
            )| {
                let mut c = SwitchConfig::small();
                c.ports = ports;
                // Port 0, the favourite destination, is the slow one: fan-in congests it.
                c.port_speeds_gbps = (0..ports)
                    .map(|p| if p == 0 { 100.0 } else { 400.0 })
                    .collect();
                c.policy = policy;
                c.lossless_priorities = (0..4).filter(|p| lossless & (1 << p) != 0).collect();
                c.buffer_bytes = buffer;
                c.lossy_pool_bytes = buffer / 4;
                c.alpha_log2 = alpha;
                c.sram_read_latency = latency;
                c.sram_write_cells_per_cycle = ports as u32;
                c.sram_read_cells_per_cycle = ports as u32;
                c.pfc_rx_mode = if on_off {
                    PfcRxMode::OnOff
                } else {
                    PfcRxMode::Timer
                };
                c.hybrid_ingress_pool = hybrid;
                c.eta_bytes = Some(eta);
                c.pfc_pause_quanta = 200;
                if let Some((bins, c0, buffer, period)) = hcf {
                    c.hcf = vec![HcfConfig {
                        queue: 5,
                        bins,
                        c0,
                        buffer,
                        unit: HcfUnit::Packet,
                        period_cycles: period,
                        ..HcfConfig::default()
                    }];
                }
                if let Some(prio) = ecm {
                    c.ecm = EcmConfig {
                        priorities: vec![prio],
                        qeq_bytes: 2048,
                        qmc_bytes: 8192,
                        qsc_bytes: 32_768,
                        sf_bytes: 3000,
                        sr_bytes: 2000,
                        ..EcmConfig::default()
                    };
                }
                if let Some((prio, dequeue, cells)) = ecn {
                    c.ecn = EcnConfig {
                        priorities: vec![prio],
                        unit: if cells {
                            EcnUnit::Cells
                        } else {
                            EcnUnit::Bytes
                        },
                        kmin: if cells { 4 } else { 1000 },
                        kmax: if cells { 40 } else { 8000 },
                        pmax: 0.5,
                        mark_on: if dequeue {
                            MarkOn::Dequeue
                        } else {
                            MarkOn::Enqueue
                        },
                        ..EcnConfig::default()
                    };
                }
                c.build().ok().map(|_| c)
            },
        )
}

pub(crate) fn case() -> impl Strategy<Value = Case> {
    config().prop_flat_map(|cfg| {
        let ports = cfg.ports as u8;
        let burst = (
            0..ports,
            prop_oneof![3 => 0u8..4, 1 => 4u8..8],
            prop_oneof![Just(0u8), 0..ports],
            prop_oneof![64u16..=300, 300u16..=1500],
            1u8..=60,
            0u32..3000,
        )
            .prop_map(|(port, prio, dst, len, count, start)| Burst {
                port,
                prio,
                dst,
                len,
                count,
                start,
            });
        let rx = (
            0u32..8000,
            0..ports,
            any::<u8>(),
            prop_oneof![Just(0u16), 1u16..300],
        )
            .prop_map(|(at, port, classes, quanta)| Rx {
                at,
                port,
                frame: PfcFrame {
                    class_enable: classes,
                    quanta: [quanta; 8],
                    port_level: classes == 0xFF,
                },
            });
        (
            Just(cfg),
            prop::collection::vec(burst, 4..16),
            prop::collection::vec(rx, 0..6),
            any::<u32>(),
        )
            .prop_map(|(cfg, bursts, rx, seed)| Case {
                cfg,
                bursts,
                rx,
                seed,
            })
    })
}

/// A case's stimulus cycle by cycle: the driver's beats and the PFC frames received.
pub(crate) struct Stimulus<'c> {
    case: &'c Case,
    pub drv: Driver,
    ingress: Vec<Option<Beat>>,
    rx: Vec<(u8, PfcFrame)>,
}

impl<'c> Stimulus<'c> {
    pub fn new(case: &'c Case, mmu: &Mmu) -> Self {
        Self {
            case,
            drv: Driver::new(mmu, &case.bursts),
            ingress: vec![None; mmu.config().ports],
            rx: Vec::new(),
        }
    }

    /// Present the inputs of cycle `c`.
    pub fn advance(&mut self, c: u64) {
        self.drv.present(c, &mut self.ingress);
        self.rx.clear();
        let due = self.case.rx.iter().filter(|r| r.at as u64 == c);
        self.rx.extend(due.map(|r| (r.port, r.frame)));
    }

    pub fn inputs(&self) -> Inputs<'_> {
        Inputs {
            ingress: &self.ingress,
            pfc_rx: &self.rx,
        }
    }

    /// No beat and no frame in this cycle.
    pub fn idle(&self) -> bool {
        self.ingress.iter().all(Option::is_none) && self.rx.is_empty()
    }
}

/// Presents the bursts at one cell per port per cell time; upstream devices obey the PFC
/// frames the switch sends, at packet boundaries.
pub(crate) struct Driver {
    queues: Vec<VecDeque<(u32, Beat)>>,
    gap: u64,
    paused: Vec<u8>,
}

impl Driver {
    pub fn new(mmu: &Mmu, bursts: &[Burst]) -> Self {
        let d = mmu.config();
        let mut queues = vec![VecDeque::new(); d.ports];
        for (flow, b) in bursts.iter().enumerate() {
            let n = d.cells_for(b.len as u32) as u16;
            for seq in 0..b.count as u32 {
                let hdr = PacketHdr {
                    flow: flow as u32,
                    seq,
                    src: b.port,
                    dst: b.dst,
                    prio: b.prio,
                    len: b.len,
                    tuple: hw_model::FiveTuple::for_flow(flow as u32, b.port, b.dst, 17),
                    // Every other flow is ECN-capable.
                    ecn: if flow % 2 == 0 {
                        Ecn::Ect0
                    } else {
                        Ecn::NotEct
                    },
                    ..Default::default()
                };
                for idx in 0..n {
                    queues[b.port as usize].push_back((
                        b.start,
                        Beat {
                            hdr,
                            idx,
                            ncells: n,
                        },
                    ));
                }
            }
        }
        Self {
            queues,
            gap: (d.cfg.cell_bytes as u64 * 8 * d.clock_hz)
                .div_ceil(*d.rate_bps.iter().max().unwrap()),
            paused: vec![0; d.ports],
        }
    }

    pub fn present(&mut self, c: u64, ingress: &mut [Option<Beat>]) {
        for (p, slot) in ingress.iter_mut().enumerate() {
            *slot = None;
            if !c.is_multiple_of(self.gap) {
                continue;
            }
            if let Some(&(start, b)) = self.queues[p].front() {
                let held = b.sop() && self.paused[p] & (1 << b.hdr.prio) != 0;
                if c >= start as u64 && !held {
                    self.queues[p].pop_front();
                    *slot = Some(b);
                }
            }
        }
    }

    /// The first cycle `>= c` in which [`present`](Self::present) delivers a beat if no
    /// PFC frame arrives before (`u64::MAX`: none).
    pub fn next_beat(&self, c: u64) -> u64 {
        self.queues
            .iter()
            .zip(&self.paused)
            .filter_map(|(q, paused)| {
                let &(start, b) = q.front()?;
                let held = b.sop() && paused & (1 << b.hdr.prio) != 0;
                (!held).then(|| c.max(start as u64).next_multiple_of(self.gap))
            })
            .min()
            .unwrap_or(u64::MAX)
    }

    pub fn obey(&mut self, frames: &[(u8, PfcFrame)]) {
        for &(p, f) in frames {
            let p = p as usize;
            self.paused[p] = if f.port_level {
                if f.paused() != 0 {
                    0xFF
                } else {
                    0
                }
            } else {
                (self.paused[p] | f.paused()) & !f.resumed()
            };
        }
    }
}

/// The first difference between two models after a cycle, if any.
/// Two models of `case`'s configuration, both with `faults`: the pair a test runs side by side.
pub(crate) fn twins(case: &Case, faults: &[Fault]) -> (Mmu, Mmu) {
    let d = case.cfg.build().unwrap();
    let (mut a, mut b) = (Mmu::new(d.clone()), Mmu::new(d));
    for &f in faults {
        a.inject_fault(f);
        b.inject_fault(f);
    }
    (a, b)
}

pub(crate) fn differ(a: &Mmu, b: &Mmu, oa: &Outputs, ob: &Outputs) -> Option<String> {
    if oa.cell_events != ob.cell_events {
        return Some(format!(
            "cell events {:?} / {:?}",
            oa.cell_events, ob.cell_events
        ));
    }
    if oa.departures != ob.departures {
        return Some(format!(
            "departures {:?} / {:?}",
            oa.departures, ob.departures
        ));
    }
    if oa.pfc_tx != ob.pfc_tx {
        return Some(format!("PFC frames {:?} / {:?}", oa.pfc_tx, ob.pfc_tx));
    }
    if oa.ecm_tx != ob.ecm_tx {
        return Some(format!("ECM frames {:?} / {:?}", oa.ecm_tx, ob.ecm_tx));
    }
    if a.stats() != b.stats() {
        return Some("statistics".into());
    }
    if a.dirty_blocks() != b.dirty_blocks() {
        return Some(format!(
            "dirty blocks {:?} / {:?}",
            a.dirty_blocks(),
            b.dirty_blocks()
        ));
    }
    signals_differ(a, b)
}

/// The first probed signal whose value differs between two models, if any.
pub(crate) fn signals_differ(a: &Mmu, b: &Mmu) -> Option<String> {
    (0..a.signals().len()).find_map(|i| {
        let (va, vb) = (a.signal_value(i), b.signal_value(i));
        (va != vb).then(|| format!("{} = {va} / {vb}", a.signals()[i].path))
    })
}

/// Run `cycles` of the case on a model in the table's order and one shuffled by `seed`,
/// both with `faults`; the first cycle they disagree, and how.
fn run(case: &Case, cycles: u64, faults: &[Fault]) -> Result<(), String> {
    let (mut a, mut b) = twins(case, faults);
    b.shuffle_phases(case.seed);
    let ports = a.config().ports;
    let mut stim = Stimulus::new(case, &a);
    let (mut oa, mut ob) = (Outputs::with_ports(ports), Outputs::with_ports(ports));
    for c in 0..cycles {
        stim.advance(c);
        let inp = stim.inputs();
        a.step(&inp, &mut oa).map_err(|e| e.to_string())?;
        b.step(&inp, &mut ob).map_err(|e| e.to_string())?;
        if let Some(what) = differ(&a, &b, &oa, &ob) {
            return Err(format!("cycle {c}: {what}"));
        }
        stim.drv.obey(&oa.pfc_tx);
        if c % 1000 == 999 {
            a.check_invariants().map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// 24 cases unless `PROPTEST_CASES` says otherwise (`make soak`).
pub(crate) fn order_config() -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 24;
    }
    c
}

proptest! {
    #![proptest_config(order_config())]

    #[test]
    fn shuffled_phases_give_the_same_cycles(case in case()) {
        prop_assert_eq!(run(&case, 8000, &[]), Ok(()));
    }
}

/// SIH on the small profile, 3:1 into one port: the shared occupancy and so `T` move.
pub(crate) fn fan_in() -> Case {
    let mut cfg = SwitchConfig::small();
    cfg.ports = 4;
    cfg.sram_write_cells_per_cycle = 4;
    cfg.sram_read_cells_per_cycle = 4;
    let bursts = (0..3)
        .map(|port| Burst {
            port,
            prio: 1,
            dst: 3,
            len: 1500,
            count: 40,
            start: 0,
        })
        .collect();
    Case {
        cfg,
        bursts,
        rx: Vec::new(),
        seed: 7,
    }
}

#[test]
fn a_block_reading_its_phase_neighbours_next_state_is_caught() {
    let case = fan_in();
    assert_eq!(
        run(&case, 8000, &[]),
        Ok(()),
        "the control: no fault, no difference"
    );
    let e = run(&case, 8000, &[Fault::XonFromNextT]).expect_err("the fault must be caught");
    assert!(e.contains("pfc.sub_xon"), "{e}");
}
