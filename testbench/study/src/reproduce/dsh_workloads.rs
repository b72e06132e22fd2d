//! DSH Fig. 15 (section V-B): the average FCT of background flows under web search, data
//! mining, cache and Hadoop sizes, on the leaf-spine and on the k = 16 fat-tree, DCQCN,
//! DSH normalised to SIH.
//!
//! The networks are the built-ins `dsh-leafspine` and `dsh-fattree` (the fat-tree: 320
//! switches of 16 ports, 1024 hosts, every link 100G and 2 us) with `dsh-fct`'s switches and
//! traffic ([`super::dsh_fct`]): "other settings keep unchanged", so background load 0.6
//! and fan-in 0.3, the background's sizes from [`WORKLOADS`] (`fabric::cdf`: ns3-datacenter's
//! `websearch`, `datamining` and `hadoop` points, and `cache`, HPCC's Facebook cache
//! follower points; data/README.md). Each run (a policy, a workload, a topology with its
//! lengths, a seed) is measured as `dsh-fct`'s; the fat-tree's runs are shorter, as it has
//! ten times the switches. The runs are the built-in sweep spec `dsh-workloads`
//! ([`spec_text`]) over [`MEASURE`] (so on Slurm with `mmu-sim sweep plan dsh-workloads
//! --emit slurm`).

use super::dsh_deadlock::POLICIES;
use super::dsh_fct::{
    self, mean_sd, paired, parse_common, summary, Outcome, Setup, Topology, FIELDS,
};
use super::fabric_net::Transport;
use super::plot::{xy_chart, Series};
use super::{to_fields, wrote, Progress, ReproError};
use crate::sweep::{Measure, Spec, Values};
use fabric::cdf::Builtin;
use scenario::ScenarioError;
use serde_json::Value as Json;
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

/// The paper's four workloads, as the background's size CDF.
pub const WORKLOADS: [Builtin; 4] = [
    Builtin::WebSearch,
    Builtin::DataMining,
    Builtin::Cache,
    Builtin::Hadoop,
];
/// The background load of `dsh-fct`'s built-ins (the fan-in takes the rest of 0.9).
const BG_LOAD: f64 = 0.6;

/// A topology and its runs' lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Length {
    pub topology: Topology,
    pub arrivals_us: u64,
    pub run_us: u64,
}

/// The sweep: the topologies with their lengths, the workloads and the seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub lengths: Vec<Length>,
    pub workloads: Vec<Builtin>,
    pub seeds: u32,
}

impl Grid {
    /// The reproduction: the four workloads on both topologies, 2 seeds; the leaf-spine
    /// 400 us of arrivals in 700 us, the fat-tree (47 CPU s a run at 100 us in 200 us)
    /// the built-in's 50 us in 100 us (docs/results.md gives
    /// what the paper's lengths cost).
    pub fn default_grid() -> Self {
        Self {
            lengths: vec![
                Length {
                    topology: Topology::LeafSpine,
                    arrivals_us: 400,
                    run_us: 700,
                },
                Length {
                    topology: Topology::FatTree,
                    arrivals_us: 50,
                    run_us: 100,
                },
            ],
            workloads: WORKLOADS.to_vec(),
            seeds: 2,
        }
    }
}

/// One run as a sweep measure: `policy`, `cdf`, `topology`, `seed`, `arrivals_us`,
/// `run_us`.
pub const MEASURE: Measure = Measure {
    name: "dsh-workloads",
    params: &["arrivals_us", "cdf", "policy", "run_us", "seed", "topology"],
    fields: FIELDS,
    check: |v| parse(v).map(|_| ()),
    run: |v| {
        let s = parse(v).map_err(|e| e.to_string())?;
        to_fields(&dsh_fct::measure(&s).map_err(|e| e.to_string())?, FIELDS)
    },
};

/// The built-in sweep spec over `grid`: the topologies and their lengths one zipped group.
pub fn spec_text(grid: &Grid) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    let column = |f: fn(&Length) -> String| list(grid.lengths.iter().map(f).collect());
    format!(
        "name = \"dsh-workloads\"\nmeasure = \"dsh-workloads\"\ncollect = [{}]\n[parameters]\nseed = {{ from = 1, to = {} }}\npolicy = [{}]\ncdf = [{}]\n[[zip]]\ntopology = [{}]\narrivals_us = [{}]\nrun_us = [{}]\n",
        list(FIELDS.iter().map(|f| format!("{f:?}")).collect()),
        grid.seeds,
        list(POLICIES.iter().map(|p| format!("{:?}", p.name())).collect()),
        list(grid.workloads.iter().map(|w| format!("{:?}", w.name())).collect()),
        column(|l| format!("{:?}", l.topology.name())),
        column(|l| l.arrivals_us.to_string()),
        column(|l| l.run_us.to_string()),
    )
}

fn parse(v: &Values) -> Result<Setup, ScenarioError> {
    let (policy, seed, arrivals_us, run_us) = parse_common(v)?;
    let names = || WORKLOADS.map(Builtin::name).join(", ");
    let cdf = v
        .get("cdf")
        .and_then(Json::as_str)
        .and_then(|c| WORKLOADS.into_iter().find(|w| w.name() == c))
        .ok_or_else(|| ScenarioError::new("cdf", format!("allowed: {}", names())))?;
    Ok(Setup {
        topology: Topology::parse(v.get("topology"))?,
        policy,
        transport: Transport::Dcqcn,
        bg_load: BG_LOAD,
        cdf,
        seed,
        arrivals_us,
        run_us,
    })
}

