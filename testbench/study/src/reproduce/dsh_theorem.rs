//! DSH Theorems 1 and 2 (section IV-C): how long `M` bursting queues run before their first
//! PAUSE while `N` other queues are already congested, predicted by Eq. 16 / Eq. 19 (DSH)
//! and Eq. 21 (SIH) and measured on the model.
//!
//! The scenario family meets the theorems' assumptions as closely as the model allows:
//!
//! - one lossless queue per ingress port, each feeding its own egress port, so every queue
//!   drains at the same rate (the egress line rate `C`) and only the admission thresholds
//!   couple the queues;
//! - ingress links `R` times faster than the egress links, so a queue whose upstream sends
//!   at line rate arrives at `R` (normalised to the drain rate), as the paper's `R` is;
//! - no private buffer (`private_bytes = 0`, assumption 1), `X_qon = X_qoff`
//!   (`delta_bytes = 0`, assumption 2) and no PFC delay beyond the frame itself
//!   (`propagation_ns = processing_ns = 0`, assumption 3);
//! - packets of exactly four cells (no cell rounding), so bytes and cells are the same unit
//!   up to the cell size, and queue lengths in the formulas are the model's cell counters;
//! - the `N` congested queues start at cycle 0 and reach their steady state at `X_qoff`
//!   (DSH) or `X_off = T` (SIH) before the `M` bursting queues start, empty, at `t = 0`.
//!
//! "First PAUSE" is the cycle the model turns the first bursting queue QOFF, i.e. the
//! cycle it *generates* the PAUSE: that is the threshold crossing the theorems solve for.
//! The frame leaves one 84-byte frame time later (the ingress port's transmitter is idle);
//! the report shows that lag, a few ns.
//!
//! Time `t` in the theorems is in units of the drain time of one unit of buffer; here one
//! cell: `(packet + wire overhead) * 8 / C / cells per packet`.
//!
//! The grid runs on the sweep engine: a spec over [`MEASURE`] whose one zipped group is
//! the points ([`spec_text`]; the built-in spec `dsh-theorem`), rows in `OUT/sweep/`.

use super::plot::{xy_chart, Series};
use super::{int_field, Progress, ReproError};
use crate::sweep::{Measure, Spec, Values};
use hw_model::{Derived, HeadroomMode, Policy, SwitchConfig};
use scenario::{FlowSpec, LinkSpec, PatternKind, RunSpec};
use scenario::{Overrides, Scenario, ScenarioError};
use std::fmt::Write as _;
use std::path::Path;
use switch_run::csv_file::{Fixed, Plain};
use switch_run::Sim;

/// The CSV header, exactly as the issue asks for it; [`CsvRow`] gives it.
pub const CSV_HEADER: &str =
    "policy,N,M,R,alpha,buffer_bytes,eta_bytes,predicted_ns,measured_ns,rel_error";

/// One line of `theorem.csv` (the paper's symbols keep their case).
#[allow(non_snake_case)]
#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub policy: &'static str,
    pub N: u32,
    pub M: u32,
    pub R: Plain,
    pub alpha: Plain,
    pub buffer_bytes: u64,
    pub eta_bytes: u64,
    pub predicted_ns: Fixed<1>,
    pub measured_ns: Fixed<1>,
    pub rel_error: Fixed<5>,
}

/// Cell size, bytes: 256 B cells keep one cell per 1 GHz cycle up to 672 Gb/s (the
/// worst case, 64 B packets, is 1 cell per 84 wire bytes), so `R` up to 6.7 fits.
const CELL_BYTES: u32 = 256;
/// Packet size: exactly four cells, so no cell is partly filled and the cell counters
/// measure bytes.
const PACKET_BYTES: u32 = 4 * CELL_BYTES;
/// Egress (drain) line rate, Gb/s. Ingress links run at `R` times this.
const EGRESS_GBPS: f64 = 100.0;
/// Core clock, MHz: one cycle is 1 ns, about 1/21 of a cell time at 100 Gb/s, so the
/// registered threshold's one-cycle lag is far below a cell.
const CLOCK_MHZ: u32 = 1000;
/// The lossless priority all traffic uses.
const PRIO: u8 = 0;
/// Cycles of slack before the burst on top of the congested queues' fill time, and after
/// the predicted pause (a run with no PAUSE by then is a failure, not a long wait).
const SLACK_CYCLES: u64 = 5_000;

