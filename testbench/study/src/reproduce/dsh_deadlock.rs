//! DSH Fig. 12b (section V-A, "Deadlock avoidance") on the fabric: the CDF of deadlock
//! onset over runs, SIH vs DSH, DCQCN and PowerTCP (the built-in's DCQCN, or
//! ns3-datacenter's PowerTCP with every switch stamping INT, [`Transport`]).
//!
//! The network is the built-in `dsh-deadlock` ([`scenario()`]: hosts 0-63 under leaves
//! L0-L3 = 64-67, spines S0, S1 = 68, 69; links S0-L3 and S1-L0 failed, so the fan-ins
//! close the cyclic buffer dependency S0 -> L1 -> S1 -> L2 -> S0), with its DCQCN on the
//! lossless class 3 and its ECN marking, and these settings of the paper's
//! (docs/results.md says what each changes, measured):
//! - the fan-in ratio (the paper: "the number of flows") is the number of senders of each
//!   of the four fan-ins L0 -> L3, L3 -> L0, L1 -> L2, L2 -> L1: the first `fan_in` hosts
//!   of the sending leaf, to the last host of the other, Poisson arrivals together at load
//!   0.5 of the receiver's 100G link;
//! - Hadoop sizes as HPCC's `FbHdp_distribution.txt` gives them (`fb-hadoop`, mean 120 kB;
//!   ns3-datacenter's `hadoop` points, mean 3.42 MB, give 41 flows in 5 ms that DCQCN
//!   keeps below every pause threshold);
//! - the paper's Tomahawk buffer, 16 MiB, and its seven lossless queues per port, so SIH
//!   reserves `eta` for each of them as the paper's 12 MB headroom does.
//!
//! Each run (a policy, a fan-in ratio, a seed) lasts `duration_us` and stops at the first
//! deadlock the detector finds (`fabric::deadlock`); its onset is the cycle the cycle of
//! paused queues froze. The runs are the built-in sweep spec `dsh-deadlock` ([`spec_text`])
//! over [`MEASURE`], run by the sweep engine into `OUT/sweep/` (so on Slurm with `mmu-sim
//! sweep plan dsh-deadlock --emit slurm`).

use super::fabric_net::{self, pause_frames, Edit, Transport};
use super::plot::{xy_chart, Series};
use super::{int_field, wrote, Progress, ReproError};
use crate::sweep::stats::mean_std;
use crate::sweep::{Measure, Spec, Values};
use fabric::cdf::Builtin;
use hw_model::Policy;
use scenario::{Scenario, ScenarioError, WorkloadKind, WorkloadSpec};
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

/// The built-in whose switches and transports the runs use.
pub const BASE: &str = "dsh-deadlock";
/// The four fan-ins, (sending leaf, receiving leaf) by leaf index.
const FAN_INS: [(u32, u32); 4] = [(0, 3), (3, 0), (1, 2), (2, 1)];
const HOSTS_PER_LEAF: u32 = 16;
/// The lossless class of the fan-in flows (the built-in's DCQCN class).
const CLASS: u8 = 3;
/// Load of each fan-in on its receiver's link.
const LOAD: f64 = 0.5;
/// The paper's Tomahawk buffer.
pub const BUFFER_BYTES: u64 = 16 << 20;
/// The paper's lossless queues per port (eight, less the one for ACKs and PFC frames).
const LOSSLESS: [u8; 7] = [0, 1, 2, 3, 4, 5, 6];
pub const POLICIES: [Policy; 2] = [Policy::Sih, Policy::Dsh];

/// The sweep: transports, fan-in ratios, seeds per point and each run's length.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub transports: Vec<Transport>,
    pub fan_ins: Vec<u32>,
    pub seeds: u32,
    pub duration_us: u64,
}

impl Grid {
    /// The reproduction: DCQCN and PowerTCP, fan-in ratios 1, 8 and 15, 3 runs each, 5 ms
    /// (the paper: 1-15, 100 runs of 100 ms; docs/results.md gives what that costs).
    pub fn default_grid() -> Self {
        Self {
            transports: Transport::ALL.to_vec(),
            fan_ins: vec![1, 8, 15],
            seeds: 3,
            duration_us: 5_000,
        }
    }
}

const FIELDS: &[&str] = &[
    "deadlock",
    "onset_cycle",
    "flows",
    "flows_completed",
    "pause_frames",
    "cnps",
    "clock_hz",
];

