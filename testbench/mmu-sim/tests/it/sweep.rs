//! `mmu-sim sweep`: spec parsing and its errors, product and zip expansion, stable run ids,
//! resume (and a torn or corrupted row detected, not taken as done), shards that add up
//! to the whole, merged tables byte-identical however the runs were spread, missing runs
//! reported.

use crate::common::mmu_sim;
use std::path::{Path, PathBuf};
use study::sweep::{self, Row, Shard, Spec, Tick};

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mmu-sim-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 3 policies x 2 seeds of small-smoke, 4000 cycles each.
const SMALL: &str = r#"
base = "small-smoke"
seeds = [1, 2]
collect = ["cells_injected", "cells_departed", "pfc_pause_frames", "drops_by_reason.lossy_threshold"]
[parameters]
"switch.policy" = ["sih", "dsh", "l2bm"]
run.cycles = [4000]
"#;

fn spec(text: &str) -> Result<Spec, String> {
    Spec::parse(text, "t", Path::new(".")).map_err(|e| e.to_string())
}

fn merged(dir: &Path) -> (String, sweep::MergeReport) {
    let mut out = Vec::new();
    let report = sweep::merge(dir, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), report)
}

fn run_all(s: &Spec, d: &Path, shard: Shard, jobs: usize) -> sweep::RunReport {
    sweep::run(s, d, shard, jobs, &|_| {}).unwrap()
}