/// The keys of a point: the parameters of [`MEASURE`].
const KEYS: &[&str] = &[
    "alpha_log2",
    "buffer_bytes",
    "eta_bytes",
    "lossless_queues",
    "m",
    "n",
    "policy",
    "r",
];

/// What a run yields: cycles and a sum of cell counters, whole numbers, so the rows carry
/// them exactly ([`Raw`]).
const FIELDS: &[&str] = &[
    "qoff_cycles",
    "pause_cycles",
    "congested_cells_sum",
    "cycles",
];

/// One grid point as a sweep measure.
pub const MEASURE: Measure = Measure {
    name: "dsh-theorem",
    params: KEYS,
    fields: FIELDS,
    check: |v| {
        let p = Point::from_values(v)?;
        p.switch().build()?;
        Ok(())
    },
    run: |v| {
        let p = Point::from_values(v).map_err(|e| e.to_string())?;
        let raw = measure_raw(&p).map_err(|e| e.to_string())?;
        let ints = [
            raw.qoff_cycles,
            raw.pause_cycles,
            raw.congested_cells_sum,
            raw.cycles,
        ];
        Ok(FIELDS
            .iter()
            .zip(ints)
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect())
    },
};

/// The spec of `points`: one zipped group, so the runs are the points in their order.
pub fn spec_text(points: &[Point]) -> String {
    let fields: Vec<String> = FIELDS.iter().map(|f| format!("{f:?}")).collect();
    let mut s = format!(
        "name = \"dsh-theorem\"\nmeasure = \"dsh-theorem\"\ncollect = [{}]\n[[zip]]\n",
        fields.join(", ")
    );
    let column = |key: &str, f: fn(&Point) -> String| {
        let v: Vec<String> = points.iter().map(f).collect();
        format!("{key} = [{}]\n", v.join(", "))
    };
    s += &column("policy", |p| format!("{:?}", p.policy.name()));
    s += &column("n", |p| p.n.to_string());
    s += &column("m", |p| p.m.to_string());
    s += &column("r", |p| format!("{:?}", p.r));
    s += &column("alpha_log2", |p| p.alpha_log2.to_string());
    s += &column("buffer_bytes", |p| p.buffer_bytes.to_string());
    s += &column("eta_bytes", |p| p.eta_bytes.to_string());
    s += &column("lossless_queues", |p| p.lossless_queues.to_string());
    s
}

/// One grid point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub policy: Policy,
    /// Queues congested since long before `t = 0`.
    pub n: u32,
    /// Queues that start bursting at `t = 0`.
    pub m: u32,
    /// Arrival rate of every queue, normalised to the drain rate.
    pub r: f64,
    /// `alpha = 2^alpha_log2`.
    pub alpha_log2: i32,
    pub buffer_bytes: u64,
    /// `eta`, bytes (a multiple of the cell size).
    pub eta_bytes: u32,
    /// Lossless queues per port `N_q`: sizes SIH's headroom (Eq. 3), not DSH's (Eq. 4).
    pub lossless_queues: u8,
}