/// One run as a sweep measure: parameters `policy`, `transport`, `fan_in`, `seed`,
/// `duration_us`.
pub const MEASURE: Measure = Measure {
    name: "dsh-deadlock",
    params: &["duration_us", "fan_in", "policy", "seed", "transport"],
    fields: FIELDS,
    check: |v| parse(v).map(|_| ()),
    run: |v| {
        let p = parse(v).map_err(|e| e.to_string())?;
        let r = measure(&p).map_err(|e| e.to_string())?;
        let ints = [
            u64::from(r.deadlock),
            r.onset_cycle,
            r.flows,
            r.flows_completed,
            r.pause_frames,
            r.cnps,
            r.clock_hz,
        ];
        Ok(FIELDS
            .iter()
            .zip(ints)
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect())
    },
};

/// The built-in sweep spec over `grid`.
pub fn spec_text(grid: &Grid) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    format!(
        "name = \"dsh-deadlock\"\nmeasure = \"dsh-deadlock\"\ncollect = [{}]\n[parameters]\npolicy = [{}]\ntransport = [{}]\nfan_in = [{}]\nduration_us = [{}]\nseed = {{ from = 1, to = {} }}\n",
        list(FIELDS.iter().map(|f| format!("{f:?}")).collect()),
        list(POLICIES.iter().map(|p| format!("{:?}", p.name())).collect()),
        list(grid.transports.iter().map(|t| format!("{:?}", t.name())).collect()),
        list(grid.fan_ins.iter().map(u32::to_string).collect()),
        grid.duration_us,
        grid.seeds
    )
}

/// One run's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub policy: Policy,
    pub transport: Transport,
    pub fan_in: u32,
    pub seed: u64,
    pub duration_us: u64,
}

fn parse(v: &Values) -> Result<Params, ScenarioError> {
    let bad = |k: &str, m: &str| ScenarioError::new(k, m);
    let policy = v
        .get("policy")
        .and_then(|p| p.as_str())
        .ok_or_else(|| bad("policy", "expected a string; allowed: sih, dsh, l2bm"))
        .and_then(|p| Policy::parse(p).map_err(|e| bad("policy", &e.to_string())))?;
    let int = |k: &str, range: std::ops::RangeInclusive<u64>| {
        v.get(k)
            .and_then(|x| x.as_u64())
            .filter(|x| range.contains(x))
            .ok_or_else(|| {
                bad(
                    k,
                    &format!(
                        "expected an integer; allowed: {}..={}",
                        range.start(),
                        range.end()
                    ),
                )
            })
    };
    Ok(Params {
        policy,
        transport: Transport::parse(v.get("transport"))?,
        fan_in: int("fan_in", 1..=u64::from(HOSTS_PER_LEAF - 1))? as u32,
        seed: int("seed", 1..=1_000_000)?,
        duration_us: int("duration_us", 1..=1_000_000)?,
    })
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub deadlock: bool,
    /// The cycle the deadlock froze (0 without one).
    pub onset_cycle: u64,
    pub flows: u64,
    pub flows_completed: u64,
    pub pause_frames: u64,
    /// CNPs the DCQCN senders received.
    pub cnps: u64,
    pub clock_hz: u64,
}

/// The paper's buffer and lossless queues under `policy`, on every switch of `e`.
fn paper_switch(e: &mut Edit, policy: Policy) -> Result<(), ReproError> {
    e.set("switch.policy", format!("{:?}", policy.name()))?
        .set("switch.buffer_bytes", BUFFER_BYTES)?
        .set("switch.lossless_priorities", format!("{LOSSLESS:?}"))?;
    Ok(())
}

