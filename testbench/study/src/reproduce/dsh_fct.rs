//! DSH Fig. 14 (section V-B, "Benchmark Traffic"): the average FCT of background and of
//! fan-in flows against the background load, DSH normalised to SIH, DCQCN and PowerTCP.
//!
//! The network is the built-in `dsh-leafspine` ([`scenario()`]: 16 leaves and 16 spines,
//! 256 hosts, every link 100G and 2 us, tomahawk switches with seven lossless classes, all
//! running the transport): background flows of web search sizes between random hosts with
//! Poisson arrivals, each on one of classes 0-2, 4-6 drawn at random, and bursts of 16
//! senders x 64 KB from racks other than a random receiver's on class 3, Poisson too; the
//! two loads add up to the paper's 0.9 (`fabric::workload`: the load of the ToR uplinks).
//! The paper's figure gives no load values in its text; the grid takes background loads
//! 0.3, 0.5 and 0.7 (fan-in 0.6, 0.4 and 0.2).
//!
//! Each run (a policy, a transport, a background load, a seed) starts flows over
//! `arrivals_us` and lasts `run_us`; the FCT of a class is the mean over its flows that
//! completed within the run (the share completed is kept beside it: the long web search
//! flows of a short run do not finish). A seed draws the same flows under SIH and DSH, so
//! the normalised FCT is taken per seed (DSH's mean over SIH's), then its mean and standard
//! deviation over the seeds ([`ratio`]). The runs are the built-in sweep spec `dsh-fct` ([`spec_text`])
//! over [`MEASURE`], run by the sweep engine into `OUT/sweep/` (so on Slurm with `mmu-sim
//! sweep plan dsh-fct --emit slurm`).

use super::dsh_deadlock::POLICIES;
use super::fabric_net::{self, pause_frames, Edit, Transport};
use super::plot::{xy_chart, Series};
use super::{from_fields, to_fields, wrote, Progress, ReproError};
use crate::sweep::stats::mean_std;
use crate::sweep::{Measure, Spec, Values};
use fabric::cdf::Builtin;
use fabric::flows::Flow;
use hw_model::Policy;
use scenario::{Scenario, ScenarioError};
use serde_json::Value as Json;
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

/// The class of the fan-in bursts (the built-ins' `fan_in_bursts` workload).
pub const FAN_IN_PG: u8 = 3;
/// Each fan-in sender's bytes (the paper's 64 KB).
pub const FAN_IN_BYTES: u64 = 65_536;
/// The paper's total network load.
pub const TOTAL_LOAD: f64 = 0.9;
/// The paper: DSH cuts the average FCT of background and fan-in flows by up to these
/// shares (section V-B), DCQCN then PowerTCP.
pub const PAPER_CUTS: [(Transport, f64, f64); 2] = [
    (Transport::Dcqcn, 0.101, 0.433),
    (Transport::PowerTcp, 0.311, 0.577),
];

/// The two networks of the paper's benchmark, as built-ins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Topology {
    LeafSpine,
    FatTree,
}

impl Topology {
    pub const ALL: [Topology; 2] = [Topology::LeafSpine, Topology::FatTree];

    /// The name in a sweep's parameters and the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Topology::LeafSpine => "leafspine",
            Topology::FatTree => "fattree",
        }
    }

    /// The built-in of this network.
    pub fn builtin(self) -> &'static str {
        match self {
            Topology::LeafSpine => "dsh-leafspine",
            Topology::FatTree => "dsh-fattree",
        }
    }

    /// A measure's `topology` parameter.
    pub fn parse(v: Option<&Json>) -> Result<Self, ScenarioError> {
        v.and_then(Json::as_str)
            .and_then(|t| Self::ALL.into_iter().find(|x| x.name() == t))
            .ok_or_else(|| ScenarioError::new("topology", "allowed: leafspine, fattree"))
    }
}

/// One run of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    pub topology: Topology,
    pub policy: Policy,
    pub transport: Transport,
    /// The background's load; the fan-in bursts take the rest of [`TOTAL_LOAD`].
    pub bg_load: f64,
    /// The background's flow sizes.
    pub cdf: Builtin,
    pub seed: u64,
    pub arrivals_us: u64,
    pub run_us: u64,
}

