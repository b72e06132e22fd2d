//! The ECM reproductions (`ecm-fig1`, `ecm-severe`, `ecm-two-cps`), each run for real in
//! a short version: their files, and the behaviour each one is there to show.

use super::{assert_png, csv_rows, scratch};
use study::reproduce::{ecm_fig1, ecm_severe, ecm_two_cps, NoProgress};

const RP_TRACE_HEADER: &str = "cycle,nic,limiter,flow,event,fb,rate_before_bps,rate_after_bps";

#[test]
fn fig1_quick_settles_at_qeq_with_fair_rates() {
    let dir = scratch("ecm-fig1");
    let setup = ecm_fig1::Setup {
        run_ms: 10.0,
        band: 0.2,
        ..ecm_fig1::Setup::paper()
    };
    let f = ecm_fig1::measure(&setup, &dir, &mut NoProgress).unwrap();
    let rows = csv_rows(&dir.join("fig1.csv"), ecm_fig1::CSV_HEADER);
    assert_eq!(rows.len(), 1000, "one row every 10 us over 10 ms");
    assert!(rows.iter().all(|r| r.len() == 4));
    let c = f.line_rate_bps;
    assert_eq!(c, 10_000_000_000);
    for r in &rows {
        for v in &r[2..] {
            assert!(v.parse::<u64>().unwrap() <= c, "{r:?}");
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fig1-summary.json")).unwrap())
            .unwrap();
    let obj = json.as_object().unwrap();
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want = ecm_fig1::SUMMARY_KEYS.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want);
    let s = &f.summary;
    assert_eq!(obj["qeq_bytes"].as_u64(), Some(16384));
    assert_eq!(obj["drops"].as_u64(), Some(0));
    let conv = s.convergence_us.expect("converged within the 10 ms");
    assert!(conv < 5000.0, "{conv}");
    let q = s.queue_mean_bytes / s.qeq_bytes as f64;
    assert!((0.8..=1.2).contains(&q), "queue mean {q} Qeq");
    assert!(s.queue_std_bytes < 0.25 * s.qeq_bytes as f64, "{s:?}");
    assert!(s.jain > 0.98, "{s:?}");
    assert!((0.97..=1.01).contains(&s.utilization), "{s:?}");
    for p in ["fig1-queue.png", "fig1-rates.png"] {
        assert_png(&dir.join(p));
    }
}

#[test]
fn severe_quick_times_out_restarts_and_backs_off() {
    let dir = scratch("ecm-severe");
    let setup = ecm_severe::Setup {
        run_ms: 9.0,
        burst_start_ms: 3.0,
        ..ecm_severe::Setup::paper()
    };
    let r = ecm_severe::measure(&setup, &dir, &mut NoProgress).unwrap();
    let mut header = "time_us,queue_bytes".to_string();
    for k in 0..setup.sources {
        header += &format!(",rate{k}_bps");
    }
    let rows = csv_rows(&dir.join("severe.csv"), &header);
    assert_eq!(rows.len(), 900);
    assert_eq!(r.qsc_bytes, 96 * 1024);
    assert!(
        rows.iter()
            .any(|w| w[1].parse::<u64>().unwrap() > r.qsc_bytes),
        "the queue passes Qsc"
    );
    assert!(r.ecm_frames[2] > 0, "no ECM(0,0)");
    assert!(r.timeouts > 0 && r.restarts > 0, "{:?}", r.levels);
    let trace = csv_rows(&dir.join("severe-rp.csv"), RP_TRACE_HEADER);
    let count = |e: &str| trace.iter().filter(|l| l[4] == e).count() as u64;
    assert_eq!(count("timeout"), r.timeouts);
    assert_eq!(count("restart"), r.restarts);
    // Back-off: restarts at Rmin = 100 Mb/s and at least one at 50 Mb/s (Rmin halved),
    // each timer within its Tmax (10 us, then 20 us).
    assert!(r.levels.len() >= 2, "{:?}", r.levels);
    assert_eq!(r.levels[0].rate_bps, 100_000_000);
    assert_eq!(r.levels[1].rate_bps, 50_000_000);
    for l in &r.levels {
        assert!(l.timer_max_us < l.tmax_us, "{l:?}");
    }
    assert_eq!(r.drops, 0);
    for p in ["severe-queue.png", "severe-rates.png", "severe-backoff.png"] {
        assert_png(&dir.join(p));
    }
}

#[test]
fn two_cps_quick_moves_the_limiter_from_a_to_b() {
    let dir = scratch("ecm-two-cps");
    let setup = ecm_two_cps::Setup {
        run_ms: 12.0,
        reroute_ms: 5.0,
        ..ecm_two_cps::Setup::paper()
    };
    let r = ecm_two_cps::measure(&setup, &dir, &mut NoProgress).unwrap();
    let (a, moved) = r.first_a_and_move();
    let a = a.expect("associated with CP A");
    let moved = moved.expect("moved to CP B");
    assert!(a < 1000.0, "{a}");
    assert!(moved > 5000.0, "the move follows the re-route: {moved}");
    assert_eq!(r.changes.last().unwrap().cpid, Some(r.cpid_b));
    let rows = csv_rows(&dir.join("two-cps.csv"), ecm_two_cps::CSV_HEADER);
    assert_eq!(rows.len(), 1200);
    let cp_at = |t: f64| {
        rows.iter()
            .find(|w| w[0].parse::<f64>().unwrap() >= t)
            .map(|w| (w[1].clone(), w[2].clone()))
            .unwrap()
    };
    assert_eq!(cp_at(4000.0), (r.cpid_a.to_string(), "A".to_string()));
    assert_eq!(cp_at(11_900.0), (r.cpid_b.to_string(), "B".to_string()));
    // Congestion moved with the connection: A was above B before, B above A after.
    assert!(r.before.1 > r.before.2 && r.after.2 > r.after.1, "{r:?}");
    let trace = csv_rows(&dir.join("two-cps-rp.csv"), RP_TRACE_HEADER);
    assert!(trace.iter().any(|l| l[1] == "0" && l[4] == "decrease"));
    assert_eq!(r.drops, 0);
    for p in ["two-cps-rate.png", "two-cps-queues.png"] {
        assert_png(&dir.join(p));
    }
}
