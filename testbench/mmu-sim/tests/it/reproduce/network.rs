//! The reproductions on the fabric (`dsh-deadlock`, `dsh-collateral-fabric`, `l2bm-clos`)
//! on tiny grids: their CSV, plots and tables from the sweep engine, and the onset CDF.

use super::{assert_png, csv_rows, num, scratch};
use hw_model::Policy;
use study::reproduce::dsh_deadlock::{self, onset_cdf, Grid, Outcome, Params, Point};
use study::reproduce::{dsh_collateral_fabric, l2bm_clos, NoProgress};

fn point(policy: Policy, onset_cycle: Option<u64>) -> Point {
    Point {
        params: Params {
            policy,
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
        fan_ins: vec![2],
        seeds: 1,
        duration_us: 100,
    };
    let points = dsh_deadlock::sweep(&dir, &grid, &mut NoProgress).unwrap();
    assert_eq!(points.len(), 2);
    let rows = csv_rows(&dir.join("deadlock.csv"), dsh_deadlock::CSV_HEADER);
    let policies: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(policies, ["sih", "dsh"]);
    for (r, p) in rows.iter().zip(&points) {
        // Both policies draw the same flows: the seed, not the policy, picks them.
        assert_eq!(num(&r[8]), points[0].outcome.flows as f64);
        assert!(p.outcome.flows > 0 && p.outcome.flows_completed <= p.outcome.flows);
    }
    assert_png(&dir.join("deadlock_cdf.png"));
    let table = dsh_deadlock::table(&points, &grid);
    assert_eq!(table.lines().count(), 3, "{table}");
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
    for file in ["pause", "rdma", "tcp", "tor"] {
        assert_png(&dir.join(format!("l2bm_clos_{file}.png")));
    }
    // One run per policy, each a share of its flows completed.
    for r in &table {
        assert_eq!(r.seeds, 1, "{}", r.policy);
        assert!(
            (0.0..=100.0).contains(&r.flows_completed_pct.0),
            "{}",
            r.policy
        );
    }
}

#[test]
fn collateral_fabric_topology_is_fig_13a() {
    let topo = fabric::topology::Topology::parse(&dsh_collateral_fabric::topology_text()).unwrap();
    assert_eq!(topo.switches(), [28, 29]);
    assert_eq!(topo.hosts().count(), 28);
    // S0: H0, H1 and S1; S1: R0, R1, H2-H25 and S0.
    assert_eq!(topo.ports(28).len(), 3);
    assert_eq!(topo.ports(29).len(), 27);
}
