//! Closed-loop TCP flows through the model: line rate alone, sharing a port, and incast.

use testbench::scenario::{Overrides, Scenario};
use testbench::tcp::TcpStats;
use testbench::Sim;

/// A small switch (8 x 100G, 1 GHz) whose priority 1 is lossy, with `lossy_pool` bytes of
/// lossy buffer, running `flows` (TOML `[[flows]]` entries) for `cycles`.
fn sim(lossy_pool: u32, cycles: u64, flows: &str) -> Sim {
    let text = format!(
        r#"
[switch]
profile = "small"
lossless_priorities = [3]
lossy_pool_bytes = {lossy_pool}

[run]
cycles = {cycles}

{flows}
"#
    );
    let s = Scenario::parse(&text, "tcp").unwrap();
    Sim::new(&s, Overrides::default()).unwrap()
}

fn tcp_flow(src: usize, dst: usize, tcp: &str) -> String {
    format!(
        "[[flows]]\nsrc = {src}\ndst = {dst}\nprio = 1\nsize_bytes = 1500\n\
         pattern = {{ tcp = {{ {tcp} }} }}\n"
    )
}

/// Goodput of `s` over `cycles` ns, Gb/s.
fn gbps(s: &TcpStats, cycles: u64) -> f64 {
    s.bytes_delivered as f64 * 8.0 / cycles as f64
}

/// Packet bytes per second at 100G with 1500 B packets and 20 B of preamble and gap.
const LINE_GOODPUT_GBPS: f64 = 100.0 * 1500.0 / 1520.0;

#[test]
fn single_flow_reaches_line_rate_without_retransmits() {
    let cycles = 300_000;
    let mut sim = sim(128 * 1024, cycles, &tcp_flow(0, 1, "base_rtt_us = 10"));
    let summary = sim.run(|_| {}).unwrap();
    assert!(summary.ok(), "{summary}");
    let st = &sim.tcp_stats()[0];
    assert_eq!((st.retransmits, st.timeouts), (0, 0), "{st:?}");
    // Slow start from 10 packets to the ~85-packet BDP takes about 3 RTTs (30 us) of 300.
    let g = gbps(st, cycles);
    assert!(g > 0.85 * LINE_GOODPUT_GBPS, "goodput {g:.1} Gb/s, {st:?}");
}

#[test]
fn two_flows_share_a_port_roughly_fairly() {
    let cycles = 1_500_000;
    let tcp = "base_rtt_us = 2, min_rto_us = 200";
    let flows = tcp_flow(1, 0, tcp) + &tcp_flow(2, 0, tcp);
    let mut sim = sim(64 * 1024, cycles, &flows);
    let summary = sim.run(|_| {}).unwrap();
    assert!(summary.ok(), "{summary}");
    assert!(summary.cells_dropped_lossy > 0, "the port must congest");
    let st = sim.tcp_stats();
    let (a, b) = (gbps(&st[0], cycles), gbps(&st[1], cycles));
    assert!(
        a + b > 0.8 * LINE_GOODPUT_GBPS,
        "{a:.1} + {b:.1} Gb/s: {st:?}"
    );
    assert!(a.min(b) / a.max(b) > 0.5, "{a:.1} vs {b:.1} Gb/s: {st:?}");
}

#[test]
fn incast_loses_packets_recovers_and_completes() {
    let senders = 7;
    let tcp = "base_rtt_us = 10, min_rto_us = 100, flow_bytes = 150_000";
    let flows: String = (1..=senders).map(|src| tcp_flow(src, 0, tcp)).collect();
    let mut sim = sim(32 * 1024, 20_000_000, &flows);
    let mut done = false;
    while !done && sim.now() < sim.plan().cycles {
        for _ in 0..10_000 {
            sim.step().unwrap();
        }
        done = sim.tcp_stats().iter().all(|s| s.fct_cycles.is_some());
    }
    let summary = sim.summary(0.0);
    assert!(summary.ok(), "{summary}");
    let st = sim.tcp_stats();
    assert!(done, "unfinished flows at cycle {}: {st:?}", sim.now());
    assert!(summary.cells_dropped_lossy > 0, "{summary}");
    let recoveries: u64 = st.iter().map(|s| s.fast_retransmits + s.timeouts).sum();
    assert!(recoveries > 0, "{st:?}");
    for s in &st {
        assert_eq!(s.bytes_delivered, 150_000, "{s:?}");
        assert!(s.retransmits >= s.fast_retransmits, "{s:?}");
    }
    // The summary reports every TCP flow, in the table and in the JSON.
    assert_eq!(summary.tcp, st);
    let table = summary.to_string();
    assert_eq!(table.matches("tcp flow ").count(), senders, "{table}");
    assert!(table.contains("150000 B delivered"), "{table}");
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["tcp"].as_array().map(|a| a.len()), Some(senders));
}

#[test]
fn tcp_parameters_are_checked() {
    let bad = |tcp: &str| {
        let text = format!("[run]\ncycles = 10\n{}", tcp_flow(0, 1, tcp));
        Scenario::parse(&text, "t")
            .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
            .expect_err("should be rejected")
    };
    assert_eq!(
        bad("base_rtt_us = 0").field,
        "flows[0].pattern.tcp.base_rtt_us"
    );
    assert_eq!(
        bad("min_rto_us = 100, max_rto_us = 50").field,
        "flows[0].pattern.tcp.max_rto_us"
    );
    assert_eq!(bad("init_cwnd = 0").field, "flows[0].pattern.tcp.init_cwnd");
    assert_eq!(
        bad("flow_bytes = 0").field,
        "flows[0].pattern.tcp.flow_bytes"
    );
    assert_eq!(bad("bogus = 1").field, "flows[0].pattern");
    let text = format!("[run]\ncycles = 10\n{}rate_gbps = 1\n", tcp_flow(0, 1, ""));
    let e = Scenario::parse(&text, "t")
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.field, "flows[0].rate_gbps", "{e}");
}
