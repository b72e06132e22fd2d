//! A transaction-level reference model of admission and buffer accounting, run side by side
//! with the cycle model (`hw_model::Mmu`) by `proptest-state-machine`.
//!
//! # What is compared
//! [`RefModel`] re-implements, plainly and on its own (maps, `u64`, no `rtl` blocks, nothing
//! from `hw_model` but the public config and wire types), the rules of DSH II-C under SIH:
//! the four admission cases for lossless queues (private, DT-shared, headroom + QOFF, drop),
//! the lossy pool with its own DT, the running sum of shared cells granted earlier in the
//! same cycle, water-level ingress counters (fill private -> shared -> headroom, drain
//! headroom -> shared -> private), egress counters, `T = floor(alpha * max(0, B_s - S))`
//! with `alpha = 2^k` and QON when a queue's shared occupancy is below
//! `X_on = max(0, T - delta)`. Both models see the same ingress beats every cycle, and after
//! every cycle the harness checks that they agree on:
//! - the fate of every arriving cell (admitted to which segment, or dropped for which
//!   reason), in the order the cycle model emits them;
//! - every ingress counter triple `(private, shared, headroom)` and every egress counter;
//! - the lossless and lossy shared totals and the buffer total;
//! - the registered `T` of both pools and the `X_on` used in the cycle;
//! - the QOFF bitmap of every port.
//!
//! After every transition `Mmu::check_invariants` walks the whole buffer as well, and each
//! case ends by resuming every egress class and draining the switch to empty.
//!
//! # What is deliberately not compared
//! Scheduling: which cell leaves when (DWRR, line-rate pacing, SRAM read grants, received
//! PFC timers, the PFC frames the switch sends). The reference consumes the cycle model's
//! `Outputs::departures` as its dequeue events: it is a model of admission and accounting,
//! not of the egress side. For the same reason the reference is driven cycle by cycle
//! inside the system under test: `ReferenceStateMachine` here only generates the switch
//! configuration and the transitions, because the reference needs the departures the cycle
//! model produces.
//!
//! # Timing convention (cycle `c`, as the cycle model has it)
//! - Every decision in cycle `c` reads the counters committed at the edge that ended cycle
//!   `c - 1` ("start of cycle" values); charges and releases made in cycle `c` are applied
//!   at its closing edge, all charges first and then the releases one by one, so a release
//!   in the cycle a packet is charged drains what that charge filled.
//! - `T` is a register: `T(0) = T(1) = f(0)` and `T(c + 1) = f(S(c))`, where `S(c)` is the
//!   shared total at the start of cycle `c`. So `T` lags the occupancy by one cycle, and a
//!   charge made in cycle `c` first shows in the `T` used in cycle `c + 2`. The same holds
//!   for the lossy pool. `Mmu::threshold()` after stepping cycle `c` shows `T(c + 1)`.
//! - Ports are admitted in ascending order; a packet's shared-segment room check adds the
//!   shared cells granted to lower-numbered ports in the same cycle.
//! - QOFF is set by an admission into headroom during the admission pass; then every OFF
//!   queue (including one turned OFF in this same cycle) whose start-of-cycle shared count
//!   is below `X_on(c) = max(0, T(c) - delta)` turns ON.
//!
//! # Companion tests
//! [`Mutation`] selects deliberately wrong variants of the reference; hand-written sequences
//! show each one is caught, and a proptest run with a wrong reference shows random
//! generation reaches the difference too.

use hw_model::{
    Beat, CellEvent, CellFate, Departure, DropReason, HeadroomMode, Inputs, Mmu, Outputs,
    PacketHdr, PfcFrame, PfcRxMode, Segment, SwitchConfig,
};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngAlgorithm, TestRng, TestRunner};
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};
use std::collections::{BTreeSet, HashMap, VecDeque};

/// Largest value of the model's 21-bit counters and thresholds (a left shift saturates).
const CNT_MAX: u64 = (1 << 21) - 1;

// ---------------------------------------------------------------------------------------
// The reference model.
// ---------------------------------------------------------------------------------------

/// Deliberately wrong variants of the reference, for companion tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// The correct reference.
    None,
    /// A departing cell drains private, then shared, then headroom (the order cells were
    /// admitted in) instead of headroom first.
    DrainInAdmissionOrder,
    /// No PFC hysteresis: `X_on = T`.
    XonIsT,
    /// `T` computed from the occupancy after the edge, i.e. without the register lag.
    UnregisteredT,
    /// Each port checks the shared segment room without the grants of earlier ports.
    NoRunningSum,
}

/// The parameters the reference needs, in cells. The generator chooses these first and
/// writes the `SwitchConfig` from them, so the reference does not use `Derived` at all
/// (the harness checks that `Derived` came out the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub ports: usize,
    /// Bit `p`: priority `p` is lossless.
    pub lossless: u8,
    pub phi: u64,
    pub eta: u64,
    pub delta: u64,
    pub shared_segment: u64,
    pub alpha_log2: i32,
    pub lossy_phi: u64,
    pub lossy_shared_segment: u64,
    pub lossy_alpha_log2: i32,
}

impl Params {
    fn is_lossless(&self, prio: u8) -> bool {
        self.lossless & (1 << prio) != 0
    }
}

/// Water levels of one ingress queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Level {
    private: u64,
    shared: u64,
    headroom: u64,
}

