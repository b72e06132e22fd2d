//! DSH Fig. 13a (collateral damage) as far as one switch shows it.
//!
//! The switch under test plays `S1` of Fig. 13a. Its ingress port 0 is the link from `S0`
//! and carries two flows of the same lossless class at 50 Gb/s each: the innocent `F0`
//! to port 20 (uncongested) and `F1` to port 30. At [`BURST_START_NS`] 24 fan-in flows
//! from ports 2-25 send 64 KB each to port 30 at once, like `H2`-`H25`. `F1`'s packets
//! then queue behind the fan-in at port 30 and fill ingress queue (0, class); when it
//! crosses its pause threshold the switch pauses the class on port 0, which stops `F0` at
//! the partner as well: the collateral damage. `F0`'s delivered throughput at port 20 is
//! sampled every [`BIN_NS`].
//!
//! What one switch cannot show: the partner here is an ideal sender with an unbounded
//! queue, so `F0` loses no data and catches up at line rate after the RESUME; in the
//! paper, `S0` itself fills, pauses its hosts, and congestion control reacts. Only the
//! dip and its length are comparable.

use super::dsh_fig11::PACKET_BYTES;
use super::plot::{xy_chart, Series};
use super::{cycles_to_ns, flow_toml, paper_headroom_line, tomahawk_header, Progress, ReproError};
use hw_model::Policy;
use scenario::{Overrides, Scenario};
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;
use switch_run::Sim;

/// The upstream port carrying both the innocent and the congesting flow.
const SHARED_PORT: usize = 0;
/// Egress of the innocent flow `F0`.
const INNOCENT_DST: usize = 20;
/// Egress of `F1` and the fan-in.
const CONGESTED_DST: usize = 30;
const FANIN_SRCS: std::ops::RangeInclusive<usize> = 2..=25;
/// Bytes of each fan-in flow (the paper's 64 KB, in whole packets).
const FANIN_BYTES: u64 = 64 * 1024 / PACKET_BYTES * PACKET_BYTES;
const CLASS: usize = 3;
/// Rate of `F0` and `F1` each, Gb/s ("after their throughputs reach 50 Gbps").
const FLOW_GBPS: u32 = 50;
pub const BURST_START_NS: u64 = 50_000;
/// Simulated time after the burst starts: the burst drains in about 130 us.
const AFTER_NS: u64 = 400_000;
pub const BIN_NS: u64 = 5_000;

/// One policy's run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub policy: Policy,
    /// `(bin start, us from the burst start; F0 Gb/s in the bin)`.
    pub series: Vec<(f64, f64)>,
    /// F0's mean throughput over the first 200 us after the burst starts, Gb/s.
    pub mean_gbps_200us: f64,
    /// F0's lowest bin, Gb/s.
    pub min_gbps: f64,
    /// Time port 0's partner had the class paused, ns.
    pub paused_ns: f64,
    /// PAUSE frames toward port 0.
    pub pause_frames: u64,
}

fn scenario(burst_cycle: u64, cycles: u64) -> Result<Scenario, ReproError> {
    let mut s = tomahawk_header("collateral", cycles);
    for dst in [INNOCENT_DST, CONGESTED_DST] {
        let pattern = format!("pattern = \"constant\"\nrate_gbps = {FLOW_GBPS}");
        s += &flow_toml(SHARED_PORT, dst, CLASS, PACKET_BYTES as u32, &pattern);
    }
    for src in FANIN_SRCS {
        let pattern = format!(
            "pattern = \"burst\"\nburst_bytes = {FANIN_BYTES}\nstart_cycle = {burst_cycle}"
        );
        s += &flow_toml(src, CONGESTED_DST, CLASS, PACKET_BYTES as u32, &pattern);
    }
    Ok(Scenario::parse(&s, "collateral")?)
}

