//! The buffer policies' rules through their public interface (`policy/rules.rs`, `sih.rs`,
//! `dsh.rs`): the threshold units after `T` moves, the boundaries of each decision and
//! flow-control request, which queues and ports resume, and what a policy without units of
//! its own answers. Each test pins a behaviour that mutation testing found unchecked
//! (docs/testing.md).

use crate::wires::Wires;
use hw_model::accounting::Accounting;
use hw_model::dirty::Dirty;
use hw_model::pfc::fsm::PfcFsm;
use hw_model::pfc::state::PauseState;
use hw_model::policy::decision::lossy;
use hw_model::policy::{
    dsh, sih, BufferPolicy, Dsh, Plan, PoolParams, Pools, QueueView, Request, Sih,
};
use hw_model::ports::FlowRequests;
use hw_model::{Derived, DropReason, Policy, SwitchConfig};

fn switch(policy: Policy) -> Derived {
    SwitchConfig {
        policy,
        ..SwitchConfig::small()
    }
    .build()
    .unwrap()
}

const POOL: PoolParams = PoolParams {
    private: 15,
    shared_segment: 1000,
};

/// A queue past its private buffer, with `shared` cells shared (also the pool's), `headroom`
/// in headroom, below `t`.
fn past_private(shared: u32, headroom: u32, t: u32, shared_in_use: u32) -> QueueView {
    QueueView {
        private: 15,
        shared,
        headroom,
        t,
        shared_in_use,
    }
}

fn plan(seg1: u16, headroom: u16) -> Plan {
    Plan {
        seg0: 0,
        seg1,
        headroom,
    }
}

/// A policy that only decides: what the interface answers for a policy without threshold
/// units of its own, port-level flow control or registers.
struct DecideOnly;

impl BufferPolicy for DecideOnly {
    fn thresholds(&mut self, _: u32, _: &Accounting, _: &mut Dirty) {}

    fn decide(
        &mut self,
        r: &Request,
        v: QueueView,
        pools: &Pools,
        _: &Accounting,
        _: &PauseState,
    ) -> Result<Plan, DropReason> {
        lossy(r.n, v, pools.lossy)
    }

    fn flow_control(
        &self,
        _: &Request,
        _: Option<&Plan>,
        _: u32,
        _: &Accounting,
        _: &mut FlowRequests,
    ) {
    }

    fn resume_queues(&mut self, _: usize, _: u8, _: &Accounting, _: u32, _: &mut Dirty) -> u8 {
        0
    }
}

#[test]
fn a_policy_without_units_of_its_own_keeps_the_pool_threshold_and_is_always_settled() {
    let mut p = DecideOnly;
    let acct = Accounting::new(8);
    let r = Request::new(2, 3, 5, 4, true);
    assert_eq!(p.queue_threshold(&r, 777), 777);
    assert_eq!(p.admitted(&r, &acct, 40), 0, "no due cycle");
    assert_eq!(p.resume_ports(0b1010, &acct), 0, "no port-level PFC");
    assert!(!p.headroom_per_port());
    assert!(!p.busy(&PauseState::new(8), 777));
    assert!(p.settled(777, &acct));
}

/// SIH's `X_on = T - delta` follows the registered `T`: re-evaluated when `T` moved, and
/// `settled` tells whether it has.
#[test]
fn sih_xon_follows_a_new_t() {
    let d = switch(Policy::Sih);
    let acct = Accounting::new(d.ports);
    let mut dirty = Dirty::new(d.ports);
    let t0 = d.delta_cells + 100;
    let mut s = Sih::new(&d, t0);
    assert!(s.settled(t0, &acct));
    assert!(!s.settled(t0 + 1, &acct));
    s.thresholds(t0 + 50, &acct, &mut dirty);
    assert_eq!(s.sub_xon.y(), 150);
    assert!(s.settled(t0 + 50, &acct));
    let mut w = Wires::default();
    s.probe_pfc_thresholds(&mut w);
    assert_eq!(
        w.0,
        [
            (21, (t0 + 50) as u64),
            (21, d.delta_cells as u64),
            (1, 0),
            (21, 150)
        ]
    );
}