/// The decision taken for a packet at its first cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Admit {
        private: u64,
        shared: u64,
        headroom: u64,
    },
    Drop(DropReason),
}

/// `T = floor(2^k * max(0, segment - occupancy))`, saturating at the register maximum.
fn dynamic_threshold(segment: u64, occupancy: u64, k: i32) -> u64 {
    let free = segment.saturating_sub(occupancy);
    if k >= 0 {
        (free * (1u64 << k)).min(CNT_MAX)
    } else {
        free / (1u64 << (-k))
    }
}

pub struct RefModel {
    p: Params,
    mutation: Mutation,
    /// Ingress `(port, pg)` water levels; missing = all zero.
    ingress: HashMap<(usize, u8), Level>,
    /// Egress `(port, queue)` cells.
    egress: HashMap<(usize, u8), u64>,
    /// Ingress queues in QOFF.
    qoff: BTreeSet<(usize, u8)>,
    /// Registered thresholds: the values used in the coming cycle.
    t: u64,
    t_lossy: u64,
    /// `X_on` used in the last cycle.
    xon: u64,
    /// Per port: the decision of the packet whose cells are arriving.
    arriving: Vec<Option<Decision>>,
    cycle: u64,
}

impl RefModel {
    pub fn new(p: Params, mutation: Mutation) -> Self {
        let t = dynamic_threshold(p.shared_segment, 0, p.alpha_log2);
        let t_lossy = dynamic_threshold(p.lossy_shared_segment, 0, p.lossy_alpha_log2);
        Self {
            arriving: vec![None; p.ports],
            xon: t.saturating_sub(p.delta),
            p,
            mutation,
            ingress: HashMap::new(),
            egress: HashMap::new(),
            qoff: BTreeSet::new(),
            t,
            t_lossy,
            cycle: 0,
        }
    }

    fn level(&self, port: usize, pg: u8) -> Level {
        self.ingress.get(&(port, pg)).copied().unwrap_or_default()
    }

    fn egress_cells(&self, port: usize, q: u8) -> u64 {
        self.egress.get(&(port, q)).copied().unwrap_or(0)
    }

    fn shared_total(&self) -> u64 {
        self.ingress
            .iter()
            .filter(|(k, _)| self.p.is_lossless(k.1))
            .map(|(_, l)| l.shared)
            .sum()
    }

    fn lossy_shared_total(&self) -> u64 {
        self.ingress
            .iter()
            .filter(|(k, _)| !self.p.is_lossless(k.1))
            .map(|(_, l)| l.shared)
            .sum()
    }

    fn buffer_total(&self) -> u64 {
        self.ingress
            .values()
            .map(|l| l.private + l.shared + l.headroom)
            .sum()
    }

    fn qoff_bits(&self, port: usize) -> u8 {
        self.qoff
            .iter()
            .filter(|q| q.0 == port)
            .fold(0, |m, q| m | (1 << q.1))
    }

    /// DSH II-C for a packet of `n` cells on ingress queue `(port, pg)`. `in_use`: the
    /// pool's shared cells at the start of the cycle plus those granted earlier this cycle.
    fn decide(&self, port: usize, pg: u8, n: u64, in_use: u64) -> Decision {
        let lossless = self.p.is_lossless(pg);
        let lv = self.level(port, pg);
        let (phi, t, segment) = if lossless {
            (self.p.phi, self.t, self.p.shared_segment)
        } else {
            (self.p.lossy_phi, self.t_lossy, self.p.lossy_shared_segment)
        };
        // Case 1: the private buffer takes what it has room for.
        let private = n.min(phi.saturating_sub(lv.private));
        let rest = n - private;
        if rest == 0 {
            return Decision::Admit {
                private,
                shared: 0,
                headroom: 0,
            };
        }
        // Case 2: below the dynamic threshold and the segment has room for the rest.
        if lv.shared < t && in_use + rest <= segment {
            return Decision::Admit {
                private,
                shared: rest,
                headroom: 0,
            };
        }
        if !lossless {
            return Decision::Drop(DropReason::LossyThreshold);
        }
        // Case 3: headroom, if the whole rest fits.
        if lv.headroom + rest <= self.p.eta {
            return Decision::Admit {
                private,
                shared: 0,
                headroom: rest,
            };
        }
        // Case 4.
        Decision::Drop(DropReason::HeadroomFull)
    }

