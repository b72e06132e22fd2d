//! ECM draft, section 3.3: "if a traffic flow is subject to congestion at CP1 and,
//! therefore, is rate controlled by CP1 starts experiencing congestion at CP2, the latter
//! will generate negative ECM frames for that flow, causing its filter to change
//! association from CP1 to CP2."
//!
//! Within one switch a packet passes one egress queue, so the flow's path has to change:
//! one connection is re-routed from egress port A to egress port B (as after a link
//! failure or an ECMP re-hash). It is two flows of the plan, the second starting when the
//! first stops, and the second one carries the first one's 5-tuple (`connection_of = 0`,
//! [`scenario::FlowSpec::connection_of`]), so the RP sees one FlowID and one
//! limiter. Ports (`super::ecm`):
//!
//! - NIC 0 sends the connection at [`Setup::flow_gbps`]: to A until [`Setup::reroute_ms`],
//!   then to B;
//! - NIC 1 sends 10 Gb/s to A and NIC 2 10 Gb/s to B for the whole run (cross traffic).
//!
//! So A is congested first; after the re-route A carries NIC 1 alone and B is congested.
//! Frames of the connection still queued in NIC 0 when it is re-routed leave on the old
//! path first (the limiter's FIFO keeps its order), so the move to B lags the re-route by
//! the time that backlog takes to drain.
//!
//! Outputs: `two-cps.csv` (`time_us,cpid,cp,rate_bps,queue_a_bytes,queue_b_bytes` every
//! [`Setup::sample_us`]: the CPID register of the connection's limiter, `A`, `B` or
//! `none` without a limiter, its rate, and the two CPs' queues), `two-cps-rp.csv` (the
//! `--trace-rp` trace), `two-cps-rate.png` and `two-cps-queues.png`.

use super::ecm::{self, PRIO};
use super::plot::{xy_chart, Series};
use super::{wrote, Progress, ReproError};
use crate::sweep::stats;
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;
use switch_run::Sim;

/// Header of `two-cps.csv`.
pub const CSV_HEADER: &str = "time_us,cpid,cp,rate_bps,queue_a_bytes,queue_b_bytes";
/// Egress ports A and B.
const PORT_A: usize = 3;
const PORT_B: usize = 4;

/// Timing and load of the experiment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    pub run_ms: f64,
    pub reroute_ms: f64,
    /// Offered rate of the re-routed connection, Gb/s.
    pub flow_gbps: f64,
    pub sample_us: f64,
}

impl Setup {
    /// 40 ms, re-routed at 15 ms, the connection at 6 Gb/s.
    pub fn paper() -> Self {
        Self {
            run_ms: 40.0,
            reroute_ms: 15.0,
            flow_gbps: 6.0,
            sample_us: 10.0,
        }
    }

    fn cycles(ms: f64) -> u64 {
        (ms * ecm::CLOCK_MHZ as f64 * 1000.0).round() as u64
    }

    /// The scenario text (flows 0 and 1 are the connection before and after the
    /// re-route; CP and RP parameters: `super::ecm`).
    pub fn scenario(&self) -> String {
        let t = Self::cycles(self.reroute_ms);
        let mut s = ecm::header("ecm-two-cps", 5, Self::cycles(self.run_ms));
        let c = ecm::CONSTANT;
        s += &ecm::flow(
            0,
            PORT_A,
            PRIO,
            self.flow_gbps,
            &format!("{c}\nstop_cycle = {t}"),
        );
        s += &ecm::flow(
            0,
            PORT_B,
            PRIO,
            self.flow_gbps,
            &format!("{c}\nstart_cycle = {t}\nconnection_of = 0"),
        );
        s += &ecm::flow(1, PORT_A, PRIO, ecm::PORT_GBPS, c);
        s += &ecm::flow(2, PORT_B, PRIO, ecm::PORT_GBPS, c);
        s
    }
}

/// A change of the connection's limiter: its CPID, `None` when no limiter holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub time_us: f64,
    pub cpid: Option<u16>,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct TwoCps {
    pub setup: Setup,
    pub parameters: String,
    pub cpid_a: u16,
    pub cpid_b: u16,
    /// Every change of the limiter's CPID (cycle-exact), in order.
    pub changes: Vec<Change>,
    /// Mean rate of the limiter and mean queues of A and B over the last 5 ms before the
    /// re-route and over the last 5 ms of the run: `(rate b/s, queue A B, queue B B)`.
    pub before: (f64, f64, f64),
    pub after: (f64, f64, f64),
    pub drops: u64,
    pub rp_events: Vec<(String, u64)>,
}

