//! The golden-model checker (`checker/`, docs/cosim.md): the model's own event stream
//! passes, in follow and lockstep mode, under SIH, DSH and L2BM; the recorded RTL streams
//! of `cosim/` (clean, BUG=1, BUG=2) give the verdicts `make cosim-check` expects; and each
//! corruption of a clean stream is caught by the check named for it, the clean stream
//! being the companion that passes.

use checker::events::{parse_line, Admit, Arrive, Depart, Dir, Drop, Event, Pfc};
use checker::lockstep::beat;
use checker::record::{self, Recorder};
use checker::{check, Decisions, Divergence, LineRate, Mode, Options};
use hw_model::{Derived, Inputs, Mmu, Outputs, Policy};
use scenario::{builtin, Overrides, Scenario};
use std::path::PathBuf;
use switch_run::Sim;

use crate::common::mmu_sim;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmu-sim-cosim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn fixture(name: &str) -> PathBuf {
    root().join(format!("tests/fixtures/cosim/{name}.jsonl"))
}

fn parse(text: &str) -> Vec<Event> {
    text.lines().map(|l| parse_line(l).unwrap()).collect()
}

/// The lines in stream order: by cycle, then kind and port (a stable sort).
fn render(evs: &mut [Event]) -> String {
    evs.sort_by_key(|e| (!matches!(e, Event::Meta(_)), e.cycle(), e.rank()));
    evs.iter().map(|e| e.to_line() + "\n").collect()
}

/// The RTL DUT's configuration, `cosim/dut.toml`.
fn dut() -> Derived {
    let text = std::fs::read_to_string(root().join("../../cosim/dut.toml")).unwrap();
    let s = Scenario::parse(&text, "cosim-dut").unwrap();
    s.plan(&Overrides::default()).unwrap().derived
}

fn rtl(name: &str) -> Vec<Event> {
    parse(&std::fs::read_to_string(fixture(name)).unwrap())
}

const RTL: Options = Options {
    mode: Mode::Follow,
    line_rate: LineRate::CellPerCycle,
    pfc_tolerance: 2,
    decisions: Decisions::Reported,
};

fn run(d: &Derived, evs: &mut [Event], opts: Options) -> Vec<Divergence> {
    let text = render(evs);
    check(d.clone(), text.as_bytes(), opts, true)
        .unwrap()
        .divergences
}

fn names(divs: &[Divergence]) -> Vec<&'static str> {
    divs.iter().map(|d| d.check).collect()
}

/// The corrupted RTL stream is caught by `want` (and the clean one passes).
fn caught(evs: &mut [Event], want: &str) -> Vec<Divergence> {
    let d = dut();
    assert_eq!(run(&d, &mut rtl("clean"), RTL), vec![], "the clean stream");
    let divs = run(&d, evs, RTL);
    assert!(
        names(&divs).contains(&want),
        "want {want}, got {:?}",
        divs.iter().map(|d| d.to_string()).collect::<Vec<_>>()
    );
    divs
}

/// The model's stream of a built-in under `policy` for `cycles`.
fn model_trace(name: &str, policy: Policy, cycles: u64) -> (Derived, String) {
    let s = Scenario::parse(&builtin::find(name).unwrap().toml(), name).unwrap();
    let ov = Overrides {
        policy: Some(policy),
        cycles: Some(cycles),
        ..Overrides::default()
    };
    let mut sim = Sim::new(&s, ov).unwrap();
    // One file per call: tests run in parallel and may trace the same scenario.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = tmp(&format!("{name}-{}-{call}.jsonl", policy.name()));
    sim.attach_events(std::fs::File::create(&path).unwrap())
        .unwrap();
    sim.run(|_| {}).unwrap();
    (
        sim.plan().derived.clone(),
        std::fs::read_to_string(&path).unwrap(),
    )
}

fn depart_starts(evs: &[Event]) -> impl Iterator<Item = (usize, Depart)> + '_ {
    evs.iter().enumerate().filter_map(|(i, e)| match e {
        Event::Depart(d) if d.cell.unwrap_or(0) == 0 => Some((i, *d)),
        _ => None,
    })
}

