//! DCQCN on the command line: out-of-range keys exit 2 naming the key (the engine's tests
//! are `switch-run`'s).

use crate::common::mmu_sim;

#[test]
fn out_of_range_keys_exit_2_naming_the_key() {
    for (set, want) in [
        (
            "flows[0].pattern={dcqcn={g=0.0}}",
            "flows[0].pattern.dcqcn.g: 0 is out of range; allowed: 0 < g <= 1",
        ),
        (
            "flows[0].pattern={dcqcn={f=1001}}",
            "flows[0].pattern.dcqcn.f: 1001 is out of range; allowed: 0..=1000",
        ),
        (
            "flows[0].pattern={dcqcn={k_us=0}}",
            "flows[0].pattern.dcqcn.k_us: 0 is out of range; allowed: 1..=1000000",
        ),
        ("flows[0].pattern={dcqcn={bogus=1}}", "flows[0]"),
        (
            "flows[0].rate_gbps=5",
            "flows[0].rate_gbps: not used by pattern Dcqcn without message_cdf",
        ),
        (
            "flows[0].message_cdf=[[1000,1.0]]",
            "flows[0].rate_gbps: required by pattern Dcqcn with message_cdf",
        ),
        (
            "switch.ecn.curves=[{priorities=[2],kmin=5,kmax=4}]",
            "switch.ecn.curves[0].kmax: 4 is out of range; allowed: 5..=134217727",
        ),
        (
            "switch.ecn.curves=[{priorities=[2],kmin=5,kmax=5,bogus=1}]",
            "switch.ecn.curves[0].bogus: unknown field `bogus`, expected one of `priorities`, `kmin`, `kmax`, `pmax`",
        ),
    ] {
        let o = mmu_sim(&["validate", "dcqcn-fanin", "--set", set]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--set {set}: {err}");
        assert!(err.contains(want), "--set {set}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
