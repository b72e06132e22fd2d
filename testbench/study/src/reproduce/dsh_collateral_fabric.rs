//! DSH Fig. 13 (section V-A, "Collateral damage mitigation") on the fabric: the innocent
//! flow F0's throughput through two real switches, SIH vs DSH.
//!
//! The network is the built-in `dsh-collateral-fabric` (Fig. 13a as `[fabric.links]`):
//! S0 (node 28) with H0 and H1 (nodes 0, 1), S1 (node 29) with R0, R1 (2, 3) and H2-H25
//! (4-27), one link S0-S1; every link 100 Gb/s, 2 us. F0 (H0 -> R0) and F1 (H1 -> R1) are
//! long DCQCN flows on the lossless class 3 that share the link S0 -> S1 (the paper's
//! settle at 50 Gb/s each, DCQCN's defaults here near 25); at [`BURST_AT_US`] H2-H25 each
//! send 64 KB to R1, each within a microsecond drawn from the run's seed. The congestion
//! point is S1's port to R1; F1's ingress queue at S1 fills and S1 pauses the class on
//! its link from S0, which stops F0 too. The switches are `dsh-deadlock`'s (tomahawk,
//! DCQCN with its ECN marking) with the paper's 16 MiB buffer and seven lossless queues
//! per port. F0's throughput is the cells the link S1 -> R0 carried in each [`BIN_US`],
//! read from the fabric's link counters, counted in MTU packets.
//!
//! The runs (policy x seed) are the built-in sweep spec `dsh-collateral-fabric`
//! ([`spec_text`]) over [`MEASURE`].

use super::fabric_net::{self, pause_frames, Edit, Transport};
use super::plot::{xy_chart, Series};
use super::{Progress, ReproError};
use crate::sweep::stats::mean_std;
use crate::sweep::{Measure, Spec, Values};
use fabric::RunOptions;
use hw_model::Policy;
use scenario::{Scenario, ScenarioError};
use serde_json::Value as Json;
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

/// The built-in whose network the runs use.
pub const BASE: &str = "dsh-collateral-fabric";
const R0: u32 = 2;
/// When the fan-in starts (the built-in's workload with this `start_us`, whose seed draws
/// the senders' starts): F0 and F1 have settled (near 25
/// Gb/s each under DCQCN's defaults, docs/results.md) by then.
pub const BURST_AT_US: u64 = 1_000;
/// Simulated time after the burst.
pub const AFTER_US: u64 = 300;
/// F0's throughput bins.
pub const BIN_US: u64 = 10;
/// The lossless class of F0, F1 and the fan-in.
const CLASS: u8 = 3;
pub const POLICIES: [Policy; 2] = [Policy::Sih, Policy::Dsh];
pub const SEEDS: u64 = 2;

const FIELDS: &[&str] = &["f0_gbps", "pause_frames", "clock_hz"];

pub const MEASURE: Measure = Measure {
    name: "dsh-collateral-fabric",
    params: &["policy", "seed", "transport"],
    fields: FIELDS,
    check: |v| parse(v).map(|_| ()),
    run: |v| {
        let (policy, transport, seed) = parse(v).map_err(|e| e.to_string())?;
        let r = measure(policy, transport, seed).map_err(|e| e.to_string())?;
        let values: [Json; 3] = [r.f0_gbps.into(), r.pause_frames.into(), r.clock_hz.into()];
        Ok(FIELDS.iter().map(|k| k.to_string()).zip(values).collect())
    },
};

pub fn spec_text(seeds: u64) -> String {
    format!(
        "name = \"dsh-collateral-fabric\"\nmeasure = \"dsh-collateral-fabric\"\ncollect = [{}]\n[parameters]\npolicy = [{}]\ntransport = [{}]\nseed = {{ from = 1, to = {seeds} }}\n",
        FIELDS.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(", "),
        POLICIES.iter().map(|p| format!("{:?}", p.name())).collect::<Vec<_>>().join(", "),
        Transport::ALL.map(|t| format!("{:?}", t.name())).join(", "),
    )
}