#[test]
fn the_models_own_stream_passes_follow_and_lockstep() {
    let mut pfc = 0;
    let mut drops = 0;
    for (name, policy) in [
        ("fanin-burst", Policy::Sih),
        ("dsh-port-level", Policy::Dsh),
        ("mixed-speed", Policy::L2bm),
        ("lossy-overload", Policy::Sih),
    ] {
        let (d, text) = model_trace(name, policy, 20_000);
        pfc += text.matches(r#""event":"pfc""#).count();
        drops += text.matches(r#""event":"drop""#).count();
        for mode in [Mode::Follow, Mode::Lockstep] {
            let opts = Options {
                mode,
                ..Options::default()
            };
            let r = check(d.clone(), text.as_bytes(), opts, true).unwrap();
            assert!(r.events > 1000, "{name}: {} events", r.events);
            let divs: Vec<String> = r.divergences.iter().map(|d| d.to_string()).collect();
            assert!(divs.is_empty(), "{name} {policy:?} {mode:?}: {divs:#?}");
        }
    }
    assert!(pfc > 10 && drops > 10, "{pfc} PFC events, {drops} drops");
}

#[test]
fn the_models_stream_is_deterministic() {
    let a = model_trace("dsh-port-level", Policy::Dsh, 5_000).1;
    let b = model_trace("dsh-port-level", Policy::Dsh, 5_000).1;
    assert_eq!(a, b);
}

#[test]
fn recorded_rtl_streams_give_the_expected_verdicts() {
    let d = dut();
    assert_eq!(run(&d, &mut rtl("clean"), RTL), vec![]);
    let bug1 = run(&d, &mut rtl("bug1"), RTL);
    assert_eq!(bug1[0].check, "admission", "{}", bug1[0]);
    assert!(
        bug1[0].expected.contains("shared 43 vs T 43 (at or above)"),
        "{}",
        bug1[0]
    );
    let bug2 = run(&d, &mut rtl("bug2"), RTL);
    assert_eq!(bug2[0].check, "leaked cells", "{}", bug2[0]);
    assert!(names(&bug2).contains(&"cells left in the buffer"));
}

#[test]
fn reordered_departures_are_caught() {
    let mut evs = rtl("clean");
    // Two consecutive packets of one flow with as many cells: swap their seq numbers.
    let starts: Vec<_> = depart_starts(&evs).collect();
    let (i, j) = starts
        .iter()
        .enumerate()
        .find_map(|(k, (i, a))| {
            starts[k + 1..]
                .iter()
                .find(|(_, b)| b.flow == a.flow)
                .filter(|(_, b)| b.ncells == a.ncells && b.port == a.port)
                .map(|(j, _)| (*i, *j))
        })
        .unwrap();
    let (Event::Depart(a), Event::Depart(b)) = (evs[i].clone(), evs[j].clone()) else {
        unreachable!()
    };
    evs[i] = Event::Depart(Depart { seq: b.seq, ..a });
    evs[j] = Event::Depart(Depart { seq: a.seq, ..b });
    caught(&mut evs, "flow order");
}

#[test]
fn phantom_dropped_and_duplicated_departures_are_caught() {
    let base = rtl("clean");
    let (_, last) = depart_starts(&base).last().unwrap();
    let at = last.cycle + 20;
    let phantom = Depart {
        cycle: at,
        flow: 999,
        seq: 0,
        ..last
    };
    let mut evs = base.clone();
    evs.push(Event::Depart(phantom));
    caught(&mut evs, "departure of a packet that never arrived");

    let mut evs = base.clone();
    evs.push(Event::Depart(Depart { cycle: at, ..last }));
    caught(&mut evs, "duplicated departure");

    let Some(Event::Drop(Drop {
        flow, seq, port, ..
    })) = base.iter().find(|e| matches!(e, Event::Drop(_))).cloned()
    else {
        panic!("the clean stream has drops")
    };
    let mut evs = base.clone();
    evs.push(Event::Depart(Depart {
        cycle: at,
        flow,
        seq,
        src: port,
        ..last
    }));
    caught(&mut evs, "departure of a dropped packet");
}

#[test]
fn a_different_admission_and_a_lossless_drop_are_caught() {
    let base = rtl("clean");
    let lossless = |e: &Event| matches!(e, Event::Admit(a) if a.segments.shared > 0);
    let i = base
        .iter()
        .position(|e| {
            lossless(e)
                && base.iter().any(|x| {
                    matches!((x, e), (Event::Arrive(a), Event::Admit(b))
                        if (a.flow, a.seq) == (b.flow, b.seq) && a.prio >= 2)
                })
        })
        .unwrap();
    let Event::Admit(a) = base[i].clone() else {
        unreachable!()
    };
    let mut evs = base.clone();
    let mut s = a.segments;
    s.shared -= 1;
    s.headroom += 1;
    evs[i] = Event::Admit(Admit { segments: s, ..a });
    let divs = caught(&mut evs, "admission");
    assert!(divs[0].expected.contains(&format!(
        "admit private {} shared {} headroom {}",
        a.segments.private, a.segments.shared, a.segments.headroom
    )));

    let mut evs = base.clone();
    evs[i] = Event::Drop(Drop {
        cycle: a.cycle,
        port: a.port,
        flow: a.flow,
        seq: a.seq,
        reason: "headroom_full".into(),
    });
    evs.retain(|e| !matches!(e, Event::Depart(d) if (d.flow, d.seq) == (a.flow, a.seq)));
    caught(&mut evs, "lossless drop");
}

#[test]
fn a_departure_from_a_paused_queue_is_caught() {
    let base = rtl("clean");
    let (_, dep) = depart_starts(&base).nth(200).unwrap();
    let pause = |cycle, pause| {
        Event::Pfc(Pfc {
            cycle,
            port: dep.port,
            class: dep.queue,
            pause,
            dir: Dir::Received,
            quanta: None,
            port_level: None,
        })
    };
    // Within the tolerance after the PAUSE: allowed; one cycle later: not.
    let tol = RTL.pfc_tolerance;
    let mut evs = base.clone();
    evs.push(pause(dep.cycle - tol, true));
    evs.push(pause(dep.cycle + 1, false));
    assert_eq!(run(&dut(), &mut evs, RTL), vec![]);
    let mut evs = base.clone();
    evs.push(pause(dep.cycle - tol - 1, true));
    evs.push(pause(dep.cycle + 1, false));
    caught(&mut evs, "departure from a paused queue");
}

#[test]
fn a_departure_faster_than_the_line_rate_is_caught() {
    let mut evs = rtl("clean");
    // A packet that starts right after the previous one on its port: one cycle earlier.
    let mut last = std::collections::HashMap::new();
    let i = depart_starts(&evs)
        .find_map(|(i, d)| {
            let prev: Option<(u64, u16)> = last.insert(d.port, (d.cycle, d.ncells));
            prev.filter(|&(c, n)| c + n as u64 == d.cycle).map(|_| i)
        })
        .unwrap();
    let Event::Depart(d) = evs[i].clone() else {
        unreachable!()
    };
    evs[i] = Event::Depart(Depart {
        cycle: d.cycle - 1,
        ..d
    });
    caught(&mut evs, "faster than line rate");

    // At the scenario's rate, on the model's own stream: a packet 8 cycles early.
    let (d, text) = model_trace("mixed-speed", Policy::Sih, 5_000);
    let mut evs = parse(&text);
    let starts: Vec<_> = depart_starts(&evs).collect();
    let (i, dep) = starts
        .windows(2)
        .find(|w| w[0].1.port == w[1].1.port && w[1].1.cycle - w[0].1.cycle < 60)
        .map(|w| w[1])
        .unwrap();
    evs[i] = Event::Depart(Depart {
        cycle: dep.cycle - 8,
        ..dep
    });
    let divs = run(&d, &mut evs, Options::default());
    assert!(names(&divs).contains(&"faster than line rate"), "{divs:?}");
    assert_eq!(run(&d, &mut parse(&text), Options::default()), vec![]);
}

#[test]
fn a_missing_or_spurious_pause_is_caught_outside_the_tolerance() {
    let base = rtl("clean");
    let i = base
        .iter()
        .position(|e| matches!(e, Event::Pfc(p) if p.dir == Dir::Sent && p.pause))
        .unwrap();
    let Event::Pfc(p) = base[i] else {
        unreachable!()
    };
    let mut evs = base.clone();
    evs.remove(i);
    let divs = caught(&mut evs, "PFC missing");
    assert!(divs[0].expected.contains("went to headroom"), "{}", divs[0]);

    // Late by the tolerance: accepted; one more cycle: missing.
    let tol = RTL.pfc_tolerance;
    let mut evs = base.clone();
    evs[i] = Event::Pfc(Pfc {
        cycle: p.cycle + tol,
        ..p
    });
    assert_eq!(run(&dut(), &mut evs, RTL), vec![]);
    let mut evs = base.clone();
    evs[i] = Event::Pfc(Pfc {
        cycle: p.cycle + tol + 1,
        ..p
    });
    caught(&mut evs, "PFC missing");
    // Early by the tolerance: accepted; one more cycle: spurious.
    let mut evs = base.clone();
    evs[i] = Event::Pfc(Pfc {
        cycle: p.cycle - tol,
        ..p
    });
    assert_eq!(run(&dut(), &mut evs, RTL), vec![]);
    let mut evs = base.clone();
    evs[i] = Event::Pfc(Pfc {
        cycle: p.cycle - tol - 1,
        ..p
    });
    caught(&mut evs, "PFC spurious");

    // A PAUSE of a queue the model never pauses, resumed 10 cycles later.
    let mut evs = base.clone();
    for (cycle, pause) in [(100, true), (110, false)] {
        evs.push(Event::Pfc(Pfc {
            cycle,
            port: 0,
            class: 2,
            pause,
            dir: Dir::Sent,
            quanta: None,
            port_level: None,
        }));
    }
    caught(&mut evs, "PFC spurious");
}

#[test]
fn cells_no_event_accounts_for_are_caught() {
    let base = rtl("clean");
    // The stream stops in the middle of the run, with no final snapshot.
    let mut evs: Vec<Event> = base
        .iter()
        .filter(|e| e.cycle() < 1000 || matches!(e, Event::Meta(_)))
        .filter(|e| !matches!(e, Event::Counters(_)))
        .cloned()
        .collect();
    let divs = caught(&mut evs, "cells left in the buffer");
    let left = divs.iter().find(|d| d.check == "cells left in the buffer");
    assert!(
        left.is_some_and(|d| d.expected.contains("by egress queue: port ")),
        "{left:?}"
    );

    // A snapshot with fewer free pointers than the cells written and read leave.
    let mut evs = base.clone();
    for e in &mut evs {
        if let Event::Counters(k) = e {
            if k.cycle == 1000 {
                k.free = k.free.map(|f| f - 4);
            }
        }
    }
    let divs = caught(&mut evs, "leaked cells");
    assert!(
        divs[0].expected.contains("4 unaccounted for"),
        "{}",
        divs[0]
    );
}

#[test]
fn a_decision_without_its_arrival_or_the_reverse_is_caught() {
    let base = rtl("clean");
    let i = base
        .iter()
        .position(|e| matches!(e, Event::Admit(_)))
        .unwrap();
    let mut evs = base.clone();
    evs.remove(i);
    caught(&mut evs, "decision missing");
    let mut evs = base.clone();
    let Event::Admit(a) = base[i] else {
        unreachable!()
    };
    evs.push(Event::Admit(Admit {
        port: 3,
        seq: 900,
        ..a
    }));
    caught(&mut evs, "decision without arrival");
}

#[test]
fn lockstep_catches_any_event_that_differs() {
    let (d, text) = model_trace("fanin-burst", Policy::Sih, 10_000);
    let mut evs = parse(&text);
    let opts = Options {
        mode: Mode::Lockstep,
        ..Options::default()
    };
    assert_eq!(run(&d, &mut evs, opts), vec![]);
    let i = evs
        .iter()
        .position(|e| matches!(e, Event::Pfc(p) if p.dir == Dir::Sent))
        .unwrap();
    let removed = evs.remove(i);
    let divs = run(&d, &mut evs, opts);
    assert_eq!(divs[0].check, "lockstep");
    assert_eq!(divs[0].expected, removed.to_line());
    // The RTL does not follow the model's timing: lockstep diverges at a departure.
    let divs = run(
        &dut(),
        &mut rtl("clean"),
        Options {
            mode: Mode::Lockstep,
            ..RTL
        },
    );
    assert!(divs[0].event.contains("depart"), "{}", divs[0]);
}

#[test]
fn malformed_streams_are_refused_with_line_and_field() {
    let d = dut();
    let clean = std::fs::read_to_string(fixture("clean")).unwrap();
    let mut lines: Vec<&str> = clean.lines().collect();
    let bad = [
        (
            r#"{"cycle":5,"event":"arrive","port":9,"prio":3,"flow":1,"seq":0,"bytes":64,"dst":0,"ncells":1}"#,
            "arrive.port: 9; allowed: 0..4",
        ),
        (
            r#"{"cycle":5,"event":"arrive","port":0,"prio":3,"flow":1,"seq":0,"bytes":200,"dst":0,"ncells":1}"#,
            "arrive.ncells: 1; 200 bytes are 4 cells",
        ),
        (
            r#"{"cycle":5,"event":"drop","port":0,"flow":1,"seq":0,"reason":"full"}"#,
            "drop.reason: \"full\"",
        ),
        (
            r#"{"cycle":5,"event":"admit","port":0,"flow":1}"#,
            "missing field `seq`",
        ),
    ];
    for (line, want) in bad {
        lines.insert(3, line);
        let text = lines.join("\n");
        let e = check(d.clone(), text.as_bytes(), RTL, true).unwrap_err();
        assert!(e.to_string().starts_with("line 4: "), "{e}");
        assert!(e.to_string().contains(want), "{e}");
        lines.remove(3);
    }
}

#[test]
fn the_check_command_exits_0_1_2() {
    let dut_toml = root().join("../../cosim/dut.toml");
    let dut_toml = dut_toml.to_str().unwrap();
    let args = |f: &str| {
        vec![
            "check".to_string(),
            dut_toml.to_string(),
            "--dut-events".into(),
            fixture(f).to_str().unwrap().to_string(),
            "--line-rate".into(),
            "cell-per-cycle".into(),
        ]
    };
    let call = |a: Vec<String>| mmu_sim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = call(args("clean"));
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("consistent:"));
    let o = call(args("bug1"));
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("divergence at cycle 479: admission"),
        "{out}"
    );
    let bad = tmp("bad.jsonl");
    std::fs::write(&bad, "{\"cycle\":0}\n").unwrap();
    let mut a = args("clean");
    a[3] = bad.to_str().unwrap().to_string();
    let o = call(a);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 1"));
}