/// SIH's lossless rule at its boundaries: below `T`, the shared segment takes a packet
/// that fills it exactly, not one more cell; at `T`, headroom of `eta - 8` takes a packet
/// of 8 more cells, `eta - 7` does not.
#[test]
fn sih_segment_and_headroom_take_a_packet_up_to_their_last_cell() {
    let eta = 100;
    let below_t = |in_use| past_private(0, 0, 50, in_use);
    assert_eq!(sih::lossless(8, below_t(992), POOL, eta), Ok(plan(8, 0)));
    assert_eq!(sih::lossless(8, below_t(993), POOL, eta), Ok(plan(0, 8)));
    assert_eq!(sih::lossless(8, below_t(200), POOL, eta), Ok(plan(8, 0)));
    let at_t = |headroom| past_private(50, headroom, 50, 50);
    assert_eq!(sih::lossless(8, at_t(92), POOL, eta), Ok(plan(0, 8)));
    assert_eq!(
        sih::lossless(8, at_t(93), POOL, eta),
        Err(DropReason::HeadroomFull)
    );
}

/// A packet goes to headroom, or is dropped, and turns its queue OFF; a packet wholly in
/// private or shared does not.
#[test]
fn sih_turns_off_only_a_queue_that_used_headroom_or_dropped() {
    let d = switch(Policy::Sih);
    let s = Sih::new(&d, 100);
    let acct = Accounting::new(d.ports);
    let r = Request::new(2, 3, 5, 8, true);
    let offs = |outcome: Option<&Plan>| {
        let mut req = FlowRequests::new(d.ports);
        s.flow_control(&r, outcome, 0, &acct, &mut req);
        req.off_of(2)
    };
    assert_eq!(offs(Some(&plan(8, 0))), 0);
    assert_eq!(offs(Some(&plan(0, 1))), 1 << 3);
    assert_eq!(offs(None), 1 << 3);
}

/// The counters of ingress queue `(p, pg)`: shared and headroom (or insurance) cells.
fn charge(acct: &mut Accounting, p: usize, pg: usize, shared: u32, headroom: u32) {
    let g = &mut acct.ingress[p * 8 + pg];
    g[1].add(shared).unwrap();
    g[2].add(headroom).unwrap();
}

/// DSH's units evaluated from the registered `T` = `t`.
fn dsh_at(d: &Derived, t: u32) -> Dsh {
    let mut p = Dsh::new(d);
    p.thresholds(t, &Accounting::new(d.ports), &mut Dirty::new(d.ports));
    p
}

/// QON under SIH: an OFF queue with no headroom cells and its shared count below `X_on`;
/// at `X_on`, or with a headroom cell left, it stays OFF.
#[test]
fn sih_resumes_an_off_queue_below_xon_with_empty_headroom() {
    let d = switch(Policy::Sih);
    let t = d.delta_cells + 40;
    let mut s = Sih::new(&d, t);
    let mut acct = Accounting::new(d.ports);
    charge(&mut acct, 2, 3, 39, 0);
    charge(&mut acct, 2, 5, 40, 0);
    charge(&mut acct, 2, 6, 0, 1);
    let mut dirty = Dirty::new(d.ports);
    let off = 1 << 3 | 1 << 5 | 1 << 6;
    assert_eq!(s.resume_queues(2, off, &acct, t, &mut dirty), 1 << 3);
    assert_eq!(
        s.resume_queues(2, 1 << 6 | 1 << 7, &acct, t, &mut dirty),
        1 << 7
    );
}

/// DSH's units follow the registered `T` (Eq. 5 and 6), and `settled` tells whether they
/// have.
#[test]
fn dsh_units_follow_a_new_t() {
    let d = switch(Policy::Dsh);
    let acct = Accounting::new(d.ports);
    let mut dirty = Dirty::new(d.ports);
    let mut p = Dsh::new(&d);
    let t = d.eta_cells[1] + d.delta_cells + 300;
    p.thresholds(t, &acct, &mut dirty);
    assert_eq!(p.xqoff(1), t - d.eta_cells[1]);
    assert_eq!(p.xqon(1), 300);
    assert!(p.settled(t, &acct));
    assert!(!p.settled(t + 1, &acct));
    assert!(p.headroom_per_port());
}

