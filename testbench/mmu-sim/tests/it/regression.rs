//! Behaviour fixtures: every built-in under every policy, run through `mmu-sim run` with a
//! VCD, a cell trace and the summary JSON, compared with what was recorded in
//! `tests/fixtures/regression/NAME-POLICY.json`: the summary minus its `run` object (wall
//! time and speed), the SHA-256 of the VCD and of the cell trace, or the error of a policy
//! the scenario refuses.
//!
//! A change of the model or the testbench that moves any cycle of any built-in fails here.
//! A deliberate change re-records the fixtures in the same commit that explains it:
//! `REGEN_FIXTURES=1 cargo test -p mmu-sim --test it regression::`.

use crate::common::mmu_sim;
use scenario::{builtin, Overrides};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

const POLICIES: [&str; 3] = ["sih", "dsh", "l2bm"];

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/regression")
}

/// Scratch space for the dumps (some are hundreds of MB): RAM-backed where there is one.
fn scratch(name: &str) -> PathBuf {
    let base = Path::new("/dev/shm");
    let base = if base.is_dir() {
        base.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("mmu-regression-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sha256_file(path: &Path) -> String {
    let mut f = std::fs::File::open(path).unwrap();
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    format!("{:x}", h.finalize())
}

/// What one built-in under one policy does now.
fn observe(name: &str, policy: &str) -> Value {
    let scenario = builtin::load(name).unwrap();
    let ov = Overrides {
        policy: Some(hw_model::Policy::parse(policy).unwrap()),
        ..Overrides::default()
    };
    if let Err(e) = scenario.plan(&ov) {
        return json!({ "refused": e.to_string() });
    }
    let dir = scratch(&format!("{name}-{policy}"));
    let (vcd, cells, summary) = (
        dir.join("run.vcd"),
        dir.join("cells.csv"),
        dir.join("summary.json"),
    );
    let out = mmu_sim(&[
        "run",
        name,
        "--policy",
        policy,
        "--vcd",
        vcd.to_str().unwrap(),
        "--trace-cells",
        cells.to_str().unwrap(),
        "--summary-json",
        summary.to_str().unwrap(),
    ]);
    let mut s: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    s.as_object_mut().unwrap().remove("run");
    let v = json!({
        "exit_code": out.status.code(),
        "summary": s,
        "vcd_sha256": sha256_file(&vcd),
        "cells_sha256": sha256_file(&cells),
    });
    std::fs::remove_dir_all(&dir).unwrap();
    v
}

/// Compare every policy of `name` with its fixtures (or re-record them).
fn check(name: &str) {
    let regen = std::env::var_os("REGEN_FIXTURES").is_some();
    let mut diffs = Vec::new();
    for policy in POLICIES {
        let now = observe(name, policy);
        let path = fixture_dir().join(format!("{name}-{policy}.json"));
        if regen {
            std::fs::create_dir_all(fixture_dir()).unwrap();
            let text = serde_json::to_string_pretty(&now).unwrap() + "\n";
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; record the fixtures with REGEN_FIXTURES=1",
                path.display()
            )
        });
        let was: Value = serde_json::from_str(&text).unwrap();
        if was != now {
            diffs.push(format!(
                "{name} --policy {policy}: {}",
                describe(&was, &now)
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "behaviour changed (a deliberate change re-records with REGEN_FIXTURES=1):\n{}",
        diffs.join("\n")
    );
}

/// The keys whose values differ, at any depth, as `path: was -> now`.
fn describe(was: &Value, now: &Value) -> String {
    let mut out = Vec::new();
    diff_values("", was, now, &mut out);
    out.truncate(20);
    out.join("; ")
}

fn diff_values(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                diff_values(&format!("{path}.{k}"), va, vb, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_values(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if a != b => {
            let short = |v: &Value| {
                let s = v.to_string();
                if s.len() > 80 {
                    format!("{}...", &s[..80])
                } else {
                    s
                }
            };
            out.push(format!("{path}: {} -> {}", short(a), short(b)));
        }
        _ => {}
    }
}

/// Every built-in has a test below: a new built-in must be added here.
#[test]
fn every_builtin_has_fixtures() {
    let covered = [
        "fanin-burst",
        "small-smoke",
        "mixed-speed",
        "lossy-overload",
        "poisson-cdf",
        "dsh-port-level",
        "hcf-tcp",
        "ecm-fanin",
        "ecn-dctcp",
        "dcqcn-fanin",
        "hpcc-fanin",
        "powertcp-fanin",
        "occamy-shaped",
        "dsh-deadlock",
        "dsh-deadlock-powertcp",
        "dsh-collateral-fabric",
        "l2bm-clos",
        "leafspine-256-websearch",
        "dsh-leafspine",
        "dsh-fattree",
    ];
    assert_eq!(builtin::names(), covered);
}

/// The check bites: a summary that differs in one counter, or a changed hash, is reported.
#[test]
fn a_changed_value_is_reported() {
    let was = json!({"summary": {"cells_departed": 5, "egress": [{"port": 1}]}, "vcd_sha256": "a"});
    let now = json!({"summary": {"cells_departed": 6, "egress": [{"port": 1}]}, "vcd_sha256": "b"});
    let d = describe(&was, &now);
    assert!(d.contains(".summary.cells_departed: 5 -> 6"), "{d}");
    assert!(d.contains(".vcd_sha256: \"a\" -> \"b\""), "{d}");
    assert_eq!(describe(&was, &was), "");
}

#[test]
fn fanin_burst() {
    check("fanin-burst");
}
#[test]
fn small_smoke() {
    check("small-smoke");
}
#[test]
fn mixed_speed() {
    check("mixed-speed");
}
#[test]
fn lossy_overload() {
    check("lossy-overload");
}
#[test]
fn poisson_cdf() {
    check("poisson-cdf");
}
#[test]
fn dsh_port_level() {
    check("dsh-port-level");
}
#[test]
fn hcf_tcp() {
    check("hcf-tcp");
}
#[test]
fn ecm_fanin() {
    check("ecm-fanin");
}
#[test]
fn ecn_dctcp() {
    check("ecn-dctcp");
}
#[test]
fn dcqcn_fanin() {
    check("dcqcn-fanin");
}
#[test]
fn hpcc_fanin() {
    check("hpcc-fanin");
}
#[test]
fn powertcp_fanin() {
    check("powertcp-fanin");
}
#[test]
fn occamy_shaped() {
    check("occamy-shaped");
}

/// A network built-in runs by name, prints the fabric summary with its checks held and
/// exits 0; its summary is the same on a second run (the run's speed apart).
fn network(name: &str) {
    let dir = std::env::temp_dir().join(format!("mmu-sim-network-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut summaries = Vec::new();
    for i in 0..2 {
        let json = dir.join(format!("{i}.json"));
        let o = mmu_sim(&["run", name, "--summary-json", json.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{name}: {out}");
        assert!(out.starts_with("fabric | "), "{out}");
        assert!(out.contains("OK") && !out.contains("VIOLATION"), "{out}");
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("run");
        summaries.push(v);
    }
    assert_eq!(summaries[0], summaries[1], "{name}: not deterministic");
    let _ = std::fs::remove_dir_all(&dir);
}
#[test]
fn dsh_deadlock() {
    network("dsh-deadlock");
}
#[test]
fn dsh_deadlock_powertcp() {
    network("dsh-deadlock-powertcp");
}
#[test]
fn dsh_collateral_fabric() {
    network("dsh-collateral-fabric");
}
#[test]
fn l2bm_clos() {
    network("l2bm-clos");
}
// `leafspine-256-websearch` runs 10 ms of 20 switches (minutes): fabric.rs runs 200 us of
// it on one and two threads and checks its topology.
#[test]
fn dsh_leafspine() {
    network("dsh-leafspine");
}
// `dsh-fattree` (320 switches, 1.8 GB): the study crate's
// `the_built_ins_complete_flows_of_both_kinds` runs it.