impl Point {
    /// The point of a run's values (the parameters of [`MEASURE`]).
    pub fn from_values(v: &Values) -> Result<Self, ScenarioError> {
        let int = |k: &str, max: u64| {
            v.get(k)
                .and_then(serde_json::Value::as_u64)
                .filter(|&x| x <= max)
                .ok_or_else(|| {
                    ScenarioError::new(k, format!("expected an integer; allowed: 0..={max}"))
                })
        };
        let alpha_log2 = v
            .get("alpha_log2")
            .and_then(serde_json::Value::as_i64)
            .filter(|a| (-16..=16).contains(a))
            .ok_or_else(|| {
                ScenarioError::new("alpha_log2", "expected an integer; allowed: -16..=16")
            })?;
        let r = v
            .get("r")
            .and_then(serde_json::Value::as_f64)
            .filter(|r| *r > 1.0 && *r <= 64.0)
            .ok_or_else(|| {
                ScenarioError::new("r", "expected a number; allowed: above 1, at most 64")
            })?;
        let policy = v
            .get("policy")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| ScenarioError::new("policy", "expected a string; allowed: sih, dsh"))
            .and_then(|p| Ok(Policy::parse(p)?))?;
        Ok(Self {
            policy,
            n: int("n", 64)? as u32,
            m: int("m", 64)? as u32,
            r,
            alpha_log2: alpha_log2 as i32,
            buffer_bytes: int("buffer_bytes", 1 << 40)?,
            eta_bytes: int("eta_bytes", u32::MAX as u64)? as u32,
            lossless_queues: int("lossless_queues", 8)? as u8,
        })
    }

    pub fn alpha(&self) -> f64 {
        2f64.powi(self.alpha_log2)
    }

    /// Ports: the `N + M` ingress ports first, then one egress port for each.
    fn queues(&self) -> usize {
        (self.n + self.m) as usize
    }

    /// The switch: no private buffer, `delta = 0`, a one-cell lossy pool (the least the
    /// configuration accepts when some priorities are lossy), ingress at `R * C`.
    pub fn switch(&self) -> SwitchConfig {
        let q = self.queues();
        let mut speeds = vec![EGRESS_GBPS * self.r; q];
        speeds.extend(vec![EGRESS_GBPS; q]);
        SwitchConfig {
            ports: 2 * q,
            port_speeds_gbps: speeds,
            core_clock_mhz: CLOCK_MHZ,
            cell_bytes: CELL_BYTES,
            packet_overhead_bytes: 0,
            buffer_bytes: self.buffer_bytes,
            sram_write_cells_per_cycle: 2 * q as u32,
            sram_read_cells_per_cycle: 2 * q as u32,
            lossless_priorities: (0..self.lossless_queues).collect(),
            policy: self.policy,
            alpha_log2: self.alpha_log2,
            private_bytes: 0,
            link_delay_ns: 0,
            eta_bytes: Some(self.eta_bytes),
            // The theorems take eta as a number of cells: `eta_bytes` (whole cells) as is.
            headroom: HeadroomMode::PaperBytes,
            delta_bytes: 0,
            delta_port_bytes: 0,
            lossy_pool_bytes: CELL_BYTES as u64,
            lossy_private_bytes: 0,
            ..SwitchConfig::tomahawk()
        }
    }

    /// The scenario: congested flows from cycle 0, bursting flows from `burst_start`, all
    /// at their ingress line rate, on links with no delay; runs to `cycles`.
    pub fn scenario(&self, burst_start: u64, cycles: u64) -> Scenario {
        let q = self.queues();
        let flows = (0..q)
            .map(|i| FlowSpec {
                src: i,
                dst: q + i,
                prio: PRIO,
                size_bytes: Some(PACKET_BYTES),
                size_cdf: None,
                pattern: PatternKind::Constant,
                rate_gbps: None,
                on_cycles: None,
                off_cycles: None,
                burst_bytes: None,
                message_cdf: None,
                start_cycle: if i < self.n as usize { 0 } else { burst_start },
                stop_cycle: None,
                connection_of: None,
                ecn: false,
            })
            .collect();
        Scenario {
            name: "dsh-theorem".into(),
            description: String::new(),
            switch: self.switch(),
            run: RunSpec {
                cycles,
                seed: 1,
                expect_lossless: true,
            },
            links: (0..q)
                .map(|port| LinkSpec {
                    port,
                    propagation_ns: Some(0),
                    processing_ns: Some(0),
                    arbitration: Default::default(),
                })
                .collect(),
            flows,
            pfc_script: Vec::new(),
            ecm_rp: Default::default(),
            fabric: None,
        }
    }
}

