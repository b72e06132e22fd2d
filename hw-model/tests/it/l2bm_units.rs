//! L2BM's units and registers bit for bit (`hw_model::l2bm`, docs/l2bm.md): the weight and
//! threshold of Eq. 3 at their clamps, the sojourn estimate, the drain meter's EWMA, the
//! same-cycle grant bypass, the egress DT of the lossy pool, the recorders through the
//! policy interface and at their register bounds, the QON unit's round robin, the probes
//! and the faults. Before these, only L2BM's own unit tests and the testbench's scenarios
//! exercised the block; each test pins a behaviour that mutation testing found unchecked
//! (docs/testing.md).

use crate::wires::Wires;
use hw_model::accounting::Accounting;
use hw_model::dirty::Dirty;
use hw_model::l2bm::{threshold_of, weight_of, EstUnit, Meter, Recorder, C_BITS, W_MAX, W_ONE};
use hw_model::pfc::fsm::PfcFsm;
use hw_model::pfc::state::PauseState;
use hw_model::policy::{BufferPolicy, L2bm, Plan, PoolParams, Pools, QueueView, Request};
use hw_model::ports::FlowRequests;
use hw_model::{Derived, DropReason, Fault, L2bmMu, Policy, SwitchConfig};
use rtl::{probes_of, Probed};

/// The small switch under L2BM with the drain meters (`Measured`) or the line rate.
fn switch(mu: L2bmMu) -> Derived {
    SwitchConfig {
        policy: Policy::L2bm,
        l2bm_mu: mu,
        ..SwitchConfig::small()
    }
    .build()
    .unwrap()
}

/// `1 / mu` of a 100G port of the small switch: 16.64 cycles per 208-byte cell, UQ16.16.
const K_100G: u32 = 1_090_519;
/// Ingress port 0, priority 3, toward egress port 5: ingress queue 3, egress queue 43.
const QI: usize = 3;
const EQ: usize = 5 * 8 + 3;

fn request(port: usize, n: u32, lossless: bool) -> Request {
    Request::new(port, 3, 5, n, lossless)
}

/// The widths and values a unit shows.
fn wires(unit: &impl Probed) -> Vec<(u32, u64)> {
    probes_of(unit)
        .into_iter()
        .map(|(_, w, v)| (w, v))
        .collect()
}

#[test]
fn the_weight_is_c_over_tau_in_uq10_12_clamped_to_one() {
    assert_eq!((W_ONE, W_MAX), (4096, 4_194_303));
    assert_eq!(weight_of(4096, 1024), 4 * W_ONE, "C / tau = 4");
    assert_eq!(weight_of(777, 777), W_ONE);
    assert_eq!(weight_of(5, 7), W_ONE, "below 1 only by rounding: clamped");
    assert_eq!(weight_of(1, 0), W_MAX, "an empty queue");
}

/// `T_i = t_base * w` truncated, saturated at the 21-bit counter width.
#[test]
fn the_threshold_is_t_times_the_weight_saturated_at_21_bits() {
    assert_eq!(threshold_of(680, 4 * W_ONE), 2720);
    assert_eq!(threshold_of(1000, 6144), 1500, "w = 1.5");
    assert_eq!(threshold_of(3, 6143), 4, "truncated: 4.4993");
    assert_eq!(threshold_of(2047, W_MAX), 2_096_127, "below saturation");
    assert_eq!(threshold_of(2_000_000, W_MAX), (1 << 21) - 1);
}

/// `est = (Q_out * k) >> 16`: 8 cells at 16.64 cycles per cell take 133 cycles.
#[test]
fn the_estimate_is_q_out_times_k_in_uq16_16_cycles() {
    let mut u = EstUnit::default();
    assert_eq!(u.eval(8, K_100G), 133);
    assert_eq!(u.eval(10, 3 << 16), 30);
    assert_eq!(wires(&u), [(21, 10), (32, 3 << 16), (40, 30)]);
}