#[test]
fn product_order_zip_groups_ranges_and_seeds() {
    let s = spec(
        r#"
base = "small-smoke"
seeds = { from = 1, to = 3 }
collect = ["cells_departed"]
[parameters]
switch.alpha_log2 = { from = -3, to = -1, step = 2 }
"switch.policy" = ["sih", "dsh"]
[[zip]]
"flows[0].size_bytes" = [256, 512]
"flows[1].size_bytes" = [128, 1024]
"#,
    )
    .unwrap();
    assert_eq!(s.len(), 2 * 2 * 2 * 3, "two keys x one zip group x seeds");
    assert_eq!(
        s.keys(),
        [
            "switch.alpha_log2",
            "switch.policy",
            "flows[0].size_bytes",
            "flows[1].size_bytes",
            "run.seed"
        ],
        "parameters in key order, then zip groups, then seeds"
    );
    let show = |i| {
        s.params(i)
            .iter()
            .map(|(_, v)| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(show(0), "-3 \"sih\" 256 128 1");
    assert_eq!(show(1), "-3 \"sih\" 256 128 2", "seeds innermost");
    assert_eq!(
        show(3),
        "-3 \"sih\" 512 1024 1",
        "a zip group steps together"
    );
    assert_eq!(show(23), "-1 \"dsh\" 512 1024 3");
    let sweep::Job::Scenario(r) = s.run(23).unwrap().job else {
        panic!("a scenario run")
    };
    assert_eq!(r.run.seed, 3);
    assert_eq!(r.flows[1].size_bytes, Some(1024));
}

#[test]
fn bad_specs_name_the_field_and_what_is_allowed() {
    let cases = [
        ("collect = [\"x\"]", "base: missing; allowed: a built-in"),
        ("base = \"nope\"\ncollect = [\"seed\"]", "base: \"nope\" is neither a built-in nor a file"),
        ("base = \"small-smoke\"", "collect: missing; allowed: schema_version"),
        ("base = \"small-smoke\"\ncollect = [\"speed\"]", "collect: \"speed\" is not a field of the runs; allowed: schema_version"),
        ("base = \"small-smoke\"\ncollect = [\"seed\"]\nbogus = 1", "bogus: unknown key; allowed: name, base, measure"),
        ("base = \"small-smoke\"\nmeasure = \"dsh-fig11\"\ncollect = [\"seed\"]", "measure: given with base; allowed: one of base and measure"),
        ("measure = \"nope\"\ncollect = [\"seed\"]", "measure: \"nope\" is not a measure; allowed: dsh-fig11"),
        ("measure = \"dsh-fig11\"\ncollect = [\"pause_frames\"]\n[parameters]\npolicy = [\"sih\"]", "parameters.burst_pct: missing; measure dsh-fig11 takes burst_pct, policy"),
        ("measure = \"dsh-fig11\"\ncollect = [\"pause_frames\"]\n[parameters]\npolicy = [\"sih\"]\nburst_pct = [5]\nalpha = [1]", "parameters.alpha: not a parameter of measure dsh-fig11; allowed: burst_pct, policy"),
        ("measure = \"dsh-fig11\"\ncollect = [\"cells_injected\"]\n[parameters]\npolicy = [\"sih\"]\nburst_pct = [5]", "collect: \"cells_injected\" is not a field of the runs; allowed: burst_bytes"),
        ("base = \"small-smoke\"\ncollect = [\"seed\"]\n[parameters]\n\"switch.policy\" = []", "parameters.switch.policy: an empty list; allowed: at least one value"),
        ("base = \"small-smoke\"\ncollect = [\"seed\"]\n[parameters]\n\"run.cycles\" = { from = 5, to = 1 }", "parameters.run.cycles: from 5 to 1 step 1; allowed: from <= to, step >= 1"),
        ("base = \"small-smoke\"\ncollect = [\"seed\"]\n[[zip]]\na = [1, 2]\nb = [1]", "zip[0].b: 1 values, but a has 2; allowed: the same length"),
        ("base = \"small-smoke\"\ncollect = [\"seed\"]\nseeds = [1]\n[parameters]\n\"run.seed\" = [2]", "run.seed: set by two parameters"),
        ("base = \"small-smoke\"\ncollect = [\"seed\"]\nseeds = [-1]", "seeds: -1 is not a seed; allowed: integers"),
    ];
    for (text, want) in cases {
        let e = spec(text).expect_err(text);
        assert!(e.starts_with(want), "{text:?}\n got: {e}\nwant: {want}");
    }
    // A value the scenario refuses: the run and the scenario's own error.
    let s = spec("base = \"small-smoke\"\ncollect = [\"seed\"]\n[parameters]\n\"switch.policy\" = [\"sih\", \"fifo\"]").unwrap();
    let e = s.runs().unwrap_err().to_string();
    assert!(
        e.starts_with("run 1 (switch.policy=\"fifo\"): switch.policy:")
            && e.contains("expected one of `sih`, `dsh`, `l2bm`"),
        "{e}"
    );
    // Two runs that resolve to the same scenario.
    let s = spec(
        "base = \"small-smoke\"\ncollect = [\"seed\"]\n[parameters]\n\"run.cycles\" = [100, 100]",
    )
    .unwrap();
    assert!(s
        .runs()
        .unwrap_err()
        .to_string()
        .contains("runs 0 and 1 resolve to the same scenario"));
}

#[test]
fn the_cli_refuses_a_bad_spec_with_exit_2() {
    let d = dir("cli-bad");
    let f = d.join("bad.toml");
    std::fs::write(&f, "base = \"small-smoke\"\ncollect = [\"speed\"]\n").unwrap();
    for args in [
        vec![
            "sweep",
            "run",
            f.to_str().unwrap(),
            "--out",
            d.to_str().unwrap(),
        ],
        vec![
            "sweep",
            "plan",
            f.to_str().unwrap(),
            "--out",
            d.to_str().unwrap(),
        ],
    ] {
        let o = mmu_sim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("collect: \"speed\" is not a field of the runs"),
            "{err}"
        );
    }
    std::fs::write(&f, SMALL).unwrap();
    let o = mmu_sim(&[
        "sweep",
        "run",
        f.to_str().unwrap(),
        "--out",
        d.to_str().unwrap(),
        "--shard",
        "3/3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--shard 3/3: allowed: I in 0..=N-1"));
}

#[test]
fn run_ids_are_stable_and_hash_the_resolved_scenario() {
    let s = spec(SMALL).unwrap();
    let ids: Vec<String> = s.runs().unwrap().into_iter().map(|r| r.id).collect();
    // Pinned: an id changes only with the resolved scenario or the tool version.
    assert_eq!(ids[0], "94834b388493ed34", "{ids:?}");
    let again: Vec<String> = spec(SMALL)
        .unwrap()
        .runs()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, again);
    // The same run reached through another spec (another name, axis order) has the same id.
    let other = spec(
        "name = \"other\"\nbase = \"small-smoke\"\ncollect = [\"seed\"]\n[parameters]\n\"run.cycles\" = [4000]\n\"run.seed\" = [2, 1]",
    )
    .unwrap();
    assert_eq!(other.run(1).unwrap().id, ids[0]);
    assert_ne!(other.run(0).unwrap().id, ids[0]);
}