/// Which of the theorems' two cases applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// `T` falls no faster than the drain rate: Eq. 16 (DSH), Eq. 21 `t_1` (SIH).
    One,
    /// `T` falls faster than the drain rate: Eq. 19 (DSH), Eq. 21 `t_2` (SIH).
    Two,
}

/// The theorems' numbers for one point, from the model's own `B_s` and `eta`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub case: Case,
    /// The case the paper's printed boundary picks (see [`printed_case_boundary`]).
    pub printed_case: Case,
    /// `B_s`, cells (`Derived::shared_cells`).
    pub shared_cells: u32,
    /// `eta`, cells.
    pub eta_cells: u32,
    /// Congested queue length at `t = 0` (Eq. 10), cells.
    pub congested_cells: f64,
    /// Time of the first PAUSE, in cell drain times.
    pub t_cells: f64,
    /// The same in ns.
    pub ns: f64,
    /// The formula of `printed_case`, ns (negative where it has no meaning).
    pub printed_ns: f64,
}

/// Nanoseconds to drain one cell at the egress line rate.
fn ns_per_cell(d: &Derived, egress_port: usize) -> f64 {
    d.wire_bits(PACKET_BYTES) as f64 * 1e9
        / d.rate_bps[egress_port] as f64
        / d.cells_for(PACKET_BYTES) as f64
}

/// The case boundary `R* = 1 + (1 + alpha N) / (alpha M)`: case 1 iff `R <= R*`.
///
/// The paper prints `(1 - alpha N)`; Eq. 13 gives `T'(0+) = -alpha M (R - 1) / (1 + alpha N)`
/// in case 1, which is `>= -1` iff `R <= 1 + (1 + alpha N) / (alpha M)`, and only with this
/// boundary do Eq. 16 and Eq. 19 agree where the cases meet (docs/dsh-theorem.md).
pub fn case_boundary(n: u32, m: u32, alpha: f64) -> f64 {
    1.0 + (1.0 + alpha * n as f64) / (alpha * m as f64)
}

/// The boundary as the paper prints it, `1 + (1 - alpha N) / (alpha M)`: kept to show in
/// the report which points it would send to the wrong formula.
pub fn printed_case_boundary(n: u32, m: u32, alpha: f64) -> f64 {
    1.0 + (1.0 - alpha * n as f64) / (alpha * m as f64)
}

/// Time of the first PAUSE in cell drain times: Eq. 16 (case 1) or Eq. 19 (case 2) with
/// `eta` the pause margin below `T` (DSH: `eta`; SIH: 0, which is Eq. 21).
fn first_pause_cells(case: Case, p: &Point, bs: f64, eta: f64) -> f64 {
    let (n, m, r, a) = (p.n as f64, p.m as f64, p.r, p.alpha());
    let num = a * bs - eta;
    match case {
        Case::One => num / ((1.0 + a * (n + m)) * (r - 1.0)),
        Case::Two => num / ((1.0 + a * n) * ((1.0 + a * m) * (r - 1.0) - a * n)),
    }
}

/// Eq. 16 / Eq. 19 for DSH, Eq. 21 (the same with `eta = 0`) for SIH.
pub fn predict(p: &Point, d: &Derived) -> Prediction {
    let bs = d.shared_cells as f64;
    let eta_cells = d.eta_cells[0];
    // SIH pauses at X_off = T: Theorem 2's proof sets eta = 0 in Theorem 1's.
    let eta = match p.policy {
        Policy::Dsh => eta_cells as f64,
        // The theorems are SIH's and DSH's; L2BM pauses at T_i >= T like SIH.
        Policy::Sih | Policy::L2bm => 0.0,
    };
    let case_for = |boundary: f64| {
        if p.r <= boundary {
            Case::One
        } else {
            Case::Two
        }
    };
    let case = case_for(case_boundary(p.n, p.m, p.alpha()));
    let printed_case = case_for(printed_case_boundary(p.n, p.m, p.alpha()));
    let cell_ns = ns_per_cell(d, (p.n + p.m) as usize);
    let t_cells = first_pause_cells(case, p, bs, eta);
    Prediction {
        case,
        printed_case,
        shared_cells: d.shared_cells,
        eta_cells,
        congested_cells: (p.alpha() * bs - eta) / (1.0 + p.alpha() * p.n as f64),
        t_cells,
        ns: t_cells * cell_ns,
        printed_ns: first_pause_cells(printed_case, p, bs, eta) * cell_ns,
    }
}

