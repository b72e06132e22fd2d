//! L2BM section IV (Table II, Fig. 7) on the fabric: the paper's three-layer Clos.
//!
//! The network is the built-in `l2bm-clos` (`Clos::l2bm()`: 2 core, 4 aggregation and 4
//! ToR switches, 32 servers per ToR at 25G, 4 MB per switch, PFC; hosts 0-127, ToRs
//! 128-131): per ToR the first 16 servers send RDMA (DCQCN, lossless class 3, load 0.4)
//! to the other RDMA servers, the last 16 TCP (DCTCP, lossy class 1) to the other TCP
//! servers, web search sizes, Poisson arrivals at the load of their links. Swept: the
//! buffer policy as `l2bm-hybrid` defines the paper's three ([`Policy`]: hybrid DT with
//! `alpha` 1/8 and 1/2, L2BM), the TCP load 0.1-0.8, seeds. Measured per run: the PAUSE
//! frames all switches sent, the 99th percentile FCT slowdown of the completed RDMA and
//! TCP flows (`fabric`'s slowdown: FCT over the path's propagation delay plus the
//! message's wire time at its slowest link), and the ToRs' buffer occupancy over time
//! (`[fabric] occupancy_interval_us` = [`OCCUPANCY_US`]: per interval, the most cells a
//! ToR's buffer held), as Fig. 7(c) gives it: the 99th percentile over every interval of
//! the four ToRs, in percent of a ToR's buffer (Fig. 8 pools the four ToRs' samples the
//! same way), and the series itself, the four ToRs' mean per interval.
//!
//! The policy and loads are set through the built-in's keys ([`Edit`]): the workloads are
//! found by their class, and a `[[fabric.switch]]` entry takes the policy's `[switch]`
//! keys unless it sets them itself.
//!
//! The runs are the built-in sweep spec `l2bm-clos` ([`spec_text`]) over [`MEASURE`].

use super::fabric_net::{self, pause_frames, Edit};
use super::l2bm_hybrid::{Policy, PAPER_TABLE_II};
use super::plot::{xy_chart, Series};
use super::{Progress, ReproError};
use crate::sweep::stats::{mean_std, percentile};
use crate::sweep::{Measure, Spec, Values};
use fabric::topology::NodeId;
use fabric::FabricSummary;
use scenario::{Scenario, ScenarioError};
use serde_json::Value as Json;
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

pub const BASE: &str = "l2bm-clos";
const RDMA_PG: u8 = 3;
const TCP_PG: u8 = 1;
const RDMA_LOAD: f64 = 0.4;
const SERVERS_PER_TOR: u32 = 32;
const TORS: u32 = 4;
/// The paper's axis (Table II, Fig. 7).
pub const TCP_LOADS: [f64; 8] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
/// The occupancy series' interval (the paper samples every 1 ms over seconds; a run here
/// lasts milliseconds).
pub const OCCUPANCY_US: u64 = 10;

/// The sweep: TCP loads, seeds and each run's length (flows start over all of it).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub tcp_loads: Vec<f64>,
    pub seeds: u32,
    pub duration_us: u64,
}

impl Grid {
    /// The reproduction: TCP loads 0.1-0.8, 2 seeds, 5 ms (1 ms, the built-in's length,
    /// sends no PAUSE under any policy; docs/results.md).
    pub fn default_grid() -> Self {
        Self {
            tcp_loads: TCP_LOADS.to_vec(),
            seeds: 2,
            duration_us: 5_000,
        }
    }
}

const FIELDS: &[&str] = &[
    "pause_frames",
    "p99_slowdown_rdma",
    "p99_slowdown_tcp",
    "rdma_flows",
    "rdma_completed",
    "tcp_flows",
    "tcp_completed",
    "tor_p99_occupancy_pct",
    "tor_occupancy_pct",
    "lossy_drops",
];