/// The class of PowerTCP's ACKs: lossy class 7, not the data's. The built-ins' headroom is
/// sized for packets of `headroom_min_packet_bytes..=mtu_bytes` (the MTU on tomahawk), and
/// an ACK is 64 B, a cell per 84 wire bytes: on the data's lossless class, the ACKs that
/// reach a paused port overflow SIH's per-queue headroom (docs/results.md, "FCT under
/// background load"), and sizing the headroom for 64 B does not fit the buffer with seven
/// lossless classes.
pub const POWERTCP_FEEDBACK_PG: u8 = 7;

/// The built-in of `s.topology` with the run's policy, transport, loads, sizes, seeds and
/// lengths.
pub fn scenario(s: &Setup) -> Result<Scenario, ReproError> {
    let mut e = Edit::builtin(s.topology.builtin())?;
    e.set("switch.policy", format!("{:?}", s.policy.name()))?;
    for pg in 0..7 {
        s.transport.apply(&mut e, pg)?;
    }
    if s.transport == Transport::PowerTcp {
        e.set("fabric.feedback_pg", POWERTCP_FEEDBACK_PG)?;
    }
    let mut sc = e.scenario()?;
    sc.run.cycles = s.run_us * u64::from(sc.switch.core_clock_mhz);
    // The built-in's background (seed 1) and bursts (seed 2): seed 1 draws them.
    let spec = fabric_net::spec(&mut sc);
    // Rounded to 1e-9, so that 0.9 - 0.6 is the built-in's 0.3 (not 0.30000000000000004).
    let loads = [s.bg_load, ((TOTAL_LOAD - s.bg_load) * 1e9).round() / 1e9];
    for (k, (w, load)) in spec.workload.iter_mut().zip(loads).enumerate() {
        w.load = Some(load);
        w.seed = Some(2 * s.seed - 1 + k as u64);
        w.duration_us = Some(s.arrivals_us);
    }
    spec.workload[0].cdf = Some(s.cdf.name().into());
    Ok(sc)
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub bg_flows: u64,
    pub bg_completed: u64,
    /// Mean FCT of the completed background flows, ns (0 if none completed).
    pub bg_fct_ns: f64,
    pub fanin_flows: u64,
    pub fanin_completed: u64,
    pub fanin_fct_ns: f64,
    pub pause_frames: u64,
}

pub const FIELDS: &[&str] = &[
    "bg_flows",
    "bg_completed",
    "bg_fct_ns",
    "fanin_flows",
    "fanin_completed",
    "fanin_fct_ns",
    "pause_frames",
];

/// Whether `flow` is a fan-in flow: on class [`FAN_IN_PG`], which only the 64 KB bursts
/// use. A flow of the class of another size, or a background flow on it, means the
/// workloads are not the paper's: the run is void.
pub fn is_fan_in(flow: &Flow) -> Result<bool, ReproError> {
    match (flow.pg == FAN_IN_PG, flow.size == FAN_IN_BYTES) {
        (true, true) => Ok(true),
        (false, _) => Ok(false),
        (true, false) => Err(ReproError::Invariant(format!(
            "a flow of {} B on the fan-in class {FAN_IN_PG}: the bursts are {FAN_IN_BYTES} B and the background is on the other classes",
            flow.size
        ))),
    }
}

/// The flows and completed flows of each kind and their mean FCT, from the flows and
/// each flow's FCT (None if it did not complete).
pub fn tally(
    flows: &[Flow],
    fct_ns: impl Iterator<Item = (usize, Option<u64>)>,
) -> Result<Outcome, ReproError> {
    // (flows, completed, sum of FCTs) of the background, then the fan-in.
    let mut kinds = [(0u64, 0u64, 0u128); 2];
    for (i, fct) in fct_ns {
        let k = &mut kinds[usize::from(is_fan_in(&flows[i])?)];
        k.0 += 1;
        if let Some(ns) = fct {
            k.1 += 1;
            k.2 += u128::from(ns);
        }
    }
    let mean = |k: (u64, u64, u128)| k.2 as f64 / k.1.max(1) as f64;
    Ok(Outcome {
        bg_flows: kinds[0].0,
        bg_completed: kinds[0].1,
        bg_fct_ns: mean(kinds[0]),
        fanin_flows: kinds[1].0,
        fanin_completed: kinds[1].1,
        fanin_fct_ns: mean(kinds[1]),
        pause_frames: 0,
    })
}

