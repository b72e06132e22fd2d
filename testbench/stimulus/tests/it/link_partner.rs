//! Link partner timing: exact long-run rate, beat timing, propagation, PFC reaction; and
//! stepping a partner only at its events changes nothing.

use hw_model::{Beat, Derived, EcmFrame, EcmKind, FiveTuple, PacketHdr, PfcFrame, SwitchConfig};
use proptest::prelude::*;
use scenario::params::EcmRpParams;
use scenario::{Arbitration, Link};
use stimulus::link_partner::LinkPartner;
use stimulus::reaction_point::LimiterReg;

fn small() -> Derived {
    SwitchConfig::small().build().unwrap()
}

fn hdr(prio: u8, seq: u32, len: u16) -> PacketHdr {
    PacketHdr {
        flow: prio as u32,
        seq,
        src: 0,
        dst: 1,
        prio,
        len,
        ..Default::default()
    }
}

/// A frame carrying one class with `quanta` (0 = RESUME).
fn frame(class: usize, quanta: u16) -> PfcFrame {
    let mut q = [0; 8];
    q[class] = quanta;
    PfcFrame {
        class_enable: 1 << class,
        quanta: q,
        port_level: false,
    }
}

/// Beats with the cycle they were seen.
type Timed = Vec<(u64, Beat)>;

fn link(prop: u64, proc_: u64) -> Link {
    Link {
        prop_cycles: prop,
        proc_cycles: proc_,
        arbitration: Arbitration::RoundRobin,
    }
}

/// Step until the partner is idle; returns (cycle of each injected beat, each delivered
/// beat with its cycle) and the cycles run.
fn drain(p: &mut LinkPartner, d: &Derived, from: u64) -> (Timed, Timed, u64) {
    let (mut inj, mut del) = (Vec::new(), Vec::new());
    let mut now = from;
    while p.busy() {
        if let Some(b) = p.step(now, d, |b| inj.push((now, *b))) {
            del.push((now, b));
        }
        now += 1;
        assert!(now < from + 100_000_000, "partner never went idle");
    }
    (inj, del, now - from)
}

#[test]
fn thousand_packets_at_100g_take_exactly_their_wire_time() {
    let d = small();
    let mut p = LinkPartner::new(0, link(0, 0), &d);
    for s in 0..1000 {
        p.enqueue(hdr(3, s, 1500));
    }
    let (inj, del, cycles) = drain(&mut p, &d, 0);
    // 1000 x (1500 + 20) B x 8 = 12,160,000 bits at 100 bits per cycle.
    assert_eq!(
        cycles, 121_600,
        "the line frees exactly after the last packet's wire bits"
    );
    // The last beat is due when the last packet's 1500 bytes are out, 20 B before the end:
    // 12,159,840 bits, reached in the cycle with index 121,598.
    assert_eq!(inj.last().unwrap().0, 121_598);
    assert_eq!(inj.len(), 1000 * d.cells_for(1500) as usize);
    assert_eq!(
        inj, del,
        "zero propagation delay delivers in the same cycle"
    );
}

#[test]
fn beats_are_due_when_their_bytes_are_on_the_wire() {
    let d = small();
    let mut p = LinkPartner::new(0, link(0, 0), &d);
    p.enqueue(hdr(0, 0, 500)); // 208 + 208 + 84 bytes: 3 cells
    let (inj, _, _) = drain(&mut p, &d, 0);
    let cycles: Vec<u64> = inj.iter().map(|&(c, _)| c).collect();
    // 208 B = 1664 bits -> 17th cycle (index 16); 416 B -> index 33; 500 B -> index 39.
    assert_eq!(cycles, [16, 33, 39]);
    let idx: Vec<u16> = inj.iter().map(|(_, b)| b.idx).collect();
    assert_eq!(idx, [0, 1, 2]);
    assert!(inj.iter().all(|(_, b)| b.ncells == 3));
}

#[test]
fn propagation_delays_delivery_and_counts_in_flight() {
    let d = small();
    let mut p = LinkPartner::new(0, link(250, 0), &d);
    p.enqueue(hdr(0, 0, 64));
    let mut now = 0;
    let mut injected_at = None;
    let delivered_at = loop {
        let b = p.step(now, &d, |_| injected_at = Some(now));
        if injected_at.is_some() && b.is_none() {
            assert_eq!(p.in_flight(), 1);
        }
        if b.is_some() {
            break now;
        }
        now += 1;
        assert!(now < 100_000, "the beat never reached the MMU");
    };
    assert_eq!(delivered_at - injected_at.unwrap(), 250);
    assert_eq!(p.in_flight(), 0);
}