/// One run as a sweep measure: `policy` (an `l2bm-hybrid` policy name), `tcp_load`, `seed`,
/// `duration_us`.
pub const MEASURE: Measure = Measure {
    name: "l2bm-clos",
    params: &["duration_us", "policy", "seed", "tcp_load"],
    fields: FIELDS,
    check: |v| parse(v).map(|_| ()),
    run: |v| {
        let p = parse(v).map_err(|e| e.to_string())?;
        let o = measure(&p).map_err(|e| e.to_string())?;
        let values: [Json; 10] = [
            o.pause_frames.into(),
            o.p99_slowdown_rdma.into(),
            o.p99_slowdown_tcp.into(),
            o.rdma_flows.into(),
            o.rdma_completed.into(),
            o.tcp_flows.into(),
            o.tcp_completed.into(),
            o.tor_p99_occupancy_pct.into(),
            o.tor_occupancy_pct.clone().into(),
            o.lossy_drops.into(),
        ];
        Ok(FIELDS.iter().map(|k| k.to_string()).zip(values).collect())
    },
};

pub fn spec_text(grid: &Grid) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    format!(
        "name = \"l2bm-clos\"\nmeasure = \"l2bm-clos\"\ncollect = [{}]\n[parameters]\npolicy = [{}]\ntcp_load = [{}]\nduration_us = [{}]\nseed = {{ from = 1, to = {} }}\n",
        list(FIELDS.iter().map(|f| format!("{f:?}")).collect()),
        list(Policy::ALL.iter().map(|p| format!("{:?}", p.name())).collect()),
        list(grid.tcp_loads.iter().map(f64::to_string).collect()),
        grid.duration_us,
        grid.seeds
    )
}

/// One run's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub policy: Policy,
    pub tcp_load: f64,
    pub seed: u64,
    pub duration_us: u64,
}

fn parse(v: &Values) -> Result<Params, ScenarioError> {
    let bad = |k: &str, m: String| ScenarioError::new(k, m);
    let names = || Policy::ALL.map(Policy::name).join(", ");
    let policy = v
        .get("policy")
        .and_then(Json::as_str)
        .and_then(|p| Policy::ALL.into_iter().find(|q| q.name() == p))
        .ok_or_else(|| bad("policy", format!("allowed: {}", names())))?;
    let tcp_load = v
        .get("tcp_load")
        .and_then(Json::as_f64)
        .filter(|l| *l > 0.0 && *l <= 1.0)
        .ok_or_else(|| bad("tcp_load", "allowed: a number, 0 < tcp_load <= 1".into()))?;
    let int = |k: &str, hi: u64| {
        v.get(k)
            .and_then(Json::as_u64)
            .filter(|x| (1..=hi).contains(x))
            .ok_or_else(|| bad(k, format!("expected an integer; allowed: 1..={hi}")))
    };
    Ok(Params {
        policy,
        tcp_load,
        seed: int("seed", 1_000_000)?,
        duration_us: int("duration_us", 1_000_000)?,
    })
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub pause_frames: u64,
    /// Over the completed flows of the class (0 if none completed).
    pub p99_slowdown_rdma: f64,
    pub p99_slowdown_tcp: f64,
    pub rdma_flows: u64,
    pub rdma_completed: u64,
    pub tcp_flows: u64,
    pub tcp_completed: u64,
    /// The 99th percentile of the ToRs' occupancy over every interval of every ToR, % of
    /// a ToR's buffer.
    pub tor_p99_occupancy_pct: f64,
    /// Per interval of [`OCCUPANCY_US`], the ToRs' mean occupancy, % of a ToR's buffer.
    pub tor_occupancy_pct: Vec<f64>,
    pub lossy_drops: u64,
}

/// The ToRs' occupancy series (% of each one's buffer), one per ToR.
fn tor_occupancy(s: &FabricSummary, net: &fabric::Network, tors: &[NodeId]) -> Vec<Vec<f64>> {
    s.switches
        .iter()
        .filter(|w| tors.contains(&w.switch))
        .map(|w| {
            let total = net.mmu(w.switch).map_or(1, |m| m.config().total_cells);
            w.occupancy.as_ref().map_or(Vec::new(), |o| {
                o.peak_cells
                    .iter()
                    .map(|&c| 100.0 * f64::from(c) / f64::from(total))
                    .collect()
            })
        })
        .collect()
}