/// One run.
pub fn measure(s: &Setup) -> Result<Outcome, ReproError> {
    let (summary, built) = fabric_net::run(&scenario(s)?)?;
    let fcts = summary.fct.iter().map(|f| (f.flow, f.fct_ns));
    Ok(Outcome {
        pause_frames: pause_frames(&summary),
        ..tally(&built.flows, fcts)?
    })
}

/// A normalised FCT: mean and standard deviation over seeds of DSH's over SIH's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ratio {
    pub mean: f64,
    pub sd: f64,
    pub seeds: usize,
}

/// DSH's FCT over SIH's per seed (`pairs` of SIH and DSH outcomes), then mean and
/// standard deviation over the seeds both of whose runs completed a flow of the kind (a
/// short run at a low fan-in load may see no burst); no such seed gives NaN.
pub fn ratio(pairs: &[(&Outcome, &Outcome)], fct: fn(&Outcome) -> (u64, f64)) -> Ratio {
    let per_seed: Vec<f64> = pairs
        .iter()
        .filter_map(|(sih, dsh)| match (fct(sih), fct(dsh)) {
            ((0, _), _) | (_, (0, _)) => None,
            ((_, s), (_, d)) => Some(d / s),
        })
        .collect();
    let (mean, sd) = match per_seed.len() {
        0 => (f64::NAN, f64::NAN),
        _ => mean_std(per_seed.iter().copied()),
    };
    Ratio {
        mean,
        sd,
        seeds: per_seed.len(),
    }
}

pub fn background(o: &Outcome) -> (u64, f64) {
    (o.bg_completed, o.bg_fct_ns)
}

pub fn fan_in(o: &Outcome) -> (u64, f64) {
    (o.fanin_completed, o.fanin_fct_ns)
}

/// The sweep: transports, background loads, seeds and each run's lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub transports: Vec<Transport>,
    pub bg_loads: Vec<f64>,
    pub seeds: u32,
    pub arrivals_us: u64,
    pub run_us: u64,
}

impl Grid {
    /// The reproduction: DCQCN and PowerTCP (its ACKs on [`POWERTCP_FEEDBACK_PG`]),
    /// background load 0.3, 0.5 and 0.7, 2 seeds, 400 us of arrivals in a 700 us run
    /// (docs/results.md gives what the paper's lengths cost).
    pub fn default_grid() -> Self {
        Self {
            transports: Transport::ALL.to_vec(),
            bg_loads: vec![0.3, 0.5, 0.7],
            seeds: 2,
            arrivals_us: 400,
            run_us: 700,
        }
    }
}

/// One run as a sweep measure: `policy`, `transport`, `bg_load`, `seed`, `arrivals_us`,
/// `run_us`.
pub const MEASURE: Measure = Measure {
    name: "dsh-fct",
    params: &[
        "arrivals_us",
        "bg_load",
        "policy",
        "run_us",
        "seed",
        "transport",
    ],
    fields: FIELDS,
    check: |v| parse(v).map(|_| ()),
    run: |v| {
        let s = parse(v).map_err(|e| e.to_string())?;
        to_fields(&measure(&s).map_err(|e| e.to_string())?, FIELDS)
    },
};