/// One run under `policy`.
pub fn measure(policy: Policy) -> Result<Run, ReproError> {
    let probe = scenario(0, 1)?.plan(&Overrides::default())?;
    let clock = probe.derived.clock_hz;
    let cyc = |ns: u64| ns * clock / 1_000_000_000;
    let burst_cycle = cyc(BURST_START_NS);
    let cycles = burst_cycle + cyc(AFTER_NS);
    let bin = cyc(BIN_NS);
    let ov = Overrides {
        policy: Some(policy),
        ..Overrides::default()
    };
    let mut sim = Sim::new(&scenario(burst_cycle, cycles)?, ov)?;
    let mut bins = vec![0u64; (cycles / bin) as usize + 1];
    while sim.now() < cycles {
        sim.step()?;
        let b = &mut bins[(sim.now() / bin) as usize];
        for dep in &sim.outputs().departures {
            if dep.port as usize == INNOCENT_DST && dep.beat.eop() {
                *b += dep.beat.hdr.len as u64;
            }
        }
        if sim.scoreboard().dropped_lossless() > 0 {
            return Err(ReproError::Invariant(format!(
                "collateral {}: lossless drop by cycle {}",
                policy.name(),
                sim.now()
            )));
        }
    }
    let summary = sim.summary(0.0);
    if !summary.ok() {
        return Err(ReproError::Invariant(format!(
            "collateral {}: {}",
            policy.name(),
            summary.violations.join("; ")
        )));
    }
    let gbps = |bytes: u64| bytes as f64 * 8.0 / BIN_NS as f64;
    let series: Vec<(f64, f64)> = bins
        .iter()
        .enumerate()
        .take((cycles / bin) as usize)
        .map(|(i, &b)| {
            let t = cycles_to_ns(i as u64 * bin, clock) - BURST_START_NS as f64;
            (t / 1000.0, gbps(b))
        })
        .collect();
    let window: Vec<f64> = series
        .iter()
        .filter(|(t, _)| (0.0..200.0).contains(t))
        .map(|p| p.1)
        .collect();
    let partner = sim.partner(SHARED_PORT);
    Ok(Run {
        policy,
        mean_gbps_200us: crate::sweep::stats::mean(window.iter().copied()),
        min_gbps: window.iter().copied().fold(f64::INFINITY, f64::min),
        paused_ns: cycles_to_ns(partner.paused_cycles(sim.now())[CLASS], clock),
        pause_frames: partner.stats().pause_frames_sent,
        series,
    })
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    progress.set_len(2);
    let mut runs = Vec::new();
    for policy in [Policy::Sih, Policy::Dsh] {
        progress.message(policy.name());
        runs.push(measure(policy)?);
        progress.inc(1);
    }
    /// One line of `collateral.csv`.
    #[derive(Default, serde::Serialize)]
    struct Row {
        policy: &'static str,
        time_us: Fixed<1>,
        f0_gbps: Fixed<3>,
    }
    let rows = runs.iter().flat_map(|r| {
        r.series.iter().map(|&(t, g)| Row {
            policy: r.policy.name(),
            time_us: Fixed(t),
            f0_gbps: Fixed(g),
        })
    });
    let csv_path = out.join("collateral.csv");
    super::write_csv(&csv_path, rows)?;
    let png = out.join("collateral.png");
    let series: Vec<Series> = runs
        .iter()
        .map(|r| Series {
            name: format!("F0 under {}", r.policy.name().to_uppercase()),
            points: r.series.clone(),
            line: true,
        })
        .collect();
    xy_chart(
        &png,
        "Innocent flow F0 (port 0 -> 20) while 24 x 64 KB fan in to port 30",
        "time from the fan-in start (us)",
        &format!("F0 throughput per {} us (Gb/s)", BIN_NS / 1000),
        &series,
    )?;
    let probe = scenario(0, 1)?.plan(&Overrides::default())?;
    let mut rep = format!(
        "Collateral damage on tomahawk: port 0 carries F0 (-> {INNOCENT_DST}) and F1 (-> {CONGESTED_DST}) at {FLOW_GBPS} Gb/s each, class {CLASS};\n\
         at {} us ports 2-25 send {FANIN_BYTES} B each to port {CONGESTED_DST}\n{}\n",
        BURST_START_NS / 1000,
        paper_headroom_line(&probe)
    );
    let _ = writeln!(
        rep,
        "{:<6} {:>22} {:>14} {:>16} {:>12}",
        "policy", "F0 mean 0-200us Gb/s", "F0 min Gb/s", "port 0 paused ns", "PAUSE frames"
    );
    for r in &runs {
        let _ = writeln!(
            rep,
            "{:<6} {:>22.2} {:>14.2} {:>16.0} {:>12}",
            r.policy.name(),
            r.mean_gbps_200us,
            r.min_gbps,
            r.paused_ns,
            r.pause_frames
        );
    }
    let _ = writeln!(rep, "\nwrote {}, {}", csv_path.display(), png.display());
    Ok(rep)
}