/// The built-in `l2bm-clos` with the run's policy, loads, seeds and length, its ToRs'
/// occupancy sampled.
pub fn scenario(p: &Params) -> Result<Scenario, ReproError> {
    let mut e = Edit::builtin(BASE)?;
    for line in p.policy.switch_keys().lines() {
        let (key, value) = line
            .split_once(" = ")
            .expect("switch_keys writes KEY = VALUE");
        e.set(&format!("switch.{key}"), value)?;
    }
    // The built-in's seeds: 3 for RDMA and 1 for TCP; run seed 1 draws them.
    for (pg, load, seed) in [
        (RDMA_PG, RDMA_LOAD, 2 * p.seed + 1),
        (TCP_PG, p.tcp_load, 2 * p.seed - 1),
    ] {
        let w = e.entry("workload", "pg", pg.into())?;
        e.set(&format!("fabric.workload[{w}].load"), load)?
            .set(&format!("fabric.workload[{w}].seed"), seed)?
            .set(&format!("fabric.workload[{w}].duration_us"), p.duration_us)?;
    }
    e.set(
        "fabric.occupancy_interval_us",
        OCCUPANCY_US.min(p.duration_us),
    )?;
    let mut s = e.scenario()?;
    s.run.cycles = p.duration_us * u64::from(s.switch.core_clock_mhz);
    Ok(s)
}

/// One run.
pub fn measure(p: &Params) -> Result<Outcome, ReproError> {
    let (s, built) = fabric_net::run(&scenario(p)?)?;
    let topo = built.net.topology();
    let flows = &built.flows;
    let tors: Vec<NodeId> = (0..TORS)
        .map(|t| topo.tor_of(t * SERVERS_PER_TOR))
        .collect();
    let class = |pg: u8| {
        let of: Vec<_> = s.fct.iter().filter(|f| flows[f.flow].pg == pg).collect();
        let mut slowdowns: Vec<f64> = of.iter().filter_map(|f| f.slowdown).collect();
        let done = slowdowns.len() as u64;
        (percentile(&mut slowdowns, 0.99), of.len() as u64, done)
    };
    let (p99_slowdown_rdma, rdma_flows, rdma_completed) = class(RDMA_PG);
    let (p99_slowdown_tcp, tcp_flows, tcp_completed) = class(TCP_PG);
    let occupancy = tor_occupancy(&s, &built.net, &tors);
    let intervals = occupancy.iter().map(Vec::len).min().unwrap_or(0);
    Ok(Outcome {
        pause_frames: pause_frames(&s),
        p99_slowdown_rdma,
        p99_slowdown_tcp,
        rdma_flows,
        rdma_completed,
        tcp_flows,
        tcp_completed,
        tor_p99_occupancy_pct: percentile(&mut occupancy.concat(), 0.99),
        tor_occupancy_pct: (0..intervals)
            .map(|i| occupancy.iter().map(|o| o[i]).sum::<f64>() / occupancy.len() as f64)
            .collect(),
        lossy_drops: s.cells_dropped_lossy,
    })
}

/// A run and what it measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub params: Params,
    pub outcome: Outcome,
}

fn outcome(f: &Values) -> Result<Outcome, ReproError> {
    let int = |k| super::int_field(f, k);
    let float = |k: &str| {
        f.get(k)
            .and_then(Json::as_f64)
            .ok_or_else(|| ReproError::Invariant(format!("{k}: missing or not a number")))
    };
    Ok(Outcome {
        pause_frames: int("pause_frames")?,
        p99_slowdown_rdma: float("p99_slowdown_rdma")?,
        p99_slowdown_tcp: float("p99_slowdown_tcp")?,
        rdma_flows: int("rdma_flows")?,
        rdma_completed: int("rdma_completed")?,
        tcp_flows: int("tcp_flows")?,
        tcp_completed: int("tcp_completed")?,
        tor_p99_occupancy_pct: float("tor_p99_occupancy_pct")?,
        tor_occupancy_pct: f
            .get("tor_occupancy_pct")
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_f64).collect())
            .ok_or_else(|| ReproError::Invariant("tor_occupancy_pct: missing".into()))?,
        lossy_drops: int("lossy_drops")?,
    })
}

pub const CSV_HEADER: &str = "policy,tcp_load,seeds,pause_frames_mean,pause_frames_sd,\
p99_slowdown_rdma_mean,p99_slowdown_rdma_sd,p99_slowdown_tcp_mean,p99_slowdown_tcp_sd,\
tor_p99_occupancy_pct_mean,tor_p99_occupancy_pct_sd,flows_completed_pct";

