//! ECN in scenarios (docs/ecn.md): `[switch.ecn]` and the flows' `ecn` key, their range
//! errors, and the marked counts in the summary.

use scenario::{Overrides, Scenario};
use switch_run::Sim;

/// A small switch (8 x 100G) whose priority 1 is lossy, `[switch.ecn]` from `ecn`, and
/// `flows` (TOML `[[flows]]` entries), for `cycles`.
pub fn scenario(ecn: &str, cycles: u64, flows: &str) -> Scenario {
    let text = format!(
        r#"
[switch]
profile = "small"
lossless_priorities = [3]
lossy_pool_bytes = 262144

[switch.ecn]
{ecn}

[run]
cycles = {cycles}

{flows}
"#
    );
    Scenario::parse(&text, "ecn").unwrap()
}

fn constant(src: usize, ecn: bool) -> String {
    format!(
        "[[flows]]\nsrc = {src}\ndst = 0\nprio = 1\nsize_bytes = 1500\npattern = \"constant\"\necn = {ecn}\n"
    )
}

#[test]
fn only_ecn_capable_flows_are_marked_and_the_summary_counts_them() {
    let flows = constant(1, true) + &constant(2, false);
    let s = scenario(
        "priorities = [1]\nkmin = 30000\nkmax = 30000",
        100_000,
        &flows,
    );
    let mut sim = Sim::new(&s, Overrides::default()).unwrap();
    let summary = sim.run(|_| {}).unwrap();
    assert!(summary.ok(), "{summary}");
    assert_eq!(summary.ecn.len(), 8, "one marker per port's queue 1");
    let q0 = &summary.ecn[0];
    assert_eq!((q0.port, q0.queue), (0, 1));
    // 2:1 overload: the queue stands above K, so every ECN-capable packet after the first
    // ones is marked; the other flow's packets are not looked at.
    let sent_by_1 = summary.egress[0].packets / 2;
    assert!(
        q0.marked > 0 && q0.marked <= q0.ect_packets,
        "{q0:?} of about {sent_by_1}"
    );
    assert!(q0.ect_packets.abs_diff(sent_by_1) < sent_by_1 / 5, "{q0:?}");
    assert!(
        summary.to_string().contains(&format!(
            "{} of {} ECN-capable packets marked CE",
            q0.marked, q0.ect_packets
        )),
        "{summary}"
    );
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["ecn"][0]["marked"], q0.marked);
}

#[test]
fn ecn_off_leaves_the_summary_and_the_hash_as_they_were() {
    let s = scenario("", 1000, &constant(1, false));
    let mut plain = s.clone();
    plain.switch.ecn = hw_model::EcnConfig::default();
    let mut sim = Sim::new(&s, Overrides::default()).unwrap();
    let json = serde_json::to_value(sim.run(|_| {}).unwrap()).unwrap();
    assert!(json.get("ecn").is_none(), "no ecn key while off");
    let toml = toml::to_string(&s.switch).unwrap();
    assert!(!toml.contains("ecn"), "{toml}");
    assert_eq!(
        s.hash(&Overrides::default()),
        plain.hash(&Overrides::default())
    );
}

/// What two long-lived TCP senders into one port show after their start-up.
#[derive(Debug)]
struct Held {
    /// Queue length of the bottleneck (port 0, queue 1), bytes: time-average and largest,
    /// sampled every 1000 cycles.
    mean_queue: f64,
    max_queue: u32,
    /// Goodput of both flows together, Gb/s.
    gbps: f64,
    drops: u64,
    timeouts: u64,
}

/// Goodput of 1500 B packets at 100G with 20 B of preamble and gap, Gb/s.
const LINE_GOODPUT_GBPS: f64 = 100.0 * 1500.0 / 1520.0;
/// DCTCP's marking threshold of the tests, bytes: 20 packets (DCTCP section 3.4 asks for
/// `K > C * RTT / 7`, 18 KB at 100 Gb/s and 10 us).
const K: u32 = 30_000;

/// Flows from ports 1 and 2 into port 0 with `tcp` (the pattern's keys), `K` as a step
/// threshold on enqueue, 1.5 ms; measured over the last 1 ms.
fn two_senders(tcp: &str) -> Held {
    let flow = |src: usize| {
        format!(
            "[[flows]]\nsrc = {src}\ndst = 0\nprio = 1\nsize_bytes = 1500\necn = true\n\
             pattern = {{ tcp = {{ base_rtt_us = 10, min_rto_us = 1000, {tcp} }} }}\n"
        )
    };
    let (warm, cycles) = (500_000, 1_500_000);
    let s = scenario(
        &format!("priorities = [1]\nkmin = {K}\nkmax = {K}"),
        cycles,
        &(flow(1) + &flow(2)),
    );
    let mut sim = Sim::new(&s, Overrides::default()).unwrap();
    let delivered = |sim: &Sim| -> u64 { sim.tcp_stats().iter().map(|t| t.bytes_delivered).sum() };
    let (mut sum, mut n, mut max_queue, mut at_warm) = (0.0, 0u64, 0, 0);
    while sim.now() < cycles {
        for _ in 0..1000 {
            sim.step().unwrap();
        }
        if sim.now() == warm {
            at_warm = delivered(&sim);
        }
        if sim.now() > warm {
            let q = sim.mmu().ecn_queues()[0].qlen;
            sum += q as f64;
            n += 1;
            max_queue = max_queue.max(q);
        }
    }
    let summary = sim.summary(0.0);
    assert!(summary.ok(), "{summary}");
    let dctcp = tcp.contains("dctcp");
    assert_eq!(
        summary.to_string().matches("dctcp alpha").count(),
        if dctcp { 2 } else { 0 },
        "{summary}"
    );
    Held {
        mean_queue: sum / n as f64,
        max_queue,
        gbps: (delivered(&sim) - at_warm) as f64 * 8.0 / (cycles - warm) as f64,
        drops: summary.cells_dropped_lossy,
        timeouts: sim.tcp_stats().iter().map(|t| t.timeouts).sum(),
    }
}

/// DCTCP's claim (section 3.1, Fig. 1): full throughput with the queue held near `K`.
/// Bounds: goodput at least 95 % of the line, no loss, and the time-average queue between
/// K / 2 and 2 K, its largest sample below 4 K.
fn holds_the_queue_near_k(h: &Held) -> Result<(), String> {
    let k = K as f64;
    if h.gbps >= 0.95 * LINE_GOODPUT_GBPS
        && h.drops == 0
        && (0.5 * k..=2.0 * k).contains(&h.mean_queue)
        && (h.max_queue as f64) < 4.0 * k
    {
        Ok(())
    } else {
        Err(format!("{h:?}"))
    }
}

#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilisation() {
    let h = two_senders("cc = \"dctcp\"");
    eprintln!("dctcp: {h:?}");
    holds_the_queue_near_k(&h).unwrap();
    assert_eq!(h.timeouts, 0);
}

/// Companion: the same marks with senders that ignore them (Reno) fill the buffer until
/// it drops, and the check says so.
#[test]
fn companion_senders_that_ignore_ece_do_not_hold_the_queue() {
    let h = two_senders("cc = \"reno\"");
    eprintln!("reno: {h:?}");
    let e = holds_the_queue_near_k(&h).expect_err("Reno ignores ECE");
    assert!(e.contains("mean_queue"), "{e}");
}
