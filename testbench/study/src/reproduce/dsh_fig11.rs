//! DSH Fig. 11 (section V-A, "PFC avoidance") on the `tomahawk` profile.
//!
//! Two background flows run at line rate from ports 0 and 1 into port 31 from cycle 0, so
//! their ingress queues sit at their pause threshold by the time the burst comes (the
//! paper starts the burst at 0.1 s for the same reason; here the queues settle within
//! about 130 us, so the burst starts at [`BURST_START_NS`]). Then 16 fan-in flows from
//! ports 2-17 each hand `burst / 16` bytes of whole packets to their link partner at once,
//! all toward port 30, on the background's lossless class, in packets of
//! [`PACKET_BYTES`]. Each run goes on until every
//! fan-in packet has left port 30 and the fan-in partners are idle, so every pause has
//! ended and is counted in full.
//!
//! Measured per run: the total time the fan-in partners were paused for the fan-in class
//! (class PAUSE or DSH port-level PAUSE), and the PAUSE frames the switch sent toward the
//! fan-in ports. A lossless drop voids the run ([`ReproError::Invariant`]).
//!
//! The runs are the built-in sweep spec `dsh-fig11` ([`spec_text`]) over [`MEASURE`], run
//! by the sweep engine into `OUT/sweep/`; the CSV and plots are made from its rows.

use super::plot::{xy_chart, Series};
use super::{
    cycles_to_ns, flow_toml, int_field, paper_headroom_line, tomahawk_header, wrote, Progress,
    ReproError,
};
use crate::sweep::{Measure, Spec, Values};
use hw_model::Policy;
use scenario::{Overrides, Scenario};
use std::fmt::Write;
use std::ops::RangeInclusive;
use std::path::Path;
use switch_run::csv_file::Fixed;
use switch_run::Sim;

/// Total burst sizes swept, percent of the buffer (the paper's Fig. 11b x axis).
pub const BURST_PCTS: &[u32] = &[5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60];
/// Ingress ports of the fan-in flows.
pub const FANIN_PORTS: RangeInclusive<usize> = 2..=17;
/// Egress port of the fan-in.
pub const FANIN_DST: usize = 30;
/// Egress port of the background flows.
const BACKGROUND_DST: usize = 31;
/// The lossless class of all flows.
pub const CLASS: usize = 3;
/// Packet size of every flow: 1456 B = exactly 7 cells of 208 B. The paper (ns-3, byte
/// accounting) gives no size; with 1500 B packets a packet takes 8 cells = 1664 B of
/// buffer for 1520 B on the wire, so the Eq. 1 headroom of the profile (56840 B rounded up
/// to 274 cells) is about 9 % short and SIH drops lossless cells from a 25 % burst on (see
/// docs/results.md). Whole-cell packets make cell and byte accounting agree, as in the
/// paper's simulator.
pub const PACKET_BYTES: u64 = 1456;
/// When the fan-in starts: after the background queues have reached their pause
/// threshold under both policies.
pub const BURST_START_NS: u64 = 200_000;

/// The CSV header of `fig11.csv`, as [`CsvRow`] gives it.
pub const CSV_HEADER: &str = "policy,burst_bytes,burst_pct,pause_duration_ns,pause_frames";

/// One line of `fig11.csv`.
#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub policy: &'static str,
    pub burst_bytes: u64,
    pub burst_pct: u32,
    pub pause_duration_ns: Fixed<0>,
    pub pause_frames: u64,
}

/// The policies of the figure, in the CSV's order.
pub const POLICIES: [Policy; 2] = [Policy::Sih, Policy::Dsh];

/// The fields [`MEASURE`] yields: whole numbers, so rows carry them exactly.
const FIELDS: &[&str] = &[
    "burst_bytes",
    "paused_cycles",
    "pause_frames",
    "background_pauses_before_burst",
    "drained_cycle",
    "clock_hz",
];