/// Largest relative error the model's packet granularity explains (docs/dsh-theorem.md).
///
/// The pause fires when the gap `X_qoff - q_b` between the threshold and a bursting
/// queue closes. In the model the gap is smaller than in the fluid model by
/// `Delta = c + (1 + alpha M) e_b + alpha N e_c`: `c`, one packet, because DSH pauses when
/// the next packet *would* cross `X_qoff` (`shared + n > X_qoff`); `e_b`, the bursting
/// queue's lead over the fluid (a packet is charged whole at its first cell, and leaves
/// only once stored), at most two packets; `e_c`, a congested queue's overshoot of its
/// threshold (the packet that triggered its PAUSE), at most one packet, bounded here by
/// two as well. Both cases give `Delta t / t = -Delta / q_c(0)`, with `q_c(0)` of Eq. 10.
pub fn granularity_bound(p: &Point, pred: &Prediction) -> f64 {
    let packet = (PACKET_BYTES / CELL_BYTES) as f64;
    let weight = 1.0 + p.alpha() * (p.n + p.m) as f64;
    (packet + 2.0 * packet * weight) / pred.congested_cells
}

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub point: Point,
    pub prediction: Prediction,
    /// `t = 0` to the cycle the first bursting queue turned QOFF, ns.
    pub measured_ns: f64,
    /// `t = 0` to the cycle that PAUSE frame was transmitted, ns.
    pub transmitted_ns: f64,
    /// Mean shared occupancy of the congested queues at `t = 0`, cells (Eq. 10 predicts it).
    pub congested_cells: f64,
    /// Cycles simulated.
    pub cycles: u64,
}

/// What one run counted: the whole numbers an [`Outcome`] is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw {
    /// `t = 0` to the cycle the first bursting queue turned QOFF.
    pub qoff_cycles: u64,
    /// `t = 0` to the cycle that PAUSE frame was transmitted.
    pub pause_cycles: u64,
    /// The shared occupancy of the congested queues at `t = 0`, cells, summed.
    pub congested_cells_sum: u64,
    pub cycles: u64,
}

impl Outcome {
    /// The outcome of `p` from what its run counted.
    pub fn new(p: &Point, raw: Raw) -> Result<Self, ReproError> {
        let d = p.switch().build().map_err(ScenarioError::from)?;
        let cycle_ns = 1e9 / d.clock_hz as f64;
        Ok(Self {
            point: *p,
            prediction: predict(p, &d),
            measured_ns: raw.qoff_cycles as f64 * cycle_ns,
            transmitted_ns: raw.pause_cycles as f64 * cycle_ns,
            congested_cells: raw.congested_cells_sum as f64 / p.n.max(1) as f64,
            cycles: raw.cycles,
        })
    }

    /// `(measured - predicted) / predicted`.
    pub fn rel_error(&self) -> f64 {
        (self.measured_ns - self.prediction.ns) / self.prediction.ns
    }

    /// Its line of `theorem.csv`.
    pub fn csv_row(&self) -> CsvRow {
        let p = &self.point;
        CsvRow {
            policy: p.policy.name(),
            N: p.n,
            M: p.m,
            R: Plain(p.r),
            alpha: Plain(p.alpha()),
            buffer_bytes: p.buffer_bytes,
            eta_bytes: self.prediction.eta_cells as u64 * CELL_BYTES as u64,
            predicted_ns: Fixed(self.prediction.ns),
            measured_ns: Fixed(self.measured_ns),
            rel_error: Fixed(self.rel_error()),
        }
    }
}

