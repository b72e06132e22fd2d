//! The HCF reproductions under ns-2's TCP with flows starting together
//! (`hcf-starvation-ns2`, `hcf-incast-ns2`; issue 14 item 7) on quick setups: their sweep
//! specs, the start jitter a seed draws, runs over seeds with their tables, and the check
//! that a run's measures agree with each other (with a companion that breaks a run).

use super::{assert_png, csv_rows, num, scratch};
use scenario::Ns2Keys;
use study::reproduce::hcf::{Discipline, Tcp};
use study::reproduce::hcf_starvation::{self, Setup, SEEDS_CSV_HEADER, SPREAD_CSV_HEADER};
use study::reproduce::{hcf_incast, NoProgress};
use study::sweep::Spec;

/// The `start_cycle` of every flow of a scenario text, in order.
fn starts(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.strip_prefix("start_cycle = "))
        .map(|v| v.parse().unwrap())
        .collect()
}

/// The `setup` of a spec's first run.
fn first_setup(spec: &Spec) -> toml::Value {
    spec.params(0)
        .into_iter()
        .find(|p| p.0 == "setup")
        .unwrap()
        .1
}

#[test]
fn ns2_specs_parse_and_the_old_specs_keep_their_setups() {
    let runs = Spec::load("hcf-starvation-ns2").unwrap().runs().unwrap();
    let mut grid: Vec<(String, f64, u64)> = runs
        .iter()
        .map(|r| {
            let v = |k: &str| r.params.iter().find(|p| p.0 == k).unwrap().1.clone();
            let setup = v("setup");
            assert_eq!(setup["tcp"], "ns2", "{setup}");
            assert_eq!(setup["start_jitter_us"], 20, "{setup}");
            assert_eq!(setup["window_s"], 10.0);
            assert_eq!(setup["warmup_s"], 170.0, "the paper's 3 minutes");
            let seed = setup.get("seed").map_or(1, |s| s.as_u64().unwrap());
            let policy = v("policy").as_str().unwrap().to_string();
            (policy, setup["start_spread_s"].as_f64().unwrap(), seed)
        })
        .collect();
    assert_eq!(grid.len(), 18);
    grid.sort_by(|a, b| a.partial_cmp(b).unwrap());
    grid.dedup();
    assert_eq!(grid.len(), 18, "2 disciplines x 3 spreads x 3 seeds");
    for spread in [0.0, 0.01, 1.0] {
        assert_eq!(grid.iter().filter(|g| g.1 == spread).count(), 6);
    }
    let incast = Spec::load("hcf-incast-ns2").unwrap();
    assert_eq!(incast.len(), 15 * 6 * 2);
    let setup = first_setup(&incast);
    assert_eq!(setup.get("tcp").and_then(|t| t.as_str()), Some("ns2"));
    // The variants before the option: no new key in their setups, so their runs keep
    // their ids (and rows).
    for name in ["hcf-starvation", "hcf-incast", "hcf-bins"] {
        let setup = first_setup(&Spec::load(name).unwrap());
        for key in ["tcp", "seed", "start_jitter_us"] {
            assert!(setup.get(key).is_none(), "{name}: {key} in {setup}");
        }
    }
}

#[test]
fn ns2_scenarios_start_together_with_a_jitter_the_seed_draws() {
    let text = |spread, seed| Setup::ns2(spread, seed).scenario(Discipline::Fifo);
    let a = text(0.0, 1);
    assert!(a.contains("flavor = \"ns2\""), "{a}");
    assert!(!a.contains("min_rto_us") && !a.contains("karn"));
    let s1 = starts(&a);
    assert_eq!(s1.len(), 400);
    // 20 us of jitter at 1 MHz: together, in a different order per seed.
    assert!(s1.iter().all(|&c| c < 20), "{s1:?}");
    assert!(s1.iter().collect::<std::collections::BTreeSet<_>>().len() > 10);
    assert_eq!(a, text(0.0, 1), "same seed, same scenario");
    let b = text(0.0, 2);
    assert_ne!(starts(&b), s1);
    assert!(b.contains("seed = 2") && a.contains("seed = 1"));
    // 10 ms: flow i at 25 i us plus its jitter.
    for (i, c) in starts(&text(0.01, 1)).into_iter().enumerate() {
        assert!(
            (25 * i as u64..25 * i as u64 + 20).contains(&c),
            "flow {i}: {c}"
        );
    }
    // The model variant is as before: 2.5 ms apart, no jitter, the model's keys.
    let p = Setup::paper().scenario(Discipline::Fifo);
    assert_eq!(starts(&p), (0..400).map(|i| 2500 * i).collect::<Vec<u64>>());
    assert!(p.contains("karn = true") && !p.contains("flavor"));
    assert_eq!(Setup::paper().tcp, Tcp::Model);
}