#[test]
fn resume_skips_done_runs_and_redoes_a_corrupted_row() {
    let d = dir("resume");
    let s = spec(SMALL).unwrap();
    let first = run_all(&s, &d, Shard::ALL, 2);
    assert_eq!((first.planned, first.skipped, first.ran), (6, 0, 6));
    assert!(first.failed.is_empty(), "{:?}", first.failed);
    let (table, report) = merged(&d);
    assert!(report.missing.is_empty() && report.bad_rows.is_empty());
    let again = run_all(&s, &d, Shard::ALL, 2);
    assert_eq!((again.skipped, again.ran), (6, 0), "every run was done");

    // Corrupt one row (a changed number) and tear another (cut short, as by a kill).
    let file = d.join("rows/local.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[1] = lines[1].replacen("\"cells_injected\":", "\"cells_injected\":1", 1);
    let torn = lines.pop().unwrap();
    let torn = &torn[..torn.len() / 2];
    std::fs::write(&file, lines.join("\n") + "\n" + torn).unwrap();
    let (_, report) = merged(&d);
    assert_eq!(report.bad_rows.len(), 2, "{:?}", report.bad_rows);
    assert!(report.bad_rows[0].ends_with(":2: the check does not match (a corrupted row)"));
    assert_eq!(report.missing.len(), 2, "neither row counts");
    // A progress bar hears of the skipped runs and of each run done: it ends full.
    let ticks = std::sync::Mutex::new(Vec::new());
    let resumed = sweep::run(&s, &d, Shard::ALL, 1, &|t| {
        ticks.lock().unwrap().push(match t {
            Tick::Skipped(n) => n,
            Tick::Done(_) => 1,
        })
    })
    .unwrap();
    assert_eq!(
        (resumed.skipped, resumed.ran),
        (4, 2),
        "the two bad rows are run again"
    );
    assert_eq!(
        ticks.into_inner().unwrap(),
        [4, 1, 1],
        "skipped first, then each run"
    );
    assert_eq!(resumed.bad_rows.len(), 2);
    let (after, report) = merged(&d);
    assert!(report.missing.is_empty());
    assert_eq!(after, table, "the merged table is the same as before");
}

#[test]
fn shards_add_up_to_the_whole_and_merge_to_the_same_bytes() {
    let s = spec(SMALL).unwrap();
    let local = dir("local");
    run_all(&s, &local, Shard::ALL, 0);
    let (whole, _) = merged(&local);
    assert_eq!(whole.lines().count(), 1 + 6);
    let sharded = dir("sharded");
    let mut seen = Vec::new();
    for i in 0..4 {
        let r = run_all(&s, &sharded, Shard { index: i, count: 4 }, 1);
        seen.push(r.planned);
    }
    assert_eq!(seen, [2, 2, 1, 1], "every run in exactly one shard");
    let (table, report) = merged(&sharded);
    assert!(report.missing.is_empty() && report.failed.is_empty());
    assert_eq!(table, whole, "byte-identical, local or in shards");
    assert_eq!(
        whole.lines().next().unwrap(),
        "id,run.cycles,switch.policy,run.seed,cells_injected,cells_departed,pfc_pause_frames,drops_by_reason.lossy_threshold,status,error"
    );
}