/// One line of `l2bm_clos.csv`: a policy and load, mean and standard deviation over seeds.
#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub policy: &'static str,
    pub tcp_load: Fixed<1>,
    pub seeds: usize,
    pub pause_frames_mean: Fixed<1>,
    pub pause_frames_sd: Fixed<1>,
    pub p99_slowdown_rdma_mean: Fixed<2>,
    pub p99_slowdown_rdma_sd: Fixed<2>,
    pub p99_slowdown_tcp_mean: Fixed<2>,
    pub p99_slowdown_tcp_sd: Fixed<2>,
    pub tor_p99_occupancy_pct_mean: Fixed<2>,
    pub tor_p99_occupancy_pct_sd: Fixed<2>,
    pub flows_completed_pct: Fixed<1>,
}

/// The rows of a policy and load, averaged.
fn aggregate(points: &[Point], policy: Policy, load: f64) -> CsvRow {
    let ps: Vec<&Outcome> = points
        .iter()
        .filter(|p| p.params.policy == policy && p.params.tcp_load == load)
        .map(|p| &p.outcome)
        .collect();
    let ms = |f: &dyn Fn(&Outcome) -> f64| mean_std(ps.iter().map(|o| f(o)));
    let (pf, pf_sd) = ms(&|o| o.pause_frames as f64);
    let (sr, sr_sd) = ms(&|o| o.p99_slowdown_rdma);
    let (st, st_sd) = ms(&|o| o.p99_slowdown_tcp);
    let (occ, occ_sd) = ms(&|o| o.tor_p99_occupancy_pct);
    let (done, all) = ps.iter().fold((0, 0), |(d, a), o| {
        (
            d + o.rdma_completed + o.tcp_completed,
            a + o.rdma_flows + o.tcp_flows,
        )
    });
    CsvRow {
        policy: policy.name(),
        tcp_load: Fixed(load),
        seeds: ps.len(),
        pause_frames_mean: Fixed(pf),
        pause_frames_sd: Fixed(pf_sd),
        p99_slowdown_rdma_mean: Fixed(sr),
        p99_slowdown_rdma_sd: Fixed(sr_sd),
        p99_slowdown_tcp_mean: Fixed(st),
        p99_slowdown_tcp_sd: Fixed(st_sd),
        tor_p99_occupancy_pct_mean: Fixed(occ),
        tor_p99_occupancy_pct_sd: Fixed(occ_sd),
        flows_completed_pct: Fixed(100.0 * done as f64 / all.max(1) as f64),
    }
}

/// A plot of the table: its file, its y axis and the column it draws.
type Plot = (&'static str, &'static str, fn(&CsvRow) -> f64);

/// The sweep over `grid` (runs in `DIR/sweep/`): writes `DIR/l2bm_clos.csv` (its rows are
/// returned) and the plots
/// `DIR/l2bm_clos_pause.png`, `_rdma.png`, `_tcp.png`, `_tor.png` (against the TCP load) and
/// `_tor_time.png`.
pub fn sweep(
    out: &Path,
    grid: &Grid,
    progress: &mut dyn Progress,
) -> Result<Vec<CsvRow>, ReproError> {
    let spec = Spec::parse(&spec_text(grid), "l2bm-clos", Path::new("."))?;
    let rows = super::sweep_rows(&spec, &out.join("sweep"), progress)?;
    let points = rows
        .iter()
        .map(|r| {
            Ok(Point {
                params: parse(&r.params)?,
                outcome: outcome(&r.fields)?,
            })
        })
        .collect::<Result<Vec<_>, ReproError>>()?;
    let table = || {
        Policy::ALL
            .iter()
            .flat_map(|&policy| grid.tcp_loads.iter().map(move |&l| (policy, l)))
            .map(|(policy, load)| aggregate(&points, policy, load))
    };
    super::write_csv(&out.join("l2bm_clos.csv"), table())?;
    let table: Vec<CsvRow> = table().collect();
    let plots: [Plot; 4] = [
        (
            "l2bm_clos_pause.png",
            "PFC PAUSE frames (all switches)",
            |r| r.pause_frames_mean.0,
        ),
        ("l2bm_clos_rdma.png", "p99 FCT slowdown, RDMA", |r| {
            r.p99_slowdown_rdma_mean.0
        }),
        ("l2bm_clos_tcp.png", "p99 FCT slowdown, TCP", |r| {
            r.p99_slowdown_tcp_mean.0
        }),
        (
            "l2bm_clos_tor.png",
            "p99 ToR buffer occupancy (% of its buffer)",
            |r| r.tor_p99_occupancy_pct_mean.0,
        ),
    ];
    for (file, y_label, y) in plots {
        let series: Vec<Series> = Policy::ALL
            .iter()
            .map(|&policy| Series {
                name: policy.label().to_string(),
                points: table
                    .iter()
                    .filter(|r| r.policy == policy.name())
                    .map(|r| (r.tcp_load.0, y(r)))
                    .collect(),
                line: true,
            })
            .collect();
        xy_chart(
            &out.join(file),
            "L2BM Fig. 7 on the fabric: the Clos, RDMA load 0.4",
            "TCP load",
            y_label,
            &series,
        )?;
    }
    occupancy_over_time(out, &points, grid)?;
    Ok(table)
}