#[test]
fn at_most_one_beat_per_cycle() {
    // Tiny cells at a line rate near one cell per cycle (0.88 for 65 B packets, the worst
    // size the configuration allows for): two beats of a packet (the
    // last short one) often fall due in the same cycle; the second must wait.
    let mut cfg = SwitchConfig::small();
    cfg.cell_bytes = 32;
    cfg.port_speed_gbps = 200.0;
    let d = cfg.build().unwrap();
    let mut p = LinkPartner::new(0, link(0, 0), &d);
    for s in 0..200 {
        p.enqueue(hdr(0, s, 65));
    }
    let (inj, _, _) = drain(&mut p, &d, 0);
    assert_eq!(inj.len(), 200 * 3);
    assert!(
        inj.windows(2).all(|w| w[0].0 < w[1].0),
        "two beats left in one cycle"
    );
}

#[test]
fn pause_acts_after_propagation_plus_processing_and_resume_restarts() {
    let d = small();
    let (prop, proc_) = (200, 297);
    let mut p = LinkPartner::new(0, link(prop, proc_), &d);
    for s in 0..10_000 {
        p.enqueue(hdr(3, s, 1500));
    }
    let sent_at = 1_000;
    let pause = frame(3, 0xFFFF);
    let mut last_sop = 0;
    let mut now = 0;
    while now < 20_000 {
        if now == sent_at {
            p.pfc_sent(now, pause);
        }
        p.step(now, &d, |b| {
            if b.sop() {
                last_sop = now;
            }
        });
        now += 1;
    }
    let acts = sent_at + prop + proc_;
    assert!(p.paused_mask(acts) & (1 << 3) != 0);
    assert!(!p.transmitting(), "the packet on the wire finished");
    // No packet starts at or after the pause took effect: the last first beat belongs to a
    // packet started before it (a 1500 B packet takes 121.6 cycles on the wire).
    assert!(
        last_sop < acts + 17,
        "a packet started after the pause: sop at {last_sop}"
    );
    assert!(
        last_sop + 122 > acts - 17,
        "pause acted too early: last sop {last_sop}"
    );
    // RESUME (quanta 0) restarts the class after the same delay.
    let resume = frame(3, 0);
    p.pfc_sent(now, resume);
    let resumed = now + prop + proc_;
    let mut first_after = None;
    while first_after.is_none() {
        p.step(now, &d, |b| {
            if b.sop() {
                first_after = Some(now);
            }
        });
        now += 1;
        assert!(now < resumed + 100_000, "the class never resumed");
    }
    // The first cell's 208 B need 17 cycles from the start at `resumed`.
    assert_eq!(first_after.unwrap(), resumed + 16);
}

#[test]
fn pause_timer_expires_after_quanta_times_512_bit_times() {
    let d = small();
    let mut p = LinkPartner::new(0, link(0, 0), &d);
    p.enqueue(hdr(2, 0, 64));
    let f = frame(2, 100); // 51,200 bit times at 100 bits per cycle = 512 cycles
    p.pfc_sent(0, f);
    let mut first = None;
    let mut now = 0;
    while first.is_none() {
        p.step(now, &d, |_| first = Some(now));
        now += 1;
        assert!(now < 100_000, "the pause never expired");
    }
    // Paused at cycle 0 until 512; a 64 B packet's beat is due after 6 cycles (512 bits).
    assert_eq!(first.unwrap(), 512 + 5);
    assert_eq!(p.stats().pause_events, 1);
}

#[test]
fn strict_arbitration_prefers_the_highest_class_and_pause_skips_it() {
    let d = small();
    let mut l = link(0, 0);
    l.arbitration = Arbitration::Strict;
    let mut p = LinkPartner::new(0, l, &d);
    for s in 0..3 {
        p.enqueue(hdr(1, s, 64));
        p.enqueue(hdr(5, s, 64));
    }
    let (inj, _, _) = drain(&mut p, &d, 0);
    let prios: Vec<u8> = inj.iter().map(|(_, b)| b.hdr.prio).collect();
    assert_eq!(prios, [5, 5, 5, 1, 1, 1]);

    let mut p = LinkPartner::new(0, l, &d);
    let f = frame(5, 1000);
    p.pfc_sent(0, f);
    p.enqueue(hdr(1, 0, 64));
    p.enqueue(hdr(5, 0, 64));
    let (inj, _, _) = drain(&mut p, &d, 0);
    assert_eq!(
        inj[0].1.hdr.prio, 1,
        "a paused class does not block the others"
    );
}

/// Stimulus of one partner, cycle by cycle: what a source queues before its step, and what
/// the switch sends toward it after its step.
#[derive(Debug, Clone)]
enum Input {
    /// `count` packets of `len` bytes of flow `flow` (its priority is `flow % 8`).
    Packets {
        flow: u8,
        len: u16,
        count: u8,
    },
    Pfc(PfcFrame),
    /// An ECM frame about `flow`: ECM(0,0) without feedback, else `(qoff, qdelta)`.
    Ecm {
        flow: u8,
        fb: Option<(i32, i32)>,
    },
}

fn flow_hdr(flow: u8, seq: u32, len: u16) -> PacketHdr {
    PacketHdr {
        flow: flow as u32,
        seq,
        src: 0,
        dst: 1,
        prio: flow % 8,
        len,
        tuple: FiveTuple::for_flow(flow as u32, 0, 1, FiveTuple::UDP),
        cm_tag: None,
        ecn: hw_model::Ecn::NotEct,
    }
}