/// One line of `dsh_workloads.csv`: a topology and workload.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CsvRow {
    pub topology: &'static str,
    pub workload: &'static str,
    pub seeds: usize,
    pub bg_fct_dsh_over_sih_mean: Fixed<3>,
    pub bg_fct_dsh_over_sih_sd: Fixed<3>,
    pub fanin_fct_dsh_over_sih_mean: Fixed<3>,
    pub fanin_fct_dsh_over_sih_sd: Fixed<3>,
    pub sih_bg_fct_us: Fixed<1>,
    pub bg_completed_pct: Fixed<1>,
    pub sih_pause_frames: Fixed<1>,
    pub dsh_pause_frames: Fixed<1>,
}

/// The sweep over `grid` (runs in `DIR/sweep/`): writes `DIR/dsh_workloads.csv` (its rows
/// are returned) and the plot `DIR/dsh_workloads.png`.
pub fn sweep(
    out: &Path,
    grid: &Grid,
    progress: &mut dyn Progress,
) -> Result<Vec<CsvRow>, ReproError> {
    let spec = Spec::parse(&spec_text(grid), "dsh-workloads", Path::new("."))?;
    let points: Vec<(Setup, Outcome)> =
        dsh_fct::points(&spec, &out.join("sweep"), progress, parse)?;
    let mut table = Vec::new();
    for l in &grid.lengths {
        for &w in &grid.workloads {
            let pairs = paired(&points, |s| s.topology == l.topology && s.cdf == w);
            let m = summary(&pairs);
            table.push(CsvRow {
                topology: l.topology.name(),
                workload: w.name(),
                seeds: m.bg.seeds,
                bg_fct_dsh_over_sih_mean: Fixed(m.bg.mean),
                bg_fct_dsh_over_sih_sd: Fixed(m.bg.sd),
                fanin_fct_dsh_over_sih_mean: Fixed(m.fanin.mean),
                fanin_fct_dsh_over_sih_sd: Fixed(m.fanin.sd),
                sih_bg_fct_us: Fixed(m.sih_bg_fct_us),
                bg_completed_pct: Fixed(m.bg_completed_pct),
                sih_pause_frames: Fixed(m.sih_pause_frames),
                dsh_pause_frames: Fixed(m.dsh_pause_frames),
            });
        }
    }
    super::write_csv(&out.join("dsh_workloads.csv"), table.clone())?;
    // The workloads along x (1-4), one series per topology.
    let series: Vec<Series> = grid
        .lengths
        .iter()
        .map(|l| Series {
            name: format!("DSH, {}", l.topology.name()),
            points: table
                .iter()
                .filter(|r| r.topology == l.topology.name())
                .enumerate()
                .map(|(i, r)| ((i + 1) as f64, r.bg_fct_dsh_over_sih_mean.0))
                .collect(),
            line: false,
        })
        .collect();
    let names: Vec<String> = grid
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| format!("{} {}", i + 1, w.name()))
        .collect();
    xy_chart(
        &out.join("dsh_workloads.png"),
        "DSH Fig. 15: background FCT, DCQCN, total load 0.9 (SIH = 1)",
        &format!("workload ({})", names.join(", ")),
        "average background FCT normalised to SIH",
        &series,
    )?;
    Ok(table)
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let grid = Grid::default_grid();
    let table = sweep(out, &grid, progress)?;
    let lengths: Vec<String> = grid
        .lengths
        .iter()
        .map(|l| {
            format!(
                "{} {} us of arrivals in {} us",
                l.topology.name(),
                l.arrivals_us,
                l.run_us
            )
        })
        .collect();
    let mut rep = format!(
        "DSH Fig. 15: background FCT across workloads and topologies, DCQCN, background load {BG_LOAD} + fan-in bursts, total 0.9; {} seeds; {}; average FCT DSH / SIH (mean sd over seeds)\n",
        grid.seeds,
        lengths.join(", ")
    );
    let _ = writeln!(
        rep,
        "{:<9} {:<10} {:>14} {:>14} {:>10} {:>6} {:>9} {:>9}",
        "topology",
        "workload",
        "background",
        "fan-in",
        "SIH bg us",
        "bg%",
        "SIH PAUSE",
        "DSH PAUSE"
    );
    for r in &table {
        let _ = writeln!(
            rep,
            "{:<9} {:<10} {:>14} {:>14} {:>10.1} {:>6.1} {:>9.1} {:>9.1}",
            r.topology,
            r.workload,
            mean_sd(r.bg_fct_dsh_over_sih_mean, r.bg_fct_dsh_over_sih_sd),
            mean_sd(r.fanin_fct_dsh_over_sih_mean, r.fanin_fct_dsh_over_sih_sd),
            r.sih_bg_fct_us.0,
            r.bg_completed_pct.0,
            r.sih_pause_frames.0,
            r.dsh_pause_frames.0
        );
    }
    let _ = writeln!(
        rep,
        "{}",
        wrote(out, &["dsh_workloads.csv", "dsh_workloads.png"])
    );
    Ok(rep)
}
