//! The `l2bm-hybrid` reproduction (L2BM IV-A, Table II, Fig. 7) on a quick setup: its CSV,
//! its plots, per-message completion of `poisson` flows, and the command line.

use super::{assert_png, num, scratch};
use testbench::reproduce::l2bm_hybrid::{self, Policy, Setup, CSV_HEADER};
use testbench::reproduce::NoProgress;

/// 8 ports (4 lossless and 4 TCP servers), 4 ms of arrivals, two TCP loads, seed 2.
fn quick() -> Setup {
    Setup {
        ports: 8,
        arrivals_ms: 4.0,
        max_drain_ms: 10.0,
        tcp_loads: vec![0.2, 0.8],
        seed: 2,
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
    let keys: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(
        keys,
        [
            ("dt_alpha_1_8", "0.2"),
            ("dt_alpha_1_8", "0.8"),
            ("dt_alpha_1_2", "0.2"),
            ("dt_alpha_1_2", "0.8"),
            ("l2bm", "0.2"),
            ("l2bm", "0.8"),
        ]
    );
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?}");
        assert!(r[2].parse::<u64>().is_ok(), "pause frames {r:?}");
        let occ = num(r[3]);
        assert!(
            occ > 0.0 && occ <= setup.buffer_bytes as f64,
            "occupancy {r:?}"
        );
        for slowdown in [num(r[4]), num(r[5])] {
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