#[test]
fn follow_mode_jumps_idle_stretches() {
    // The final snapshot 10^12 cycles later: checked at once, as if stepped to it.
    let mut evs = rtl("clean");
    if let Some(Event::Counters(k)) = evs.last_mut() {
        k.cycle += 1_000_000_000_000;
    }
    let t = std::time::Instant::now();
    assert_eq!(run(&dut(), &mut evs, RTL), vec![]);
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    // Its companion: a snapshot that far away still has to agree.
    if let Some(Event::Counters(k)) = evs.last_mut() {
        k.total += 1;
    }
    caught(&mut evs, "accounting");
}

#[test]
fn lockstep_jumps_idle_stretches_with_the_model() {
    // The model's own stream: a packet, drained, and another 10^12 cycles later; the idle
    // cycles jumped with Mmu::next_event / Mmu::skip_to, as lockstep must jump them.
    let d = dut();
    let mut mmu = Mmu::new(d.clone());
    let mut rec = Recorder::new(&d);
    let mut evs = vec![record::meta(&d, "cosim-dut", 1)];
    let mut out = Outputs::with_ports(d.ports);
    let at = 1_000_000_000_000;
    let arrive = |seq, cell| Arrive {
        cycle: 0,
        port: 0,
        prio: 3,
        flow: 1,
        seq,
        bytes: 128,
        dst: 2,
        ncells: 2,
        cell: Some(cell),
        tuple: None,
        crc: None,
    };
    while mmu.cycle() <= at + 1 || mmu.next_event() != u64::MAX {
        let now = mmu.cycle();
        assert!(now < at + 100_000, "the two packets never left");
        let mut ingress = vec![None; d.ports];
        match now {
            0 | 1 => ingress[0] = Some(beat(&arrive(0, now as u16))),
            c if c == at || c == at + 1 => ingress[0] = Some(beat(&arrive(1, (c - at) as u16))),
            _ => {}
        }
        let inp = Inputs {
            ingress: &ingress,
            pfc_rx: &[],
        };
        mmu.step(&inp, &mut out).unwrap();
        rec.step(now, &inp, &out, &mmu, |e| evs.push(e.clone()));
        let until = if mmu.cycle() <= at { at } else { u64::MAX };
        let next = mmu.next_event().min(until);
        if next != u64::MAX {
            mmu.skip_to(next).unwrap();
        }
    }
    rec.finish(mmu.cycle(), &mmu, |e| evs.push(e.clone()));
    let departs = |evs: &[Event]| evs.iter().filter(|e| matches!(e, Event::Depart(_))).count();
    assert_eq!(departs(&evs), 4);
    let opts = Options {
        mode: Mode::Lockstep,
        ..Options::default()
    };
    let t = std::time::Instant::now();
    assert_eq!(run(&d, &mut evs, opts), vec![]);
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    // Its companion: what comes after the jump is still compared.
    let i = evs
        .iter()
        .rposition(|e| matches!(e, Event::Depart(_)))
        .unwrap();
    let removed = evs.remove(i);
    assert!(removed.cycle() > at);
    let divs = run(&d, &mut evs, opts);
    assert_eq!(divs[0].expected, removed.to_line(), "{}", divs[0]);
}