/// `DIR/l2bm_clos_tor_time.png`: per policy at the grid's highest TCP load, the ToRs'
/// occupancy per interval, mean over the seeds (Fig. 8's samples in time order).
fn occupancy_over_time(out: &Path, points: &[Point], grid: &Grid) -> Result<(), ReproError> {
    let load = grid.tcp_loads.iter().copied().fold(0.0, f64::max);
    let series: Vec<Series> = Policy::ALL
        .iter()
        .map(|&policy| {
            let runs: Vec<&Vec<f64>> = points
                .iter()
                .filter(|p| p.params.policy == policy && p.params.tcp_load == load)
                .map(|p| &p.outcome.tor_occupancy_pct)
                .collect();
            let intervals = runs.iter().map(|r| r.len()).min().unwrap_or(0);
            Series {
                name: policy.label().to_string(),
                points: (0..intervals)
                    .map(|i| {
                        let ms = ((i + 1) as u64 * OCCUPANCY_US) as f64 / 1e3;
                        (ms, mean_std(runs.iter().map(|r| r[i])).0)
                    })
                    .collect(),
                line: true,
            }
        })
        .collect();
    xy_chart(
        &out.join("l2bm_clos_tor_time.png"),
        &format!("L2BM Figs. 7(c), 8 on the fabric: ToR occupancy, TCP load {load}"),
        "time (ms), end of the interval",
        "ToR buffer occupancy (% of its buffer, mean of the 4 ToRs)",
        &series,
    )
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let grid = Grid::default_grid();
    let table = sweep(out, &grid, progress)?;
    let mut rep = format!(
        "L2BM Table II / Fig. 7 on the fabric: the Clos of 10 switches, 128 servers, RDMA load {RDMA_LOAD}, {} seeds of {} us (mean, sd)\n",
        grid.seeds, grid.duration_us
    );
    let _ = writeln!(
        rep,
        "{:<13} {:>5} {:>16} {:>8} {:>16} {:>16} {:>12} {:>6}",
        "policy",
        "load",
        "PAUSE frames",
        "paper",
        "p99 sd RDMA",
        "p99 sd TCP",
        "ToR p99 %",
        "done%"
    );
    for r in &table {
        let paper = PAPER_TABLE_II
            .iter()
            .find(|(l, _)| *l == r.tcp_load.0)
            .and_then(|(_, v)| {
                Policy::ALL
                    .iter()
                    .position(|p| p.name() == r.policy)
                    .map(|i| v[i])
            })
            .map_or("-".to_string(), |v| v.to_string());
        let _ = writeln!(
            rep,
            "{:<13} {:>5.1} {:>16} {:>8} {:>16} {:>16} {:>12.2} {:>6.1}",
            r.policy,
            r.tcp_load.0,
            format!("{:.1} {:.1}", r.pause_frames_mean.0, r.pause_frames_sd.0),
            paper,
            format!(
                "{:.2} {:.2}",
                r.p99_slowdown_rdma_mean.0, r.p99_slowdown_rdma_sd.0
            ),
            format!(
                "{:.2} {:.2}",
                r.p99_slowdown_tcp_mean.0, r.p99_slowdown_tcp_sd.0
            ),
            r.tor_p99_occupancy_pct_mean.0,
            r.flows_completed_pct.0
        );
    }
    let _ = writeln!(
        rep,
        "{}",
        super::wrote(
            out,
            &[
                "l2bm_clos.csv",
                "l2bm_clos_pause.png",
                "l2bm_clos_rdma.png",
                "l2bm_clos_tcp.png",
                "l2bm_clos_tor.png",
                "l2bm_clos_tor_time.png"
            ]
        )
    );
    Ok(rep)
}
