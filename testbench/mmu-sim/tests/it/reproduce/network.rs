//! The reproductions on the fabric (`dsh-deadlock`, `dsh-collateral-fabric`, `l2bm-clos`)
//! on tiny grids: their CSV, plots and tables from the sweep engine, and the onset CDF.

use super::{assert_png, csv_rows, num, scratch};
use hw_model::Policy;
use std::path::Path;
use study::reproduce::dsh_deadlock::{self, onset_cdf, Grid, Outcome, Params, Point};
use study::reproduce::fabric_net::Transport;
use study::reproduce::{dsh_collateral_fabric, l2bm_clos, NoProgress};

fn point(policy: Policy, onset_cycle: Option<u64>) -> Point {
    Point {
        params: Params {
            policy,
            transport: Transport::Dcqcn,
            fan_in: 1,
            seed: 1,
            duration_us: 1,
        },
        outcome: Outcome {
            deadlock: onset_cycle.is_some(),
            onset_cycle: onset_cycle.unwrap_or(0),
            flows: 1,
            flows_completed: 1,
            pause_frames: 0,
            cnps: 0,
            clock_hz: 1_000_000_000,
        },
    }
}

#[test]
fn onset_cdf_counts_every_run_and_steps_at_each_deadlock_in_time_order() {
    let points = [
        point(Policy::Sih, Some(3_000_000)),
        point(Policy::Sih, None),
        point(Policy::Sih, Some(1_000_000)),
        point(Policy::Sih, None),
    ];
    let refs: Vec<&Point> = points.iter().collect();
    // Two of four runs deadlocked, at 1 ms and 3 ms: the CDF ends at 1/2, not 1.
    assert_eq!(onset_cdf(&refs), vec![(1.0, 0.25), (3.0, 0.5)]);
    assert!(onset_cdf(&refs[1..2]).is_empty());
}

#[test]
fn dsh_deadlock_tiny_grid_writes_the_csv_cdf_and_table() {
    let dir = scratch("dsh-deadlock");
    let grid = Grid {
        transports: Transport::ALL.to_vec(),
        fan_ins: vec![2],
        seeds: 1,
        duration_us: 100,
    };
    let points = dsh_deadlock::sweep(&dir, &grid, &mut NoProgress).unwrap();
    assert_eq!(points.len(), 4);
    let rows = csv_rows(&dir.join("deadlock.csv"), dsh_deadlock::CSV_HEADER);
    let arms: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[1].as_str(), r[0].as_str()))
        .collect();
    assert_eq!(
        arms,
        [
            ("dcqcn", "sih"),
            ("dcqcn", "dsh"),
            ("powertcp", "sih"),
            ("powertcp", "dsh")
        ]
    );
    for (r, p) in rows.iter().zip(&points) {
        // Every arm draws the same flows: the seed, not the policy or transport, picks them.
        assert_eq!(num(&r[9]), points[0].outcome.flows as f64);
        assert!(p.outcome.flows > 0 && p.outcome.flows_completed <= p.outcome.flows);
        // DCQCN's senders hear CNPs; PowerTCP's read INT and get none.
        if p.params.transport == Transport::PowerTcp {
            assert_eq!(p.outcome.cnps, 0, "{r:?}");
        }
    }
    assert_png(&dir.join("deadlock_cdf.png"));
    let table = dsh_deadlock::table(&points, &grid);
    assert_eq!(table.lines().count(), 5, "{table}");
    assert!(table
        .lines()
        .next()
        .unwrap()
        .contains("PAUSE frames (mean sd)"));
    // The rows are the sweep's: a second call finds every run done and gives the same.
    let again = dsh_deadlock::sweep(&dir, &grid, &mut NoProgress).unwrap();
    assert_eq!(again, points);
}

#[test]
fn l2bm_clos_tiny_grid_writes_every_policy() {
    let dir = scratch("l2bm-clos");
    let grid = l2bm_clos::Grid {
        tcp_loads: vec![0.8],
        seeds: 1,
        duration_us: 40,
    };
    let table = l2bm_clos::sweep(&dir, &grid, &mut NoProgress).unwrap();
    assert_eq!(table.len(), 3);
    let rows = csv_rows(&dir.join("l2bm_clos.csv"), l2bm_clos::CSV_HEADER);
    let policies: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(policies, ["dt_alpha_1_8", "dt_alpha_1_2", "l2bm"]);
    for file in ["pause", "rdma", "tcp", "tor", "tor_time"] {
        assert_png(&dir.join(format!("l2bm_clos_{file}.png")));
    }
    // One run per policy. 40 us completes some of the flows (the short ones started
    // early) and not all (those started near the end cannot finish), and a completed
    // flow is never faster than alone on its path (slowdown 1).
    for r in &table {
        assert_eq!(r.seeds, 1, "{}", r.policy);
        let pct = r.flows_completed_pct.0;
        assert!(pct > 0.0 && pct < 100.0, "{}: {pct}", r.policy);
        for p99 in [r.p99_slowdown_rdma_mean.0, r.p99_slowdown_tcp_mean.0] {
            assert!(p99 >= 1.0, "{}: p99 slowdown {p99}", r.policy);
        }
    }
}

#[test]
fn collateral_fabric_topology_is_fig_13a() {
    let s = dsh_collateral_fabric::scenario(Policy::Sih, Transport::Dcqcn, 1).unwrap();
    let built = fabric::build::build(&s, Path::new("."), Default::default()).unwrap();
    let topo = built.net.topology();
    assert_eq!(topo.switches(), [28, 29]);
    assert_eq!(topo.hosts().count(), 28);
    // S0: H0, H1 and S1; S1: R0, R1, H2-H25 and S0.
    assert_eq!(topo.ports(28).len(), 3);
    assert_eq!(topo.ports(29).len(), 27);
    // F0, F1 from the start, then the 24 senders of the burst within its microsecond.
    let burst = dsh_collateral_fabric::BURST_AT_US * 1_000_000;
    assert_eq!(built.flows.len(), 26);
    assert!(built.flows[..2].iter().all(|f| f.start.0 == 0));
    assert!(built.flows[2..]
        .iter()
        .all(|f| f.dst == 3 && (burst..burst + 1_000_000).contains(&f.start.0)));
}
