//! L2BM on the command line: every built-in runs under `--policy l2bm`, and the policy's
//! name is known (the policy's tests are `switch-run`'s).

use crate::common::mmu_sim;
use hw_model::Policy;
use scenario::Scenario;

/// (c) Every single-switch built-in scenario runs under `--policy l2bm` without a
/// violation (a lossless drop where the scenario expects none, reordering, conservation,
/// model invariants); the network built-ins run in `regression.rs`.
#[test]
fn every_builtin_runs_under_l2bm() {
    let handles: Vec<_> = scenario::builtin::BUILTINS
        .iter()
        .filter(|b| b.load().is_ok_and(|s| s.fabric.is_none()))
        .map(|b| {
            std::thread::spawn(move || {
                let o = mmu_sim(&["run", b.name, "--policy", "l2bm"]);
                (b.name, o)
            })
        })
        .collect();
    for h in handles {
        let (name, o) = h.join().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name}: {out}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.contains("| policy l2bm |"), "{name}: {out}");
        assert!(out.contains("result: OK"), "{name}: {out}");
    }
}

/// An unknown policy is refused (exit 2) with a message that lists `l2bm`; a scenario file
/// may say `policy = "l2bm"`.
#[test]
fn policy_name_l2bm_is_known() {
    let o = mmu_sim(&["run", "small-smoke", "--policy", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sih, dsh, l2bm"), "{err}");
    let text = scenario::builtin::find("small-smoke")
        .unwrap()
        .toml()
        .replace("[switch]", "[switch]\npolicy = \"l2bm\"");
    let s = Scenario::parse(&text, "x").unwrap();
    assert_eq!(s.switch.policy, Policy::L2bm);
}
