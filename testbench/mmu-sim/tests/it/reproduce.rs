//! Paper reproductions: their numbers, their files, and the `reproduce` command line. The
//! ECM and L2BM ones are in `reproduce/ecm.rs` and `reproduce/l2bm.rs`, the HCF ones under
//! ns-2's TCP in `reproduce/hcf.rs`.

#[path = "reproduce/ecm.rs"]
mod ecm;
#[path = "reproduce/hcf.rs"]
mod hcf;
#[path = "reproduce/l2bm.rs"]
mod l2bm;
#[path = "reproduce/network.rs"]
mod network;

use crate::common::mmu_sim;
use hw_model::Policy;
use std::path::PathBuf;
use study::reproduce::plot::{xy_chart, Series};
use study::reproduce::{dsh_fig11, hcf_bins, hcf_incast, hcf_starvation, headroom, NoProgress};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmu-repro-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn row<'a>(rows: &'a [headroom::Row], chip: &str, quantity: &str) -> &'a headroom::Row {
    rows.iter()
        .find(|r| r.chip == chip && r.quantity.starts_with(quantity))
        .unwrap_or_else(|| panic!("no row {chip} / {quantity}"))
}

#[test]
fn headroom_matches_the_papers_examples() {
    let rows = headroom::rows().unwrap();
    // Trident2: eta = 2 (40G * 1.5 us + 1500) + 3840 = 21840 B; 32 * 8 * eta = 5.33 MiB = 44.4 %.
    assert_eq!(row(&rows, "trident2", "eta").bytes, 21_840);
    let sih = row(&rows, "trident2", "SIH headroom");
    assert_eq!(sih.bytes, 5_591_040);
    assert_eq!(
        format!("{:.2}", sih.bytes as f64 / (1 << 20) as f64),
        "5.33"
    );
    assert_eq!(format!("{:.1}", sih.pct_of_buffer), "44.4");
    // Tomahawk: eta = 56840 B (274 cells of 208 B as the paper rounds, 307 sized for MTU
    // packets: floor(56840 * 8 / 1520) + 8); SIH 56840 * 32 * 7 = 12.1 MiB; DSH 32 * eta.
    let eta = row(&rows, "tomahawk", "eta");
    assert_eq!(
        (eta.bytes, eta.model_cells, eta.cells_mode_cells),
        (56_840, 274, 307)
    );
    assert_eq!(
        row(&rows, "tomahawk", "SIH headroom").cells_mode_cells,
        307 * 32 * 7
    );
    let sih = row(&rows, "tomahawk", "SIH headroom");
    assert_eq!(sih.bytes, 56_840 * 32 * 7);
    assert_eq!(sih.model_cells, 274 * 32 * 7);
    assert_eq!(format!("{:.0}", sih.bytes as f64 / (1 << 20) as f64), "12");
    let dsh = row(&rows, "tomahawk", "DSH insurance");
    assert_eq!((dsh.bytes, dsh.model_cells), (56_840 * 32, 274 * 32));
}

