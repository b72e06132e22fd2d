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
        (
            "flows[0].pattern={dcqcn={qp=\"message\"}}",
            "flows[0].pattern.dcqcn.qp: not used without message_cdf",
        ),
    ] {
        refused(&[set], want);
    }
    // Flow 0 with messages: the keys of the queue-pair modes.
    let messages = ["flows[0].message_cdf=[[1000,1.0]]", "flows[0].rate_gbps=1"];
    for (set, want) in [
        (
            "flows[0].pattern={dcqcn={qp=\"bogus\"}}",
            "unknown variant `bogus`, expected `message` or `pair`",
        ),
        (
            "flows[0].pattern={dcqcn={decrease_us=0}}",
            "flows[0].pattern.dcqcn.decrease_us: 0 is out of range; allowed: 1..=1000000",
        ),
        (
            "flows[0].pattern={dcqcn={decrease_us=-1}}",
            "flows[0].pattern.dcqcn.decrease_us: -1 is out of range; allowed: 1..=1000000",
        ),
        (
            "flows[0].pattern={dcqcn={f=-1}}",
            "flows[0].pattern.dcqcn.f: -1 is out of range; allowed: 0..=1000",
        ),
        (
            "flows[0].pattern={dcqcn={r_hai_mbps=-5}}",
            "flows[0].pattern.dcqcn.r_hai_mbps: -5 is out of range; allowed: 1..=line rate (Mb/s)",
        ),
        (
            "flows[0].pattern={dcqcn={nack_us=1000001}}",
            "flows[0].pattern.dcqcn.nack_us: 1000001 is out of range; allowed: 0..=1000000",
        ),
        (
            "flows[0].pattern={dcqcn={b_bytes=1000}}",
            "flows[0].pattern.dcqcn.b_bytes: not used with qp = \"message\"",
        ),
        (
            "flows[0].pattern={dcqcn={qp=\"pair\",decrease_us=4}}",
            "flows[0].pattern.dcqcn.decrease_us: not used with qp = \"pair\"",
        ),
        (
            "flows[0].pattern={dcqcn={qp=\"pair\",nack_us=4}}",
            "flows[0].pattern.dcqcn.nack_us: not used with qp = \"pair\"",
        ),
    ] {
        refused(&[messages[0], messages[1], set], want);
    }
}

/// `mmu-sim validate dcqcn-fanin` with `sets` exits 2 with `want` in its error.
fn refused(sets: &[&str], want: &str) {
    let mut args = vec!["validate", "dcqcn-fanin"];
    for set in sets {
        args.extend(["--set", set]);
    }
    let o = mmu_sim(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "--set {sets:?}: {err}");
    assert!(err.contains(want), "--set {sets:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