/// One run of the figure as a sweep measure: parameters `policy` and `burst_pct`.
pub const MEASURE: Measure = Measure {
    name: "dsh-fig11",
    params: &["burst_pct", "policy"],
    fields: FIELDS,
    check: |v| parse(v).map(|_| ()),
    run: |v| {
        let (policy, pct) = parse(v).map_err(|e| e.to_string())?;
        let p = measure(policy, pct).map_err(|e| e.to_string())?;
        let ints = [
            p.burst_bytes,
            p.paused_cycles,
            p.pause_frames,
            p.background_pauses_before_burst,
            p.drained_cycle,
            p.clock_hz,
        ];
        Ok(FIELDS
            .iter()
            .zip(ints)
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect())
    },
};

/// The built-in sweep spec of the figure over the bursts `pcts`.
pub fn spec_text(pcts: &[u32]) -> String {
    let list = |xs: Vec<String>| xs.join(", ");
    format!(
        "name = \"dsh-fig11\"\nmeasure = \"dsh-fig11\"\ncollect = [{}]\n[parameters]\npolicy = [{}]\nburst_pct = [{}]\n",
        list(FIELDS.iter().map(|f| format!("{f:?}")).collect()),
        list(POLICIES.iter().map(|p| format!("{:?}", p.name())).collect()),
        list(pcts.iter().map(u32::to_string).collect())
    )
}

/// A run's `policy` and `burst_pct`.
fn parse(v: &Values) -> Result<(Policy, u32), scenario::ScenarioError> {
    let bad = |k: &str, m: &str| scenario::ScenarioError::new(k, m);
    let policy = v
        .get("policy")
        .and_then(|p| p.as_str())
        .ok_or_else(|| bad("policy", "expected a string; allowed: sih, dsh, l2bm"))
        .and_then(|p| Policy::parse(p).map_err(|e| bad("policy", &e.to_string())))?;
    let pct = v
        .get("burst_pct")
        .and_then(|p| p.as_u64())
        .filter(|p| (1..=100).contains(p))
        .ok_or_else(|| bad("burst_pct", "expected an integer; allowed: 1..=100"))?;
    Ok((policy, pct as u32))
}

/// One run of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub policy: Policy,
    /// Nominal total burst, percent of the buffer.
    pub burst_pct: u32,
    /// Total burst actually sent: 16 flows of whole packets.
    pub burst_bytes: u64,
    pub pause_duration_ns: f64,
    pub pause_frames: u64,
    /// Class pauses of the background partners before the burst (non-zero: the background
    /// had reached its steady, paused state as in the paper).
    pub background_pauses_before_burst: u64,
    /// When the burst had fully drained, ns from the start.
    pub drained_at_ns: f64,
    /// The pause of the fan-in class, cycles summed over the fan-in partners.
    pub paused_cycles: u64,
    /// When the burst had fully drained, cycles.
    pub drained_cycle: u64,
    pub clock_hz: u64,
}

impl Point {
    /// The point of a run from its values and fields.
    fn new(policy: Policy, burst_pct: u32, fields: &Values) -> Result<Self, ReproError> {
        let f = |k| int_field(fields, k);
        let clock_hz = f("clock_hz")?;
        Ok(Self {
            policy,
            burst_pct,
            burst_bytes: f("burst_bytes")?,
            pause_duration_ns: cycles_to_ns(f("paused_cycles")?, clock_hz),
            pause_frames: f("pause_frames")?,
            background_pauses_before_burst: f("background_pauses_before_burst")?,
            drained_at_ns: cycles_to_ns(f("drained_cycle")?, clock_hz),
            paused_cycles: f("paused_cycles")?,
            drained_cycle: f("drained_cycle")?,
            clock_hz,
        })
    }
}

/// Bytes each fan-in flow sends for a total of `pct` % of `buffer_bytes`: whole packets,
/// rounded down.
fn per_flow_bytes(pct: u32, buffer_bytes: u64) -> u64 {
    let flows = FANIN_PORTS.count() as u64;
    let bytes = buffer_bytes * pct as u64 / 100 / flows;
    (bytes / PACKET_BYTES).max(1) * PACKET_BYTES
}