/// Simulate one point: fill the congested queues, start the burst, and clock until a
/// bursting queue turns QOFF and its PAUSE frame has left.
///
/// Fails (the number would be void) if a congested queue never reached its threshold
/// before the burst, if a lossless cell was dropped, if DSH's port-level pause fired (the
/// theorems assume queue-level flow control only) or if no PAUSE came by twice the
/// predicted time.
pub fn measure(p: &Point) -> Result<Outcome, ReproError> {
    Outcome::new(p, measure_raw(p)?)
}

/// [`measure`]'s run: what it counted.
pub fn measure_raw(p: &Point) -> Result<Raw, ReproError> {
    let d = p.switch().build().map_err(scenario::ScenarioError::from)?;
    let pred = predict(p, &d);
    let cell_ns = ns_per_cell(&d, p.queues());
    let cycle_ns = 1e9 / d.clock_hz as f64;
    // The congested queues grow at R - 1 until they reach Eq. 10's length.
    let fill_ns = pred.congested_cells / (p.r - 1.0) * cell_ns;
    let burst_start = (1.1 * fill_ns / cycle_ns) as u64 + SLACK_CYCLES;
    let limit = burst_start + (2.0 * pred.ns / cycle_ns) as u64 + SLACK_CYCLES;
    let mut sim = Sim::new(&p.scenario(burst_start, limit), Overrides::default())?;
    let congested = 0..p.n as usize;
    let bursting = p.n as usize..p.queues();
    let bit = 1u8 << PRIO;
    let mut ever_paused = 0u64;
    let mut t0 = None;
    let mut qoff_at = None;
    let mut congested_cells_sum = 0;
    while sim.now() < limit {
        sim.step()?;
        let now = sim.now() - 1;
        let mmu = sim.mmu();
        let Some(start) = t0 else {
            for c in congested.clone() {
                if mmu.qoff(c) & bit != 0 {
                    ever_paused |= 1 << c;
                }
            }
            let burst_arrived = sim
                .outputs()
                .cell_events
                .iter()
                .any(|e| bursting.contains(&(e.beat.hdr.src as usize)));
            if burst_arrived {
                if ever_paused.count_ones() != p.n {
                    return Err(ReproError::Invariant(format!(
                        "{p:?}: only {} of the {} congested queues reached their threshold (were paused) before the burst",
                        ever_paused.count_ones(),
                        p.n
                    )));
                }
                t0 = Some(now);
                congested_cells_sum = congested
                    .clone()
                    .map(|c| mmu.ingress_counters(c, PRIO as usize)[1] as u64)
                    .sum();
            }
            continue;
        };
        if qoff_at.is_none() && bursting.clone().any(|b| mmu.qoff(b) & bit != 0) {
            qoff_at = Some(now);
        }
        let sent = sim
            .outputs()
            .pfc_tx
            .iter()
            .any(|&(port, f)| bursting.contains(&(port as usize)) && f.paused() & bit != 0);
        if let (Some(q), true) = (qoff_at, sent) {
            let s = sim.summary(0.0);
            let fail = |what: String| Err(ReproError::Invariant(format!("{p:?}: {what}")));
            if !s.violations.is_empty() {
                return fail(s.violations.join("; "));
            }
            if s.pfc_port_pause_frames > 0 {
                return fail("DSH port-level pause fired: outside the theorems' model".into());
            }
            return Ok(Raw {
                qoff_cycles: q - start,
                pause_cycles: now - start,
                congested_cells_sum,
                cycles: sim.now(),
            });
        }
    }
    Err(ReproError::Invariant(format!(
        "{p:?}: no PAUSE of a bursting queue within {limit} cycles (predicted {:.0} ns after t = 0)",
        pred.ns
    )))
}