    /// One cycle: the beats arriving on each port and the cells the cycle model read out
    /// in the same cycle. Returns the expected event of every beat, in port order.
    pub fn step(
        &mut self,
        ingress: &[Option<Beat>],
        departures: &[Departure],
    ) -> Result<Vec<CellEvent>, String> {
        let s_start = self.shared_total();
        let s_lossy_start = self.lossy_shared_total();
        let xon = match self.mutation {
            Mutation::XonIsT => self.t,
            _ => self.t.saturating_sub(self.p.delta),
        };
        let mut granted = 0u64;
        let mut granted_lossy = 0u64;
        let mut charges: Vec<(usize, u8, usize, Decision)> = Vec::new();
        let mut turned_off: Vec<(usize, u8)> = Vec::new();
        let mut events = Vec::new();
        for (port, beat) in ingress.iter().enumerate() {
            let Some(b) = beat else { continue };
            let pg = b.hdr.prio;
            let lossless = self.p.is_lossless(pg);
            if b.idx == 0 {
                if self.arriving[port].is_some() {
                    return Err(format!("ref: port {port}: start of packet inside a packet"));
                }
                let (base, extra) = match (lossless, self.mutation) {
                    (_, Mutation::NoRunningSum) => {
                        (if lossless { s_start } else { s_lossy_start }, 0)
                    }
                    (true, _) => (s_start, granted),
                    (false, _) => (s_lossy_start, granted_lossy),
                };
                let d = self.decide(port, pg, b.ncells as u64, base + extra);
                // A lossless queue goes OFF when a packet goes to headroom or is dropped
                // for lack of it, and cannot turn ON in that cycle even if it was OFF.
                let pauses = match d {
                    Decision::Admit { headroom, .. } => headroom > 0,
                    Decision::Drop(_) => true,
                };
                if lossless && pauses {
                    self.qoff.insert((port, pg));
                    turned_off.push((port, pg));
                }
                if let Decision::Admit { shared, .. } = d {
                    if lossless {
                        granted += shared;
                    } else {
                        granted_lossy += shared;
                    }
                    charges.push((port, pg, b.hdr.dst as usize, d));
                }
                self.arriving[port] = Some(d);
            }
            let Some(d) = self.arriving[port] else {
                return Err(format!(
                    "ref: port {port}: cell {} without a start of packet",
                    b.idx
                ));
            };
            let fate = match d {
                Decision::Admit {
                    private, shared, ..
                } => {
                    let k = b.idx as u64;
                    CellFate::Admitted(match (k < private, k < private + shared, lossless) {
                        (true, _, true) => Segment::Private,
                        (true, _, false) => Segment::LossyPrivate,
                        (false, true, true) => Segment::Shared,
                        (false, true, false) => Segment::LossyShared,
                        (false, false, _) => Segment::Headroom,
                    })
                }
                Decision::Drop(r) => CellFate::Dropped(r),
            };
            events.push(CellEvent { beat: *b, fate });
            if b.idx + 1 == b.ncells {
                self.arriving[port] = None;
            }
        }
        // QON: OFF queues, not turned OFF this cycle, with no headroom cells and a
        // start-of-cycle shared count below X_on.
        let on: Vec<(usize, u8)> = self
            .qoff
            .iter()
            .copied()
            .filter(|q| !turned_off.contains(q))
            .filter(|&(port, pg)| {
                let lv = self.level(port, pg);
                lv.headroom == 0 && lv.shared < xon
            })
            .collect();
        for q in on {
            self.qoff.remove(&q);
        }
        // Edge: charges, then releases.
        for (port, pg, dst, d) in charges {
            if let Decision::Admit {
                private,
                shared,
                headroom,
            } = d
            {
                let lv = self.ingress.entry((port, pg)).or_default();
                lv.private += private;
                lv.shared += shared;
                lv.headroom += headroom;
                *self.egress.entry((dst, pg)).or_default() += private + shared + headroom;
            }
        }
        for dep in departures {
            let (src, pg) = (dep.beat.hdr.src as usize, dep.beat.hdr.prio);
            let lv = self.ingress.entry((src, pg)).or_default();
            let order: [&mut u64; 3] = match self.mutation {
                Mutation::DrainInAdmissionOrder => {
                    [&mut lv.private, &mut lv.shared, &mut lv.headroom]
                }
                _ => [&mut lv.headroom, &mut lv.shared, &mut lv.private],
            };
            match order.into_iter().find(|c| **c > 0) {
                Some(c) => *c -= 1,
                None => {
                    return Err(format!(
                        "ref: departure {dep:?} from empty ingress queue ({src}, {pg})"
                    ))
                }
            }
            let e = self.egress.entry((dep.port as usize, pg)).or_default();
            if *e == 0 {
                return Err(format!("ref: departure {dep:?} from an empty egress queue"));
            }
            *e -= 1;
        }
        // Registered thresholds for the next cycle.
        let (s, s_lossy) = match self.mutation {
            Mutation::UnregisteredT => (self.shared_total(), self.lossy_shared_total()),
            _ => (s_start, s_lossy_start),
        };
        self.t = dynamic_threshold(self.p.shared_segment, s, self.p.alpha_log2);
        self.t_lossy = dynamic_threshold(
            self.p.lossy_shared_segment,
            s_lossy,
            self.p.lossy_alpha_log2,
        );
        self.xon = xon;
        self.cycle += 1;
        Ok(events)
    }
}

// ---------------------------------------------------------------------------------------
// Configuration and transitions.
// ---------------------------------------------------------------------------------------

/// A test case's switch: the reference's parameters and the config written from them.
#[derive(Debug, Clone)]
pub struct Setup {
    pub params: Params,
    pub cfg: SwitchConfig,
}

/// Knobs of a small switch; everything else comes from `SwitchConfig::small()`.
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub ports: usize,
    pub speed_gbps: f64,
    pub cell_bytes: u32,
    pub packet_overhead_bytes: u32,
    /// Bits 0..=3: which of priorities 0..=3 are lossless (4..=7 are always lossy).
    pub lossless_low: u8,
    pub alpha_log2: i32,
    pub lossy_alpha_log2: i32,
    pub phi: u64,
    pub eta: u64,
    pub delta: u64,
    pub shared_segment: u64,
    pub lossy_phi: u64,
    pub lossy_shared_segment: u64,
    pub read_cells: u32,
    pub read_latency: u32,
    pub on_off: bool,
}