fn parse(v: &Values) -> Result<(Policy, Transport, u64), ScenarioError> {
    let bad = |k: &str, m: &str| ScenarioError::new(k, m);
    let policy = v
        .get("policy")
        .and_then(Json::as_str)
        .ok_or_else(|| bad("policy", "expected a string; allowed: sih, dsh, l2bm"))
        .and_then(|p| Policy::parse(p).map_err(|e| bad("policy", &e.to_string())))?;
    let seed = v
        .get("seed")
        .and_then(Json::as_u64)
        .filter(|s| (1..=1_000_000).contains(s))
        .ok_or_else(|| bad("seed", "expected an integer; allowed: 1..=1000000"))?;
    Ok((policy, Transport::parse(v.get("transport"))?, seed))
}

/// One run: F0's throughput per bin from the start, the PAUSE frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub f0_gbps: Vec<f64>,
    pub pause_frames: u64,
    pub clock_hz: u64,
}

/// The built-in under `policy` with F0, F1 and the fan-in on `transport`, the fan-in
/// (the workload starting at [`BURST_AT_US`]) drawn from `seed`.
pub fn scenario(policy: Policy, transport: Transport, seed: u64) -> Result<Scenario, ReproError> {
    let mut e = Edit::builtin(BASE)?;
    e.set("switch.policy", format!("{:?}", policy.name()))?;
    transport.apply(&mut e, CLASS)?;
    let burst = e.entry("workload", "start_us", BURST_AT_US as i64)?;
    e.set(&format!("fabric.workload[{burst}].seed"), seed)?;
    e.scenario()
}

pub fn measure(policy: Policy, transport: Transport, seed: u64) -> Result<Outcome, ReproError> {
    let s = scenario(policy, transport, seed)?;
    let plan = fabric::build::plan(&s, Path::new("."), Default::default())?;
    // R0's switch as the scenario configures it (a `[[fabric.switch]]` entry included).
    let cfg = plan.configs.of(plan.topo.tor_of(R0));
    let mut built = plan.build()?;
    let to_r0 = built.net.topology().ports(R0)[0];
    let mhz = u64::from(cfg.core_clock_mhz);
    let bins = (BURST_AT_US + AFTER_US) / BIN_US;
    let cells_per_packet = (cfg.mtu_bytes + cfg.packet_overhead_bytes).div_ceil(cfg.cell_bytes);
    let gbps = |cells: u64| {
        cells as f64 / f64::from(cells_per_packet) * f64::from(cfg.mtu_bytes) * 8.0
            / (BIN_US as f64 * 1e3)
    };
    let mut f0_gbps = Vec::new();
    let mut last = 0;
    let mut summary = None;
    for bin in 1..=bins {
        let s = built
            .net
            .run(&RunOptions {
                end_cycle: bin * BIN_US * mhz,
                ..built.options
            })
            .map_err(fabric_net::broken)?;
        let cells = s
            .links
            .iter()
            .find(|l| l.link == to_r0 && l.to == R0)
            .map_or(0, |l| l.cells);
        f0_gbps.push(gbps(cells - last));
        last = cells;
        summary = Some(s);
    }
    let s = summary.ok_or_else(|| ReproError::Invariant("no bins".into()))?;
    if !s.ok() {
        return Err(ReproError::Invariant(s.violations.join("; ")));
    }
    Ok(Outcome {
        f0_gbps,
        pause_frames: pause_frames(&s),
        clock_hz: s.clock_hz,
    })
}

pub const CSV_HEADER: &str = "policy,transport,t_us,f0_gbps_mean,f0_gbps_sd";

#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub policy: &'static str,
    pub transport: &'static str,
    pub t_us: u64,
    pub f0_gbps_mean: Fixed<2>,
    pub f0_gbps_sd: Fixed<2>,
}

/// Per transport and policy: F0's throughput per bin, mean and standard deviation over
/// the seeds, and the PAUSE frames of each run.
pub struct Curve {
    pub policy: Policy,
    pub transport: Transport,
    pub mean_sd: Vec<(f64, f64)>,
    pub pause_frames: Vec<u64>,
}

impl Curve {
    /// F0's mean throughput over the bins from the burst to `us` after it.
    pub fn mean_after_burst(&self, us: u64) -> f64 {
        let from = (BURST_AT_US / BIN_US) as usize;
        let to = ((BURST_AT_US + us) / BIN_US) as usize;
        let bins = &self.mean_sd[from..to.min(self.mean_sd.len())];
        bins.iter().map(|b| b.0).sum::<f64>() / bins.len().max(1) as f64
    }
}