/// A start closing a back-to-back gap samples `((now - last) << 16) / cells` and moves `k`
/// by an eighth of the error, up or down; a start after an idle queue takes no sample.
/// `busy` tells whether another packet waits behind the one starting.
#[test]
fn a_drain_meter_moves_k_by_an_eighth_of_each_back_to_back_sample() {
    let mut m = Meter {
        n: 2,
        last: 100,
        cells: 4,
        busy: true,
    };
    assert_eq!(m.sample(300), 50 << 16, "200 cycles for 4 cells");
    let mut k = 10 << 16;
    m.start(&mut k, 8, 300);
    assert_eq!(k, (10 << 16) + (40 << 16) / 8);
    let after = Meter {
        n: 1,
        last: 300,
        cells: 8,
        busy: true,
    };
    assert_eq!(m, after);
    assert_eq!(wires(&m), [(21, 1), (48, 300), (21, 8), (1, 1)]);
    m.start(&mut k, 2, 340);
    assert_eq!(
        k,
        983_040 - 81_920,
        "sample 5 << 16: down by (983040 - 327680) / 8"
    );
    assert_eq!((m.n, m.busy, m.last, m.cells), (0, false, 340, 2));
    m.n = 1;
    m.start(&mut k, 3, 1000);
    assert_eq!(k, 901_120, "after an idle queue: no sample");
    assert_eq!((m.n, m.busy), (0, false));
}

/// The gap is cut at 32 bits before it is scaled, so a sample of many cells after a very
/// long gap is the cut gap's.
#[test]
fn a_meter_sample_cuts_the_gap_at_32_bits() {
    let m = Meter {
        n: 1,
        last: 7,
        cells: 1 << 20,
        busy: true,
    };
    assert_eq!(m.sample(7 + (1 << 33)), ((1u64 << 32) - 1) >> 4);
}

/// The same-cycle bypass: `Q_out` of a packet counts the egress queue's registered cells,
/// the cells granted to it earlier in the cycle, and its own; a new admission phase
/// starts it empty, whether the queue had one grant or several.
#[test]
fn grants_of_a_cycle_raise_q_out_and_clear_at_the_next_admission() {
    let d = switch(L2bmMu::LineRate);
    let mut l = L2bm::new(&d);
    assert_eq!(l.k[EQ], K_100G);
    let mut acct = Accounting::new(d.ports);
    acct.egress[EQ].add(4).unwrap();
    l.start_admission();
    assert_eq!(
        l.admitted(&request(0, 8, false), &acct, 10),
        10 + 199,
        "12 cells"
    );
    assert_eq!(l.granted(EQ), 8);
    l.commit(10).unwrap();
    l.start_admission();
    assert_eq!(l.granted(EQ), 0, "one grant, cleared");
    assert_eq!(
        l.admitted(&request(1, 1, false), &acct, 20),
        20 + 83,
        "5 cells"
    );
    assert_eq!(
        l.admitted(&request(2, 5, false), &acct, 20),
        20 + 166,
        "10 cells"
    );
    assert_eq!(l.granted(EQ), 6);
    l.commit(20).unwrap();
    l.start_admission();
    assert_eq!(l.granted(EQ), 0, "two grants, cleared");
    assert_eq!(l.admitted(&request(0, 8, false), &acct, 30), 30 + 199);
}

/// Dual admission: a lossy packet is refused once its egress queue, counting this cycle's
/// earlier grants, reaches the lossy egress pool's DT threshold.
#[test]
fn a_lossy_packet_is_refused_when_its_egress_queue_with_grants_reaches_t_e() {
    let d = switch(L2bmMu::LineRate);
    let pools = Pools {
        lossless: POOL,
        lossy: POOL,
    };
    let v = QueueView {
        private: 0,
        shared: 0,
        headroom: 0,
        t: 1000,
        shared_in_use: 0,
    };
    let pause = PauseState::new(d.ports);
    let decide = |egress: u32, granted: u32| {
        let mut l = L2bm::new(&d);
        let t_e = l.dt_egress.t();
        let mut acct = Accounting::new(d.ports);
        acct.egress[EQ].add(t_e - egress).unwrap();
        l.start_admission();
        if granted > 0 {
            l.admitted(&request(1, granted, false), &acct, 0);
        }
        l.decide(&request(0, 1, false), v, &pools, &acct, &pause)
    };
    assert!(decide(1, 0).is_ok());
    assert_eq!(decide(0, 0), Err(DropReason::EgressThreshold));
    assert_eq!(decide(1, 1), Err(DropReason::EgressThreshold));
    assert_eq!(decide(100, 100), Err(DropReason::EgressThreshold));
    assert!(decide(100, 99).is_ok());
}

const POOL: PoolParams = PoolParams {
    private: 15,
    shared_segment: 1000,
};