impl Knobs {
    pub fn setup(mut self) -> Setup {
        let c = self.cell_bytes as u64;
        // The configuration refuses an eta below one MTU (1500 B) packet: such a queue
        // would drop without ever pausing.
        self.eta = self
            .eta
            .max((1500 + self.packet_overhead_bytes as u64).div_ceil(c));
        let lossless = self.lossless_low & 0x0F;
        let n_lossless = lossless.count_ones() as u64;
        let ports = self.ports as u64;
        let reserved = n_lossless * ports * (self.phi + self.eta);
        let lossy_private_total = (8 - n_lossless) * ports * self.lossy_phi;
        let lossy_pool = lossy_private_total + self.lossy_shared_segment;
        let shared_segment = self.shared_segment;
        let total = lossy_pool + reserved + shared_segment;
        // Read bandwidth must cover the aggregate line rate at the worst packet size
        // between 64 B and the MTU (config validation), at 1 GHz.
        let worst = (64..=1500u64)
            .map(|l| (l + self.packet_overhead_bytes as u64).div_ceil(c) as f64 / (l + 20) as f64)
            .fold(0.0, f64::max);
        let agg = self.speed_gbps * self.ports as f64 / 8.0 * worst;
        let read_cells = self
            .read_cells
            .max(agg.ceil() as u32)
            .min(self.ports as u32);
        let cfg = SwitchConfig {
            ports: self.ports,
            port_speed_gbps: self.speed_gbps,
            cell_bytes: self.cell_bytes,
            packet_overhead_bytes: self.packet_overhead_bytes,
            buffer_bytes: total * c,
            // One beat per port per cycle: the write stage must serve every port each cycle.
            sram_write_cells_per_cycle: self.ports as u32,
            sram_read_cells_per_cycle: read_cells,
            sram_read_latency: self.read_latency,
            lossless_priorities: (0..8).filter(|p| lossless & (1 << p) != 0).collect(),
            alpha_log2: self.alpha_log2,
            private_bytes: (self.phi * c) as u32,
            // Whole cells, taken as they are: the reference model's eta is a register value.
            eta_bytes: Some((self.eta * c) as u32),
            headroom: HeadroomMode::PaperBytes,
            delta_bytes: (self.delta * c) as u32,
            lossy_pool_bytes: lossy_pool * c,
            lossy_alpha_log2: self.lossy_alpha_log2,
            lossy_private_bytes: (self.lossy_phi * c) as u32,
            pfc_rx_mode: if self.on_off {
                PfcRxMode::OnOff
            } else {
                PfcRxMode::Timer
            },
            ..SwitchConfig::small()
        };
        Setup {
            params: Params {
                ports: self.ports,
                lossless,
                phi: self.phi,
                eta: self.eta,
                delta: self.delta,
                // With no lossless queue the whole non-lossy buffer is the segment.
                shared_segment,
                alpha_log2: self.alpha_log2,
                lossy_phi: self.lossy_phi,
                lossy_shared_segment: self.lossy_shared_segment,
                lossy_alpha_log2: self.lossy_alpha_log2,
            },
            cfg,
        }
    }

    /// A fixed small switch for hand-written sequences.
    pub fn fixed() -> Self {
        Knobs {
            ports: 3,
            speed_gbps: 400.0,
            cell_bytes: 208,
            packet_overhead_bytes: 0,
            lossless_low: 0b0111,
            alpha_log2: -1,
            lossy_alpha_log2: -1,
            phi: 4,
            eta: 24,
            delta: 6,
            shared_segment: 60,
            lossy_phi: 1,
            lossy_shared_segment: 40,
            read_cells: 3,
            read_latency: 1,
            on_off: false,
        }
    }
}

fn knobs_strategy() -> impl Strategy<Value = Knobs> {
    (
        (
            2usize..=4,
            prop::sample::select(vec![100.0f64, 400.0]),
            prop::sample::select(vec![128u32, 208]),
            prop::sample::select(vec![0u32, 16]),
            0u8..16,
            -3i32..=1,
            -3i32..=1,
        ),
        (
            0u64..=6,
            0u64..=40,
            0u64..=24,
            prop_oneof![8u64..=64, 64u64..=300],
            0u64..=3,
            4u64..=160,
            1u32..=4,
            1u32..=3,
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (ports, speed_gbps, cell_bytes, packet_overhead_bytes, lossless_low, a, la),
                (phi, eta, delta, bs, lphi, lbs, read_cells, read_latency, on_off),
            )| Knobs {
                ports,
                speed_gbps,
                cell_bytes,
                packet_overhead_bytes,
                lossless_low,
                alpha_log2: a,
                lossy_alpha_log2: la,
                phi,
                eta,
                // The config refuses delta >= alpha * B_s (an OFF queue could never resume).
                delta: delta.min(dynamic_threshold(bs, 0, a).saturating_sub(1)),
                shared_segment: bs,
                lossy_phi: lphi,
                lossy_shared_segment: lbs,
                read_cells,
                read_latency,
                on_off,
            },
        )
}