/// What a partner did: beats injected and delivered with their cycles, then its counters,
/// pause time and reaction-point state at the end.
#[derive(Debug, PartialEq)]
struct Trace {
    injected: Timed,
    delivered: Timed,
    end: String,
}

/// Drive a fresh partner with `inputs` (`(cycle, input)`, sorted) until cycle `end`,
/// stepping it every cycle (`every_cycle`) or only in the cycles its events and inputs ask
/// for, each moved `late` cycles later (0 but in the companion test).
fn drive(inputs: &[(u64, Input)], end: u64, every_cycle: bool, late: u64) -> Trace {
    let d = small();
    // A short `Td` (5 us), so that self-increases happen within the run.
    let rp = EcmRpParams {
        td_us: 5,
        ..EcmRpParams::default()
    };
    let mut p = LinkPartner::with_rp(0, link(7, 3), &d, &rp, 5);
    let (mut injected, mut delivered) = (Vec::new(), Vec::new());
    let mut seq = [0u32; 256];
    let mut wake = u64::MAX;
    let mut next = 0;
    for now in 0..end {
        let todo = inputs[next..].partition_point(|(c, _)| *c == now);
        let due = &inputs[next..next + todo];
        next += todo;
        for (_, input) in due {
            if let Input::Packets { flow, len, count } = *input {
                for _ in 0..count {
                    p.enqueue(flow_hdr(flow, seq[flow as usize], len));
                    seq[flow as usize] += 1;
                }
                wake = wake.min(now);
            }
        }
        if every_cycle || wake <= now {
            if let Some(b) = p.step(now, &d, |b| injected.push((now, *b))) {
                delivered.push((now, b));
            }
            wake = p.next_event(now).saturating_add(late);
        }
        for (_, input) in due {
            let at = match *input {
                Input::Packets { .. } => continue,
                Input::Pfc(f) => p.pfc_sent(now, f),
                Input::Ecm { flow, fb } => {
                    let (qoff, qdelta) = fb.unwrap_or((0, 0));
                    let f = EcmFrame {
                        port: 0,
                        cpid: 1,
                        kind: if fb.is_some() {
                            EcmKind::Regular
                        } else {
                            EcmKind::Zero
                        },
                        qoff,
                        qdelta,
                        q: false,
                        timestamp: 0,
                        unit: 0,
                        sampled: flow_hdr(flow, 0, 64),
                    };
                    p.ecm_sent(now, f)
                }
            };
            wake = wake.min(at.saturating_add(late));
        }
    }
    let rp = p.rp();
    let limiters: Vec<_> = (0..rp.limiters().len())
        .map(|i| LimiterReg::ALL.map(|r| rp.limiter_reg(i, r)))
        .collect();
    let end = format!(
        "{:?} {:?} {:?} {} {:?} {limiters:?}",
        p.stats(),
        p.paused_cycles(end),
        p.paused_mask(end),
        p.queued_runs(),
        rp.stats()
    );
    Trace {
        injected,
        delivered,
        end,
    }
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => (0u8..6, 64u16..=1500, 1u8..=20)
            .prop_map(|(flow, len, count)| Input::Packets { flow, len, count }),
        2 => (0usize..8, prop_oneof![Just(0u16), 1u16..2000], any::<bool>())
            .prop_map(|(class, quanta, port_level)| Input::Pfc(PfcFrame {
                port_level,
                ..frame(class, quanta)
            })),
        2 => (0u8..6, proptest::option::of((-3000i32..3000, -3000i32..3000)))
            .prop_map(|(flow, fb)| Input::Ecm { flow, fb }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A partner stepped only in the cycles `next_event` and its inputs name does exactly
    /// what one stepped every cycle does: the same beats in the same cycles, the same
    /// counters, pauses and reaction-point registers.
    #[test]
    fn stepping_at_events_only_is_stepping_every_cycle(
        first in (0u64..10_000, 0u8..6, 64u16..=1500),
        mut inputs in proptest::collection::vec((0u64..30_000, input()), 0..40),
    ) {
        let (at, flow, len) = first;
        inputs.push((at, Input::Packets { flow, len, count: 50 }));
        inputs.sort_by_key(|(c, _)| *c);
        let end = 60_000;
        let every = drive(&inputs, end, true, 0);
        let events = drive(&inputs, end, false, 0);
        prop_assert!(!every.injected.is_empty());
        prop_assert_eq!(every, events);
    }
}

/// The comparison above bites: waking a partner one cycle after its events moves its beats.
#[test]
fn stepping_after_the_events_is_caught() {
    let inputs = [(
        0,
        Input::Packets {
            flow: 3,
            len: 1500,
            count: 4,
        },
    )];
    assert_eq!(
        drive(&inputs, 5_000, true, 0),
        drive(&inputs, 5_000, false, 0)
    );
    assert_ne!(
        drive(&inputs, 5_000, true, 0),
        drive(&inputs, 5_000, false, 1)
    );
}
