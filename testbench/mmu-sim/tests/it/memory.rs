//! Bounded memory: sources hand bursts and messages over as lazy packet runs, closed
//! `poisson` messages are counted rather than held, and scenario files are parsed a table
//! at a time within size and flow-count limits.

use crate::common::mmu_sim;
use scenario::builtin;
use scenario::scenario_file::{MAX_PART_BYTES, MAX_SCENARIO_BYTES};
use scenario::{Overrides, Scenario, MAX_FLOWS};
use switch_run::{Sim, Summary};

/// Four ports burst `bytes` each with drawn sizes into port 5 (PFC pauses them), next to a
/// constant flow that shares port 0's class queue.
fn bursts(bytes: u64) -> Sim {
    let mut text = String::from(
        "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nheadroom_min_packet_bytes = 64\n[run]\ncycles = 1_000_000\nexpect_lossless = true\n",
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
    // random draws give the same cycles. (The scenarios' hashes differ.)
    let summary = |s: &Sim| Summary {
        scenario_hash: String::new(),
        ..s.summary(0.0)
    };
    assert_eq!(summary(&huge), summary(&small));
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
    assert!(open
        .iter()
        .all(|m| m.last_departure_cycle.is_none() && kept.contains(m)));
}

/// `n` copies of a small `[[flows]]` table.
fn flows_text(n: usize, table: &str) -> String {
    let mut text = String::from("[switch]\nprofile = \"small\"\n[run]\ncycles = 100\n");
    text.reserve(n * (table.len() + 10));
    for _ in 0..n {
        text += "[[flows]]\n";
        text += table;
    }
    text
}

const FLOW: &str =
    "src = 0\ndst = 1\nprio = 1\nsize_bytes = 64\npattern = \"constant\"\nrate_gbps = 0.001\n";

#[test]
fn max_flows_run_and_one_more_is_refused_before_parsing() {
    let s = Scenario::parse(&flows_text(MAX_FLOWS, FLOW), "t").unwrap();
    let plan = s.plan(&Overrides::default()).unwrap();
    assert_eq!(plan.flows.len(), MAX_FLOWS);
    // A syntax error in every table: the count is refused before any table is parsed.
    let e = Scenario::parse(&flows_text(MAX_FLOWS + 1, "src = = 0\n"), "t").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "flows: {} flows are too many; allowed: at most {MAX_FLOWS}",
            MAX_FLOWS + 1
        )
    );
    // However they are written.
    let inline = format!(
        "flows = [{}]\n[run]\ncycles = 1\n",
        vec!["{}"; MAX_FLOWS + 1].join(",")
    );
    assert_eq!(Scenario::parse(&inline, "t").unwrap_err().field, "flows");
}

#[test]
fn no_part_parsed_at_once_exceeds_its_limit() {
    let big = |n: usize| format!("[{}]", vec!["1"; n].join(","));
    let rest = format!(
        "name = \"x\"\n[run]\ncycles = 1\nseed = {}\n",
        big(MAX_PART_BYTES / 2)
    );
    let e = Scenario::parse(&rest, "t").unwrap_err();
    assert_eq!(e.field, "(file)");
    assert!(
        e.message.contains(
            "outside the [[links]], [[flows]] and [[pfc_script]] tables; allowed: at most 1048576"
        ),
        "{e}"
    );
    let one_flow = flows_text(
        2,
        &format!("{FLOW}size_cdf = {}\n", big(MAX_PART_BYTES / 2)),
    );
    let e = Scenario::parse(&one_flow, "t").unwrap_err();
    assert_eq!(e.field, "flows[0]");
    assert!(e.message.starts_with("the table is "), "{e}");
    let long = " ".repeat(MAX_SCENARIO_BYTES + 1);
    assert!(Scenario::parse(&long, "t")
        .unwrap_err()
        .message
        .contains("allowed: at most 16777216 (16 MiB)"));
}

/// The tables parsed one at a time give the scenario that parsing the whole file gives:
/// a quoted key with an escape (`["sw\u0069tch"]`) makes the scan give up on a file.
#[test]
fn split_parsing_reads_every_builtin_as_the_whole_file_does() {
    for b in builtin::BUILTINS {
        let text = b.toml();
        let whole = text.replace("[switch]", "[\"sw\\u0069tch\"]");
        assert_ne!(whole, text, "{}", b.name);
        assert_eq!(
            Scenario::parse(&text, b.name).unwrap(),
            Scenario::parse(&whole, b.name).unwrap(),
            "{}",
            b.name
        );
    }
}

/// A file over the size limit is read only that far: refused for its flow count if that
/// part alone has too many flows, else for its size.
#[test]
fn an_oversized_file_is_refused_after_reading_the_limit() {
    let dir = std::env::temp_dir().join(format!("mmu-sim-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let many = dir.join("many.toml");
    let flows = flows_text(MAX_SCENARIO_BYTES / (FLOW.len() + 10) + 1000, FLOW);
    assert!(flows.len() > MAX_SCENARIO_BYTES);
    std::fs::write(&many, flows).unwrap();
    let comments = dir.join("comments.toml");
    std::fs::write(&comments, "#".repeat(MAX_SCENARIO_BYTES + 1)).unwrap();
    for (file, expect) in [
        (
            &many,
            "flows in the first 16777216 bytes alone are too many; allowed: at most 131072",
        ),
        (
            &comments,
            "(file): 16777217 bytes is too long; allowed: at most 16777216 (16 MiB)",
        ),
    ] {
        let o = mmu_sim(&["validate", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(expect), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
