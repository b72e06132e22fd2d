//! Closed-loop TCP flows through the model: line rate alone, sharing a port, and incast;
//! and the sender's RTO back-off with and without Karn's rule.

use scenario::{Overrides, Pattern, Scenario, TcpParams};
use stimulus::tcp::{Reno, TcpStats};
use switch_run::Sim;

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

/// The error of a one-flow scenario whose `tcp` pattern has the keys `tcp`.
fn bad(tcp: &str) -> scenario::ScenarioError {
    let text = format!("[run]\ncycles = 10\n{}", tcp_flow(0, 1, tcp));
    Scenario::parse(&text, "t")
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .expect_err("should be rejected")
}

#[test]
fn tcp_parameters_are_checked() {
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
    // A value of the wrong type is reported on the pattern, for `karn` as for the others.
    assert_eq!(bad("init_cwnd = \"x\"").field, "flows[0].pattern");
    let e = bad("karn = 1");
    assert_eq!(e.field, "flows[0].pattern", "{e}");
    assert!(e.to_string().contains("expected a boolean"), "{e}");
    let text = format!("[run]\ncycles = 10\n{}rate_gbps = 1\n", tcp_flow(0, 1, ""));
    let e = Scenario::parse(&text, "t")
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.field, "flows[0].rate_gbps", "{e}");
}

/// Everything the window lets out now.
fn sent(r: &mut Reno) -> Vec<u64> {
    std::iter::from_fn(|| r.next_send()).collect()
}

/// A timeout, then the ACKs of the retransmissions and of the first new packet, with and
/// without Karn's rule (RFC 6298 section 3 and the note after (5.7)).
#[test]
fn karn_keeps_the_backed_off_rto_until_data_sent_once_is_acked() {
    for karn in [false, true] {
        let mut r = Reno::new(4, 100, 10_000, u64::MAX, karn);
        assert_eq!(sent(&mut r), [0, 1, 2, 3]);
        r.on_timeout();
        assert_eq!(r.rto(), 200);
        assert_eq!(sent(&mut r), [0], "go-back-N resends packet 0");
        // The ACK of the retransmitted packet 0.
        assert_eq!(r.on_ack(1, false), None);
        assert_eq!(
            r.rto(),
            if karn { 200 } else { 100 },
            "karn = {karn}: the ACK of a retransmission"
        );
        assert_eq!(sent(&mut r), [1, 2], "still retransmissions");
        r.on_ack(2, false);
        r.on_ack(3, false);
        assert_eq!(sent(&mut r), [3, 4], "3 resent, 4 is new");
        // 4 covers 3, resent; 5 covers 4, the first packet sent after the timeout.
        r.on_ack(4, false);
        assert_eq!(r.rto(), if karn { 200 } else { 100 }, "karn = {karn}");
        r.on_ack(5, false);
        assert_eq!(r.rto(), 100, "karn = {karn}: new data acknowledged");
    }
}

/// With Karn's rule a second timeout before any packet sent once is acknowledged doubles
/// the backed-off timer again; without it the back-off restarts from `min_rto`.
#[test]
fn karn_compounds_the_back_off_over_repeated_timeouts() {
    for (karn, second) in [(false, 200), (true, 400)] {
        let mut r = Reno::new(4, 100, 10_000, u64::MAX, karn);
        sent(&mut r);
        r.on_timeout();
        assert_eq!(sent(&mut r), [0]);
        r.on_ack(1, false);
        assert_eq!(sent(&mut r), [1, 2]);
        r.on_timeout();
        assert_eq!(r.rto(), second, "karn = {karn}");
    }
}

/// While backed off, the ACKs of fast-retransmitted and partial-ACK-retransmitted packets
/// do not end the back-off; an ACK that also covers packets sent once after the timeout
/// does.
#[test]
fn karn_fast_and_partial_ack_retransmissions_are_not_new_data() {
    let mut r = Reno::new(8, 100, 10_000, u64::MAX, true);
    assert_eq!(sent(&mut r).len(), 8);
    r.on_timeout();
    assert_eq!(sent(&mut r), [0]);
    // 1..=7 had arrived: the resent 0 brings the ACK to 8, still no packet sent once.
    r.on_ack(8, false);
    assert_eq!(r.rto(), 200);
    assert_eq!(sent(&mut r), (8..17).collect::<Vec<_>>(), "new data");
    // 8, 9 and 10 are lost: 11.. arrive and repeat ACK 8.
    assert_eq!(r.on_ack(8, false), None);
    assert_eq!(r.on_ack(8, false), None);
    assert_eq!(r.on_ack(8, false), Some(8), "fast retransmit");
    assert_eq!(r.rto(), 200, "a fast retransmit does not back off");
    assert_eq!(r.on_ack(9, false), Some(9), "partial ACK of the resent 8");
    assert_eq!(r.rto(), 200, "ACK 9 covers only the fast-retransmitted 8");
    assert_eq!(r.on_ack(10, false), Some(10), "partial ACK of the resent 9");
    assert_eq!(
        r.rto(),
        200,
        "ACK 10 covers only the partial-ACK retransmission 9"
    );
    // The resent 10 completes 0..17: 11..=16 were sent once, after the timeout.
    r.on_ack(17, false);
    assert_eq!(r.rto(), 100);
}