/// The built-in `dsh-deadlock` with the run's switches, fan-ins and length.
pub fn scenario(p: &Params) -> Result<Scenario, ReproError> {
    let mut e = Edit::builtin(BASE)?;
    paper_switch(&mut e, p.policy)?;
    p.transport.apply(&mut e, CLASS)?;
    let mut s = e.scenario()?;
    s.run.cycles = p.duration_us * u64::from(s.switch.core_clock_mhz);
    let spec = fabric_net::spec(&mut s);
    spec.stop_at_deadlock = true;
    spec.workload = FAN_INS
        .into_iter()
        .enumerate()
        .map(|(k, (from, to))| WorkloadSpec {
            kind: WorkloadKind::Poisson,
            pg: Some(CLASS),
            dport: None,
            // Seeds 1-4 for seed 1, as the built-in's workloads (whose sizes are
            // ns3-datacenter's `hadoop`, not these).
            seed: Some((p.seed - 1) * FAN_INS.len() as u64 + k as u64 + 1),
            start_us: None,
            cdf: Some(Builtin::FbHadoop.name().into()),
            load: Some(LOAD / f64::from(p.fan_in)),
            base: Some("host-link".into()),
            duration_us: Some(p.duration_us),
            from: Some((0..p.fan_in).map(|i| from * HOSTS_PER_LEAF + i).collect()),
            to: Some(vec![to * HOSTS_PER_LEAF + HOSTS_PER_LEAF - 1]),
            pgs: None,
            receiver: None,
            senders: None,
            jitter_ns: None,
            size_bytes: None,
        })
        .collect();
    Ok(s)
}

/// One run.
pub fn measure(p: &Params) -> Result<Outcome, ReproError> {
    let (s, _) = fabric_net::run(&scenario(p)?)?;
    Ok(Outcome {
        deadlock: s.deadlock.is_some(),
        onset_cycle: s.deadlock.as_ref().map_or(0, |d| d.onset_cycle),
        flows: s.flows as u64,
        flows_completed: s.flows_completed as u64,
        pause_frames: pause_frames(&s),
        cnps: s.fct.iter().map(|f| f.sender.cnps).sum(),
        clock_hz: s.clock_hz,
    })
}

/// A run and what it measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub params: Params,
    pub outcome: Outcome,
}

/// One line of `deadlock.csv`.
#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub policy: &'static str,
    pub transport: &'static str,
    pub fan_in: u32,
    pub seed: u64,
    pub duration_us: u64,
    pub deadlock: bool,
    pub onset_ms: Fixed<4>,
    pub pause_frames: u64,
    pub cnps: u64,
    pub flows: u64,
    pub flows_completed: u64,
}

pub const CSV_HEADER: &str =
    "policy,transport,fan_in,seed,duration_us,deadlock,onset_ms,pause_frames,cnps,flows,flows_completed";

impl Point {
    fn onset_ms(&self) -> Option<f64> {
        let o = &self.outcome;
        o.deadlock
            .then(|| o.onset_cycle as f64 * 1e3 / o.clock_hz as f64)
    }
}

/// The CDF of deadlock onset over `points` (every run in the denominator, a run without a
/// deadlock never reaching it): `(onset ms, fraction of runs deadlocked by then)`, one
/// step per deadlock.
pub fn onset_cdf(points: &[&Point]) -> Vec<(f64, f64)> {
    let mut onsets: Vec<f64> = points.iter().filter_map(|p| p.onset_ms()).collect();
    onsets.sort_by(f64::total_cmp);
    let n = points.len() as f64;
    onsets
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, (i + 1) as f64 / n))
        .collect()
}

/// The sweep over `grid` (runs in `DIR/sweep/`): writes `DIR/deadlock.csv` and
/// `DIR/deadlock_cdf.png`.
pub fn sweep(
    out: &Path,
    grid: &Grid,
    progress: &mut dyn Progress,
) -> Result<Vec<Point>, ReproError> {
    let spec = Spec::parse(&spec_text(grid), "dsh-deadlock", Path::new("."))?;
    let rows = super::sweep_rows(&spec, &out.join("sweep"), progress)?;
    let mut points = rows
        .iter()
        .map(|r| {
            let f = |k| int_field(&r.fields, k);
            Ok(Point {
                params: parse(&r.params)?,
                outcome: Outcome {
                    deadlock: f("deadlock")? == 1,
                    onset_cycle: f("onset_cycle")?,
                    flows: f("flows")?,
                    flows_completed: f("flows_completed")?,
                    pause_frames: f("pause_frames")?,
                    cnps: f("cnps")?,
                    clock_hz: f("clock_hz")?,
                },
            })
        })
        .collect::<Result<Vec<_>, ReproError>>()?;
    points.sort_by_key(|p| {
        let q = &p.params;
        (
            q.transport,
            POLICIES.iter().position(|&x| x == q.policy),
            q.fan_in,
            q.seed,
        )
    });
    super::write_csv(
        &out.join("deadlock.csv"),
        points.iter().map(|p| CsvRow {
            policy: p.params.policy.name(),
            transport: p.params.transport.name(),
            fan_in: p.params.fan_in,
            seed: p.params.seed,
            duration_us: p.params.duration_us,
            deadlock: p.outcome.deadlock,
            onset_ms: Fixed(p.onset_ms().unwrap_or(0.0)),
            pause_frames: p.outcome.pause_frames,
            cnps: p.outcome.cnps,
            flows: p.outcome.flows,
            flows_completed: p.outcome.flows_completed,
        }),
    )?;
    let series: Vec<Series> = arms(grid)
        .map(|(t, policy)| Series {
            name: format!("{} {}", policy.name().to_uppercase(), t.name()),
            points: onset_cdf(&of(&points, policy, t, None)),
            line: true,
        })
        .collect();
    xy_chart(
        &out.join("deadlock_cdf.png"),
        "DSH Fig. 12b on the fabric: deadlock onset over runs",
        "deadlock onset (ms)",
        "fraction of runs deadlocked",
        &series,
    )?;
    Ok(points)
}