/// Back-to-back packets on one ingress port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    pub port: u8,
    pub prio: u8,
    pub dst: u8,
    pub len: u16,
    pub count: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Present the bursts: each port sends its bursts' cells one per cycle, back to back,
    /// all ports starting in the same cycle; run until every beat has been presented.
    Inject(Vec<Burst>),
    /// Run cycles with no arrivals.
    Idle(u32),
    /// A PFC frame received on egress `port` for `classes` (`quanta` 0 = RESUME), then
    /// one cycle.
    Pfc { port: u8, classes: u8, quanta: u16 },
}

/// The generator side of the state machine: only the setup; the reference model itself
/// runs inside the system under test (it needs the cycle model's departures).
pub struct Gen;

impl ReferenceStateMachine for Gen {
    type State = Setup;
    type Transition = Step;

    fn init_state() -> BoxedStrategy<Setup> {
        knobs_strategy().prop_map(Knobs::setup).boxed()
    }

    fn transitions(s: &Setup) -> BoxedStrategy<Step> {
        let ports = s.params.ports as u8;
        let burst = (
            0..ports,
            prop_oneof![4 => 0u8..=4, 1 => 0u8..8],
            0..ports,
            prop_oneof![64u16..=300, 300u16..=1500],
            prop_oneof![3 => 1u8..=4, 2 => 4u8..=24],
        )
            .prop_map(|(port, prio, dst, len, count)| Burst {
                port,
                prio,
                dst,
                len,
                count,
            });
        prop_oneof![
            6 => prop::collection::vec(burst, 1..=4).prop_map(Step::Inject),
            3 => prop_oneof![1u32..40, 40u32..3000].prop_map(Step::Idle),
            1 => (0..ports, any::<u8>(), prop_oneof![Just(0xFFFFu16), 1u16..200])
                .prop_map(|(port, classes, quanta)| Step::Pfc { port, classes, quanta }),
            1 => (0..ports, any::<u8>())
                .prop_map(|(port, classes)| Step::Pfc { port, classes, quanta: 0 }),
        ]
        .boxed()
    }

    fn apply(s: Setup, _: &Step) -> Setup {
        s
    }
}

// ---------------------------------------------------------------------------------------
// The harness: both models, lockstep.
// ---------------------------------------------------------------------------------------

/// Indices of the probed signals the harness reads.
struct Sigs {
    shared: usize,
    lossy_shared: usize,
    total: usize,
    t_lossy: usize,
    xon: usize,
}

pub struct Harness {
    mmu: Mmu,
    rf: RefModel,
    out: Outputs,
    queues: Vec<VecDeque<Beat>>,
    ingress: Vec<Option<Beat>>,
    next_flow: u32,
    sigs: Sigs,
    /// Cells seen: admitted per segment and dropped, for coverage reports.
    pub seen: Coverage,
    /// PFC frames the switch sent upstream: (cycle, port, frame).
    pub pfc_sent: Vec<(u64, u8, PfcFrame)>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Coverage {
    pub cycles: u64,
    pub admitted: [u64; 5],
    pub dropped: u64,
    pub qon_events: u64,
}

impl Harness {
    pub fn new(setup: &Setup, mutation: Mutation) -> Self {
        let d = setup.cfg.build().expect("generated config is valid");
        let p = &setup.params;
        let n_lossless = p.lossless.count_ones();
        assert_eq!(d.lossless_mask, p.lossless);
        if n_lossless > 0 {
            assert_eq!(
                (d.private_cells as u64, d.delta_cells as u64),
                (p.phi, p.delta)
            );
            assert!(d.eta_cells.iter().all(|&e| e as u64 == p.eta));
            assert_eq!(d.shared_cells as u64, p.shared_segment, "B_s");
        }
        if n_lossless < 8 {
            assert_eq!(d.lossy_private_cells as u64, p.lossy_phi);
            assert_eq!(d.lossy_shared_cells as u64, p.lossy_shared_segment);
        }
        let mmu = Mmu::new(d);
        let find = |path: &str| {
            mmu.signals()
                .iter()
                .position(|s| s.path == path)
                .unwrap_or_else(|| panic!("no signal {path}"))
        };
        let sigs = Sigs {
            shared: find("top.mmu.buffer.shared_cells"),
            lossy_shared: find("top.mmu.buffer.lossy_shared_cells"),
            total: find("top.mmu.buffer.total_cells"),
            t_lossy: find("top.mmu.dt_lossy.t"),
            xon: find("top.mmu.pfc.sub_xon.y"),
        };
        let ports = p.ports;
        let h = Self {
            out: Outputs::with_ports(ports),
            rf: RefModel::new(p.clone(), mutation),
            mmu,
            queues: vec![VecDeque::new(); ports],
            ingress: vec![None; ports],
            next_flow: 0,
            sigs,
            seen: Coverage::default(),
            pfc_sent: Vec::new(),
        };
        h.compare().expect("reset state agrees");
        h
    }

    fn queue_burst(&mut self, b: &Burst) {
        let n = self.mmu.config().cells_for(b.len as u32) as u16;
        let flow = self.next_flow;
        self.next_flow += 1;
        for seq in 0..b.count as u32 {
            let hdr = PacketHdr {
                flow,
                seq,
                src: b.port,
                dst: b.dst,
                prio: b.prio,
                len: b.len,
                ..Default::default()
            };
            for idx in 0..n {
                self.queues[b.port as usize].push_back(Beat {
                    hdr,
                    idx,
                    ncells: n,
                });
            }
        }
    }