/// The grid: sixteen `(N, M, R, alpha, B, eta, N_q)` sets, each under DSH and SIH. Both
/// cases of `R` appear with every `alpha`; four sets lie between the paper's printed case
/// boundary and the corrected one (see [`case_boundary`]), where only the corrected one
/// picks the formula the model follows.
pub fn grid() -> Vec<Point> {
    const MB: u64 = 1 << 20;
    const KB: u32 = 1 << 10;
    // (N, M, R, alpha_log2, buffer, eta, N_q)
    let sets: &[(u32, u32, f64, i32, u64, u32, u8)] = &[
        (1, 1, 2.0, -1, 4 * MB, 16 * KB, 2),
        (1, 1, 3.0, -1, 4 * MB, 16 * KB, 2),
        (1, 1, 6.0, -1, 4 * MB, 16 * KB, 2),
        (2, 2, 1.5, 0, 8 * MB, 32 * KB, 4),
        (2, 2, 2.0, 0, 8 * MB, 32 * KB, 4),
        (2, 2, 4.0, 0, 8 * MB, 32 * KB, 4),
        (4, 1, 3.0, -2, 16 * MB, 64 * KB, 1),
        (1, 4, 1.25, 0, 2 * MB, 8 * KB, 2),
        (1, 4, 3.0, 0, 2 * MB, 8 * KB, 2),
        (3, 2, 2.0, 1, 4 * MB, 48 * KB, 2),
        (3, 2, 5.0, 1, 4 * MB, 48 * KB, 2),
        (1, 3, 4.0, -2, 8 * MB, 24 * KB, 3),
        (0, 2, 1.5, -1, 4 * MB, 32 * KB, 2),
        (0, 2, 4.0, -1, 4 * MB, 32 * KB, 2),
        (2, 1, 2.5, -3, 32 * MB, 128 * KB, 8),
        (1, 2, 5.0, 3, 4 * MB, 256 * KB, 2),
    ];
    [Policy::Dsh, Policy::Sih]
        .into_iter()
        .flat_map(|policy| {
            sets.iter().map(
                move |&(n, m, r, alpha_log2, buffer_bytes, eta_bytes, lossless_queues)| Point {
                    policy,
                    n,
                    m,
                    r,
                    alpha_log2,
                    buffer_bytes,
                    eta_bytes,
                    lossless_queues,
                },
            )
        })
        .collect()
}

/// Measure `points` on the sweep engine, the runs in `dir` (those with a row there are not
/// run again).
pub fn measure_all(
    dir: &Path,
    points: &[Point],
    progress: &mut dyn Progress,
) -> Result<Vec<Outcome>, ReproError> {
    let spec = Spec::parse(&spec_text(points), "dsh-theorem", Path::new("."))?;
    let rows = super::sweep_rows(&spec, dir, progress)?;
    rows.iter()
        .map(|r| {
            let p = Point::from_values(&r.params)?;
            let f = |k| int_field(&r.fields, k);
            let raw = Raw {
                qoff_cycles: f("qoff_cycles")?,
                pause_cycles: f("pause_cycles")?,
                congested_cells_sum: f("congested_cells_sum")?,
                cycles: f("cycles")?,
            };
            Outcome::new(&p, raw)
        })
        .collect()
}

/// Write `theorem.csv` into `out`.
pub fn write_csv(out: &Path, outcomes: &[Outcome]) -> Result<(), ReproError> {
    super::write_csv(
        &out.join("theorem.csv"),
        outcomes.iter().map(Outcome::csv_row),
    )
}

/// Write `theorem.png`: measured against predicted time, one series per policy, and the
/// line `measured = predicted`.
pub fn write_plot(out: &Path, outcomes: &[Outcome]) -> Result<(), ReproError> {
    let us = |ns: f64| ns / 1000.0;
    let series = |policy: Policy, name: &str| Series {
        name: name.into(),
        points: outcomes
            .iter()
            .filter(|o| o.point.policy == policy)
            .map(|o| (us(o.prediction.ns), us(o.measured_ns)))
            .collect(),
        line: false,
    };
    let top = outcomes
        .iter()
        .map(|o| us(o.prediction.ns.max(o.measured_ns)))
        .fold(0.0, f64::max);
    xy_chart(
        &out.join("theorem.png"),
        "DSH Theorems 1-2: time to the first PAUSE of the bursting queues",
        "predicted (us): DSH Eq. 16/19, SIH Eq. 21",
        "measured (us)",
        &[
            Series {
                name: "measured = predicted".into(),
                points: vec![(0.0, 0.0), (top, top)],
                line: true,
            },
            series(Policy::Dsh, "DSH"),
            series(Policy::Sih, "SIH"),
        ],
    )
}