/// V-B under ns-2's TCP at a tenth of the size: 40 flows, 4 s of warm-up, a 2 s window.
fn quick(seed: u64) -> Setup {
    Setup {
        flows: 40,
        warmup_s: 4.0,
        window_s: 2.0,
        ..Setup::ns2(0.0, seed)
    }
}

#[test]
fn quick_ns2_runs_over_seeds_write_both_tables_and_agree_with_themselves() {
    let dir = scratch("hcf-starvation-ns2");
    let runs =
        hcf_starvation::compare_seeds(&dir, "quick-ns2", &[quick(1), quick(2)], &mut NoProgress)
            .unwrap();
    let keys: Vec<(&str, u64)> = runs.iter().map(|r| (r.disc.name(), r.setup.seed)).collect();
    assert_eq!(keys, [("fifo", 1), ("hcf", 1), ("fifo", 2), ("hcf", 2)]);
    for r in &runs {
        r.consistent().unwrap();
        assert!(r.link_utilization > 0.9, "{}", r.link_utilization);
        let s = r.silences;
        assert!(s.tcp_packets > 0 && s.tcp_dropped > 0, "{s:?}");
    }
    // HCF puts packets after a silence in HP; FIFO has no HP.
    assert_eq!(runs[0].silences.after_silence_hp, 0);
    assert!(
        runs[1].silences.after_silence_hp > 0,
        "{:?}",
        runs[1].silences
    );
    let packets = |r: &hcf_starvation::Run| r.flows.iter().map(|f| f.packets).collect::<Vec<_>>();
    assert_ne!(
        packets(&runs[0]),
        packets(&runs[2]),
        "the seed changes the run"
    );
    let rows = csv_rows(&dir.join("starvation_seeds.csv"), SEEDS_CSV_HEADER);
    assert_eq!(rows.len(), 4);
    for (row, r) in rows.iter().zip(&runs) {
        assert_eq!(
            (row[0].as_str(), row[1].as_str(), row[3].as_str()),
            (r.disc.name(), "ns2", &*r.setup.seed.to_string())
        );
        assert!((num(&row[4]) - r.starved_pct).abs() < 0.01);
    }
    let spread = csv_rows(&dir.join("starvation_spread.csv"), SPREAD_CSV_HEADER);
    assert_eq!(spread.len(), 2 * hcf_starvation::SEED_MEASURES.len());
    assert_png(&dir.join("starvation_spread.png"));
    for row in &spread {
        assert_eq!(
            (row[1].as_str(), row[2].as_str(), row[3].as_str()),
            ("ns2", "0", "2")
        );
        let (mean, std, min, max) = (num(&row[5]), num(&row[6]), num(&row[7]), num(&row[8]));
        assert!(
            min <= mean + 1e-3 && mean <= max + 1e-3 && std <= (max - min) / 2.0 + 1e-3,
            "{row:?}"
        );
    }
    let fifo_starved = spread
        .iter()
        .find(|r| r[0] == "fifo" && r[4] == "starved_pct")
        .unwrap();
    let want = (runs[0].starved_pct + runs[2].starved_pct) / 2.0;
    assert!(
        (num(&fifo_starved[5]) - want).abs() < 1e-3,
        "{fifo_starved:?}"
    );
}

#[test]
fn the_consistency_check_catches_a_run_whose_measures_disagree() {
    let dir = scratch("hcf-starvation-ns2-broken");
    let runs = hcf_starvation::compare_seeds(&dir, "broken", &[quick(3)], &mut NoProgress).unwrap();
    let good = &runs[0];
    good.consistent().unwrap();
    let broken = |f: &dyn Fn(&mut hcf_starvation::Run)| {
        let mut r = good.clone();
        f(&mut r);
        r.consistent().unwrap_err().to_string()
    };
    // A flow counted as starved whose packets the gap tracker saw in the window.
    let e = broken(&|r| {
        r.flows[0].packets = 0;
        r.flows[0].longest_gap_s = 0.5;
    });
    assert!(e.contains("flow 0 has no packet"), "{e}");
    let e = broken(&|r| r.link_utilization *= 0.9);
    assert!(e.contains("utilization"), "{e}");
    let e = broken(&|r| r.starved_pct += 2.5);
    assert!(e.contains("starved"), "{e}");
    let e = broken(&|r| r.silences.after_silence_dropped = r.silences.after_silence + 1);
    assert!(e.contains("silences"), "{e}");
}