/// The built-in sweep spec over `grid`.
pub fn spec_text(grid: &Grid) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    format!(
        "name = \"dsh-fct\"\nmeasure = \"dsh-fct\"\ncollect = [{}]\n[parameters]\npolicy = [{}]\ntransport = [{}]\nbg_load = [{}]\narrivals_us = [{}]\nrun_us = [{}]\nseed = {{ from = 1, to = {} }}\n",
        list(FIELDS.iter().map(|f| format!("{f:?}")).collect()),
        list(POLICIES.iter().map(|p| format!("{:?}", p.name())).collect()),
        list(grid.transports.iter().map(|t| format!("{:?}", t.name())).collect()),
        list(grid.bg_loads.iter().map(f64::to_string).collect()),
        grid.arrivals_us,
        grid.run_us,
        grid.seeds
    )
}

/// A run's policy, seed and lengths (the parameters both reproductions take).
pub fn parse_common(v: &Values) -> Result<(Policy, u64, u64, u64), ScenarioError> {
    let bad = |k: &str, m: String| ScenarioError::new(k, m);
    let policy = v
        .get("policy")
        .and_then(Json::as_str)
        .ok_or_else(|| bad("policy", "expected a string; allowed: sih, dsh".into()))
        .and_then(|p| Policy::parse(p).map_err(|e| bad("policy", e.to_string())))?;
    let int = |k: &str, hi: u64| {
        v.get(k)
            .and_then(Json::as_u64)
            .filter(|x| (1..=hi).contains(x))
            .ok_or_else(|| bad(k, format!("expected an integer; allowed: 1..={hi}")))
    };
    let arrivals_us = int("arrivals_us", 1_000_000)?;
    let run_us = int("run_us", 1_000_000)?;
    if run_us < arrivals_us {
        return Err(bad(
            "run_us",
            format!("{run_us}; allowed: arrivals_us ({arrivals_us}) or more"),
        ));
    }
    Ok((policy, int("seed", 1_000_000)?, arrivals_us, run_us))
}

fn parse(v: &Values) -> Result<Setup, ScenarioError> {
    let (policy, seed, arrivals_us, run_us) = parse_common(v)?;
    let bg_load = v
        .get("bg_load")
        .and_then(Json::as_f64)
        .filter(|l| *l > 0.0 && *l < TOTAL_LOAD)
        .ok_or_else(|| {
            ScenarioError::new(
                "bg_load",
                "allowed: a number, 0 < bg_load < 0.9 (the total)",
            )
        })?;
    Ok(Setup {
        topology: Topology::LeafSpine,
        policy,
        transport: Transport::parse(v.get("transport"))?,
        bg_load,
        cdf: Builtin::WebSearch,
        seed,
        arrivals_us,
        run_us,
    })
}

/// The rows of `spec` run into `dir`, each its setup and outcome.
pub fn points(
    spec: &Spec,
    dir: &Path,
    progress: &mut dyn Progress,
    parse: fn(&Values) -> Result<Setup, ScenarioError>,
) -> Result<Vec<(Setup, Outcome)>, ReproError> {
    super::sweep_rows(spec, dir, progress)?
        .iter()
        .map(|r| {
            let setup = parse(&r.params)?;
            let none: [(&str, Json); 0] = [];
            Ok((setup, from_fields(&r.fields, none)?))
        })
        .collect()
}

/// The SIH and DSH outcomes of the same seed among `points` that `keep` selects.
pub fn paired(
    points: &[(Setup, Outcome)],
    keep: impl Fn(&Setup) -> bool,
) -> Vec<(&Outcome, &Outcome)> {
    let of = |policy: Policy| {
        let mut v: Vec<(u64, &Outcome)> = points
            .iter()
            .filter(|(s, _)| s.policy == policy && keep(s))
            .map(|(s, o)| (s.seed, o))
            .collect();
        v.sort_by_key(|(seed, _)| *seed);
        v
    };
    of(Policy::Sih)
        .into_iter()
        .zip(of(Policy::Dsh))
        .filter(|((a, _), (b, _))| a == b)
        .map(|((_, sih), (_, dsh))| (sih, dsh))
        .collect()
}