    /// One cycle of both models, then compare everything.
    fn cycle(&mut self, pfc_rx: &[(u8, PfcFrame)]) -> Result<(), String> {
        for (slot, q) in self.ingress.iter_mut().zip(self.queues.iter_mut()) {
            *slot = q.pop_front();
        }
        let c = self.mmu.cycle();
        let ctx = |e: String| format!("cycle {c}: {e}");
        self.mmu
            .step(
                &Inputs {
                    ingress: &self.ingress,
                    pfc_rx,
                },
                &mut self.out,
            )
            .map_err(|e| ctx(format!("cycle model: {e}")))?;
        self.pfc_sent
            .extend(self.out.pfc_tx.iter().map(|&(p, f)| (c, p, f)));
        let qoff_before: u32 = (0..self.rf.p.ports)
            .map(|p| self.rf.qoff_bits(p).count_ones())
            .sum();
        let want = self
            .rf
            .step(&self.ingress, &self.out.departures)
            .map_err(ctx)?;
        if want != self.out.cell_events {
            let first = want
                .iter()
                .zip(&self.out.cell_events)
                .position(|(a, b)| a != b);
            return Err(ctx(format!(
                "cell events differ (first at {first:?}):\n  reference:   {want:?}\n  cycle model: {:?}",
                self.out.cell_events
            )));
        }
        for e in &want {
            match e.fate {
                CellFate::Admitted(s) => {
                    self.seen.admitted[Segment::ALL.iter().position(|&x| x == s).unwrap()] += 1
                }
                CellFate::Dropped(_) => self.seen.dropped += 1,
            }
        }
        let qoff_after: u32 = (0..self.rf.p.ports)
            .map(|p| self.rf.qoff_bits(p).count_ones())
            .sum();
        self.seen.qon_events += qoff_before.saturating_sub(qoff_after) as u64;
        self.seen.cycles += 1;
        self.compare().map_err(ctx)
    }

    /// Every counter, threshold and QOFF bit of the two models.
    fn compare(&self) -> Result<(), String> {
        let m = &self.mmu;
        let r = &self.rf;
        for port in 0..r.p.ports {
            for pg in 0..8u8 {
                let lv = r.level(port, pg);
                let want = [lv.private, lv.shared, lv.headroom];
                let got = m.ingress_counters(port, pg as usize).map(u64::from);
                if got != want {
                    return Err(format!(
                        "ingress ({port}, {pg}) [private, shared, headroom]: reference {want:?}, cycle model {got:?}"
                    ));
                }
                let (want, got) = (r.egress_cells(port, pg), m.egress_cells(port, pg as usize));
                if got as u64 != want {
                    return Err(format!(
                        "egress ({port}, {pg}): reference {want}, cycle model {got}"
                    ));
                }
            }
            let (want, got) = (r.qoff_bits(port), m.qoff(port));
            if got != want {
                return Err(format!(
                    "QOFF of port {port}: reference {want:#010b}, cycle model {got:#010b}"
                ));
            }
        }
        for (name, want, got) in [
            (
                "shared total",
                r.shared_total(),
                m.signal_value(self.sigs.shared),
            ),
            (
                "lossy shared total",
                r.lossy_shared_total(),
                m.signal_value(self.sigs.lossy_shared),
            ),
            (
                "buffer total",
                r.buffer_total(),
                m.signal_value(self.sigs.total),
            ),
            ("T", r.t, m.threshold() as u64),
            ("lossy T", r.t_lossy, m.signal_value(self.sigs.t_lossy)),
            ("X_on", r.xon, m.signal_value(self.sigs.xon)),
        ] {
            // The X_on wire holds the value of the last cycle: nothing before the first.
            if want != got && !(name == "X_on" && r.cycle == 0) {
                return Err(format!("{name}: reference {want}, cycle model {got}"));
            }
        }
        Ok(())
    }

    pub fn run(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::Inject(bursts) => {
                for b in bursts {
                    self.queue_burst(b);
                }
                while self.queues.iter().any(|q| !q.is_empty()) {
                    self.cycle(&[])?;
                }
            }
            Step::Idle(n) => {
                for _ in 0..*n {
                    self.cycle(&[])?;
                }
            }
            Step::Pfc {
                port,
                classes,
                quanta,
            } => {
                let mut f = PfcFrame {
                    class_enable: *classes,
                    ..PfcFrame::default()
                };
                for (c, q) in f.quanta.iter_mut().enumerate() {
                    if classes & (1 << c) != 0 {
                        *q = *quanta;
                    }
                }
                self.cycle(&[(*port, f)])?;
            }
        }
        self.mmu
            .check_invariants()
            .map_err(|e| format!("check_invariants: {e}"))
    }