/// The grid's transports, each with every policy.
fn arms(grid: &Grid) -> impl Iterator<Item = (Transport, Policy)> + '_ {
    grid.transports
        .iter()
        .flat_map(|&t| POLICIES.map(|p| (t, p)))
}

/// The points of `policy` on `transport` (and of one fan-in ratio).
fn of(points: &[Point], policy: Policy, transport: Transport, fan_in: Option<u32>) -> Vec<&Point> {
    points
        .iter()
        .filter(|p| {
            let q = &p.params;
            q.policy == policy && q.transport == transport && fan_in.is_none_or(|f| q.fan_in == f)
        })
        .collect()
}

/// The table: per transport, policy and fan-in ratio, runs deadlocked, the onset and the
/// PAUSE frames (mean and standard deviation over the seeds).
pub fn table(points: &[Point], grid: &Grid) -> String {
    let mut t = format!(
        "{:<9} {:<6} {:>6} {:>10} {:>18} {:>22} {:>12}\n",
        "transport",
        "policy",
        "fan-in",
        "deadlocked",
        "onset ms (mean sd)",
        "PAUSE frames (mean sd)",
        "flows done"
    );
    let rows = arms(grid).flat_map(|(tr, p)| grid.fan_ins.iter().map(move |&f| (tr, p, f)));
    for (transport, policy, f) in rows {
        let ps = of(points, policy, transport, Some(f));
        let onsets: Vec<f64> = ps.iter().filter_map(|p| p.onset_ms()).collect();
        let onset = if onsets.is_empty() {
            "-".to_string()
        } else {
            let (m, sd) = mean_std(onsets.iter().copied());
            format!("{m:.3} {sd:.3}")
        };
        let (pm, psd) = mean_std(ps.iter().map(|p| p.outcome.pause_frames as f64));
        let (done, all) = ps.iter().fold((0, 0), |(d, a), p| {
            (d + p.outcome.flows_completed, a + p.outcome.flows)
        });
        let _ = writeln!(
            t,
            "{:<9} {:<6} {:>6} {:>10} {:>18} {:>22} {:>12}",
            transport.name(),
            policy.name(),
            f,
            format!("{}/{}", onsets.len(), ps.len()),
            onset,
            format!("{pm:.1} {psd:.1}"),
            format!("{done}/{all}")
        );
    }
    t
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let grid = Grid::default_grid();
    let points = sweep(out, &grid, progress)?;
    let mut rep = format!(
        "DSH Fig. 12b on the fabric: leaf-spine with S0-L3 and S1-L0 failed, four fan-ins of 1, 8 or 15 senders at load {LOAD} of the receiver, fb-hadoop sizes, DCQCN or PowerTCP, 16 MiB, 7 lossless queues; {} runs of {} us per point\n",
        grid.seeds, grid.duration_us
    );
    rep += &table(&points, &grid);
    for (transport, policy) in arms(&grid) {
        let ps = of(&points, policy, transport, None);
        let n = ps.iter().filter(|p| p.outcome.deadlock).count();
        let _ = writeln!(
            rep,
            "{} {}: {n} of {} runs deadlocked",
            policy.name().to_uppercase(),
            transport.name(),
            ps.len()
        );
    }
    let _ = writeln!(
        rep,
        "paper (100 runs of 100 ms): SIH deadlocks in every run, DSH avoids 96 % with DCQCN and all with PowerTCP"
    );
    let _ = writeln!(rep, "{}", wrote(out, &["deadlock.csv", "deadlock_cdf.png"]));
    Ok(rep)
}
