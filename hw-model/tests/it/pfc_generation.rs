//! PFC generation (`pfc/fsm.rs`) through its public interface: which frames each port
//! sends after queue-level (QON/QOFF) and port-level (PON/POFF) transitions, the refresh of
//! a port in POFF, and DSH's port-level resume in the flow-control phase. Each test pins a
//! behaviour that mutation testing found unchecked (docs/testing.md).

use crate::wires::Wires;
use hw_model::accounting::Accounting;
use hw_model::config::PFC_QUANTUM_BITS;
use hw_model::dirty::Dirty;
use hw_model::pfc::fsm::{FsmIn, PfcFsm};
use hw_model::policy::Dsh;
use hw_model::ports::{FlowRequests, PfcTakes};
use hw_model::{Derived, PfcFrame, Policy, SwitchConfig};
use rtl::Block;

fn dsh() -> Derived {
    SwitchConfig {
        policy: Policy::Dsh,
        ..SwitchConfig::small()
    }
    .build()
    .unwrap()
}

/// The refresh period `R` of `port`: half the pause time of the configured quanta, the
/// formula of the module comment, computed here from the configuration.
fn refresh_period(d: &Derived, port: usize) -> u64 {
    let pause_cycles =
        d.cfg.pfc_pause_quanta as u64 * PFC_QUANTUM_BITS * d.clock_hz / d.rate_bps[port];
    (pause_cycles / 2).max(1)
}

/// Cycles `0..until` of `port`'s refresh: `each` acts in the cycle, then the refreshes due
/// are raised and the transmitter takes any frame. The frames sent, with their cycles.
fn refreshes(
    fsm: &mut PfcFsm,
    port: usize,
    until: u64,
    mut each: impl FnMut(&mut PfcFsm, u64),
) -> Vec<(u64, PfcFrame)> {
    let mut sent = Vec::new();
    for now in 0..until {
        each(fsm, now);
        fsm.refresh(now);
        if fsm.has_pending(port) {
            sent.push((now, fsm.take_frame(port)));
        }
    }
    sent
}

/// One flow-control phase in cycle `now` with admission's requests `req` and the DSH
/// policy's QON/PON checks on a buffer whose counters are `acct`.
fn flow_control(
    fsm: &mut PfcFsm,
    d: &Derived,
    now: u64,
    req: &mut FlowRequests,
    acct: &Accounting,
) {
    let t = 1000;
    let mut policy = Dsh::new(d);
    policy.eval(t);
    let mut dirty = Dirty::new(d.ports);
    let input = FsmIn {
        requests: req,
        recheck: true,
        policy: &mut policy,
        acct,
        t,
    };
    fsm.eval(now, input, &mut dirty).unwrap();
}

/// Every port in POFF sends its own port-level RESUME once the buffer has drained, not
/// only the first one, and not a queue-level frame in its place.
#[test]
fn every_poff_port_sends_a_port_level_resume_after_the_drain() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let acct = Accounting::new(d.ports);
    let poff_ports = [1, 3, 6];
    let mut req = FlowRequests::new(d.ports);
    for p in poff_ports {
        req.poff(p);
    }
    flow_control(&mut fsm, &d, 10, &mut req, &acct);
    for p in poff_ports {
        let pause = fsm.take_frame(p);
        assert!(pause.port_level && pause.paused() == 0xFF, "port {p}");
    }
    assert_eq!(fsm.pending_ports(), 0);
    flow_control(&mut fsm, &d, 11, &mut req, &acct);
    assert_eq!(
        fsm.state().poff(),
        0,
        "an empty buffer turns every port PON"
    );
    for p in poff_ports {
        assert!(fsm.has_pending(p), "port {p} has its RESUME pending");
        let resume = fsm.take_frame(p);
        assert!(
            resume.port_level && resume.resumed() == 0xFF,
            "port {p} sent {resume:?}"
        );
    }
    assert_eq!(fsm.pending_ports(), 0);
}

/// A port charged POFF in this cycle stays POFF in it, empty buffer or not: its new
/// cells are not yet in the registered counters the PON check reads.
#[test]
fn a_port_charged_poff_in_this_cycle_does_not_resume_in_it() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let acct = Accounting::new(d.ports);
    let mut req = FlowRequests::new(d.ports);
    req.poff(2);
    flow_control(&mut fsm, &d, 5, &mut req, &acct);
    assert_eq!(fsm.state().poff(), 1 << 2);
    let pause = fsm.take_frame(2);
    assert!(pause.port_level && pause.paused() == 0xFF);
    assert!(!fsm.has_pending(2), "no RESUME in the charging cycle");
}