    /// Resume every egress class and run until the buffer is empty.
    pub fn drain(&mut self) -> Result<(), String> {
        let resume = PfcFrame {
            class_enable: 0xFF,
            ..PfcFrame::default()
        };
        let frames: Vec<(u8, PfcFrame)> = (0..self.rf.p.ports as u8).map(|p| (p, resume)).collect();
        self.cycle(&frames)?;
        let mut budget = 400_000u32;
        while self.mmu.buffered_cells() > 0 || self.queues.iter().any(|q| !q.is_empty()) {
            if budget == 0 {
                return Err(format!(
                    "buffer not empty after draining: {} cells",
                    self.mmu.buffered_cells()
                ));
            }
            budget -= 1;
            self.cycle(&[])?;
        }
        // Two more cycles so the registered T has caught up with the empty buffer.
        self.cycle(&[])?;
        self.cycle(&[])?;
        self.mmu
            .check_invariants()
            .map_err(|e| format!("check_invariants: {e}"))?;
        if self.rf.buffer_total() != 0 || self.rf.egress.values().any(|&e| e != 0) {
            return Err("reference counters not zero after draining".into());
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The property test.
// ---------------------------------------------------------------------------------------

pub struct Lockstep;

impl StateMachineTest for Lockstep {
    type SystemUnderTest = Harness;
    type Reference = Gen;

    fn init_test(setup: &Setup) -> Harness {
        Harness::new(setup, Mutation::None)
    }

    fn apply(mut h: Harness, _: &Setup, step: Step) -> Harness {
        if let Err(e) = h.run(&step) {
            panic!("models disagree after {step:?}: {e}");
        }
        h
    }

    fn teardown(mut h: Harness, _: Setup) {
        if let Err(e) = h.drain() {
            panic!("models disagree while draining: {e}");
        }
    }
}

/// Moderate case count for `cargo test`; `PROPTEST_CASES` (e.g. from `make soak`) wins.
fn lockstep_config() -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 256;
    }
    c
}

prop_state_machine! {
    #![proptest_config(lockstep_config())]

    #[test]
    fn reference_and_cycle_model_agree(sequential 1..48 => Lockstep);
}

// ---------------------------------------------------------------------------------------
// Deterministic tests: the comparison bites, and sequences worth keeping.
// ---------------------------------------------------------------------------------------

fn burst(port: u8, prio: u8, dst: u8, len: u16, count: u8) -> Burst {
    Burst {
        port,
        prio,
        dst,
        len,
        count,
    }
}

/// Run `steps` then drain; `Err` at the first disagreement.
fn run_sequence(knobs: Knobs, mutation: Mutation, steps: &[Step]) -> Result<Coverage, String> {
    let mut h = Harness::new(&knobs.setup(), mutation);
    for s in steps {
        h.run(s).map_err(|e| format!("{s:?}: {e}"))?;
    }
    h.drain()?;
    Ok(h.seen)
}

/// A sequence per mutation that must tell it apart from the cycle model, and must pass
/// with the correct reference.
fn biting_sequences() -> Vec<(Mutation, Knobs, Vec<Step>)> {
    let k = Knobs::fixed();
    // One 8-cell lossless packet: 4 private + 4 shared; its first departure drains shared.
    let drain = vec![Step::Inject(vec![burst(0, 0, 1, 1500, 1)]), Step::Idle(200)];
    // One queue fills into headroom (PFC ignored upstream), then drains through the
    // hysteresis band [T - delta, T) where only X_on = T would resume it.
    let hysteresis = vec![
        Step::Inject(vec![burst(0, 1, 2, 1500, 8)]),
        Step::Idle(2000),
    ];
    // Any fill shows a T that does not lag.
    let registered = vec![Step::Inject(vec![burst(1, 0, 0, 1500, 3)])];
    // Two ports' 8-cell packets in the same cycle, with room in the segment for one.
    let running_sum = vec![Step::Inject(vec![
        burst(0, 0, 2, 1500, 1),
        burst(1, 0, 2, 1500, 1),
    ])];
    let tight = Knobs {
        phi: 0,
        shared_segment: 12,
        alpha_log2: 1,
        ..k
    };
    vec![
        (Mutation::DrainInAdmissionOrder, k, drain),
        (Mutation::XonIsT, k, hysteresis),
        (Mutation::UnregisteredT, k, registered),
        (Mutation::NoRunningSum, tight, running_sum),
    ]
}

#[test]
fn each_wrong_reference_is_caught_by_a_hand_written_sequence() {
    for (mutation, knobs, steps) in biting_sequences() {
        let ok = run_sequence(knobs, Mutation::None, &steps);
        assert!(ok.is_ok(), "{mutation:?} sequence must pass: {ok:?}");
        let e = run_sequence(knobs, mutation, &steps)
            .expect_err(&format!("{mutation:?} must be caught"));
        assert!(!e.is_empty());
    }
}

/// The random generation reaches each wrong rule too (fixed seed, so deterministic).
#[test]
fn random_sequences_catch_each_wrong_reference() {
    for mutation in [
        Mutation::DrainInAdmissionOrder,
        Mutation::XonIsT,
        Mutation::UnregisteredT,
        Mutation::NoRunningSum,
    ] {
        let cfg = ProptestConfig {
            cases: 64,
            failure_persistence: None,
            max_shrink_iters: 0,
            ..ProptestConfig::default()
        };
        let mut runner =
            TestRunner::new_with_rng(cfg, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        let result = runner.run(
            &Gen::sequential_strategy(1..32),
            // Shrinking is off, so the seen-transitions counter is not needed.
            |(setup, steps, _)| {
                let mut h = Harness::new(&setup, mutation);
                for s in &steps {
                    h.run(s).map_err(TestCaseError::fail)?;
                }
                h.drain().map_err(TestCaseError::fail)?;
                Ok(())
            },
        );
        assert!(
            result.is_err(),
            "64 random cases did not tell {mutation:?} from the cycle model"
        );
    }
}

/// Fill-up and drain on every path at once: private, shared, headroom, drops, QOFF and
/// QON, lossy drops, with a paused egress class and a resume.
#[test]
fn regression_fill_pause_overflow_and_drain() {
    let k = Knobs::fixed();
    let steps = vec![
        Step::Pfc {
            port: 2,
            classes: 0b0000_0011,
            quanta: 0xFFFF,
        },
        Step::Inject(vec![
            burst(0, 0, 2, 1500, 10),
            burst(1, 1, 2, 900, 12),
            burst(2, 4, 0, 1500, 20),
        ]),
        Step::Inject(vec![burst(0, 0, 2, 300, 24), burst(1, 0, 2, 1500, 6)]),
        Step::Idle(100),
        Step::Pfc {
            port: 2,
            classes: 0b0000_0011,
            quanta: 0,
        },
        Step::Idle(3000),
    ];
    let seen = run_sequence(k, Mutation::None, &steps).unwrap();
    for s in [Segment::Private, Segment::Shared, Segment::Headroom] {
        assert!(
            seen.admitted[Segment::ALL.iter().position(|&x| x == s).unwrap()] > 0,
            "no cell went to {s:?}: {seen:?}"
        );
    }
    assert!(seen.dropped > 0, "{seen:?}");
    assert!(seen.qon_events > 0, "{seen:?}");
}

/// Pins the threshold timing of the code: a charge made in cycle `c` reaches the `T`
/// register at the edge ending cycle `c + 1`, so it is first used in cycle `c + 2`.
/// (The doc of `dt_threshold.rs` says "`T` seen in cycle `c` reflects the occupancy
/// committed at the end of cycle `c - 1`", which would be `c + 1` here: see the report.)
#[test]
fn threshold_register_lags_a_charge_by_two_edges() {
    let k = Knobs {
        phi: 0,
        ..Knobs::fixed()
    };
    let mut h = Harness::new(&k.setup(), Mutation::None);
    // B_s = 60, alpha = 1/2: T = 30 empty, floor(52 / 2) = 26 with 8 cells shared.
    assert_eq!(h.mmu.threshold(), 30);
    h.queue_burst(&burst(0, 0, 1, 1500, 1));
    h.cycle(&[]).unwrap(); // cycle 0: the packet's 8 cells are charged to shared.
    assert_eq!(h.mmu.ingress_counters(0, 0), [0, 8, 0]);
    assert_eq!(h.mmu.threshold(), 30, "T for cycle 1 still from S(0) = 0");
    h.cycle(&[]).unwrap(); // cycle 1
    assert_eq!(h.mmu.threshold(), 26, "T for cycle 2 from S(1) = 8");
}

/// Regression: a lossless packet sent to headroom because the shared segment is full
/// (same-cycle grants of other ports) while its queue is below `X_on` used to turn the
/// queue OFF and, in the same cycle, ON again: no PAUSE was ever sent, the headroom filled
/// while the queue was ON, and lossless packets were dropped although the upstream was
/// never asked to stop. DSH II-C: headroom use comes with QOFF and a PAUSE.
#[test]
fn lossless_drop_only_after_pause() {
    let k = Knobs {
        phi: 0,
        shared_segment: 12,
        alpha_log2: 1,
        delta: 0,
        ..Knobs::fixed()
    };
    let mut h = Harness::new(&k.setup(), Mutation::None);
    let steps = [
        // Egress port 2 holds whatever reaches it.
        Step::Pfc {
            port: 2,
            classes: 1,
            quanta: 0xFFFF,
        },
        // Port 0 takes 8 of the 12 shared cells; port 1's packets (same cycle on) find
        // the segment full, go to headroom and are finally dropped.
        Step::Inject(vec![burst(0, 0, 2, 1500, 1), burst(1, 0, 2, 1500, 4)]),
        Step::Idle(100),
    ];
    for s in &steps {
        h.run(s).unwrap();
    }
    let pauses_to_port1 = h
        .pfc_sent
        .iter()
        .filter(|(_, p, f)| *p == 1 && f.paused() & 1 != 0)
        .count();
    let headroom = h.mmu.ingress_counters(1, 0)[2];
    assert!(
        h.seen.dropped == 0 || pauses_to_port1 > 0,
        "{} lossless cells dropped on port 1 with {headroom} headroom cells in use, \
         QOFF = {:#b}, and no PAUSE sent to its upstream (frames sent: {:?})",
        h.seen.dropped,
        h.mmu.qoff(1),
        h.pfc_sent
    );
}

/// With `delta >= alpha * B_s`, `X_on` would be 0 even with an empty buffer, so a queue
/// that goes OFF could never turn ON again: configuration validation refuses it.
#[test]
fn delta_at_or_above_the_largest_threshold_is_refused() {
    let mut cfg = hw_model::SwitchConfig::small();
    // B_s of the small profile is several thousand cells; alpha = 2^-7 brings the
    // largest T down to a few tens of cells, below a delta of 100 cells.
    cfg.alpha_log2 = -7;
    cfg.delta_bytes = 100 * cfg.cell_bytes;
    let e = cfg.build().unwrap_err();
    assert_eq!(e.field, "switch.delta_bytes", "{e}");
    cfg.delta_bytes = cfg.cell_bytes;
    cfg.build().expect("a small delta is fine");
}
