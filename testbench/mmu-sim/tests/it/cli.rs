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
    for b in scenario::builtin::BUILTINS {
        assert!(text.contains(b.name), "{text}");
    }
}

#[test]
fn validate_accepts_builtins_and_files() {
    assert_eq!(code(&mmu_sim(&["validate", "fanin-burst"])), 0);
    let f = tmp("ok.toml");
    std::fs::write(&f, scenario::builtin::find("small-smoke").unwrap().toml()).unwrap();
    assert_eq!(code(&mmu_sim(&["validate", f.to_str().unwrap()])), 0);
}

#[test]
fn invalid_scenario_exits_2_naming_the_field() {
    let f = tmp("bad.toml");
    let text = scenario::builtin::find("small-smoke")
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
fn a_misspelt_policy_exits_2_with_the_closest_name() {
    let o = mmu_sim(&["run", "small-smoke", "--policy", "dhs"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("did you mean \"dsh\"") && err.contains("allowed: sih, dsh, l2bm"),
        "{err}"
    );
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
        "schema_version",
        "tool_version",
        "clock_hz",
        "cell_bytes",
        "scenario_hash",
        "ingress_priority_groups",
        "egress_queues",
        "pools",
        "pfc",
        "run",
        "policy",
        "scenario",
        "seed",
        "drops_by_reason",
    ] {
        assert!(v.get(k).is_some(), "summary JSON lacks {k}");
    }
    assert_eq!(v["cycles"], 3000);
    assert_eq!(v["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(v["run"]["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert!(v["run"]["cycles_per_second"].as_f64().is_some());
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
    let text = scenario::builtin::find("lossy-overload")
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

/// `mmu-sim run small-smoke --cycles 100` with `extra` options.
fn run_small(extra: &[&str]) -> Output {
    mmu_sim(&[&["run", "small-smoke", "--cycles", "100"], extra].concat())
}

#[test]
fn a_signal_glob_matching_nothing_exits_2_naming_the_closest_paths() {
    let vcd = tmp("nomatch.vcd");
    let vcd = vcd.to_str().unwrap();
    for flag in ["--vcd-signals", "--wave-signals"] {
        let o = run_small(&["--vcd", vcd, flag, "top.mmu.dt.t, *.qof"]);
        assert_eq!(code(&o), 2);
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains("\"*.qof\" matches no signal"), "{err}");
        assert!(err.contains("top.mmu.ingress.p00.qoff"), "{err}");
        assert!(o.stdout.is_empty(), "the run never started");
    }
    assert_eq!(
        code(&run_small(&["--vcd", vcd, "--vcd-signals", "nomatch.*"])),
        2
    );
}

#[test]
fn a_window_outside_the_run_exits_2_naming_the_run_length() {
    let fst = tmp("window.fst");
    let run = |flag: &str, window: &str| {
        let path = fst.to_str().unwrap();
        mmu_sim(&[
            "run",
            "small-smoke",
            "--cycles",
            "3000",
            "--wave",
            path,
            flag,
            window,
        ])
    };
    for window in ["3000:", "100:3001", "5000:6000"] {
        let o = run("--vcd-window", window);
        assert_eq!(code(&o), 2, "{window}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains("outside the run of 3000 cycles"), "{err}");
    }
    let o = run("--wave-window", "100:3000");
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn wave_takes_the_format_from_the_extension() {
    let bad = tmp("w.txt");
    let bad = bad.to_str().unwrap();
    let o = run_small(&["--wave", bad]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains(".vcd or .fst"), "{err}");
    for (name, magic) in [("w.vcd", &b"$version"[..]), ("w.fst", &[0u8][..])] {
        let p = tmp(name);
        let o = run_small(&["--wave", p.to_str().unwrap()]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::read(&p).unwrap().starts_with(magic), "{name}");
        let gtkw = std::fs::read_to_string(p.with_extension("gtkw")).unwrap();
        assert!(gtkw.contains(&format!("[dumpfile] \"{name}\"")), "{gtkw}");
    }
    // --vcd writes VCD under any name but .fst (GTKWave would read it as FST and fail), and
    // cannot be combined with --wave.
    let p = tmp("plain.dump");
    let p = p.to_str().unwrap();
    assert_eq!(code(&run_small(&["--vcd", p])), 0);
    assert!(std::fs::read(p).unwrap().starts_with(b"$version"));
    assert_eq!(code(&run_small(&["--vcd", p, "--wave", bad])), 2);
    let trap = tmp("trap.fst");
    let o = run_small(&["--vcd", trap.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("--wave") && err.contains("trap.fst"), "{err}");
    assert!(!trap.exists(), "a refused --vcd writes no file");
}

/// Two runs of one scenario and seed write byte-identical summary JSON up to the `run`
/// object, the last key, which alone holds wall time and speed.
#[test]
fn summary_json_is_deterministic_but_for_run() {
    let files = [tmp("det-a.json"), tmp("det-b.json")];
    for f in &files {
        let o = mmu_sim(&[
            "run",
            "fanin-burst",
            "--cycles",
            "40000",
            "--summary-json",
            f.to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    }
    let [a, b] = files.map(|f| std::fs::read_to_string(f).unwrap());
    let cut = |s: &str| {
        let at = s.find("\n  \"run\": {").expect("a run object");
        assert!(!s[at..].contains("\"pools\""), "run is the last key");
        s[..at].to_string()
    };
    assert_eq!(cut(&a), cut(&b));
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert!(v["ingress_priority_groups"].as_array().unwrap().len() > 1);
    assert!(v["pfc"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["tx_pkts"].as_u64() > Some(0)));
}

/// `--set` reaches every command: `show` prints the resolved file, `validate` and `run`
/// use it, and the run's summary carries the value and a different scenario hash.
#[test]
fn set_overrides_any_key() {
    let o = mmu_sim(&[
        "show",
        "hcf-tcp",
        "--set",
        "switch.hcf[0].bins=8",
        "--set",
        "flows[3].prio=2",
        "--set",
        "run.cycles=1234",
        "--set",
        "ecm_rp.w=2.5",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let t: toml::Table = String::from_utf8(o.stdout).unwrap().parse().unwrap();
    assert_eq!(t["switch"]["hcf"][0]["bins"].as_integer(), Some(8));
    assert_eq!(t["flows"][3]["prio"].as_integer(), Some(2));
    assert_eq!(t["run"]["cycles"].as_integer(), Some(1234));
    assert_eq!(t["ecm_rp"]["w"].as_float(), Some(2.5));
    let o = mmu_sim(&["validate", "small-smoke", "--set", "run.cycles=777"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("777 cycles"));

    let hash = |extra: &[&str]| {
        let json = tmp(&format!("set-{}.json", extra.len()));
        let mut args = vec![
            "run",
            "small-smoke",
            "--cycles",
            "2000",
            "--summary-json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = mmu_sim(&args);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (v["scenario_hash"].as_str().unwrap().to_string(), v)
    };
    let (plain, _) = hash(&[]);
    let (set, v) = hash(&["--set", "switch.policy=dsh", "--set", "run.seed=5"]);
    assert_eq!(v["policy"], "dsh", "a bare word is a string");
    assert_eq!(v["seed"], 5);
    assert_ne!(plain, set);
}

/// Bad `--set` keys and values fail like a bad file: exit 2, the field named.
#[test]
fn set_rejects_bad_keys_and_values() {
    for (set, want) in [
        ("switch.nope=1", "switch.nope"),
        ("nope.x=1", "nope"),
        ("flows[99].prio=1", "flows[99]"),
        ("flows[0].prio=9", "flows[0].prio"),
        ("run.cycles=abc", "run.cycles"),
        ("run.cycles=0", "run.cycles"),
        ("flows[0].src.x=1", "flows[0].src"),
        ("links[0].port=1", "links"),
        ("run.cycles", "KEY=VALUE"),
        ("run..cycles=1", "bad key"),
        ("run.cycles=[1,", "not a TOML value"),
    ] {
        for cmd in ["run", "validate", "show"] {
            let o = mmu_sim(&[cmd, "small-smoke", "--set", set]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(code(&o), 2, "{cmd} --set {set}: {err}");
            assert!(err.contains(want), "{cmd} --set {set}: {err}");
        }
    }
    let o = mmu_sim(&["run", "small-smoke", "--set", "flows[99].prio=1"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("allowed: 0..=3"));
}

/// `--ns3-out` writes the three HPCC files with the columns HPCC's analysis reads:
/// `fct.txt` (`fct_analysis.py` takes `$5` size, `$6` start, `$7` FCT, `$8` standalone FCT
/// and computes the slowdown `$7/$8`), `pfc.txt` (time, node, node type, interface,
/// 1 PAUSE / 0 RESUME) and `qlen.txt` (`time: T`, then `switch port count...`).
#[test]
fn ns3_out_writes_hpcc_formats() {
    let dir = tmp("ns3-poisson");
    let o = mmu_sim(&[
        "run",
        "poisson-cdf",
        "--cycles",
        "60000",
        "--ns3-out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let q = std::fs::read_to_string(dir.join("qlen.txt")).unwrap();
    let end_ns: u64 = q.lines().next().unwrap()[6..].parse().unwrap();
    let fct = std::fs::read_to_string(dir.join("fct.txt")).unwrap();
    assert!(fct.lines().count() > 10, "{fct}");
    for l in fct.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!(f.len(), 8, "{l}");
        for ip in &f[..2] {
            assert_eq!(ip.len(), 8, "{l}");
            u32::from_str_radix(ip, 16).unwrap();
        }
        let n: Vec<u64> = f[2..].iter().map(|x| x.parse().unwrap()).collect();
        let (size, start, fct, standalone) = (n[2], n[3], n[4], n[5]);
        assert!(n[0] <= 65535 && n[1] <= 65535, "{l}");
        assert!(size > 0 && fct > 0 && standalone > 0, "{l}");
        assert!(start + fct <= end_ns, "{l}");
        // The slowdown of fct_analysis.py; never far below 1 (the standalone FCT leaves
        // out only the switch's few pipeline cycles).
        assert!(fct as f64 / standalone as f64 > 0.9, "{l}");
    }
    let mut lines = q.lines();
    let t: u64 = lines
        .next()
        .unwrap()
        .strip_prefix("time: ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(t > 0);
    let ports: Vec<Vec<u64>> = lines
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(ports.len(), 8, "one line per port of the small switch");
    let samples: u64 = ports[0][2..].iter().sum();
    for (p, l) in ports.iter().enumerate() {
        assert_eq!(
            (l[0], l[1]),
            (8, p as u64 + 1),
            "switch node 8, interface p + 1"
        );
        assert_eq!(
            l[2..].iter().sum::<u64>(),
            samples,
            "every port sampled alike"
        );
    }
    assert!(ports.iter().any(|l| l.len() > 3), "some queue above 1000 B");

    let dir = tmp("ns3-pfc");
    let o = mmu_sim(&[
        "run",
        "fanin-burst",
        "--set",
        "pfc_script=[{ cycle = 100, port = 30, classes = [3], quanta = 100 }]",
        "--ns3-out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let pfc = std::fs::read_to_string(dir.join("pfc.txt")).unwrap();
    let rows: Vec<Vec<u64>> = pfc
        .lines()
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert!(rows.iter().all(|r| r.len() == 5 && r[4] <= 1), "{pfc}");
    assert!(
        rows.windows(2).all(|w| w[0][0] <= w[1][0]),
        "sorted by time"
    );
    // Frames the switch sent are received by hosts (type 0, interface 1); the scripted
    // one by the switch (node 32, type 1) on port 30's interface 31, at cycle 100.
    assert!(rows.iter().any(|r| r[2] == 0 && r[3] == 1 && r[4] == 1));
    assert!(rows.contains(&vec![100, 32, 1, 31, 1]), "{pfc}");
    // The 16 bursts (87 packets of 1500 B from cycle 5000, 1 GHz) are one message each;
    // the constant flows are not messages.
    let fct = std::fs::read_to_string(dir.join("fct.txt")).unwrap();
    assert_eq!(fct.lines().count(), 16, "{fct}");
    for l in fct.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        assert_eq!((f[4], f[5]), ("130500", "5000"), "{l}");
    }
}

/// The help names each argument once, lists `--policy`'s values and says `--jobs`'s
/// default once; integer options refuse a bad or negative value with their range.
#[test]
fn help_is_consistent_and_integer_options_give_their_range() {
    let help = |args: &[&str]| String::from_utf8(mmu_sim(args).stdout).unwrap();
    let run = help(&["run", "--help"]);
    assert!(!run.contains("[alias"), "{run}");
    assert!(run.contains("[possible values: sih, dsh, l2bm]"), "{run}");
    let sweep = help(&["sweep", "run", "--help"]);
    assert!(!sweep.contains("[default: 0]"), "{sweep}");
    for (args, allowed) in [
        (
            ["--seed", "-1"],
            "allowed: an integer in 0..=18446744073709551615",
        ),
        (
            ["--seed", "1.5"],
            "allowed: an integer in 0..=18446744073709551615",
        ),
        (
            ["--cycles", "x"],
            "allowed: an integer in 1..=1099511627776",
        ),
    ] {
        let o = mmu_sim(&[&["run", "small-smoke"][..], &args].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(allowed), "{args:?}: {err}");
    }
    for (args, hint) in [
        (
            &["run", "smal-smoke"][..],
            "(did you mean \"small-smoke\"?)",
        ),
        (
            &["reproduce", "dsh-fig1", "--out", "x"],
            "(did you mean \"dsh-fig11\"?)",
        ),
    ] {
        let err = String::from_utf8_lossy(&mmu_sim(args).stderr).into_owned();
        assert!(err.contains(hint), "{err}");
    }
}

/// Each drop reason is printed under the class it belongs to: `headroom_full` (the only
/// lossless one) under "lossless", the DT, HCF and L2BM egress limits under "lossy".
#[test]
fn drop_reasons_are_printed_under_their_class() {
    let o = mmu_sim(&["run", "small-smoke"]);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  cells dropped (lossless)"))
        .take(6)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            "cells",
            "headroom_full",
            "cells",
            "egress_threshold",
            "hcf_full",
            "lossy_threshold"
        ],
        "{text}"
    );
    assert!(
        text.contains("  cells dropped (lossy)        0\n    egress_threshold"),
        "{text}"
    );
}
