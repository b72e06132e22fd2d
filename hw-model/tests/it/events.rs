//! Time driven by events is checked, not claimed: `Mmu::next_event` never passes a cycle
//! with work, and a jump with `Mmu::skip_to` changes nothing a cycle-by-cycle run would
//! show.
//!
//! Two models see the same stimulus (the phase-order test's configurations, bursts and
//! received PFC frames). One steps every cycle. The other, whenever its inputs are idle,
//! jumps to the earliest of its `next_event`, the driver's next beat and the next received
//! frame. After every cycle of the first: if the second stepped the same cycle, their
//! outputs, statistics, dirty blocks and every probed signal are equal; if it jumped over
//! the cycle, the first produced no output in it and its statistics and every signal equal
//! the second's (values change only where they change, so a waveform sampled at the
//! stepped cycles is the same).
//!
//! Companions: `Fault::NextEventIgnoresWakeups` (the egress ports' wakes left out) and
//! `Fault::NextEventIgnoresResumes` (received pauses that run out left out) make the
//! jumping model pass work, and the test reports it.

use crate::phase_order::{case, differ, fan_in, order_config, signals_differ, Case, Driver, Rx};
use hw_model::{Fault, Inputs, Mmu, Outputs, PfcFrame, PfcRxMode};
use proptest::prelude::*;

/// What a cycle the jumping model passed over must look like in the stepping one.
fn jumped_differ(a: &Mmu, b: &Mmu, oa: &Outputs) -> Option<String> {
    if !(oa.cell_events.is_empty()
        && oa.departures.is_empty()
        && oa.pfc_tx.is_empty()
        && oa.ecm_tx.is_empty())
    {
        return Some(format!(
            "output in a cycle jumped over: {} cell events, departures {:?}, PFC {:?}, ECM {:?}",
            oa.cell_events.len(),
            oa.departures,
            oa.pfc_tx,
            oa.ecm_tx
        ));
    }
    if a.stats() != b.stats() {
        return Some("statistics in a cycle jumped over".into());
    }
    signals_differ(a, b).map(|s| format!("signal changed in a cycle jumped over: {s}"))
}

/// Run `cycles` of the case on a model that steps every cycle and one that jumps (with
/// `faults`); the cycles jumped over, or the first cycle they disagree and how.
fn run(case: &Case, cycles: u64, faults: &[Fault]) -> Result<u64, String> {
    let d = case.cfg.build().unwrap();
    let (mut a, mut b) = (Mmu::new(d.clone()), Mmu::new(d));
    for &f in faults {
        b.inject_fault(f);
    }
    let ports = a.config().ports;
    let mut drv = Driver::new(&a, &case.bursts);
    let (mut oa, mut ob) = (Outputs::with_ports(ports), Outputs::with_ports(ports));
    let mut ingress = vec![None; ports];
    let mut jumped = 0;
    for c in 0..cycles {
        drv.present(c, &mut ingress);
        let rx: Vec<(u8, PfcFrame)> = case
            .rx
            .iter()
            .filter(|r| r.at as u64 == c)
            .map(|r| (r.port, r.frame))
            .collect();
        let inp = Inputs {
            ingress: &ingress,
            pfc_rx: &rx,
        };
        a.step(&inp, &mut oa).map_err(|e| e.to_string())?;
        let mut stepped = false;
        if b.cycle() == c {
            if ingress.iter().all(Option::is_none) && rx.is_empty() {
                let next_rx = case.rx.iter().map(|r| r.at as u64).filter(|&t| t > c);
                let to = next_rx
                    .min()
                    .unwrap_or(u64::MAX)
                    .min(drv.next_beat(c + 1))
                    .min(b.next_event())
                    .min(cycles);
                b.skip_to(to).map_err(|e| e.to_string())?;
                jumped += to - c;
            }
            if b.cycle() == c {
                b.step(&inp, &mut ob).map_err(|e| e.to_string())?;
                stepped = true;
            }
        }
        let what = if stepped {
            differ(&a, &b, &oa, &ob)
        } else {
            jumped_differ(&a, &b, &oa)
        };
        if let Some(what) = what {
            return Err(format!("cycle {c}: {what}"));
        }
        drv.obey(&oa.pfc_tx);
    }
    Ok(jumped)
}

proptest! {
    #![proptest_config(order_config())]

    #[test]
    fn next_event_never_skips_work(case in case()) {
        prop_assert!(run(&case, 8000, &[]).is_ok(), "{:?}", run(&case, 8000, &[]));
    }
}

#[test]
fn ignoring_the_egress_wakes_is_caught() {
    let case = fan_in();
    let jumped = run(&case, 8000, &[]).expect("the control: no fault, no difference");
    assert!(
        jumped > 1000,
        "the control must jump over idle cycles: {jumped}"
    );
    // Caught at the wake jumped over, or where the late port first differs.
    let e = run(&case, 8000, &[Fault::NextEventIgnoresWakeups]).expect_err("must be caught");
    assert!(e.starts_with("cycle "), "{e}");
}

#[test]
fn ignoring_the_pause_expiries_is_caught() {
    // Port 1 sends four packets of priority 1 to port 0, whose class 1 a downstream PAUSE
    // stops for 4000 quanta (20 480 cycles at 100G and 1 GHz), long after the last beat.
    let mut case = fan_in();
    case.cfg.pfc_rx_mode = PfcRxMode::Timer;
    case.bursts.truncate(1);
    case.bursts[0].count = 4;
    case.bursts[0].dst = 0;
    let mut frame = PfcFrame {
        class_enable: 1 << 1,
        ..PfcFrame::default()
    };
    frame.quanta[1] = 4000;
    case.rx = vec![Rx {
        at: 0,
        port: 0,
        frame,
    }];
    let jumped = run(&case, 40_000, &[]).expect("the control: no fault, no difference");
    assert!(
        jumped > 10_000,
        "the control must jump over idle cycles: {jumped}"
    );
    let e = run(&case, 40_000, &[Fault::NextEventIgnoresResumes]).expect_err("must be caught");
    assert!(e.starts_with("cycle "), "{e}");
}
