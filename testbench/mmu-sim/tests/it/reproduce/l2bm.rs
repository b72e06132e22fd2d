//! The `l2bm-hybrid` reproduction (L2BM IV-A, Table II, Fig. 7) on a quick setup: its CSV,
//! its plots, per-message completion of `poisson` flows, the papers' transports (DCQCN and
//! DCTCP) against the open loop, and the command line.

use super::{assert_png, num, scratch};
use study::reproduce::l2bm_hybrid::{self, Policy, Setup, Transport, CSV_HEADER};
use study::reproduce::NoProgress;

/// 8 ports (4 lossless and 4 TCP servers), 4 ms of arrivals, two TCP loads, seed 2, the
/// open loop.
fn quick() -> Setup {
    Setup {
        ports: 8,
        arrivals_ms: 4.0,
        max_drain_ms: 10.0,
        tcp_loads: vec![0.2, 0.8],
        seed: 2,
        seeds: vec![2],
        transports: vec![Transport::OpenLoopReno],
        ..Setup::scaled()
    }
}

#[test]
fn quick_sweep_writes_every_policy_and_l2bm_pauses_least() {
    let dir = scratch("l2bm-sweep");
    let setup = quick();
    let runs = l2bm_hybrid::sweep(&dir, &setup, &mut NoProgress).unwrap();
    let text = std::fs::read_to_string(dir.join("l2bm.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(CSV_HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let keys: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[1], r[2])).collect();
    let o = "open-loop-reno";
    assert_eq!(
        keys,
        [
            (o, "dt_alpha_1_8", "0.2"),
            (o, "dt_alpha_1_8", "0.8"),
            (o, "dt_alpha_1_2", "0.2"),
            (o, "dt_alpha_1_2", "0.8"),
            (o, "l2bm", "0.2"),
            (o, "l2bm", "0.8"),
        ]
    );
    for r in &rows {
        assert_eq!(r.len(), 16, "{r:?}");
        assert_eq!(r[3], "1", "one seed {r:?}");
        assert!(r[5].parse::<u64>().is_ok(), "pause frames {r:?}");
        assert_eq!(num(r[4]), num(r[5]), "one seed: mean = min {r:?}");
        let occ = num(r[7]);
        assert!(
            occ > 0.0 && occ <= setup.buffer_bytes as f64,
            "occupancy {r:?}"
        );
        for slowdown in [num(r[10]), num(r[13])] {
            assert!((1.0..1e5).contains(&slowdown), "slowdown {r:?}");
        }
    }
    for r in &runs {
        assert!(r.lossless_flows > 50 && r.tcp_flows > 10, "{r:?}");
        assert_eq!(
            (r.lossless_unfinished, r.tcp_unfinished),
            (0, 0),
            "every flow completes in the drain time: {r:?}"
        );
    }
    let pauses = |p: Policy, load: f64| {
        runs.iter()
            .find(|r| r.policy == p && r.tcp_load == load)
            .unwrap()
            .pause_frames
    };
    // Table II's shape at the heaviest load: DT 1/8 pauses, L2BM at most half as often.
    // Measured on this setup with seeds 1-6 at 4 and 8 ms of arrivals: DT 1/8 10-350
    // frames, L2BM 0-92, at most 53 % of DT 1/8's (seed 5 at 4 ms: 43 of 81); seed 2 at
    // 4 ms: 75 and 4.
    assert!(pauses(Policy::DtEighth, 0.8) > 0);
    assert!(
        2 * pauses(Policy::L2bm, 0.8) <= pauses(Policy::DtEighth, 0.8),
        "{runs:?}"
    );
    for f in [
        "l2bm.png",
        "l2bm_occupancy.png",
        "l2bm_fct_lossless.png",
        "l2bm_fct_lossy.png",
    ] {
        assert_png(&dir.join(f));
    }
}

/// DT 1/8 at TCP load 0.8 on the quick setup under `transport` with `seed`.
fn dt_at_08(transport: Transport, seed: u64) -> l2bm_hybrid::Run {
    let setup = Setup {
        transport,
        seed,
        ..quick()
    };
    l2bm_hybrid::measure(&setup, Policy::DtEighth, 0.8).unwrap()
}

/// The papers' transports pause at most a quarter as often as the open loop, which pauses,
/// over the seeds' runs together (`open`, `papers`: PAUSE frames summed). Measured with a
/// queue pair per message, seeds 1-3: open loop 10, 75, 55, DCQCN+DCTCP 5, 0, 6; one
/// seed's counts are too small for a ratio (seed 1: 5 against 10).
fn dcqcn_cuts_pauses(open: u64, papers: u64) -> Result<(), String> {
    if open == 0 || 4 * papers > open {
        return Err(format!(
            "{papers} PAUSE frames against the open loop's {open}"
        ));
    }
    Ok(())
}

#[test]
fn dcqcn_and_dctcp_pause_far_less_than_the_open_loop() {
    let (mut open_sum, mut papers_sum) = (0, 0);
    for seed in [1, 2, 3] {
        let open = dt_at_08(Transport::OpenLoopReno, seed);
        let papers = dt_at_08(Transport::DcqcnDctcp, seed);
        eprintln!(
            "seed {seed}: PAUSE frames open loop {}, dcqcn-dctcp {} ({} CNPs, {} + {} CE marks)",
            open.pause_frames,
            papers.pause_frames,
            papers.cnps,
            papers.marks_lossless,
            papers.marks_lossy
        );
        open_sum += open.pause_frames;
        papers_sum += papers.pause_frames;
        assert!(papers.cnps > 0 && papers.marks_lossless > 0, "{papers:?}");
        assert_eq!(
            (open.cnps, open.marks_lossless, open.marks_lossy),
            (0, 0, 0)
        );
        assert_eq!(
            (papers.lossless_unfinished, papers.tcp_unfinished),
            (0, 0),
            "{papers:?}"
        );
    }
    dcqcn_cuts_pauses(open_sum, papers_sum).unwrap();
    // Companion: with DCQCN off (the open loop in its place) the check fails.
    dcqcn_cuts_pauses(open_sum, open_sum).expect_err("the open loop does not pass");
}

#[test]
fn same_seed_same_run() {
    let setup = Setup {
        arrivals_ms: 1.0,
        ..quick()
    };
    let a = l2bm_hybrid::measure(&setup, Policy::L2bm, 0.5).unwrap();
    let b = l2bm_hybrid::measure(&setup, Policy::L2bm, 0.5).unwrap();
    assert_eq!(a, b);
    assert!(a.lossless_flows > 0 && a.tcp_flows > 0, "{a:?}");
}

#[test]
fn a_bad_setup_is_an_error() {
    let setup = Setup {
        ports: 7,
        ..quick()
    };
    let e = l2bm_hybrid::measure(&setup, Policy::DtHalf, 0.5).unwrap_err();
    assert!(e.to_string().contains("ports = 7"), "{e}");
}