/// `T_e = alpha_e * (P - L)` follows the lossy pool's occupancy at the thresholds phase,
/// registered at the edge; `settled` tells whether it has.
#[test]
fn the_egress_dt_follows_the_lossy_pool_and_settles() {
    let d = switch(L2bmMu::LineRate);
    let mut l = L2bm::new(&d);
    let mut acct = Accounting::new(d.ports);
    let mut dirty = Dirty::new(d.ports);
    let p = l.dt_egress.t();
    assert!(l.settled(0, &acct));
    acct.lossy_total.add(100).unwrap();
    assert!(!l.settled(0, &acct));
    l.thresholds(0, &acct, &mut dirty);
    l.commit(1).unwrap();
    assert!(l.settled(0, &acct));
    assert_eq!(l.dt_egress.t(), p - 100);
}

/// `T_i = (C / tau_i) * T` from the queue's registered `tau` and `C`.
#[test]
fn the_queue_threshold_is_t_times_c_over_tau() {
    let mut l = L2bm::new(&switch(L2bmMu::LineRate));
    l.rec[QI].tau = 1024;
    l.c = 4096;
    assert_eq!(l.queue_threshold(&request(0, 8, true), 680), 2720);
    assert_eq!((l.adm[0].pg, l.adm[0].w), (3, 4 * W_ONE));
}

/// A lossless packet charged to headroom, or dropped, turns its queue OFF (SIH's rule).
#[test]
fn a_lossless_packet_in_headroom_turns_its_queue_off() {
    let d = switch(L2bmMu::LineRate);
    let l = L2bm::new(&d);
    let acct = Accounting::new(d.ports);
    let offs = |outcome: Option<&Plan>| {
        let mut req = FlowRequests::new(d.ports);
        l.flow_control(&request(2, 8, true), outcome, 0, &acct, &mut req);
        req.off_of(2)
    };
    let plan = |seg0, headroom| Plan {
        seg0,
        seg1: 0,
        headroom,
    };
    assert_eq!(offs(Some(&plan(8, 0))), 0);
    assert_eq!(offs(Some(&plan(7, 1))), 1 << 3);
    assert_eq!(offs(None), 1 << 3);
}

/// Through the policy interface: an admission records its estimate, the edge applies it
/// (`tau`, `C`), the recount agrees, and the dequeue removes exactly the remainder.
#[test]
fn the_recorder_follows_admissions_and_dequeues_at_the_edge() {
    let d = switch(L2bmMu::LineRate);
    let mut l = L2bm::new(&d);
    let acct = Accounting::new(d.ports);
    let due = l.admitted(&request(0, 8, true), &acct, 10);
    assert_eq!(due, 10 + 133);
    assert_eq!(l.rec[QI], Recorder::default(), "until the edge");
    l.commit(10).unwrap();
    let one = Recorder {
        t_total: 133,
        n: 1,
        t_prev: 10,
        tau: 133,
    };
    assert_eq!((l.rec[QI], l.c), (one, 133));
    l.check_registers([(QI, due)].into_iter()).unwrap();
    assert!(l.check_registers(std::iter::empty()).is_err());
    l.dequeued(QI, EQ, 8, due, 30);
    l.commit(30).unwrap();
    let empty = Recorder {
        t_prev: 30,
        ..Recorder::default()
    };
    assert_eq!((l.rec[QI], l.c), (empty, 0));
    l.check_registers(std::iter::empty()).unwrap();
}

/// `N` may reach the largest value of its 21 bits; one packet more is refused at the edge.
#[test]
fn n_fills_its_register_and_refuses_one_packet_more() {
    let d = switch(L2bmMu::LineRate);
    let mut l = L2bm::new(&d);
    let acct = Accounting::new(d.ports);
    l.rec[QI].n = (1 << 21) - 2;
    l.admitted(&request(0, 1, true), &acct, 0);
    l.commit(0).unwrap();
    assert_eq!(l.rec[QI].n, (1 << 21) - 1);
    l.admitted(&request(0, 1, true), &acct, 1);
    let err = l.commit(1).unwrap_err().0;
    assert_eq!(err, "L2BM recorder of queue 3: N would become 2097152");
}

/// `C` may reach the largest value of its 50 bits; a `tau` more is refused at the edge.
#[test]
fn c_fills_its_register_and_refuses_one_tau_more() {
    let d = switch(L2bmMu::LineRate);
    let mut l = L2bm::new(&d);
    let acct = Accounting::new(d.ports);
    let max = (1u64 << C_BITS) - 1;
    l.c = max - 133;
    l.admitted(&request(0, 8, true), &acct, 0);
    l.commit(0).unwrap();
    assert_eq!(l.c, max);
    l.start_admission();
    l.admitted(&Request::new(1, 3, 6, 8, true), &acct, 1);
    let err = l.commit(1).unwrap_err().0;
    assert_eq!(err, format!("L2BM C = {} exceeds 50 bits", max + 133));
}

