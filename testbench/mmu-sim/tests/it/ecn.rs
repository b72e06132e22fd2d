//! ECN on the command line: bad keys exit 2 naming the key and its range (the marking's
//! tests are `switch-run`'s).

use crate::common::mmu_sim;

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