/// The RTL's options for a DUT that exports no decision.
const INFERRED: Options = Options {
    decisions: Decisions::Inferred,
    ..RTL
};

/// The stream as a DUT without decision outputs writes it: arrivals and departures only.
fn undecided(evs: &[Event]) -> Vec<Event> {
    evs.iter()
        .filter(|e| !matches!(e, Event::Admit(_) | Event::Drop(_)))
        .cloned()
        .collect()
}

#[test]
fn decisions_inferred_pass_the_models_and_the_rtls_streams_without_decisions() {
    let d = dut();
    assert_eq!(run(&d, &mut undecided(&rtl("clean")), INFERRED), vec![]);
    // The companion: the same stream with decisions reported is missing them.
    let divs = run(&d, &mut undecided(&rtl("clean")), RTL);
    assert_eq!(divs[0].check, "decision missing", "{}", divs[0]);
    // The RTL whose thresholds are off by one admits what the model drops.
    let bug1 = run(&d, &mut undecided(&rtl("bug1")), INFERRED);
    assert!(!bug1.is_empty(), "BUG=1 without decisions passed");
    let bug2 = run(&d, &mut undecided(&rtl("bug2")), INFERRED);
    assert_eq!(bug2[0].check, "leaked cells", "{}", bug2[0]);
    for (name, policy) in [
        ("fanin-burst", Policy::Sih),
        ("lossy-overload", Policy::Sih),
        ("mixed-speed", Policy::L2bm),
    ] {
        let (d, text) = model_trace(name, policy, 20_000);
        for mode in [Mode::Follow, Mode::Lockstep] {
            let opts = Options {
                mode,
                decisions: Decisions::Inferred,
                ..Options::default()
            };
            let divs = run(&d, &mut undecided(&parse(&text)), opts);
            assert_eq!(divs, vec![], "{name} {mode:?}");
        }
    }
}