/// DSH's lossless rule at its boundaries: the shared segment takes a packet that fills it
/// exactly, not one more cell; the port's insurance takes a packet up to exactly `eta`.
#[test]
fn dsh_segment_and_insurance_take_a_packet_up_to_their_last_cell() {
    let pon = dsh::PortView {
        poff: false,
        insurance: 0,
        eta: 20,
    };
    let poff = |insurance| dsh::PortView {
        poff: true,
        insurance,
        eta: 20,
    };
    let v = |in_use| past_private(0, 0, 50, in_use);
    assert_eq!(dsh::lossless(8, v(992), POOL, pon), Ok(plan(8, 0)));
    assert_eq!(dsh::lossless(8, v(993), POOL, pon), Ok(plan(0, 8)));
    assert_eq!(dsh::lossless(8, v(200), POOL, pon), Ok(plan(8, 0)));
    assert_eq!(dsh::lossless(8, v(0), POOL, poff(12)), Ok(plan(0, 8)));
    assert_eq!(
        dsh::lossless(8, v(0), POOL, poff(13)),
        Err(DropReason::HeadroomFull)
    );
}

/// A lossless packet of a POFF port goes to its insurance; the other ports' packets still
/// go to shared (the decision reads the port's own POFF bit).
#[test]
fn dsh_decision_reads_the_poff_bit_of_the_packets_port() {
    let d = switch(Policy::Dsh);
    let mut p = Dsh::new(&d);
    let acct = Accounting::new(d.ports);
    let mut fsm = PfcFsm::new(&d);
    fsm.to_poff(2, 0);
    let pools = Pools {
        lossless: POOL,
        lossy: POOL,
    };
    let v = past_private(0, 0, 50, 0);
    let mut decide = |port| {
        p.decide(
            &Request::new(port, 3, 5, 8, true),
            v,
            &pools,
            &acct,
            fsm.state(),
        )
    };
    assert_eq!(decide(2), Ok(plan(0, 8)));
    assert_eq!(decide(0), Ok(plan(8, 0)));
    assert_eq!(decide(1), Ok(plan(8, 0)));
    assert_eq!(decide(3), Ok(plan(8, 0)));
}

/// Eq. 5 and 6 as requests: QOFF once shared cells granted to the queue take it above
/// `X_qoff` (not at it, and not without shared cells); POFF once the port's shared count
/// goes above `X_poff`, or as soon as insurance is used; a drop requests both.
#[test]
fn dsh_requests_qoff_and_poff_just_above_their_thresholds() {
    let d = switch(Policy::Dsh);
    let p = dsh_at(&d, d.eta_cells[2] + 100);
    let mut acct = Accounting::new(d.ports);
    let (xqoff, xpoff) = (p.xqoff(2), p.xpoff() as u32);
    assert_eq!(xqoff, 100);
    let r = Request::new(2, 3, 5, 8, true);
    // (queue's shared count, the plan) -> (QOFF of the queue, POFF of the port)
    let requests = |p: &Dsh, acct: &Accounting, shared, outcome: Option<&Plan>| {
        let mut req = FlowRequests::new(d.ports);
        p.flow_control(&r, outcome, shared, acct, &mut req);
        (req.off_of(2) == 1 << 3, req.poff_ports() == 1 << 2)
    };
    assert_eq!(requests(&p, &acct, 92, Some(&plan(8, 0))), (false, false));
    assert_eq!(requests(&p, &acct, 93, Some(&plan(8, 0))), (true, false));
    assert_eq!(requests(&p, &acct, 1, Some(&plan(100, 0))), (true, false));
    assert_eq!(requests(&p, &acct, 101, Some(&plan(0, 0))), (false, false));
    assert_eq!(requests(&p, &acct, 0, Some(&plan(0, 1))), (false, true));
    assert_eq!(requests(&p, &acct, 0, None), (true, true));
    // The port's shared count plus the packet's shared cells, against X_poff.
    acct.port_shared[2].add(xpoff - 8).unwrap();
    assert!(!requests(&p, &acct, 0, Some(&plan(8, 0))).1);
    assert!(requests(&p, &acct, 0, Some(&plan(9, 0))).1);
}

