//! Bounded memory: sources hand bursts and messages over as lazy packet runs, and closed
//! `poisson` messages are counted rather than held.

use testbench::scenario::{Overrides, Scenario};
use testbench::{builtin, Sim};

/// Four ports burst `bytes` each with drawn sizes into port 5 (PFC pauses them), next to a
/// constant flow that shares port 0's class queue.
fn bursts(bytes: u64) -> Sim {
    let mut text = String::from(
        "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\n[run]\ncycles = 1_000_000\nexpect_lossless = true\n",
    );
    for src in 0..4 {
        text += &format!(
            "[[flows]]\nsrc = {src}\ndst = 5\nprio = 3\nsize_cdf = [[64, 0.3], [700, 0.6], [1500, 1.0]]\npattern = \"burst\"\nburst_bytes = {bytes}\nstart_cycle = {}\n",
            src * 100
        );
    }
    text += "[[flows]]\nsrc = 0\ndst = 6\nprio = 3\nsize_bytes = 1000\npattern = \"constant\"\nrate_gbps = 5\n";
    Sim::new(&Scenario::parse(&text, "t").unwrap(), Overrides::default()).unwrap()
}

#[test]
fn a_2_to_the_40_byte_burst_is_one_run_and_sends_what_a_smaller_one_does() {
    let mut huge = bursts(1 << 40);
    let mut small = bursts(10_000_000);
    for _ in 0..30_000 {
        huge.step().unwrap();
        small.step().unwrap();
    }
    // 10 MB take 800k cycles at 100G: neither burst ends within the window, so the same
    // random draws give the same cycles.
    assert_eq!(huge.summary(0.0), small.summary(0.0));
    assert!(huge.summary(0.0).pfc_pause_frames > 0, "the bursts back up");
    for p in 1..4 {
        assert_eq!(huge.partner(p).queued_runs(), 1, "port {p}");
    }
    assert!(
        huge.partner(0).queued_runs() <= 3,
        "the burst plus at most the constant flow's packets in between: {}",
        huge.partner(0).queued_runs()
    );
}

#[test]
fn closed_messages_are_counted_and_only_kept_on_request() {
    let run = |keep: bool| {
        let s = builtin::load("poisson-cdf").unwrap();
        let mut sim = Sim::new(&s, Overrides::default()).unwrap();
        if keep {
            sim.keep_messages();
        }
        sim.run(|_| {}).unwrap();
        (sim.messages(), sim.message_counts())
    };
    let (kept, counts) = run(true);
    let (open, same) = run(false);
    assert_eq!(counts, same);
    assert_eq!(kept.len() as u64, counts.arrived);
    assert_eq!(open.len() as u64, counts.open());
    assert!(
        counts.complete > 100 && open.len() < kept.len() / 2,
        "{counts:?}: the closed ones are not held"
    );
    let still_open: Vec<_> = kept
        .iter()
        .filter(|m| m.last_departure_cycle.is_none())
        .collect();
    assert_eq!(still_open.len(), open.len());
    assert!(open.iter().all(|m| still_open.contains(&m)));
}