pub const CSV_HEADER: &str =
    "transport,bg_load,seeds,bg_fct_dsh_over_sih_mean,bg_fct_dsh_over_sih_sd,\
fanin_fct_dsh_over_sih_mean,fanin_fct_dsh_over_sih_sd,sih_bg_fct_us,sih_fanin_fct_us,\
bg_completed_pct,fanin_completed_pct,sih_pause_frames,dsh_pause_frames";

/// A ratio's mean and standard deviation over seeds, as the tables print them.
pub fn mean_sd(mean: Fixed<3>, sd: Fixed<3>) -> String {
    format!("{:.3} {:.3}", mean.0, sd.0)
}

/// One line of `dsh_fct.csv`: a transport and background load.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CsvRow {
    pub transport: &'static str,
    pub bg_load: Fixed<1>,
    pub seeds: usize,
    pub bg_fct_dsh_over_sih_mean: Fixed<3>,
    pub bg_fct_dsh_over_sih_sd: Fixed<3>,
    pub fanin_fct_dsh_over_sih_mean: Fixed<3>,
    pub fanin_fct_dsh_over_sih_sd: Fixed<3>,
    /// SIH's mean FCTs over seeds, us.
    pub sih_bg_fct_us: Fixed<1>,
    pub sih_fanin_fct_us: Fixed<1>,
    /// Flows completed, both policies and all seeds.
    pub bg_completed_pct: Fixed<1>,
    pub fanin_completed_pct: Fixed<1>,
    pub sih_pause_frames: Fixed<1>,
    pub dsh_pause_frames: Fixed<1>,
}

/// The columns both reproductions' rows share, from the SIH-DSH pairs of a point.
pub struct Summary {
    pub bg: Ratio,
    pub fanin: Ratio,
    pub sih_bg_fct_us: f64,
    pub sih_fanin_fct_us: f64,
    pub bg_completed_pct: f64,
    pub fanin_completed_pct: f64,
    pub sih_pause_frames: f64,
    pub dsh_pause_frames: f64,
}

pub fn summary(pairs: &[(&Outcome, &Outcome)]) -> Summary {
    let mean = |f: &dyn Fn(&(&Outcome, &Outcome)) -> f64| mean_std(pairs.iter().map(f)).0;
    let pct = |done: fn(&Outcome) -> (u64, u64)| {
        let (d, a) = pairs
            .iter()
            .flat_map(|(s, d)| [done(s), done(d)])
            .fold((0, 0), |(d, a), (x, y)| (d + x, a + y));
        100.0 * d as f64 / a.max(1) as f64
    };
    Summary {
        bg: ratio(pairs, background),
        fanin: ratio(pairs, fan_in),
        sih_bg_fct_us: mean(&|(s, _)| s.bg_fct_ns / 1e3),
        sih_fanin_fct_us: mean(&|(s, _)| s.fanin_fct_ns / 1e3),
        bg_completed_pct: pct(|o| (o.bg_completed, o.bg_flows)),
        fanin_completed_pct: pct(|o| (o.fanin_completed, o.fanin_flows)),
        sih_pause_frames: mean(&|(s, _)| s.pause_frames as f64),
        dsh_pause_frames: mean(&|(_, d)| d.pause_frames as f64),
    }
}

/// A plot of the table: its file, the kind of flow and the column it draws.
type Plot = (&'static str, &'static str, fn(&CsvRow) -> f64);