#[test]
fn karn_key_reaches_the_sender() {
    let plan = |tcp: &str| {
        let text = format!("[run]\ncycles = 10\n{}", tcp_flow(0, 1, tcp));
        let p = Scenario::parse(&text, "t")
            .unwrap()
            .plan(&Overrides::default())
            .unwrap();
        match p.flows[0].pattern {
            Pattern::Tcp(t) => t,
            ref other => panic!("{other:?}"),
        }
    };
    let karn = |t: TcpParams| t.karn;
    assert!(!karn(plan("")), "off by default");
    assert!(!karn(plan("karn = false")));
    assert!(karn(plan("karn = true")));
}

/// The `karn` key reaches the senders of a run: an incast with a 20 us minimum RTO into a
/// 6 KB buffer times out under both settings and completes, but not alike.
#[test]
fn karn_changes_the_timeouts_of_an_incast() {
    let run = |karn: bool| {
        let tcp = format!("base_rtt_us = 10, min_rto_us = 20, flow_bytes = 150_000, karn = {karn}");
        let flows: String = (1..=7).map(|src| tcp_flow(src, 0, &tcp)).collect();
        let mut sim = sim(6 * 1024, 700_000, &flows);
        let summary = sim.run(|_| {}).unwrap();
        assert!(summary.ok(), "{summary}");
        let st = sim.tcp_stats();
        for s in &st {
            assert_eq!(s.bytes_delivered, 150_000, "karn = {karn}: {s:?}");
        }
        assert!(st.iter().any(|s| s.timeouts > 0), "karn = {karn}: {st:?}");
        st.iter()
            .map(|s| (s.timeouts, s.fct_cycles))
            .collect::<Vec<_>>()
    };
    let (off, on) = (run(false), run(true));
    assert_ne!(off, on, "timeouts and completion times per flow");
}

/// The instants (cycles after the flow's start) at which a TCP flow into an egress queue
/// that never sends (paused by a received PFC frame, ON/OFF mode) times out, up to `until`.
fn timeouts_into_a_black_hole(tcp: &str, until: u64) -> Vec<u64> {
    let text = format!(
        r#"
[switch]
profile = "small"
lossless_priorities = [3]
pfc_rx_mode = "onoff"

[run]
cycles = {until}

[[pfc_script]]
cycle = 0
port = 0
classes = [1]
quanta = 65535

{}"#,
        tcp_flow(1, 0, tcp)
    );
    let s = Scenario::parse(&text, "ns2").unwrap();
    let mut sim = Sim::new(&s, Overrides::default()).unwrap();
    let mut at = Vec::new();
    while sim.now() < until {
        sim.step().unwrap();
        let n = sim.tcp_stats()[0].timeouts as usize;
        if n > at.len() {
            at.push(sim.now() - 1);
        }
    }
    at
}

/// ns-2.35's documented back-off (`rtt_timeout`, `rtt_backoff` in `tcp.cc` with
/// `rfc2988_`): before any RTT sample the timer is `rtxcur_init_ * t_backoff_`,
/// `t_backoff_` doubling at each timeout, capped at `maxrto_`: with the defaults 3, 6, 12,
/// 24, 48, 60, 60, ... s. Scaled 10^-5 here (30 us, capped at 600 us) to fit a test's run;
/// the unscaled sequence is checked on the sender alone (`tcp::tests`).
fn ns2_sequence(first: u64, cap: u64, n: usize) -> Vec<u64> {
    let mut t = 0;
    (0..n)
        .map(|k| {
            t += (first << k).min(cap);
            t
        })
        .collect()
}

const NS2_SCALED: &str =
    "flavor = \"ns2\", rtxcur_init_ = 3e-5, maxrto_ = 6e-4, minrto_ = 0.0, tcpTick_ = 1e-7";

#[test]
fn ns2_flavor_reproduces_ns2s_timeout_sequence() {
    let at = timeouts_into_a_black_hole(NS2_SCALED, 2_400_000);
    assert_eq!(at, ns2_sequence(30_000, 600_000, 7), "timeouts at {at:?}");
}

/// Companion: the model's own TCP with the same first timer and cap backs off the same
/// way, but its first timer is `min_rto_us`, not `rtxcur_init_`, and a first timer of
/// 1 ms (its default) gives a sequence the check refuses.
#[test]
fn companion_the_models_tcp_is_not_ns2s() {
    let at = timeouts_into_a_black_hole("", 2_400_000);
    assert_ne!(at, ns2_sequence(30_000, 600_000, at.len()), "{at:?}");
    assert_eq!(at[0], 1_000_000, "min_rto_us = 1000: {at:?}");
}

#[test]
fn ns2_keys_are_checked() {
    let e = bad("window_ = 10");
    assert_eq!(e.field, "flows[0].pattern.tcp.window_", "{e}");
    assert!(e.message.contains("flavor = \"ns2\""), "{e}");
    let e = bad("flavor = \"ns2\", min_rto_us = 100");
    assert_eq!(e.field, "flows[0].pattern.tcp.min_rto_us", "{e}");
    let e = bad("flavor = \"ns2\", maxrto_ = 0.1");
    assert_eq!(e.field, "flows[0].pattern.tcp.maxrto_", "{e}");
    assert!(e.message.contains("allowed: 0.2..=100000 (seconds)"), "{e}");
    let e = bad("flavor = \"ns2\", windowInit_ = 30");
    assert_eq!(
        e.to_string(),
        "flows[0].pattern.tcp.windowInit_: 30 is out of range; allowed: 1..=20"
    );
    assert_eq!(bad("flavor = \"ns3\"").field, "flows[0].pattern");
    // The ns-2 keys share the table (`Ns2Keys`, flattened): an unknown key is still refused.
    let e = bad("flavor = \"ns2\", maxrto = 60");
    assert_eq!(e.to_string(), "flows[0].pattern: unknown field `maxrto`");
}