#[test]
fn decisions_inferred_catch_a_lost_packet_and_a_dropped_one_that_departs() {
    let d = dut();
    let base = undecided(&rtl("clean"));
    let (i, _) = depart_starts(&base).nth(10).unwrap();
    let mut evs = base.clone();
    evs.remove(i);
    // Lost once, then released: no ghost divergence after it, decisions inferred or not.
    let divs = run(&d, &mut evs, INFERRED);
    assert_eq!(names(&divs), ["lost packet"], "{divs:#?}");
    assert!(
        divs[0].expected.contains("released from the model")
            && divs[0].expected.contains("held 12 cells"),
        "{}",
        divs[0]
    );
    let Event::Depart(gone) = base[i] else {
        unreachable!()
    };
    let mut evs = rtl("clean");
    evs.retain(|e| !matches!(e, Event::Depart(x) if *x == gone));
    // With the DUT's decisions, those between the loss and its proof may differ (the
    // model still holds the cells), but none after it.
    let divs = run(&d, &mut evs, RTL);
    let lost: Vec<_> = divs.iter().filter(|d| d.check == "lost packet").collect();
    assert_eq!(lost.len(), 1, "{divs:#?}");
    assert!(divs.iter().all(|d| d.cycle <= lost[0].cycle), "{divs:#?}");

    let (d, text) = model_trace("lossy-overload", Policy::Sih, 20_000);
    let full = parse(&text);
    let dropped = full
        .iter()
        .find_map(|e| match e {
            Event::Drop(x) => Some((x.flow, x.seq)),
            _ => None,
        })
        .unwrap();
    let a = full
        .iter()
        .find_map(|e| match e {
            Event::Arrive(a) if (a.flow, a.seq) == dropped => Some(*a),
            _ => None,
        })
        .unwrap();
    let last = full.iter().map(Event::cycle).max().unwrap();
    let mut evs = undecided(&full);
    let opts = Options {
        decisions: Decisions::Inferred,
        ..Options::default()
    };
    assert_eq!(
        run(&d, &mut evs.clone(), opts),
        vec![],
        "the stream as it is"
    );
    evs.push(Event::Depart(Depart {
        cycle: last + 100,
        port: a.dst,
        queue: a.prio,
        flow: a.flow,
        seq: a.seq,
        src: a.port,
        ncells: a.ncells,
        cell: None,
        crc: None,
    }));
    let divs = run(&d, &mut evs, opts);
    assert_eq!(divs[0].check, "admission", "{}", divs[0]);
    assert!(divs[0].expected.starts_with("drop "), "{}", divs[0]);
    assert!(divs[0].event.contains(r#""event":"depart""#), "{}", divs[0]);
}

#[test]
fn the_check_command_writes_json_and_junit_verdicts_and_warns_of_a_meta_mismatch() {
    let dut_toml = root().join("../../cosim/dut.toml");
    let (json, xml) = (tmp("verdict.json"), tmp("verdict.xml"));
    let check = |events: &str, extra: &[&str]| {
        let mut a = vec![
            "check",
            dut_toml.to_str().unwrap(),
            "--dut-events",
            events,
            "--line-rate",
            "cell-per-cycle",
            "--report-json",
            json.to_str().unwrap(),
            "--junit",
            xml.to_str().unwrap(),
        ];
        a.extend(extra);
        mmu_sim(&a)
    };
    let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap();
    let o = check(fixture("clean").to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v: serde_json::Value = serde_json::from_str(&read(&json)).unwrap();
    assert_eq!(v["verdict"], "consistent");
    assert!(!read(&xml).contains("<failure"));

    let o = check(fixture("bug1").to_str().unwrap(), &["--keep-going"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(&read(&json)).unwrap();
    let divs = v["divergences"].as_array().unwrap();
    assert_eq!(
        divs.len() as u64,
        v["counts"]["divergences"].as_u64().unwrap()
    );
    assert_eq!(
        divs.len(),
        out.matches("divergence at cycle").count(),
        "{out}"
    );
    assert_eq!(divs[0]["check"], "admission");
    assert!(
        out.contains("by check: ") && out.contains("admission "),
        "{out}"
    );
    assert!(out.contains("by egress queue: port "), "{out}");
    let junit = read(&xml);
    assert!(junit.contains(r#"<failure message="#) && junit.contains(r#"type="admission""#));

    // A refused stream leaves no report behind, and no partial file.
    std::fs::remove_file(&json).unwrap();
    let bad = tmp("refused.jsonl");
    std::fs::write(&bad, "{\"cycle\":0}\n").unwrap();
    let o = check(bad.to_str().unwrap(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!json.exists());
    let dir = std::fs::read_dir(json.parent().unwrap()).unwrap();
    assert!(dir
        .flatten()
        .all(|e| !e.file_name().to_string_lossy().ends_with(".partial")));

    // The model's stream (meta: policy sih, 4 ports) against another policy and size.
    let (_, text) = model_trace("fanin-burst", Policy::Sih, 2_000);
    let trace = tmp("meta.jsonl");
    std::fs::write(&trace, text).unwrap();
    let meta = |set: &[&str]| {
        let mut a = vec![
            "check",
            "fanin-burst",
            "--dut-events",
            trace.to_str().unwrap(),
        ];
        a.extend(set);
        let o = mmu_sim(&a);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(!meta(&[]).contains("warning"), "{}", meta(&[]));
    let err = meta(&["--set", "switch.policy=dsh"]);
    assert!(
        err.contains("warning: the stream's meta says policy \"sih\", the scenario's switch.policy is \"dsh\""),
        "{err}"
    );
}

/// The model's stream, which lists every cell arriving and departing, and its first
/// packet of at least `min` cells whose last cell departs.
fn listed_stream(min: u16) -> (Derived, Vec<Event>, Arrive) {
    let (d, text) = model_trace("fanin-burst", Policy::Sih, 20_000);
    let evs = parse(&text);
    let a = evs
        .iter()
        .find_map(|e| match e {
            Event::Arrive(a) if a.cell == Some(0) && a.ncells >= min => evs
                .iter()
                .any(|x| matches!(x, Event::Depart(x) if (x.flow, x.seq) == (a.flow, a.seq) && x.cell == Some(a.ncells - 1)))
                .then_some(*a),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        run(&d, &mut evs.clone(), Options::default()),
        vec![],
        "the stream as it is"
    );
    (d, evs, a)
}

#[test]
fn ingress_framing_is_checked_when_the_stream_lists_cells() {
    let (d, evs, a) = listed_stream(8);
    // Cells 1.. of the packet deleted: its cells all depart, yet they never arrived.
    let mut cut = evs.clone();
    cut.retain(|e| !matches!(e, Event::Arrive(x) if (x.flow, x.seq) == (a.flow, a.seq) && x.cell != Some(0)));
    let divs = run(&d, &mut cut, Options::default());
    assert_eq!(divs[0].check, "ingress framing", "{}", divs[0]);
    assert!(
        divs[0].expected.contains(&format!(
            "cell 1 of flow {} seq {} (its start of packet: cycle {}",
            a.flow, a.seq, a.cycle
        )),
        "{}",
        divs[0]
    );
    // Two cells swapped: caught at the first out of order.
    let mut swapped = evs.clone();
    for e in &mut swapped {
        if let Event::Arrive(x) = e {
            if (x.flow, x.seq) == (a.flow, a.seq) && matches!(x.cell, Some(1 | 2)) {
                x.cell = x.cell.map(|k| 3 - k);
            }
        }
    }
    let divs = run(&d, &mut swapped, Options::default());
    assert_eq!(names(&divs)[0], "ingress framing", "{divs:#?}");
}

#[test]
fn an_egress_framing_divergence_points_at_the_packets_start() {
    let (d, evs, a) = listed_stream(3);
    let start = evs
        .iter()
        .find_map(|e| match e {
            Event::Depart(x) if (x.flow, x.seq) == (a.flow, a.seq) && x.cell == Some(0) => {
                Some(x.cycle)
            }
            _ => None,
        })
        .unwrap();
    let mut cut = evs.clone();
    cut.retain(|e| !matches!(e, Event::Depart(x) if (x.flow, x.seq) == (a.flow, a.seq) && x.cell == Some(1)));
    let divs = run(&d, &mut cut, Options::default());
    assert_eq!(divs[0].check, "egress framing", "{}", divs[0]);
    assert!(
        divs[0].expected.contains(&format!(
            "cell 1 of flow {} seq {} (its start of packet: cycle {start}, line ",
            a.flow, a.seq
        )),
        "{}",
        divs[0]
    );
}