/// The sweep over `grid` (runs in `DIR/sweep/`): writes `DIR/dsh_fct.csv` (its rows are
/// returned) and the plots `DIR/dsh_fct_background.png` and `DIR/dsh_fct_fanin.png`.
pub fn sweep(
    out: &Path,
    grid: &Grid,
    progress: &mut dyn Progress,
) -> Result<Vec<CsvRow>, ReproError> {
    let spec = Spec::parse(&spec_text(grid), "dsh-fct", Path::new("."))?;
    let points = points(&spec, &out.join("sweep"), progress, parse)?;
    let mut table = Vec::new();
    for &t in &grid.transports {
        for &load in &grid.bg_loads {
            let pairs = paired(&points, |s| s.transport == t && s.bg_load == load);
            let m = summary(&pairs);
            table.push(CsvRow {
                transport: t.name(),
                bg_load: Fixed(load),
                seeds: m.bg.seeds,
                bg_fct_dsh_over_sih_mean: Fixed(m.bg.mean),
                bg_fct_dsh_over_sih_sd: Fixed(m.bg.sd),
                fanin_fct_dsh_over_sih_mean: Fixed(m.fanin.mean),
                fanin_fct_dsh_over_sih_sd: Fixed(m.fanin.sd),
                sih_bg_fct_us: Fixed(m.sih_bg_fct_us),
                sih_fanin_fct_us: Fixed(m.sih_fanin_fct_us),
                bg_completed_pct: Fixed(m.bg_completed_pct),
                fanin_completed_pct: Fixed(m.fanin_completed_pct),
                sih_pause_frames: Fixed(m.sih_pause_frames),
                dsh_pause_frames: Fixed(m.dsh_pause_frames),
            });
        }
    }
    super::write_csv(&out.join("dsh_fct.csv"), table.clone())?;
    let plots: [Plot; 2] = [
        ("dsh_fct_background.png", "background", |r| {
            r.bg_fct_dsh_over_sih_mean.0
        }),
        ("dsh_fct_fanin.png", "fan-in", |r| {
            r.fanin_fct_dsh_over_sih_mean.0
        }),
    ];
    for (file, kind, y) in plots {
        let series: Vec<Series> = grid
            .transports
            .iter()
            .map(|t| Series {
                name: format!("DSH, {}", t.name()),
                points: table
                    .iter()
                    .filter(|r| r.transport == t.name())
                    .map(|r| (r.bg_load.0, y(r)))
                    .collect(),
                line: true,
            })
            .chain(std::iter::once(Series {
                name: "SIH".into(),
                points: grid.bg_loads.iter().map(|&l| (l, 1.0)).collect(),
                line: true,
            }))
            .collect();
        xy_chart(
            &out.join(file),
            &format!("DSH Fig. 14: average FCT of {kind} flows, leaf-spine, total load 0.9"),
            "background load",
            "average FCT normalised to SIH",
            &series,
        )?;
    }
    Ok(table)
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let grid = Grid::default_grid();
    let table = sweep(out, &grid, progress)?;
    let mut rep = format!(
        "DSH Fig. 14: the 16 x 16 leaf-spine, 256 hosts at 100G, web search background + 16 x 64 KB fan-in bursts at total load {TOTAL_LOAD}; {} seeds, {} us of arrivals in {} us; average FCT DSH / SIH (mean sd over seeds)\n",
        grid.seeds, grid.arrivals_us, grid.run_us
    );
    let _ = writeln!(
        rep,
        "{:<9} {:>7} {:>14} {:>14} {:>10} {:>10} {:>6} {:>6}  paper (best cut bg / fan-in)",
        "transport", "bg load", "background", "fan-in", "SIH bg us", "SIH fi us", "bg%", "fi%"
    );
    for r in &table {
        let paper = PAPER_CUTS
            .iter()
            .find(|(t, _, _)| t.name() == r.transport)
            .map_or(String::new(), |(_, b, f)| {
                format!("{:.3} / {:.3}", 1.0 - b, 1.0 - f)
            });
        let _ = writeln!(
            rep,
            "{:<9} {:>7.1} {:>14} {:>14} {:>10.1} {:>10.1} {:>6.1} {:>6.1}  {paper}",
            r.transport,
            r.bg_load.0,
            mean_sd(r.bg_fct_dsh_over_sih_mean, r.bg_fct_dsh_over_sih_sd),
            mean_sd(r.fanin_fct_dsh_over_sih_mean, r.fanin_fct_dsh_over_sih_sd),
            r.sih_bg_fct_us.0,
            r.sih_fanin_fct_us.0,
            r.bg_completed_pct.0,
            r.fanin_completed_pct.0
        );
    }
    let _ = writeln!(
        rep,
        "{}",
        wrote(
            out,
            &["dsh_fct.csv", "dsh_fct_background.png", "dsh_fct_fanin.png"]
        )
    );
    Ok(rep)
}
