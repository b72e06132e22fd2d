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
//! The stepping model's dirty blocks are checked in every cycle as well: every signal that
//! changed is in a block marked dirty (a waveform writer compares only those).
//!
//! Companions: `Fault::NextEventIgnoresWakeups` (the egress ports' wakes left out) and
//! `Fault::NextEventIgnoresResumes` (received pauses that run out left out) make the
//! jumping model pass work, `Fault::DirtyIgnoresFreeCount` leaves a change out of the
//! dirty blocks, and the test reports each.

use crate::phase_order::{
    case, differ, fan_in, order_config, signals_differ, twins, Case, Rx, Stimulus,
};
use hw_model::{Fault, Mmu, Outputs, PfcFrame, PfcRxMode};
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

/// A signal of `a` that changed since `prev` (updated here) in a block the model did not
/// mark dirty: a waveform sampling only the dirty blocks would lose that change.
fn undirtied_change(a: &Mmu, prev: &mut [u64]) -> Option<String> {
    let dirty = a.dirty_blocks();
    for (i, old) in prev.iter_mut().enumerate() {
        let v = a.signal_value(i);
        let b = a.signal_block(i);
        if v != *old && dirty[b / 64] & (1 << (b % 64)) == 0 {
            return Some(format!(
                "{} changed {old} -> {v} but block {b} is not dirty",
                a.signals()[i].path
            ));
        }
        *old = v;
    }
    None
}

/// Run `cycles` of the case on a model that steps every cycle and one that jumps, both
/// with `faults`; the cycles jumped over, or the first cycle they disagree and how.
fn run(case: &Case, cycles: u64, faults: &[Fault]) -> Result<u64, String> {
    let (mut a, mut b) = twins(case, faults);
    let ports = a.config().ports;
    let mut stim = Stimulus::new(case, &a);
    let (mut oa, mut ob) = (Outputs::with_ports(ports), Outputs::with_ports(ports));
    let mut jumped = 0;
    let mut prev: Vec<u64> = (0..a.signals().len()).map(|i| a.signal_value(i)).collect();
    for c in 0..cycles {
        stim.advance(c);
        let inp = stim.inputs();
        a.step(&inp, &mut oa).map_err(|e| e.to_string())?;
        if let Some(what) = undirtied_change(&a, &mut prev) {
            return Err(format!("cycle {c}: {what}"));
        }
        let mut stepped = false;
        if b.cycle() == c {
            if stim.idle() {
                let next_rx = case.rx.iter().map(|r| r.at as u64).filter(|&t| t > c);
                let to = next_rx
                    .min()
                    .unwrap_or(u64::MAX)
                    .min(stim.drv.next_beat(c + 1))
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
        stim.drv.obey(&oa.pfc_tx);
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

/// The control run of `case` jumps over more than `min_jumped` cycles with no difference;
/// with `fault` the difference is found.
fn fault_is_caught(case: &Case, cycles: u64, min_jumped: u64, fault: Fault) {
    let jumped = run(case, cycles, &[]).expect("the control: no fault, no difference");
    assert!(
        jumped > min_jumped,
        "the control must jump over idle cycles: {jumped}"
    );
    // Caught at the cycle jumped over, or where the late block first differs.
    let e = run(case, cycles, &[fault]).expect_err("the fault must be caught");
    assert!(e.starts_with("cycle "), "{e}");
}

#[test]
fn ignoring_the_egress_wakes_is_caught() {
    fault_is_caught(&fan_in(), 8000, 1000, Fault::NextEventIgnoresWakeups);
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
    fault_is_caught(&case, 40_000, 10_000, Fault::NextEventIgnoresResumes);
}

#[test]
fn a_change_outside_the_dirty_blocks_is_caught() {
    fault_is_caught(&fan_in(), 8000, 1000, Fault::DirtyIgnoresFreeCount);
}