/// The recount names the ingress port and priority group of the queue it disagrees with.
#[test]
fn a_broken_recorder_names_its_ingress_port_and_group() {
    let mut l = L2bm::new(&switch(L2bmMu::LineRate));
    l.rec[2 * 8 + 3].n = 1;
    let err = l.check(std::iter::empty()).unwrap_err();
    assert_eq!(
        err,
        "ingress p2 pg3: L2BM N = 1, recount of its queued and in-flight packets 0"
    );
}

/// Ingress queue `(p, pg)`'s shared and headroom cells.
fn charge(acct: &mut Accounting, p: usize, pg: usize, shared: u32, headroom: u32) {
    let g = &mut acct.ingress[p * 8 + pg];
    g[1].add(shared).unwrap();
    g[2].add(headroom).unwrap();
}

/// Port 2 with queues 3, 5 and 6 OFF; queue 3 holds `tau = C = 100` (so `w = 1` and
/// `X_on = T - delta = 40`) and `q3_shared` shared cells; queue 5 a headroom cell; the
/// others `tau = 0` (their weight saturates, so `X_on` is far above any count).
fn qon_setup(q3_shared: u32) -> (L2bm, Accounting, u32, u8) {
    let d = switch(L2bmMu::LineRate);
    let mut l = L2bm::new(&d);
    l.rec[2 * 8 + 3].tau = 100;
    l.c = 100;
    let mut acct = Accounting::new(d.ports);
    charge(&mut acct, 2, 3, q3_shared, 0);
    charge(&mut acct, 2, 5, 0, 1);
    (l, acct, d.delta_cells + 40, 1 << 3 | 1 << 5 | 1 << 6)
}

/// The QON unit checks one OFF queue per cycle, round robin from its pointer (wrapping
/// past queue 7), with that queue's own `tau`: it resumes with no headroom cells and its
/// shared count below `X_on`.
#[test]
fn the_qon_unit_checks_one_off_queue_per_cycle_round_robin() {
    let (mut l, acct, t, off) = qon_setup(40);
    let mut dirty = Dirty::new(8);
    // (queue checked, what resumes, the pointer after)
    for (pg, resumed, rr) in [(3, 0, 4), (5, 0, 6), (6, 1 << 6, 7), (3, 0, 4)] {
        assert_eq!(l.resume_queues(2, off, &acct, t, &mut dirty), resumed);
        assert_eq!((l.qon[2].pg, l.qon_rr[2]), (pg, rr));
    }
    assert_eq!(l.qon[2].xon(), 40, "w = 1 for queue 3");
    let (mut l, acct, t, off) = qon_setup(39);
    assert_eq!(l.resume_queues(2, off, &acct, t, &mut dirty), 1 << 3);
}

/// The QON unit is busy while its port has more than one OFF queue, or its pointer or its
/// input registers are not yet those of the one OFF queue; otherwise idle.
#[test]
fn the_qon_unit_is_idle_once_it_shows_its_one_off_queue() {
    let (mut l, acct, t, _) = qon_setup(40);
    let d = switch(L2bmMu::LineRate);
    let mut dirty = Dirty::new(d.ports);
    let mut fsm = PfcFsm::new(&d);
    assert!(!l.busy(fsm.state(), t), "no OFF queue");
    fsm.to_off(2, 3, 0);
    assert!(l.busy(fsm.state(), t), "pointer and unit at reset");
    l.resume_queues(2, 1 << 3, &acct, t, &mut dirty);
    assert!(!l.busy(fsm.state(), t));
    assert!(l.busy(fsm.state(), t + 1), "a new T");
    l.qon_rr[2] = 0;
    assert!(l.busy(fsm.state(), t), "the pointer alone");
    l.resume_queues(2, 1 << 3, &acct, t, &mut dirty);
    fsm.to_off(2, 5, 0);
    assert!(l.busy(fsm.state(), t), "two OFF queues alone");
}