pub fn sweep(
    out: &Path,
    seeds: u64,
    progress: &mut dyn Progress,
) -> Result<Vec<Curve>, ReproError> {
    let spec = Spec::parse(&spec_text(seeds), "dsh-collateral-fabric", Path::new("."))?;
    let rows = super::sweep_rows(&spec, &out.join("sweep"), progress)?;
    let mut runs: Vec<((Policy, Transport), Vec<f64>, u64)> = Vec::new();
    for r in &rows {
        let (policy, transport, _) = parse(&r.params)?;
        let series = r
            .fields
            .get("f0_gbps")
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_f64).collect())
            .ok_or_else(|| ReproError::Invariant("f0_gbps: missing".into()))?;
        let pause = super::int_field(&r.fields, "pause_frames")?;
        runs.push(((policy, transport), series, pause));
    }
    let curves: Vec<Curve> = Transport::ALL
        .into_iter()
        .flat_map(|t| POLICIES.map(|p| (p, t)))
        .map(|(policy, transport)| {
            let of: Vec<_> = runs.iter().filter(|r| r.0 == (policy, transport)).collect();
            let bins = of.iter().map(|r| r.1.len()).min().unwrap_or(0);
            Curve {
                policy,
                transport,
                mean_sd: (0..bins)
                    .map(|b| mean_std(of.iter().map(|r| r.1[b])))
                    .collect(),
                pause_frames: of.iter().map(|r| r.2).collect(),
            }
        })
        .collect();
    let t_us = |b: usize| b as u64 * BIN_US;
    super::write_csv(
        &out.join("collateral_fabric.csv"),
        curves.iter().flat_map(|c| {
            c.mean_sd.iter().enumerate().map(|(b, &(m, sd))| CsvRow {
                policy: c.policy.name(),
                transport: c.transport.name(),
                t_us: t_us(b),
                f0_gbps_mean: Fixed(m),
                f0_gbps_sd: Fixed(sd),
            })
        }),
    )?;
    let series: Vec<Series> = curves
        .iter()
        .map(|c| Series {
            name: format!("{} {}", c.policy.name().to_uppercase(), c.transport.name()),
            points: c
                .mean_sd
                .iter()
                .enumerate()
                .map(|(b, m)| (t_us(b) as f64 - BURST_AT_US as f64, m.0))
                .collect(),
            line: true,
        })
        .collect();
    xy_chart(
        &out.join("collateral_fabric.png"),
        "DSH Fig. 13 on the fabric: innocent flow F0 through S0 and S1",
        "time from the fan-in (us)",
        "F0 throughput (Gb/s)",
        &series,
    )?;
    Ok(curves)
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let curves = sweep(out, SEEDS, progress)?;
    let mut rep = format!(
        "DSH Fig. 13 on the fabric: F0 (H0 -> R0) and F1 (H1 -> R1) through S0 -> S1 under DCQCN or PowerTCP, 24 x 64 KB fan-in to R1 at {BURST_AT_US} us, {SEEDS} seeds\n"
    );
    let _ = writeln!(
        rep,
        "{:<9} {:<6} {:>18} {:>18} {:>14} {:>22}",
        "transport",
        "policy",
        "F0 before (Gb/s)",
        "F0 0-100 us after",
        "F0 lowest bin",
        "PAUSE frames (mean sd)"
    );
    for c in &curves {
        let before = c.mean_sd[(BURST_AT_US / BIN_US) as usize - 1].0;
        let lowest = c.mean_sd[(BURST_AT_US / BIN_US) as usize..]
            .iter()
            .map(|b| b.0)
            .fold(f64::INFINITY, f64::min);
        let (pm, psd) = mean_std(c.pause_frames.iter().map(|&p| p as f64));
        let _ = writeln!(
            rep,
            "{:<9} {:<6} {:>18.2} {:>18.2} {:>14.2} {:>22}",
            c.transport.name(),
            c.policy.name(),
            before,
            c.mean_after_burst(100),
            lowest,
            format!("{pm:.1} {psd:.1}")
        );
    }
    let _ = writeln!(
        rep,
        "paper (Fig. 13b, DCQCN and PowerTCP): F0 drops sharply under SIH and stays near 50 Gb/s under DSH"
    );
    let _ = writeln!(
        rep,
        "{}",
        super::wrote(out, &["collateral_fabric.csv", "collateral_fabric.png"])
    );
    Ok(rep)
}
