//! `mmu-sim` exit codes: 0 success, 1 violated invariant, 2 invalid input.

use std::path::PathBuf;
use std::process::Output;

use crate::common::mmu_sim;

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited normally")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmu-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn list_names_every_builtin() {
    let o = mmu_sim(&["list"]);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8(o.stdout).unwrap();
    for b in testbench::builtin::BUILTINS {
        assert!(text.contains(b.name), "{text}");
    }
}

#[test]
fn validate_accepts_builtins_and_files() {
    assert_eq!(code(&mmu_sim(&["validate", "fanin-burst"])), 0);
    let f = tmp("ok.toml");
    std::fs::write(&f, testbench::builtin::find("small-smoke").unwrap().toml()).unwrap();
    assert_eq!(code(&mmu_sim(&["validate", f.to_str().unwrap()])), 0);
}

#[test]
fn invalid_scenario_exits_2_naming_the_field() {
    let f = tmp("bad.toml");
    let text = testbench::builtin::find("small-smoke")
        .unwrap()
        .toml()
        .replace("dst = 4", "dst = 40");
    std::fs::write(&f, text).unwrap();
    let o = mmu_sim(&["validate", f.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("flows[0].dst: port 40 does not exist (ports 0..=7)"),
        "{err}"
    );
    assert_eq!(code(&mmu_sim(&["run", f.to_str().unwrap()])), 2);
}

#[test]
fn unknown_scenario_exits_2() {
    let o = mmu_sim(&["run", "no-such-scenario"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("unknown scenario"));
}

#[test]
fn bad_options_exit_2() {
    assert_eq!(
        code(&mmu_sim(&["run", "small-smoke", "--policy", "nope"])),
        2
    );
    assert_eq!(code(&mmu_sim(&["run", "small-smoke", "--cycles", "0"])), 2);
    assert_eq!(
        code(&mmu_sim(&[
            "run",
            "small-smoke",
            "--vcd",
            "/tmp/x.vcd",
            "--vcd-window",
            "9:3"
        ])),
        2
    );
    assert_eq!(code(&mmu_sim(&["run", "--bogus"])), 2);
}

#[test]
fn unwritable_output_exits_2_before_simulating() {
    let o = mmu_sim(&[
        "run",
        "fanin-burst",
        "--summary-json",
        "/nonexistent-dir/s.json",
    ]);
    assert_eq!(code(&o), 2);
    assert!(o.stdout.is_empty(), "no summary: the run never started");
}

#[test]
fn run_writes_summary_trace_and_waves() {
    let (json, csv, vcd) = (tmp("s.json"), tmp("t.csv"), tmp("w.vcd"));
    let o = mmu_sim(&[
        "run",
        "small-smoke",
        "--cycles",
        "3000",
        "--summary-json",
        json.to_str().unwrap(),
        "--trace-cells",
        csv.to_str().unwrap(),
        "--vcd",
        vcd.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("conservation: injected"), "{out}");
    assert!(out.contains(" OK"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for k in [
        "cycles",
        "cells_injected",
        "cells_departed",
        "cells_dropped_lossless",
        "cells_dropped_lossy",
        "cells_buffered_at_end",
        "reordered_cells",
        "pfc_pause_frames",
        "pfc_resume_frames",
        "max_shared_occupancy_cells",
        "wall_seconds",
        "cycles_per_second",
        "policy",
        "scenario",
        "seed",
        "drops_by_reason",
    ] {
        assert!(v.get(k).is_some(), "summary JSON lacks {k}");
    }
    assert_eq!(v["cycles"], 3000);
    let trace = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        trace.lines().next(),
        Some("cycle,event,flow,seq,src_port,dst_port,prio,cell")
    );
    assert!(trace.lines().any(|l| l.contains(",inject,")));
    assert!(trace.lines().any(|l| l.contains(",depart,")));
    assert!(std::fs::read_to_string(&vcd)
        .unwrap()
        .contains("$enddefinitions"));
    assert!(vcd.with_extension("gtkw").exists());
}

#[test]
fn validate_prints_eta_in_cells_and_bytes_and_why() {
    let o = mmu_sim(&["validate", "fanin-burst"]);
    assert_eq!(code(&o), 0);
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "eta, ports 0-31: 307 cells = 63856 B, reserved per lossless ingress queue (Eq. 3)",
        "W = Eq. 1 = 2 (C D_prop + L_MTU) + 3840 = 2 (25000 + 1500) + 3840 = 56840 B",
        "headroom = \"cells\", lossless packets of 1500..=1500 B",
        "densest packet 1500 B: 8 cells per 1520 wire bytes; eta = floor(W x 8 / 1520) + 8",
    ] {
        assert!(out.contains(line), "{line:?} not in:\n{out}");
    }
    let o = mmu_sim(&["validate", "mixed-speed"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("eta, ports 0-5: 111 cells"), "{out}");
    assert!(out.contains("eta, ports 6-7: 242 cells"), "{out}");
}

/// Headroom of one MTU packet (`eta_bytes` = 100 B of wire: 8 cells; Eq. 1 asks 111) under
/// a 3:1 lossless overload. With `expect_lossless` the plan refuses it (exit 2, naming
/// `switch.eta_bytes`); without, it runs with a warning on stderr, lossless cells drop, and
/// the summary says why, in the table and the JSON.
#[test]
fn lossless_drop_is_refused_before_the_run_or_reported_with_its_cause() {
    let text = testbench::builtin::find("lossy-overload")
        .unwrap()
        .toml()
        .replace(
            "lossless_priorities = [3]",
            "lossless_priorities = [1, 3]\neta_bytes = 100\nalpha_log2 = -7",
        )
        .replace("cycles = 50_000", "cycles = 20_000");
    let strict = tmp("lossless-drop-strict.toml");
    std::fs::write(&strict, &text).unwrap();
    for cmd in ["validate", "run"] {
        let o = mmu_sim(&[cmd, strict.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("switch.eta_bytes: the link into ports 0-2, 5:"),
            "{err}"
        );
        assert!(err.contains("(run.expect_lossless = true)"), "{err}");
    }
    let loose = tmp("lossless-drop.toml");
    std::fs::write(
        &loose,
        text.replace("expect_lossless = true", "expect_lossless = false"),
    )
    .unwrap();
    let json = tmp("lossless-drop.json");
    let o = mmu_sim(&[
        "run",
        loose.to_str().unwrap(),
        "--summary-json",
        json.to_str().unwrap(),
    ]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(code(&o), 0, "{out}{err}");
    assert!(
        err.contains("warning: switch.eta_bytes: the link into ports 0-2, 5:"),
        "{err}"
    );
    assert!(out.contains("headroom warnings"), "{out}");
    assert!(out.contains("lossless packets dropped"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let l = &v["lossless"];
    assert!(l["packets_dropped"].as_u64().unwrap() > 0, "{l}");
    assert_eq!(l["headroom_warnings"].as_array().unwrap().len(), 1, "{l}");
    let first = l["first_drops"][0].as_str().unwrap();
    for part in [
        "headroom_full at port",
        "the queue's headroom held",
        "of eta = 8 cells",
        "has a headroom warning: switch.eta_bytes",
    ] {
        assert!(first.contains(part), "{part:?} not in {first}");
    }
    assert!(out.contains(first), "the table lists the cause too: {out}");
}