/// A port that goes POFF with none of its queues OFF re-sends its port-level PAUSE every
/// `R` cycles, the first `R - 1` cycles after the transition.
#[test]
fn poff_port_without_off_queues_refreshes_its_port_level_pause() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let r = refresh_period(&d, 4);
    fsm.to_poff(4, 0);
    assert!(fsm.take_frame(4).port_level);
    let sent = refreshes(&mut fsm, 4, 2 * r, |_, _| ());
    assert_eq!(
        sent.iter().map(|s| s.0).collect::<Vec<_>>(),
        [r - 1, 2 * r - 1]
    );
    assert!(
        sent.iter().all(|(_, f)| f.port_level && f.paused() == 0xFF),
        "{sent:?}"
    );
}

/// A port's transitions (QOFF, QON, POFF, PON) change no other port's frames: another
/// port in POFF keeps sending queue-level PAUSEs as such, with no port-level RESUME.
#[test]
fn a_port_transition_leaves_other_ports_frames_alone() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_poff(2, 0);
    fsm.take_frame(2);
    fsm.to_poff(5, 1);
    fsm.to_off(5, 3, 1);
    assert_eq!(
        fsm.pending_ports(),
        1 << 5,
        "only port 5 has something to send"
    );
    fsm.take_frame(5);
    fsm.take_frame(5);
    fsm.to_on(5, 3);
    fsm.to_pon(5);
    assert_eq!(fsm.pending_ports(), 1 << 5);
    fsm.to_off(2, 1, 2);
    let f = fsm.take_frame(2);
    assert!(!f.port_level, "port 2 is still POFF: {f:?}");
    assert_eq!((f.paused(), f.resumed()), (0b10, 0));
    assert!(!fsm.has_pending(2));
    assert_eq!(fsm.state().poff(), 1 << 2);
}

/// Two ports with port-level frames pending in one cycle, one PAUSE and one RESUME in
/// either order or two PAUSEs, each send their own.
#[test]
fn two_ports_with_port_level_frames_in_one_cycle_both_send() {
    let d = dsh();
    for resume_first in [false, true] {
        let mut fsm = PfcFsm::new(&d);
        fsm.to_poff(4, 0);
        fsm.take_frame(4);
        if resume_first {
            fsm.to_pon(4);
        }
        fsm.to_poff(1, 1);
        fsm.to_poff(6, 1);
        if !resume_first {
            fsm.to_pon(4);
        }
        for p in [1, 6] {
            let f = fsm.take_frame(p);
            assert!(f.port_level && f.paused() == 0xFF, "port {p}: {f:?}");
        }
        let f = fsm.take_frame(4);
        assert!(f.port_level && f.resumed() == 0xFF, "port 4: {f:?}");
        assert_eq!(fsm.pending_ports(), 0);
    }
}

/// A port that goes POFF while one of its queues is already OFF keeps the refresh
/// schedule the queue started, not a new one from the POFF, and each refresh re-sends
/// both its port-level and its queue-level PAUSE.
#[test]
fn poff_joins_the_refresh_schedule_of_an_off_queue() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let r = refresh_period(&d, 3);
    fsm.to_off(3, 0, 0);
    fsm.take_frame(3);
    fsm.to_poff(3, r / 2);
    fsm.take_frame(3);
    assert_eq!(fsm.next_refresh(), r - 1);
    for now in r / 2..r {
        fsm.refresh(now);
    }
    let port = fsm.take_frame(3);
    assert!(port.port_level && port.paused() == 0xFF, "{port:?}");
    let queue = fsm.take_frame(3);
    assert!(!queue.port_level && queue.paused() == 1, "{queue:?}");
}

/// Only a port in POFF turns PON: a port already PON that is asked again sends nothing.
#[test]
fn pon_of_a_port_not_in_poff_sends_nothing() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_pon(2);
    assert_eq!(fsm.pending_ports(), 0);
    fsm.to_poff(2, 0);
    fsm.take_frame(2);
    fsm.to_pon(2);
    fsm.take_frame(2);
    fsm.to_pon(2);
    assert!(!fsm.has_pending(2), "a second PON sends a second RESUME");
}

/// A queue already OFF whose PAUSE has gone out sends nothing when admission asks for
/// QOFF again, for every class.
#[test]
fn a_repeated_qoff_after_the_pause_went_out_sends_nothing() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    for pg in 0..8 {
        fsm.to_off(3, pg, 0);
        assert_eq!(fsm.take_frame(3).paused(), 1 << pg);
        fsm.to_off(3, pg, 1);
        assert!(!fsm.has_pending(3), "class {pg}: a duplicate PAUSE");
    }
}

/// QOFF of one class keeps the pending RESUME of another: one frame carries both.
#[test]
fn qoff_of_one_class_keeps_a_pending_resume_of_another() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_off(0, 1, 0);
    fsm.take_frame(0);
    fsm.to_on(0, 1);
    fsm.to_off(0, 3, 1);
    let f = fsm.take_frame(0);
    assert_eq!((f.resumed(), f.paused()), (1 << 1, 1 << 3), "{f:?}");
}

