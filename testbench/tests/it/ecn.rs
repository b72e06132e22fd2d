//! ECN in scenarios (docs/ecn.md): `[switch.ecn]` and the flows' `ecn` key, their range
//! errors, and the marked counts in the summary.

use crate::common::mmu_sim;
use testbench::scenario::{Overrides, Scenario};
use testbench::Sim;

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

#[test]
fn bad_ecn_keys_exit_2_naming_the_key_and_its_range() {
    for (set, want) in [
        (
            "switch.ecn.pmax=2.0",
            "switch.ecn.pmax: 2 is out of range; allowed: 2^-16..=1",
        ),
        (
            "switch.ecn.pmax=0.0",
            "switch.ecn.pmax: 0 is out of range; allowed: 2^-16..=1",
        ),
        (
            "switch.ecn.kmax=10",
            "switch.ecn.kmax: 10 is out of range; allowed: 5120..=134217727",
        ),
        (
            "switch.ecn.kmin=134217728",
            "switch.ecn.kmin: 134217728 is out of range; allowed: 0..=134217727",
        ),
        ("switch.ecn.priorities=[8]", "switch.ecn.priorities"),
        ("switch.ecn.mark_on=\"sometimes\"", "switch.ecn"),
        ("switch.ecn.unit=\"pages\"", "switch.ecn"),
        ("switch.ecn.bogus=1", "switch.ecn.bogus"),
        ("flows[0].ecn=1", "flows[0]"),
    ] {
        let o = mmu_sim(&["validate", "small-smoke", "--set", set]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--set {set}: {err}");
        assert!(err.contains(want), "--set {set}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