/// `C` and the egress DT, per port the enqueue, admission and QON units and the pointer,
/// per ingress queue its recorder, per egress queue its meter and `k`.
#[test]
fn l2bm_probes_show_each_register_of_its_own_queue_and_port() {
    let d = switch(L2bmMu::Measured);
    let mut l = L2bm::new(&d);
    let pause = PauseState::new(d.ports);
    let acct = Accounting::new(d.ports);
    l.c = 12345;
    l.qon_rr[2] = 5;
    l.rec[2 * 8 + 3] = Recorder {
        t_total: -6,
        n: 7,
        t_prev: 8,
        tau: 9,
    };
    l.meter[EQ].n = 4;
    l.k[EQ] = 77;
    l.adm[2].eval(3, 1, 2, 50);
    let shown = |probe: &dyn Fn(&mut Wires)| {
        let mut w = Wires::default();
        probe(&mut w);
        w.0
    };
    let pool = shown(&|w| l.probe_pool_units(w));
    assert_eq!(pool[0], (C_BITS, 12345));
    assert_eq!(pool[1..], wires(&l.dt_egress));
    let port = shown(&|w| l.probe_port(2, &pause, &acct, w));
    let units = [wires(&l.est[2]), wires(&l.adm[2]), wires(&l.qon[2])].concat();
    assert_eq!(port[..units.len()], units);
    assert_eq!(port[units.len()..], [(3, 5)]);
    let group = shown(&|w| l.probe_group(2, 3, w));
    assert_eq!(group, [(64, (-6i64) as u64), (21, 7), (48, 8), (40, 9)]);
    let queue = shown(&|w| l.probe_egress_queue(5, 3, w));
    assert_eq!(queue, [wires(&l.meter[EQ]), vec![(32, 77)]].concat());
    let line_rate = L2bm::new(&switch(L2bmMu::LineRate));
    assert!(shown(&|w| line_rate.probe_egress_queue(5, 3, w)).is_empty());
}

/// Two packets toward egress queue `EQ` in cycle 10, started at 20 and 60: the meters
/// count them at admission and take each start at the edge; the second start closes a
/// back-to-back gap of 40 cycles for 4 cells. Returns `k` after each edge.
fn two_starts(l: &mut L2bm) -> [u32; 2] {
    let acct = Accounting::new(8);
    let due0 = l.admitted(&request(0, 4, true), &acct, 10);
    let due1 = l.admitted(&request(1, 4, true), &acct, 10);
    assert_eq!(l.meter[EQ].n, 2);
    l.commit(10).unwrap();
    l.dequeued(QI, EQ, 4, due0, 20);
    l.commit(20).unwrap();
    assert_eq!((l.meter[EQ].n, l.meter[EQ].busy), (1, true));
    let k20 = l.k[EQ];
    l.dequeued(8 + 3, EQ, 4, due1, 60);
    l.commit(60).unwrap();
    assert_eq!((l.meter[EQ].n, l.meter[EQ].busy), (0, false));
    [k20, l.k[EQ]]
}

/// `l2bm_mu = "measured"`: `k` starts at the line rate and moves by an eighth of the error
/// of each back-to-back sample, `(40 << 16) / 4` here; `Fault::L2bmMeterStuck` stops it.
#[test]
fn measured_drain_meters_take_each_packet_start_at_the_edge() {
    let mut l = L2bm::new(&switch(L2bmMu::Measured));
    assert_eq!(two_starts(&mut l), [K_100G, K_100G - 54_395]);
    let mut stuck = L2bm::new(&switch(L2bmMu::Measured));
    stuck.inject(Fault::L2bmMeterStuck);
    assert_eq!(two_starts(&mut stuck), [K_100G, K_100G]);
}

/// Companion of the meter's check: a start of a queue with no packet admitted is refused.
#[test]
fn a_start_without_an_admitted_packet_is_caught_at_the_edge() {
    let mut l = L2bm::new(&switch(L2bmMu::Measured));
    l.dequeued(QI, EQ, 4, 0, 0);
    let err = l.commit(0).unwrap_err().0;
    assert_eq!(
        err,
        "L2BM drain meter of egress queue 43: a start with n = 0"
    );
}

/// The recorder faults add one to queue 0's `N` or `t_total`, which the recount catches.
#[test]
fn recorder_faults_skew_queue_0_by_one() {
    let mut l = L2bm::new(&switch(L2bmMu::LineRate));
    l.inject(Fault::L2bmSkewCount);
    assert_eq!(l.rec[0].n, 1);
    assert!(l.check(std::iter::empty()).is_err());
    let mut l = L2bm::new(&switch(L2bmMu::LineRate));
    l.inject(Fault::L2bmSkewTotal);
    assert_eq!(l.rec[0].t_total, 1);
    assert!(l.check(std::iter::empty()).is_err());
}