/// A second queue of a port turning OFF keeps the refresh schedule the first one started:
/// refreshes `R - 1` and `2R - 1` cycles after the first QOFF, each for both queues.
#[test]
fn a_second_off_queue_joins_the_refresh_schedule_of_its_port() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let r = refresh_period(&d, 5);
    fsm.to_off(5, 0, 0);
    fsm.take_frame(5);
    let sent = refreshes(&mut fsm, 5, 2 * r, |fsm, now| {
        if now == r / 2 {
            fsm.to_off(5, 6, now);
            fsm.take_frame(5);
        }
    });
    assert_eq!(
        sent.iter().map(|s| s.0).collect::<Vec<_>>(),
        [r - 1, 2 * r - 1]
    );
    assert!(
        sent.iter().all(|(_, f)| f.paused() == 1 << 6 | 1),
        "{sent:?}"
    );
}

/// Only an OFF queue turns ON, with its RESUME pending on its own port: a queue already
/// ON that is asked again sends nothing.
#[test]
fn qon_of_an_off_queue_sends_one_resume() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_on(1, 4);
    assert_eq!(fsm.pending_ports(), 0);
    fsm.to_off(1, 4, 0);
    fsm.take_frame(1);
    fsm.to_on(1, 4);
    assert_eq!(fsm.pending_ports(), 1 << 1);
    assert_eq!(fsm.take_frame(1).resumed(), 1 << 4);
    fsm.to_on(1, 4);
    assert_eq!(fsm.pending_ports(), 0);
}

/// The set of ports with OFF queues follows each port's own queues: the last OFF queue
/// of one port turning ON removes that port only, and it sends no refresh after.
#[test]
fn a_port_whose_last_off_queue_resumes_leaves_the_refresh_set_alone() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let r = refresh_period(&d, 6);
    fsm.to_off(2, 1, 0);
    fsm.to_off(6, 3, 0);
    fsm.to_off(6, 5, 0);
    assert_eq!(fsm.state().off_ports(), 1 << 2 | 1 << 6);
    fsm.to_on(6, 3);
    assert_eq!(
        fsm.state().off_ports(),
        1 << 2 | 1 << 6,
        "queue 5 is still OFF"
    );
    fsm.to_on(6, 5);
    assert_eq!(fsm.state().off_ports(), 1 << 2);
    fsm.take_frame(2);
    fsm.take_frame(6);
    let sent = refreshes(&mut fsm, 6, 2 * r, |fsm, _| {
        if fsm.has_pending(2) {
            fsm.take_frame(2);
        }
    });
    assert!(sent.is_empty(), "port 6 refreshed: {sent:?}");
}

/// A QOFF request alone turns the queue OFF (charged in this cycle, it may not resume in
/// it) and leaves its port PON.
#[test]
fn a_qoff_request_alone_leaves_the_port_pon() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    let acct = Accounting::new(d.ports);
    let mut req = FlowRequests::new(d.ports);
    req.off(4, 0);
    flow_control(&mut fsm, &d, 0, &mut req, &acct);
    assert_eq!((fsm.state().off(4), fsm.state().poff()), (1, 0));
    let f = fsm.take_frame(4);
    assert!(!f.port_level && f.paused() == 1, "{f:?}");
    assert_eq!(fsm.pending_ports(), 0, "no port-level frame");
}

/// A queue that turns ON again before its PAUSE went out sends a RESUME, and the pending
/// PAUSE of another class of the port still goes out with it.
#[test]
fn qon_before_the_pause_went_out_sends_a_resume() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_off(0, 2, 0);
    fsm.to_off(0, 5, 0);
    fsm.to_on(0, 2);
    let f = fsm.take_frame(0);
    assert_eq!((f.paused(), f.resumed()), (1 << 5, 1 << 2), "{f:?}");
}

/// A port's `qoff` wire shows its OFF queues, one bit per class.
#[test]
fn the_qoff_probe_shows_the_off_queues() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_off(3, 2, 0);
    fsm.to_off(3, 7, 0);
    let mut wires = Wires::default();
    fsm.probe_port(3, &mut wires);
    assert_eq!(wires.0, [(8, 1 << 7 | 1 << 2)]);
}

/// The edge removes only the frames taken: a port-level PAUSE raised after the port's
/// transmitter took a queue-level frame in the cycle is still pending at the next one.
#[test]
fn the_edge_keeps_a_frame_raised_after_the_take() {
    let d = dsh();
    let mut fsm = PfcFsm::new(&d);
    fsm.to_off(3, 1, 0);
    let mut takes = PfcTakes::default();
    let f = fsm.next_frame(3, &mut takes).unwrap();
    assert!(!f.port_level && f.paused() == 1 << 1, "{f:?}");
    fsm.to_poff(3, 0);
    fsm.taken(&takes);
    assert!(fsm.has_pending(3));
    let f = fsm.take_frame(3);
    assert!(f.port_level && f.paused() == 0xFF, "{f:?}");
    assert!(!fsm.has_pending(3));
}