fn scenario(per_flow: u64, burst_cycle: u64, cycles: u64) -> Result<Scenario, ReproError> {
    let mut s = tomahawk_header("dsh-fig11", cycles);
    for src in [0, 1] {
        s += &flow_toml(
            src,
            BACKGROUND_DST,
            CLASS,
            PACKET_BYTES as u32,
            "pattern = \"constant\"",
        );
    }
    for src in FANIN_PORTS {
        let pattern =
            format!("pattern = \"burst\"\nburst_bytes = {per_flow}\nstart_cycle = {burst_cycle}");
        s += &flow_toml(src, FANIN_DST, CLASS, PACKET_BYTES as u32, &pattern);
    }
    Ok(Scenario::parse(&s, "dsh-fig11")?)
}

/// One run: `policy`, a total burst of `pct` % of the buffer.
pub fn measure(policy: Policy, pct: u32) -> Result<Point, ReproError> {
    // Build once with a placeholder length to learn the clock and the buffer.
    let probe = scenario(PACKET_BYTES, 0, 1)?.plan(&Overrides::default())?;
    let d = &probe.derived;
    let burst_cycle = BURST_START_NS * d.clock_hz / 1_000_000_000;
    let per_flow = per_flow_bytes(pct, d.cfg.buffer_bytes);
    let total = per_flow * FANIN_PORTS.count() as u64;
    // Port 30 drains the burst at line rate; allow ten times that before calling it stuck.
    let wire = total * (PACKET_BYTES + d.cfg.wire_overhead_bytes as u64) / PACKET_BYTES;
    let drain_cycles = wire * 8 * d.clock_hz / d.rate_bps[FANIN_DST];
    let cap = burst_cycle + 10 * drain_cycles + 100_000;
    let ov = Overrides {
        policy: Some(policy),
        ..Overrides::default()
    };
    let mut sim = Sim::new(&scenario(per_flow, burst_cycle, cap)?, ov)?;
    let fanin_packets = total / PACKET_BYTES;
    let fanin_flows = sim
        .plan()
        .flows
        .iter()
        .filter(|f| f.dst as usize == FANIN_DST)
        .map(|f| f.id)
        .collect::<Vec<_>>();
    let mut departed = 0u64;
    let mut background_pauses_before_burst = 0;
    loop {
        if sim.now() == burst_cycle {
            background_pauses_before_burst = [0, 1]
                .iter()
                .map(|&p| sim.partner(p).stats().pause_events)
                .sum();
        }
        sim.step()?;
        departed += sim
            .outputs()
            .departures
            .iter()
            .filter(|dep| dep.beat.eop() && fanin_flows.contains(&dep.beat.hdr.flow))
            .count() as u64;
        let idle = FANIN_PORTS.clone().all(|p| !sim.partner(p).busy());
        if departed == fanin_packets && idle && sim.now() > burst_cycle {
            break;
        }
        if sim.scoreboard().dropped_lossless() > 0 {
            return Err(ReproError::Invariant(format!(
                "{} burst {pct} %: {} lossless cells dropped by cycle {}",
                policy.name(),
                sim.scoreboard().dropped_lossless(),
                sim.now()
            )));
        }
        if sim.now() >= cap {
            return Err(ReproError::Invariant(format!(
                "{} burst {pct} %: not drained after {cap} cycles ({departed} of {fanin_packets} packets out)",
                policy.name()
            )));
        }
    }
    let now = sim.now();
    let summary = sim.summary(0.0);
    if !summary.ok() {
        return Err(ReproError::Invariant(format!(
            "{} burst {pct} %: {}",
            policy.name(),
            summary.violations.join("; ")
        )));
    }
    let paused: u64 = FANIN_PORTS
        .map(|p| sim.partner(p).paused_cycles(now)[CLASS])
        .sum();
    let clock_hz = sim.plan().derived.clock_hz;
    Ok(Point {
        policy,
        burst_pct: pct,
        burst_bytes: total,
        pause_duration_ns: cycles_to_ns(paused, clock_hz),
        pause_frames: FANIN_PORTS
            .map(|p| sim.partner(p).stats().pause_frames_sent)
            .sum(),
        background_pauses_before_burst,
        drained_at_ns: cycles_to_ns(now, clock_hz),
        paused_cycles: paused,
        drained_cycle: now,
        clock_hz,
    })
}