/// QON under DSH: no insurance cells of the queue and its shared count below `X_qon`.
/// PON: no insurance cells of the port and its shared count below `X_pon`.
#[test]
fn dsh_resumes_queues_and_ports_below_their_on_thresholds() {
    let d = switch(Policy::Dsh);
    let t = d.eta_cells[2] + d.delta_cells + 40;
    let mut p = dsh_at(&d, t);
    let mut acct = Accounting::new(d.ports);
    let mut dirty = Dirty::new(d.ports);
    assert_eq!(p.xqon(2), 40);
    charge(&mut acct, 2, 3, 39, 0);
    charge(&mut acct, 2, 5, 40, 0);
    charge(&mut acct, 2, 6, 0, 1);
    let off = 1 << 3 | 1 << 5 | 1 << 6;
    assert_eq!(p.resume_queues(2, off, &acct, t, &mut dirty), 1 << 3);
    assert_eq!(
        p.resume_queues(2, 1 << 6 | 1 << 7, &acct, t, &mut dirty),
        1 << 7
    );
    let xpon = p.xpon() as u32;
    assert!(xpon > 0);
    acct.port_shared[1].add(xpon).unwrap();
    acct.port_shared[3].add(xpon - 1).unwrap();
    acct.port_headroom[4].add(1).unwrap();
    assert_eq!(p.resume_ports(0b11110, &acct), 1 << 2 | 1 << 3);
}

/// A port's DSH wires: its two subtractors, then its POFF bit, shared and insurance counts.
#[test]
fn dsh_probes_show_the_poff_bit_of_each_port() {
    let d = switch(Policy::Dsh);
    let p = Dsh::new(&d);
    let mut acct = Accounting::new(d.ports);
    acct.port_shared[2].add(7).unwrap();
    acct.port_headroom[2].add(3).unwrap();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_poff(2, 0);
    let port_wires = |port| {
        let mut w = Wires::default();
        p.probe_port(port, fsm.state(), &acct, &mut w);
        w.0[w.0.len() - 3..].to_vec()
    };
    assert_eq!(port_wires(2), [(1, 1), (21, 7), (21, 3)]);
    assert_eq!(port_wires(1), [(1, 0), (21, 0), (21, 0)]);
    assert_eq!(port_wires(3), [(1, 0), (21, 0), (21, 0)]);
}

/// DSH's port-level units: `X_poff = N_q * T` (its shifter or multiplier: input `T`,
/// output `X_poff`), then `X_pon = X_poff - delta_p`.
#[test]
fn dsh_probes_show_the_port_level_units() {
    let d = switch(Policy::Dsh);
    let t = d.delta_port_cells + 100;
    let p = dsh_at(&d, t);
    let xpoff = p.xpoff();
    assert!(xpoff > d.delta_port_cells as u64);
    let scale: Vec<(u32, u64)> = rtl::probes_of(&p.scale_xpoff)
        .into_iter()
        .map(|(_, width, value)| (width, value))
        .collect();
    assert_eq!(scale.first(), Some(&(24, t as u64)));
    assert_eq!(scale.last(), Some(&(24, xpoff)));
    let mut units = Wires::default();
    p.probe_pfc_thresholds(&mut units);
    let (shown_scale, sub_xpon) = units.0.split_at(scale.len());
    assert_eq!(shown_scale, scale);
    assert_eq!(
        sub_xpon,
        [
            (24, xpoff),
            (24, d.delta_port_cells as u64),
            (1, 0),
            (24, p.xpon())
        ]
    );
}