/// The report printed on stdout: one line per point.
pub fn report(outcomes: &[Outcome]) -> String {
    let mut s = String::from(
        "DSH Theorems 1-2: first PAUSE of M bursting queues next to N congested ones\n\
         t = 0: first burst cell at the MMU; meas: the cycle a bursting queue turns QOFF;\n\
         tx_ns: until that PAUSE frame has left; q_c(0): a congested queue at t = 0, cells,\n\
         Eq. 10 / model; bound: the error packet granularity explains; printed: error of the\n\
         formula the paper's printed case boundary picks (* where it picks the other one)\n\n",
    );
    let _ = writeln!(
        s,
        "{:<6}{:>3}{:>3}{:>6}{:>7}{:>5}{:>7}{:>4}{:>5}{:>7}{:>13}{:>10}{:>10}{:>8}{:>8}{:>6}{:>11}",
        "policy",
        "N",
        "M",
        "R",
        "alpha",
        "B_MB",
        "eta_KB",
        "Nq",
        "case",
        "B_s",
        "q_c(0)",
        "pred_us",
        "meas_us",
        "err_%",
        "bound_%",
        "tx_ns",
        "printed_%"
    );
    for o in outcomes {
        let p = &o.point;
        let pr = &o.prediction;
        let q_c = if p.n == 0 {
            "-".to_string()
        } else {
            format!("{:.0}/{:.0}", pr.congested_cells, o.congested_cells)
        };
        let printed = if pr.printed_case == pr.case {
            format!("{:.3}", 100.0 * o.rel_error())
        } else if pr.printed_ns <= 0.0 {
            "t<0*".to_string()
        } else {
            format!(
                "{:.1}*",
                100.0 * (o.measured_ns - pr.printed_ns) / pr.printed_ns
            )
        };
        let _ = writeln!(
            s,
            "{:<6}{:>3}{:>3}{:>6}{:>7}{:>5}{:>7}{:>4}{:>5}{:>7}{:>13}{:>10.3}{:>10.3}{:>8.3}{:>8.2}{:>6.0}{:>11}",
            p.policy.name(),
            p.n,
            p.m,
            p.r,
            p.alpha(),
            p.buffer_bytes >> 20,
            pr.eta_cells * CELL_BYTES / 1024,
            p.lossless_queues,
            match pr.case {
                Case::One => 1,
                Case::Two => 2,
            },
            pr.shared_cells,
            q_c,
            pr.ns / 1000.0,
            o.measured_ns / 1000.0,
            100.0 * o.rel_error(),
            100.0 * granularity_bound(p, pr),
            o.transmitted_ns - o.measured_ns,
            printed
        );
    }
    let worst = outcomes
        .iter()
        .map(|o| o.rel_error().abs())
        .fold(0.0, f64::max);
    let misses = outcomes
        .iter()
        .filter(|o| o.rel_error().abs() > 0.05)
        .count();
    let _ = writeln!(
        s,
        "\n{} points, largest |relative error| {:.3} %, {} outside 5 %; {} cycles simulated",
        outcomes.len(),
        100.0 * worst,
        misses,
        outcomes.iter().map(|o| o.cycles).sum::<u64>()
    );
    s
}

/// `mmu-sim reproduce dsh-theorem`: the grid, `theorem.csv`, `theorem.png` and the report.
pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    std::fs::create_dir_all(out).map_err(|e| ReproError::io(out, e))?;
    let outcomes = measure_all(&out.join("sweep"), &grid(), progress)?;
    write_csv(out, &outcomes)?;
    write_plot(out, &outcomes)?;
    Ok(report(&outcomes))
}