/// The sweep over `pcts` for SIH and DSH (runs in `DIR/sweep/`): writes `DIR/fig11.csv`
/// and `DIR/fig11.png`.
pub fn sweep(
    out: &Path,
    pcts: &[u32],
    progress: &mut dyn Progress,
) -> Result<Vec<Point>, ReproError> {
    let spec = Spec::parse(&spec_text(pcts), "dsh-fig11", Path::new("."))?;
    let rows = super::sweep_rows(&spec, &out.join("sweep"), progress)?;
    let mut points = rows
        .iter()
        .map(|r| {
            let (policy, pct) = parse(&r.params)?;
            Point::new(policy, pct, &r.fields)
        })
        .collect::<Result<Vec<_>, ReproError>>()?;
    points.sort_by_key(|p| (POLICIES.iter().position(|&q| q == p.policy), p.burst_pct));
    let rows = points.iter().map(|p| CsvRow {
        policy: p.policy.name(),
        burst_bytes: p.burst_bytes,
        burst_pct: p.burst_pct,
        pause_duration_ns: Fixed(p.pause_duration_ns),
        pause_frames: p.pause_frames,
    });
    super::write_csv(&out.join("fig11.csv"), rows)?;
    let series = |policy: Policy, y: &dyn Fn(&Point) -> f64| Series {
        name: policy.name().to_uppercase(),
        points: points
            .iter()
            .filter(|p| p.policy == policy)
            .map(|p| (p.burst_pct as f64, y(p)))
            .collect(),
        line: true,
    };
    let us = |p: &Point| p.pause_duration_ns / 1000.0;
    xy_chart(
        &out.join("fig11.png"),
        "DSH Fig. 11b on tomahawk: 16-to-1 fan-in over 2-to-1 background",
        "total burst size (% of the 16 MiB buffer)",
        "total pause duration of the fan-in flows (us)",
        &[series(Policy::Sih, &us), series(Policy::Dsh, &us)],
    )?;
    let frames = |p: &Point| p.pause_frames as f64;
    xy_chart(
        &out.join("fig11_frames.png"),
        "PAUSE frames sent toward the 16 fan-in ports",
        "total burst size (% of the 16 MiB buffer)",
        "PAUSE frames",
        &[series(Policy::Sih, &frames), series(Policy::Dsh, &frames)],
    )?;
    Ok(points)
}

/// The largest swept burst with no PAUSE frame toward the fan-in ports, if any.
pub fn largest_pause_free(points: &[Point], policy: Policy) -> Option<u32> {
    points
        .iter()
        .filter(|p| p.policy == policy)
        .take_while(|p| p.pause_frames == 0)
        .map(|p| p.burst_pct)
        .last()
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let points = sweep(out, BURST_PCTS, progress)?;
    let probe = scenario(PACKET_BYTES, 0, 1)?.plan(&Overrides::default())?;
    let mut rep = format!(
        "DSH Fig. 11 on tomahawk: 2 background flows 0,1 -> 31; at 200 us 16 fan-in flows 2-17 -> 30 (1456 B packets, class 3)\n{}\n",
        paper_headroom_line(&probe)
    );
    let _ = writeln!(
        rep,
        "{:<6} {:>6} {:>11} {:>16} {:>12} {:>14} {:>12}",
        "policy",
        "burst%",
        "burst B",
        "pause (ns)",
        "PAUSE frames",
        "bg pauses pre",
        "drained (us)"
    );
    for p in &points {
        let _ = writeln!(
            rep,
            "{:<6} {:>6} {:>11} {:>16.0} {:>12} {:>14} {:>12.1}",
            p.policy.name(),
            p.burst_pct,
            p.burst_bytes,
            p.pause_duration_ns,
            p.pause_frames,
            p.background_pauses_before_burst,
            p.drained_at_ns / 1000.0
        );
    }
    let show = |o: Option<u32>| o.map_or("none".to_string(), |v| format!("{v} %"));
    let _ = writeln!(
        rep,
        "\nlargest burst without PAUSE: SIH {}, DSH {} (paper: DSH 40 %, over 4x SIH)",
        show(largest_pause_free(&points, Policy::Sih)),
        show(largest_pause_free(&points, Policy::Dsh))
    );
    let _ = writeln!(
        rep,
        "{}",
        wrote(out, &["fig11.csv", "fig11.png", "fig11_frames.png"])
    );
    Ok(rep)
}