#[test]
fn fig11_machinery_one_burst_both_policies() {
    let dir = scratch("fig11");
    let points = dsh_fig11::sweep(&dir, &[10], &mut NoProgress).unwrap();
    assert_eq!(points.len(), 2);
    let csv = std::fs::read_to_string(dir.join("fig11.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some(dsh_fig11::CSV_HEADER));
    assert_eq!(csv.lines().count(), 3);
    let by = |p: Policy| points.iter().find(|x| x.policy == p).unwrap();
    let (sih, dsh) = (by(Policy::Sih), by(Policy::Dsh));
    assert!(
        sih.background_pauses_before_burst > 0,
        "background not settled"
    );
    assert!(
        dsh.pause_duration_ns <= sih.pause_duration_ns,
        "{dsh:?} vs {sih:?}"
    );
    assert!(dsh.pause_frames <= sih.pause_frames, "{dsh:?} vs {sih:?}");
    assert!(sih.pause_frames > 0, "SIH pauses a 10 % burst: {sih:?}");
    assert!(std::fs::metadata(dir.join("fig11.png")).unwrap().len() > 0);
}

#[test]
fn plot_writes_a_png() {
    let path = scratch("plot").join("t.png");
    let line = |name: &str, line| Series {
        name: name.into(),
        points: vec![(5.0, 0.0), (10.0, 100.0), (20.0, 900.0)],
        line,
    };
    xy_chart(&path, "t", "x", "y", &[line("a", true), line("b", false)]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn cli_unknown_reproduction_exits_2_naming_the_allowed_ones() {
    let dir = scratch("cli-unknown");
    let out = mmu_sim(&["reproduce", "nope", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("headroom") && err.contains("dsh-fig11"),
        "{err}"
    );
}

#[test]
fn cli_unwritable_out_exits_2() {
    let dir = scratch("cli-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("sub");
    let out = mmu_sim(&["reproduce", "headroom", "--out", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
}

#[test]
fn cli_headroom_prints_the_table_and_writes_the_csv() {
    let dir = scratch("cli-headroom");
    let out = mmu_sim(&["reproduce", "headroom", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5591040") && text.contains("56840"), "{text}");
    assert!(dir.join("headroom.csv").exists());
}

/// A quick V-B setup: 40 flows, 1 s of warm-up, a 1 s window.
fn quick_starvation() -> hcf_starvation::Setup {
    hcf_starvation::Setup {
        flows: 40,
        warmup_s: 1.0,
        window_s: 1.0,
        start_spread_s: 0.2,
        ..hcf_starvation::Setup::paper()
    }
}

/// The data lines of a CSV whose first line must be `header`, split at commas.
fn csv_rows(path: &std::path::Path, header: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(header), "{}", path.display());
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn num(s: &str) -> f64 {
    let v: f64 = s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"));
    assert!(v.is_finite(), "{s}");
    v
}

fn assert_png(path: &std::path::Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
}

#[test]
fn hcf_starvation_quick_writes_both_policies_and_fifo_tail_drops_at_b() {
    let dir = scratch("hcf-starvation");
    let setup = quick_starvation();
    let runs = hcf_starvation::compare(&dir, &setup, &mut NoProgress).unwrap();
    let rows = csv_rows(&dir.join("starvation.csv"), hcf_starvation::CSV_HEADER);
    let policies: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(policies, ["fifo", "hcf"]);
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?}");
        assert_eq!(r[1], "40");
        assert_eq!(num(&r[2]), 1.0);
        let starved = num(&r[3]);
        assert!((0.0..=100.0).contains(&starved), "{r:?}");
        assert!(
            num(&r[4]) > 0.0,
            "someone is luckier than someone else: {r:?}"
        );
        let util = num(&r[5]);
        assert!(
            (0.9..=1.001).contains(&util),
            "the bottleneck stays busy: {r:?}"
        );
    }
    let flows = csv_rows(
        &dir.join("starvation_flows.csv"),
        hcf_starvation::FLOWS_CSV_HEADER,
    );
    assert_eq!(flows.len(), 2 * setup.flows);
    // The per-flow file adds up to the summary.
    for r in &runs {
        let sum: u64 = r.flows.iter().map(|f| f.packets).sum();
        assert!((r.mean_packets * setup.flows as f64 - sum as f64).abs() < 1e-6);
        assert!(
            r.max_queue <= hcf_starvation::BUFFER_PACKETS,
            "{:?}",
            r.disc
        );
    }
    let (fifo, hcf) = (&runs[0], &runs[1]);
    // Drop-tail at B: the FIFO fills to exactly 20 and (but for the DT register's one-cycle
    // lag) drops only when full.
    assert_eq!(fifo.max_queue, hcf_starvation::BUFFER_PACKETS);
    assert!(
        fifo.window_drops.iter().sum::<u64>() > 0,
        "40 flows overflow 20 packets"
    );
    assert!(fifo.pct_drops_at_b > 95.0, "{}", fifo.pct_drops_at_b);
    assert_eq!(fifo.periods, 0);
    // HCF: its own limits bind (LP full below B), priority periods turn over.
    assert!(hcf.min_queue_at_drop < hcf_starvation::BUFFER_PACKETS);
    assert!(hcf.periods > 0 && hcf.hp_pct > 0.0, "{hcf:?}");
    assert_png(&dir.join("starvation.png"));
}

#[test]
fn hcf_incast_quick_sweep_rows_and_the_uncontended_point() {
    let dir = scratch("hcf-incast");
    let setup = hcf_incast::Setup {
        servers: vec![1, 8],
        block_bytes: 100_000,
        jitter_trials: 1,
        ..hcf_incast::Setup::paper()
    };
    let points = hcf_incast::sweep(&dir, "hcf-incast", &setup, &mut NoProgress).unwrap();
    assert_eq!(points.len(), 2 * 2 * 2);
    let rows = csv_rows(&dir.join("incast.csv"), hcf_incast::CSV_HEADER);
    let keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        keys,
        [("fifo", "1"), ("fifo", "8"), ("hcf", "1"), ("hcf", "8")]
    );
    for r in &rows {
        let n: u64 = r[1].parse().unwrap();
        assert_eq!(r[2].parse::<u64>().unwrap(), 100_000 / n * n);
        let goodput = num(&r[3]);
        assert!(goodput > 0.0 && goodput < 1000.0, "{r:?}");
        let fct = num(&r[4]);
        // Goodput is the block over the longest completion time.
        let expect = num(&r[2]) * 8.0 / (fct * 1e-3) / 1e6;
        assert!((goodput - expect).abs() < 0.01 * expect + 0.01, "{r:?}");
        r[5].parse::<u64>().unwrap();
        if n == 1 {
            // One server alone: no loss; slow start from 2 packets over 100 packets keeps
            // it below the 1 Gb/s line.
            assert!(goodput > 500.0, "{r:?}");
            assert_eq!(r[5], "0");
        }
    }
    let jitter = csv_rows(
        &dir.join("incast_jitter.csv"),
        hcf_incast::JITTER_CSV_HEADER,
    );
    assert_eq!(jitter.len(), 4);
    assert_png(&dir.join("incast.png"));
    assert_png(&dir.join("incast_fct.png"));
}

/// The `karn` of each TCP flow in `text`.
fn tcp_karn(text: &str) -> Vec<bool> {
    let plan = scenario::Scenario::parse(text, "t")
        .unwrap()
        .plan(&scenario::Overrides::default())
        .unwrap();
    plan.flows
        .iter()
        .filter_map(|f| match f.pattern {
            scenario::Pattern::Tcp(t) => Some(t.karn),
            _ => None,
        })
        .collect()
}

#[test]
fn hcf_reproductions_take_karns_rule_into_their_scenarios() {
    use study::reproduce::hcf::Discipline;
    let paper = hcf_starvation::Setup::paper();
    assert!(paper.karn, "ns-2's TCP backs off with Karn's rule");
    assert!(hcf_incast::Setup::paper().karn);
    assert!(hcf_bins::sweep_setup().karn);
    for karn in [false, true] {
        let s = hcf_starvation::Setup { karn, ..paper };
        assert_eq!(tcp_karn(&s.scenario(Discipline::Fifo)), vec![karn; s.flows]);
        let s = hcf_incast::Setup {
            karn,
            ..hcf_incast::Setup::paper()
        };
        assert_eq!(tcp_karn(&s.scenario(4, Discipline::Fifo, 0)), vec![karn; 4]);
    }
}

#[test]
fn hcf_bins_quick_sweep_rows_and_plots() {
    let dir = scratch("hcf-bins");
    let setup = hcf_starvation::Setup {
        flows: 20,
        window_s: 0.5,
        ..quick_starvation()
    };
    let runs = hcf_bins::sweep(&dir, &setup, &[1, 20], &[1, 4], &mut NoProgress).unwrap();
    assert_eq!(
        runs.len(),
        4,
        "FIFO, K = 1, the K = 20 / c0 = 1 baseline once, c0 = 4"
    );
    let rows = csv_rows(&dir.join("bins.csv"), hcf_bins::CSV_HEADER);
    let keys: Vec<String> = rows
        .iter()
        .map(|r| format!("{}:{}:{}:{}", r[0], r[1], r[2], r[3]))
        .collect();
    assert_eq!(
        keys,
        [
            "fifo:reference::",
            "hcf:bins:1:1",
            "hcf:bins+c0:20:1",
            "hcf:c0:20:4"
        ]
    );
    for r in &rows {
        assert!((0.0..=100.0).contains(&num(&r[6])), "{r:?}");
        assert!(num(&r[7]) >= 0.0, "{r:?}");
        assert!((0.9..=1.001).contains(&num(&r[8])), "{r:?}");
    }
    for f in ["k_starved", "k_variance", "c0_starved", "c0_variance"] {
        assert_png(&dir.join(format!("bins_{f}.png")));
    }
}

#[test]
fn cli_lists_every_reproduction() {
    let out = mmu_sim(&["reproduce", "--list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "headroom",
        "dsh-theorem",
        "dsh-fig11",
        "collateral",
        "hcf-starvation",
        "hcf-starvation-ns2",
        "hcf-incast",
        "hcf-incast-ns2",
        "hcf-bins",
        "ecm-fig1",
        "ecm-severe",
        "ecm-two-cps",
        "l2bm-hybrid",
    ] {
        assert!(text.contains(name), "{text}");
    }
    // Aligned: after the longest name and two spaces, a CPU time right-aligned in six
    // columns ("<1 s", "21 s", "3 min"), then every description in one column.
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
    let longest = rows
        .iter()
        .map(|l| l[2..].split(' ').next().unwrap().len())
        .max();
    let time = longest.unwrap() + 4;
    let column = time + 8;
    for row in &rows {
        let cpu = row[time..time + 6].trim_start();
        assert!(
            row[..time].ends_with("  ")
                && (cpu == "<1 s" || cpu.ends_with(" s") || cpu.ends_with(" min"))
                && cpu[..cpu.find(' ').unwrap()]
                    .trim_start_matches('<')
                    .parse::<u32>()
                    .is_ok()
                && row[..column].ends_with("  ")
                && !row[column..].starts_with(' '),
            "{text}"
        );
    }
}