impl TwoCps {
    /// `A`, `B`, another CP, or `none`.
    pub fn label(&self, cpid: Option<u16>) -> String {
        match cpid {
            None => "none".into(),
            Some(c) if c == self.cpid_a => "A".into(),
            Some(c) if c == self.cpid_b => "B".into(),
            Some(c) => format!("{c:#x}"),
        }
    }

    /// Time of the first association with CP A, and of the first move from A to B.
    pub fn first_a_and_move(&self) -> (Option<f64>, Option<f64>) {
        let a = self.changes.iter().find(|c| c.cpid == Some(self.cpid_a));
        let mut last = None;
        let mut moved = None;
        for c in &self.changes {
            if c.cpid == Some(self.cpid_b) && last == Some(self.cpid_a) {
                moved = Some(c.time_us);
                break;
            }
            if c.cpid.is_some() {
                last = c.cpid;
            }
        }
        (a.map(|c| c.time_us), moved)
    }
}

/// One sample row.
struct Row {
    t_us: f64,
    cpid: Option<u16>,
    rate: u64,
    qa: u64,
    qb: u64,
}

/// Run `setup`, writing the files of the module doc into `out`.
pub fn measure(
    setup: &Setup,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<TwoCps, ReproError> {
    let mut sim = Sim::from_plan(ecm::plan(&setup.scenario(), "ecm-two-cps")?);
    let trace_path = out.join("two-cps-rp.csv");
    ecm::attach_rp_trace(&mut sim, &trace_path)?;
    let (cpa, cpb) = (ecm::cp_index(&sim, PORT_A)?, ecm::cp_index(&sim, PORT_B)?);
    let cpid_a = sim.mmu().ecm_cps()[cpa].cpid;
    let cpid_b = sim.mmu().ecm_cps()[cpb].cpid;
    let flowid = ecm::flowid_of(&sim, 0);
    let every = ecm::us_to_cycles(&sim, setup.sample_us).max(1);
    let end = sim.plan().cycles;
    progress.set_len(end / every);
    let mut changes = Vec::new();
    let mut cur: Option<u16> = None;
    let mut drops = 0u64;
    let mut rows = Vec::with_capacity((end / every) as usize);
    while sim.now() < end {
        sim.step()?;
        drops += ecm::prio_drops(&sim);
        let rp = sim.partner(0).rp();
        let lim = ecm::limiter_of(rp, flowid, PRIO);
        let cpid = lim.map(|l| l.cpid);
        if cpid != cur {
            cur = cpid;
            // The cycle just stepped, as in the RP trace.
            changes.push(Change {
                time_us: ecm::cycles_to_us(&sim, sim.now() - 1),
                cpid,
            });
        }
        if sim.now().is_multiple_of(every) {
            rows.push(Row {
                t_us: ecm::cycles_to_us(&sim, sim.now()),
                cpid,
                rate: lim.map_or(rp.line_rate_bps(), |l| l.rate_bps),
                qa: ecm::cp_queue_bytes(&sim, cpa),
                qb: ecm::cp_queue_bytes(&sim, cpb),
            });
            progress.inc(1);
        }
    }
    let s = ecm::check(sim.run(|_| {})?, "ecm-two-cps")?;
    let mean_over = |from_us: f64, to_us: f64| {
        let sel = || rows.iter().filter(|r| r.t_us > from_us && r.t_us <= to_us);
        (
            stats::mean_std(sel().map(|r| r.rate as f64)).0,
            stats::mean_std(sel().map(|r| r.qa as f64)).0,
            stats::mean_std(sel().map(|r| r.qb as f64)).0,
        )
    };
    let t1 = setup.reroute_ms * 1000.0;
    let t2 = setup.run_ms * 1000.0;
    let r = TwoCps {
        setup: *setup,
        parameters: ecm::parameters(&sim),
        cpid_a,
        cpid_b,
        changes,
        before: mean_over(t1 - 5000.0, t1),
        after: mean_over(t2 - 5000.0, t2),
        drops,
        rp_events: ecm::event_totals(&s),
    };
    /// One line of `two-cps.csv` ([`CSV_HEADER`]).
    #[derive(Default, serde::Serialize)]
    struct Line {
        time_us: Fixed<2>,
        cpid: Option<u16>,
        cp: String,
        rate_bps: u64,
        queue_a_bytes: u64,
        queue_b_bytes: u64,
    }
    let lines = rows.iter().map(|w| Line {
        time_us: Fixed(w.t_us),
        cpid: w.cpid,
        cp: r.label(w.cpid),
        rate_bps: w.rate,
        queue_a_bytes: w.qa,
        queue_b_bytes: w.qb,
    });
    super::write_csv(&out.join("two-cps.csv"), lines)?;
    charts(&r, &rows, out)?;
    Ok(r)
}

fn charts(r: &TwoCps, rows: &[Row], out: &Path) -> Result<(), ReproError> {
    // Every 10th sample (100 us with the default sampling) keeps the markers apart.
    let thin = || rows.iter().step_by(10);
    let rate_while = |want: &dyn Fn(Option<u16>) -> bool| -> Vec<(f64, f64)> {
        thin()
            .filter(|w| want(w.cpid))
            .map(|w| (w.t_us / 1000.0, w.rate as f64 / 1e9))
            .collect()
    };
    let (a, b) = (r.cpid_a, r.cpid_b);
    let t1 = r.setup.reroute_ms;
    let rate = vec![
        Series {
            name: "limiter rate while associated with CP A, Gb/s".into(),
            points: rate_while(&|c| c == Some(a)),
            line: false,
        },
        Series {
            name: "limiter rate while associated with CP B, Gb/s".into(),
            points: rate_while(&|c| c == Some(b)),
            line: false,
        },
        Series {
            name: "no limiter (line rate)".into(),
            points: rate_while(&|c| c.is_none()),
            line: false,
        },
        Series {
            name: format!("re-route A -> B at {t1} ms"),
            points: vec![(t1, 0.0), (t1, ecm::PORT_GBPS)],
            line: true,
        },
    ];
    xy_chart(
        &out.join("two-cps-rate.png"),
        "ECM two CPs: the re-routed connection's limiter and its association",
        "time, ms",
        "Gb/s",
        &rate,
    )?;
    let kib = |b: u64| b as f64 / 1024.0;
    let queues = vec![
        Series {
            name: "queue at CP A (port 3), KiB".into(),
            points: thin().map(|w| (w.t_us / 1000.0, kib(w.qa))).collect(),
            line: true,
        },
        Series {
            name: "queue at CP B (port 4), KiB".into(),
            points: thin().map(|w| (w.t_us / 1000.0, kib(w.qb))).collect(),
            line: true,
        },
    ];
    xy_chart(
        &out.join("two-cps-queues.png"),
        "ECM two CPs: queues of the two congestion points",
        "time, ms",
        "KiB",
        &queues,
    )
}

/// The text report.
pub fn report(r: &TwoCps, out: &Path) -> String {
    let mut rep = format!(
        "ECM section 3.3: a connection at {} Gb/s from NIC 0 re-routed from port A (3) to port B (4) at {} ms, 10 Gb/s cross traffic into each, {} ms\n{}",
        r.setup.flow_gbps, r.setup.reroute_ms, r.setup.run_ms, r.parameters
    );
    let _ = writeln!(rep, "CPID of A {:#x}, of B {:#x}", r.cpid_a, r.cpid_b);
    let (first_a, moved) = r.first_a_and_move();
    let fmt = |t: Option<f64>| t.map_or("never".to_string(), |t| format!("{t:.2} us"));
    let _ = writeln!(
        rep,
        "limiter associated with A at {}, moved to B at {} ({} after the re-route)",
        fmt(first_a),
        fmt(moved),
        moved.map_or("-".to_string(), |t| format!(
            "{:.2} us",
            t - r.setup.reroute_ms * 1000.0
        ))
    );
    let seq: Vec<String> = r
        .changes
        .iter()
        .map(|c| format!("{:.1} us {}", c.time_us, r.label(c.cpid)))
        .collect();
    let _ = writeln!(rep, "every CPID change: {}", seq.join(", "));
    for (what, (rate, qa, qb)) in [
        ("last 5 ms before the re-route", r.before),
        ("last 5 ms of the run", r.after),
    ] {
        let _ = writeln!(
            rep,
            "{what}: limiter rate {:.3} Gb/s, queue A {:.0} B, queue B {:.0} B",
            rate / 1e9,
            qa,
            qb
        );
    }
    let ev: Vec<String> = r
        .rp_events
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let _ = writeln!(
        rep,
        "limiter events (all NICs): {}; drops of priority {PRIO} {}",
        ev.join(", "),
        r.drops
    );
    let _ = writeln!(
        rep,
        "{}",
        wrote(
            out,
            &[
                "two-cps.csv",
                "two-cps-rp.csv",
                "two-cps-rate.png",
                "two-cps-queues.png"
            ]
        )
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let r = measure(&Setup::paper(), out, progress)?;
    Ok(report(&r, out))
}