#[test]
fn ns2_incast_quick_sweep_rows_ranges_and_the_syn_round_trip() {
    let dir = scratch("hcf-incast-ns2");
    let quick = |tcp| hcf_incast::Setup {
        servers: vec![1, 8],
        block_bytes: 100_000,
        jitter_trials: 2,
        cap_s: 60.0,
        tcp,
        ..hcf_incast::Setup::paper()
    };
    let ns2 = quick(Tcp::Ns2);
    let points = hcf_incast::sweep(&dir, "quick-incast-ns2", &ns2, &mut NoProgress).unwrap();
    assert_eq!(points.len(), 2 * 3 * 2);
    let jitter = csv_rows(
        &dir.join("incast_jitter.csv"),
        hcf_incast::JITTER_CSV_HEADER,
    );
    assert_eq!(jitter.len(), 4);
    for r in &jitter {
        let (mean, min, max) = (num(&r[3]), num(&r[7]), num(&r[8]));
        assert!(min <= mean + 0.01 && mean <= max + 0.01, "{r:?}");
        assert_eq!(r[6], "2");
    }
    // One server alone loses nothing; under ns-2 it first sends a SYN and waits for its
    // ACK (one round trip, 109 us here) with a window of 1, so it finishes later than
    // the model's TCP, which starts with 2 packets at once.
    let model = hcf_incast::Setup {
        servers: vec![1],
        jitter_trials: 0,
        ..quick(Tcp::Model)
    };
    let m = hcf_incast::sweep(
        &scratch("hcf-incast-model"),
        "quick-incast-model",
        &model,
        &mut NoProgress,
    )
    .unwrap();
    let alone = |ps: &[hcf_incast::Point]| hcf_incast::together(ps, "fifo", 1).unwrap().clone();
    let (n, m) = (alone(&points), alone(&m));
    assert_eq!((n.timeouts, m.timeouts, n.drops), (0, 0, 0));
    assert!(
        n.max_fct_ms >= m.max_fct_ms + 0.109,
        "ns-2 {} ms, model {} ms",
        n.max_fct_ms,
        m.max_fct_ms
    );
}

#[test]
fn the_spec_files_of_the_comparison_runs_parse_to_their_variants() {
    let no_start_up = Ns2Keys {
        syn: Some(false),
        rtxcur_init_s: Some(0.2),
        ..Ns2Keys::default()
    };
    let capped = Ns2Keys {
        maxrto_s: Some(12.8),
        ..no_start_up
    };
    for (file, variants) in [
        (
            "hcf-starvation-model-together.toml",
            vec![(Tcp::Model, Ns2Keys::default())],
        ),
        (
            "hcf-starvation-ns2-variants.toml",
            vec![(Tcp::Ns2, no_start_up), (Tcp::Ns2, capped)],
        ),
    ] {
        let path = format!("{}/../../sweeps/{file}", env!("CARGO_MANIFEST_DIR"));
        let runs = Spec::read(std::path::Path::new(&path))
            .unwrap()
            .runs()
            .unwrap();
        assert_eq!(runs.len(), 6 * variants.len(), "{file}");
        let setups: Vec<Setup> = runs
            .iter()
            .map(|r| {
                let json = r.params.iter().find(|p| p.0 == "setup").unwrap().1.clone();
                serde_json::from_value(json).unwrap()
            })
            .collect();
        // Per variant, seeds 1-3, each under FIFO and HCF; the rest is hcf-starvation-ns2's
        // spread 0.
        for (i, s) in setups.iter().enumerate() {
            let (tcp, ns2) = variants[i / 6];
            let seed = (i % 6 / 2 + 1) as u64;
            assert_eq!(
                *s,
                Setup {
                    tcp,
                    ns2,
                    ..Setup::ns2(0.0, seed)
                },
                "{file} run {i}"
            );
        }
    }
    // More credits: HCF with c0 = 2 and 4 on hcf-starvation-ns2's spreads 0 and 1 s.
    let path = format!(
        "{}/../../sweeps/hcf-starvation-ns2-credits.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let runs = Spec::read(std::path::Path::new(&path))
        .unwrap()
        .runs()
        .unwrap();
    let got: Vec<(Setup, String, u64)> = runs
        .iter()
        .map(|r| {
            let v = |k: &str| r.params.iter().find(|p| p.0 == k).unwrap().1.clone();
            (
                serde_json::from_value(v("setup")).unwrap(),
                v("policy").as_str().unwrap().to_string(),
                v("c0").as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(Setup, String, u64)> = hcf_starvation::ns2_setups(&[0.0, 1.0], &[1, 2, 3])
        .into_iter()
        .flat_map(|s| [2, 4].map(|c0| (s, "hcf".to_string(), c0)))
        .collect();
    assert_eq!(got, want);
    let text = Setup {
        ns2: capped,
        ..Setup::ns2(0.0, 1)
    }
    .scenario(Discipline::Hcf(hcf_starvation::BASELINE));
    assert!(
        text.contains("flavor = \"ns2\", syn_ = false, rtxcur_init_ = 0.2, maxrto_ = 12.8"),
        "{text}"
    );
    // The model's TCP refuses ns-2's keys: the run's check names the key.
    let bad = Setup {
        ns2: capped,
        ..Setup::paper()
    };
    let plan = scenario::Scenario::parse(&bad.scenario(Discipline::Fifo), "bad")
        .and_then(|s| s.plan(&scenario::Overrides::default()).map(|_| ()));
    let e = plan
        .expect_err("ns-2's keys refused with the model's TCP")
        .to_string();
    assert!(e.contains("syn_"), "{e}");
}