#[test]
fn merge_reports_missing_runs_and_the_cli_exits_1() {
    let d = dir("missing");
    let f = d.join("small.toml");
    std::fs::write(&f, SMALL).unwrap();
    let out = d.join("out");
    let (fs, os) = (f.to_str().unwrap(), out.to_str().unwrap());
    let o = mmu_sim(&["sweep", "run", fs, "--out", os, "--shard", "0/2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = d.join("r.csv");
    let o = mmu_sim(&["sweep", "merge", os, "-o", csv.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("missing: run ").count(), 3, "{err}");
    assert!(err.contains("missing: run 1 ("), "{err}");
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap().lines().count(),
        1 + 3
    );
    let o = mmu_sim(&["sweep", "run", fs, "--out", os, "--shard", "1/2"]);
    assert!(o.status.success());
    let o = mmu_sim(&["sweep", "merge", os, "-o", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Another spec into the same directory is refused.
    std::fs::write(&f, SMALL.replace("[4000]", "[3000]")).unwrap();
    let o = mmu_sim(&["sweep", "run", fs, "--out", os]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds another sweep"));
}

#[test]
fn a_row_round_trips_and_any_change_breaks_its_check() {
    let s = spec(SMALL).unwrap();
    let run = s.run(0).unwrap();
    let row = sweep::execute(&run, &s.collect, Shard::ALL);
    let line = row.line();
    let back = Row::parse(line.trim_end()).unwrap();
    // serde_json reads a float back to within an ulp: the timings are metadata only.
    assert!((back.meta.cpu_seconds - row.meta.cpu_seconds).abs() < 1e-12);
    let back = Row {
        meta: row.meta.clone(),
        ..back
    };
    assert_eq!(back, row, "the rest comes back exactly");
    for (i, _) in line.trim_end().char_indices().step_by(7) {
        let mut bad = line.trim_end().to_string();
        bad.remove(i);
        assert!(
            Row::parse(&bad).is_err(),
            "a byte removed at {i} went unnoticed"
        );
    }
}

#[test]
fn slurm_script_runs_one_shard_per_array_task() {
    let d = dir("plan");
    let f = d.join("small.toml");
    std::fs::write(&f, SMALL).unwrap();
    let out = d.join("out");
    let o = mmu_sim(&[
        "sweep",
        "plan",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--emit",
        "slurm",
        "--runs-per-task",
        "4",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-1\n"), "{script}");
    assert!(
        script.contains("--shard \"$SLURM_ARRAY_TASK_ID/2\""),
        "{script}"
    );
    let manifest = sweep::Manifest::read(&out).unwrap();
    assert_eq!(manifest.runs.len(), 6);
}

#[test]
fn a_measured_spec_checks_its_values_and_builtin_specs_load_by_name() {
    let s = spec("measure = \"dsh-fig11\"\ncollect = [\"pause_frames\"]\n[parameters]\npolicy = [\"sih\"]\nburst_pct = [0]").unwrap();
    let e = s.runs().unwrap_err().to_string();
    assert!(
        e.starts_with(
            "run 0 (burst_pct=0, policy=\"sih\"): burst_pct: expected an integer; allowed: 1..=100"
        ),
        "{e}"
    );
    let b = Spec::load("dsh-fig11").unwrap();
    assert_eq!(b.len(), 24, "12 bursts x SIH and DSH");
    assert_eq!(b.keys(), ["burst_pct", "policy"]);
    assert_eq!(b.collect.len(), 6);
    // dsh-theorem: its 32 grid points as one zipped group of the point's 8 keys.
    let t = Spec::load("dsh-theorem").unwrap();
    assert_eq!((t.len(), t.axes.len(), t.keys().len()), (32, 1, 8));
    let e = spec("measure = \"dsh-theorem\"\ncollect = [\"cycles\"]\n[[zip]]\npolicy = [\"dsh\"]\nn = [1]\nm = [1]\nr = [0.5]\nalpha_log2 = [0]\nbuffer_bytes = [4194304]\neta_bytes = [16384]\nlossless_queues = [2]")
        .unwrap()
        .runs()
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("r: expected a number; allowed: above 1, at most 64"),
        "{e}"
    );
    // The HCF and L2BM reproductions: their runs, as the thread pools before had them
    // (L2BM: two transports, three policies, eight loads, three seeds).
    for (name, runs) in [
        ("hcf-bins", 11),
        ("hcf-starvation", 2),
        ("hcf-incast", 15 * 6 * 2),
        ("l2bm-hybrid", 2 * 3 * 8 * 3),
    ] {
        let b = Spec::load(name).unwrap();
        assert_eq!((b.name.as_str(), b.len()), (name, runs));
        assert_eq!(b.runs().unwrap().len(), runs, "{name}: every run checks");
    }
    let bins = Spec::load("hcf-bins").unwrap().runs().unwrap();
    let disc = |i: usize| {
        let p: std::collections::BTreeMap<_, _> = bins[i].params.iter().cloned().collect();
        (p["policy"].clone(), p["bins"].clone(), p["c0"].clone())
    };
    assert_eq!(
        disc(0),
        ("fifo".into(), 0.into(), 0.into()),
        "the FIFO reference"
    );
    assert_eq!(
        disc(10),
        ("hcf".into(), 20.into(), 16.into()),
        "the last c0"
    );
}

/// A measured spec of the HCF sweeps with `zip` as its discipline group.
fn hcf_spec(zip: &str) -> Result<Vec<sweep::Run>, String> {
    let setup = Spec::load("hcf-starvation").unwrap().params(0)[0].1.clone();
    spec(&format!(
        "measure = \"hcf-vb\"\ncollect = [\"starved_pct\"]\n[parameters]\nsetup = [{setup}]\n[[zip]]\n{zip}"
    ))?
    .runs()
    .map_err(|e| e.to_string())
}

#[test]
fn the_hcf_and_l2bm_measures_refuse_bad_values_naming_the_field() {
    assert_eq!(
        hcf_spec("policy = [\"hcf\"]\nbins = [20]\nc0 = [1]")
            .unwrap()
            .len(),
        1
    );
    for (zip, want) in [
        (
            "policy = [\"fifo\"]\nbins = [3]\nc0 = [0]",
            "bins: fifo has no bins or credits; allowed: bins = 0, c0 = 0",
        ),
        (
            "policy = [\"hcf\"]\nbins = [0]\nc0 = [1]",
            "bins: hcf takes K bins and c0 credits; allowed: bins >= 1, c0 >= 1",
        ),
        (
            "policy = [\"red\"]\nbins = [1]\nc0 = [1]",
            "policy: expected a string; allowed: fifo, hcf, hcf-conference",
        ),
        (
            "policy = [\"hcf-conference\"]\nbins = [0]\nc0 = [1]",
            "bins: hcf takes K bins and c0 credits; allowed: bins >= 1, c0 >= 1",
        ),
        (
            "policy = [\"hcf\"]\nbins = [-1]\nc0 = [1]",
            "bins: expected an integer; allowed: 0..=2^32-1",
        ),
    ] {
        let e = hcf_spec(zip).unwrap_err();
        assert!(e.ends_with(want), "{zip}: {e}");
    }
    let l2bm = Spec::load("l2bm-hybrid").unwrap();
    let setup = l2bm
        .params(0)
        .into_iter()
        .find(|(k, _)| k == "setup")
        .unwrap()
        .1;
    let l = |policy: &str, load: &str, transport: &str| {
        spec(&format!("measure = \"l2bm-hybrid\"\nseeds = [1]\ncollect = [\"pause_frames\"]\n[parameters]\nsetup = [{setup}]\npolicy = [{policy}]\ntcp_load = [{load}]\ntransport = [{transport}]"))
            .unwrap()
            .runs()
            .map(|r| r.len())
            .map_err(|e| e.to_string())
    };
    assert_eq!(l("\"l2bm\"", "0.5", "\"dcqcn-dctcp\""), Ok(1));
    let e = l("\"l2bm\"", "1.5", "\"dcqcn-dctcp\"").unwrap_err();
    assert!(
        e.ends_with("tcp_load: expected a number; allowed: (0, 1]"),
        "{e}"
    );
    let e = l("\"dt\"", "0.5", "\"dcqcn-dctcp\"").unwrap_err();
    assert!(
        e.ends_with("policy: allowed: dt_alpha_1_8, dt_alpha_1_2, l2bm"),
        "{e}"
    );
    let e = l("\"l2bm\"", "0.5", "\"dctcp\"").unwrap_err();
    assert!(
        e.ends_with("transport: allowed: open-loop-reno, dcqcn-dctcp"),
        "{e}"
    );
}

#[test]
fn measured_floats_come_back_from_a_row_bit_for_bit() {
    use study::reproduce::{from_fields, to_fields};
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct M {
        x: f64,
        xs: Vec<f64>,
        p: u64,
    }
    // Awkward doubles: many digits, extremes, subnormals, and a spread of bit patterns.
    let mut xs = vec![
        0.1 + 0.2,
        1.0 / 3.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        -0.0,
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
    ];
    let mut z = 0x9E37_79B9_7F4A_7C15u64;
    while xs.len() < 20_000 {
        z = z
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let x = f64::from_bits(z);
        if x.is_finite() {
            xs.push(x);
        }
    }
    let m = M { x: xs[0], xs, p: 7 };
    let fields = to_fields(&m, &["x", "xs"]).unwrap();
    let row = Row {
        id: "0".into(),
        index: 0,
        params: Default::default(),
        status: sweep::Status::Ok,
        error: String::new(),
        fields,
        meta: sweep::RowMeta {
            tool_version: "t".into(),
            shard: "0/1".into(),
            wall_seconds: 0.0,
            cpu_seconds: 0.0,
        },
    };
    let back = Row::parse(row.line().trim_end()).unwrap();
    let got: M = from_fields(&back.fields, [("p", 7.into())]).unwrap();
    assert!(got
        .xs
        .iter()
        .zip(&m.xs)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert_eq!(got, m);
    assert_eq!(
        to_fields(&m, &["y"]).unwrap_err(),
        "y: not a measured field"
    );
}

#[test]
fn the_collectable_fields_are_the_summarys_keys_but_run() {
    let scenario = scenario::builtin::load("small-smoke").unwrap();
    let mut sim = switch_run::Sim::new(
        &scenario,
        scenario::Overrides {
            cycles: Some(100),
            ..Default::default()
        },
    )
    .unwrap();
    let json = serde_json::to_value(sim.run(|_| {}).unwrap()).unwrap();
    let keys = keys_but_run(&json);
    // `ecn` is left out of a summary without ECN, as small-smoke's.
    let mut fields: Vec<&str> = sweep::spec::SUMMARY_FIELDS
        .iter()
        .copied()
        .filter(|f| *f != "ecn")
        .collect();
    fields.sort_unstable();
    assert_eq!(fields, keys);
}

/// A summary's top-level keys but its machine-dependent `run`, sorted.
fn keys_but_run(json: &serde_json::Value) -> Vec<&str> {
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "run")
        .collect();
    keys.sort_unstable();
    keys
}

/// Two ECMP seeds of the two-switch network `dsh-collateral-fabric`, 3000 cycles each.
const NETWORK: &str = r#"
base = "dsh-collateral-fabric"
collect = ["flows", "cells_injected", "conservation_ok", "switches[1].cells_in"]
[parameters]
"fabric.ecmp_seed" = [1, 2]
run.cycles = [3000]
"#;

#[test]
fn a_network_base_runs_each_point_through_the_fabric() {
    let s = spec(NETWORK).unwrap();
    let runs = s.runs().unwrap();
    // The runs differ only in a `[fabric]` key: their ids differ (the companion: a hash
    // without `[fabric]` gives one id, refused as a repeated value).
    assert_ne!(runs[0].id, runs[1].id);
    assert!(matches!(runs[0].job, sweep::Job::Network(..)));
    let d = dir("network");
    let report = run_all(&s, &d, Shard::ALL, 1);
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let (table, _) = merged(&d);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{table}");
    for r in rows {
        let cells: Vec<&str> = r.split(',').collect();
        // 26 flows; both runs move cells and keep every one.
        assert_eq!(cells[3], "26", "{r}");
        assert!(cells[4].parse::<u64>().unwrap() > 0, "{r}");
        assert_eq!(cells[5], "true", "{r}");
    }
    // A single switch's field is not a network's.
    let bad = spec(&NETWORK.replace("\"flows\"", "\"pfc_pause_frames\"")).unwrap_err();
    assert!(
        bad.contains("\"pfc_pause_frames\" is not a field of the runs"),
        "{bad}"
    );
}

#[test]
fn the_collectable_network_fields_are_the_fabric_summarys_keys_but_run() {
    // With congestion points, so that the summary has its `ecm`.
    let mut s = scenario::builtin::load("dsh-collateral-fabric").unwrap();
    s.switch.ecm.priorities = vec![3];
    let ov = fabric::build::Overrides {
        cycles: Some(100),
        policy: None,
    };
    let mut built = fabric::build::build(&s, Path::new("."), ov).unwrap();
    let json = serde_json::to_value(built.net.run(&built.options).unwrap()).unwrap();
    let mut fields = sweep::spec::FABRIC_SUMMARY_FIELDS.to_vec();
    fields.sort_unstable();
    assert_eq!(fields, keys_but_run(&json));
}
