//! ECM draft, section 2 and Figure 1: end nodes A and B send "at line rate (10 Gbps)" to
//! end node C over one 10 Gb/s link. The CP at that link's queue samples the arriving
//! frames, the NICs instantiate rate limiters, and the loop settles with the queue around
//! `Qeq` and the two rates at a fair share of the link.
//!
//! Modelled as one switch (`super::ecm`): ports 0 and 1 are A and B (constant 10 Gb/s of
//! 1500 B frames on the ECM priority), port 2 is the congested link to C. Every
//! [`Setup::sample_us`] the run records the CP's queue (`qlen` times 64 B) and the rate
//! that limits each source at its NIC (limiter register, or `C` without a limiter).
//!
//! **Convergence** is the earliest time `T` such that for every later sample time `t` up
//! to the end of the run, both rates averaged over `[t - window, t]` lie within
//! `+-band` of `C/2` (defaults: window 1 ms, band 10 %). The summary is measured over
//! `[T, end]`: queue mean and standard deviation of the samples, Jain's index of the two
//! mean rates, link utilisation (wire bytes, preamble and gap included, that left port 2
//! over `C` times the interval), and cells of the ECM priority dropped. Without
//! convergence `convergence_us` is `null` and the summary covers the second half.

use super::ecm::{self, PRIO};
use super::plot::{xy_chart, Series};
use super::{write_file, wrote, Progress, ReproError};
use crate::sweep::stats;
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;
use switch_run::Sim;

/// Header of `fig1.csv`.
pub const CSV_HEADER: &str = "time_us,queue_bytes,rate0_bps,rate1_bps";
/// Keys of `fig1-summary.json`.
pub const SUMMARY_KEYS: [&str; 7] = [
    "qeq_bytes",
    "queue_mean_bytes",
    "queue_std_bytes",
    "jain",
    "utilization",
    "convergence_us",
    "drops",
];
/// The congested port (to end node C).
const PORT_C: usize = 2;

/// Length of the run and of its measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    pub run_ms: f64,
    /// Interval between two samples of the queue and the rates.
    pub sample_us: f64,
    /// Moving-average window of the convergence test.
    pub window_ms: f64,
    /// Half-width of the convergence band, as a fraction of `C/2`.
    pub band: f64,
}

impl Setup {
    /// The reproduction: 100 ms, samples every 10 us, 1 ms windows, +-10 %.
    pub fn paper() -> Self {
        Self {
            run_ms: 100.0,
            sample_us: 10.0,
            window_ms: 1.0,
            band: 0.1,
        }
    }

    /// The scenario text (CP and RP parameters: `super::ecm`).
    pub fn scenario(&self) -> String {
        let cycles = (self.run_ms * ecm::CLOCK_MHZ as f64 * 1000.0).round() as u64;
        let mut s = ecm::header("ecm-fig1", 3, cycles);
        for src in 0..2 {
            s += &ecm::flow(src, PORT_C, PRIO, ecm::PORT_GBPS, ecm::CONSTANT);
        }
        s
    }
}

/// One sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub time_us: f64,
    pub queue_bytes: u64,
    pub rate_bps: [u64; 2],
    /// Wire bytes that left port C and priority cells dropped, since the start.
    pub egress_bytes: u64,
    pub drops: u64,
}

/// The summary after convergence (`fig1-summary.json`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fig1Summary {
    pub qeq_bytes: u64,
    pub queue_mean_bytes: f64,
    pub queue_std_bytes: f64,
    pub jain: f64,
    pub utilization: f64,
    pub convergence_us: Option<f64>,
    pub drops: u64,
    /// Mean rates of A and B over the measured interval, b/s.
    pub mean_rate_bps: [f64; 2],
    /// Root mean square of `queue - Qeq` over the measured interval, bytes.
    pub queue_rms_from_qeq_bytes: f64,
    /// Start of the measured interval, us.
    pub from_us: f64,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Fig1 {
    pub setup: Setup,
    pub rows: Vec<Row>,
    pub summary: Fig1Summary,
    pub line_rate_bps: u64,
    pub parameters: String,
    /// ECM frames the CP sent: regular, ECM-Max, ECM(0,0).
    pub ecm_frames: [u64; 3],
    /// Limiter events of both NICs by kind, `(name, count)`.
    pub rp_events: Vec<(String, u64)>,
    pub pfc_pause_frames: u64,
    /// Drops of the ECM priority over the whole run.
    pub drops_total: u64,
}

/// First sample index of the converged interval (see the module doc), `None` if the last
/// window is still outside the band.
pub fn convergence_index(rows: &[Row], window: usize, c_bps: f64, band: f64) -> Option<usize> {
    let w = window.max(1);
    if rows.len() < w {
        return None;
    }
    let mut prefix = vec![[0f64; 2]; rows.len() + 1];
    for (i, r) in rows.iter().enumerate() {
        let prev = prefix[i];
        for (k, p) in prefix[i + 1].iter_mut().enumerate() {
            *p = prev[k] + r.rate_bps[k] as f64;
        }
    }
    let half = c_bps / 2.0;
    let bad = |i: usize| {
        (0..2).any(|k| {
            let ma = (prefix[i + 1][k] - prefix[i + 1 - w][k]) / w as f64;
            (ma - half).abs() > band * half
        })
    };
    let start = match (w - 1..rows.len()).rev().find(|&i| bad(i)) {
        Some(i) => i + 1,
        None => w - 1,
    };
    (start < rows.len()).then_some(start)
}

/// The summary over `rows[from..]`.
fn summarize(rows: &[Row], from: usize, conv: Option<f64>, qeq: u64, c: f64) -> Fig1Summary {
    let tail = &rows[from..];
    let (qm, qs) = stats::mean_std(tail.iter().map(|r| r.queue_bytes as f64));
    let rms = (tail
        .iter()
        .map(|r| (r.queue_bytes as f64 - qeq as f64).powi(2))
        .sum::<f64>()
        / tail.len().max(1) as f64)
        .sqrt();
    let mean = |k: usize| stats::mean_std(tail.iter().map(|r| r.rate_bps[k] as f64)).0;
    let mean_rate_bps = [mean(0), mean(1)];
    let (first, last) = (tail[0], tail[tail.len() - 1]);
    let secs = (last.time_us - first.time_us) / 1e6;
    let utilization = if secs > 0.0 {
        (last.egress_bytes - first.egress_bytes) as f64 * 8.0 / (c * secs)
    } else {
        0.0
    };
    Fig1Summary {
        qeq_bytes: qeq,
        queue_mean_bytes: qm,
        queue_std_bytes: qs,
        jain: stats::jain(&mean_rate_bps),
        utilization,
        convergence_us: conv,
        drops: last.drops - first.drops,
        mean_rate_bps,
        queue_rms_from_qeq_bytes: rms,
        from_us: first.time_us,
    }
}

/// Run `setup`: writes `fig1.csv`, `fig1-summary.json`, `fig1-queue.png` and
/// `fig1-rates.png` into `out`.
pub fn measure(setup: &Setup, out: &Path, progress: &mut dyn Progress) -> Result<Fig1, ReproError> {
    let mut sim = Sim::from_plan(ecm::plan(&setup.scenario(), "ecm-fig1")?);
    let cp = ecm::cp_index(&sim, PORT_C)?;
    let flowids = [ecm::flowid_of(&sim, 0), ecm::flowid_of(&sim, 1)];
    let every = ecm::us_to_cycles(&sim, setup.sample_us).max(1);
    let end = sim.plan().cycles;
    progress.set_len(end / every);
    let (mut egress, mut drops) = (0u64, 0u64);
    let mut rows = Vec::with_capacity((end / every) as usize);
    while sim.now() < end {
        sim.step()?;
        egress += ecm::egress_wire_bytes(&sim, PORT_C);
        drops += ecm::prio_drops(&sim);
        if sim.now().is_multiple_of(every) {
            let rate = |k: usize| ecm::flow_rate(sim.partner(k).rp(), flowids[k], PRIO);
            rows.push(Row {
                time_us: ecm::cycles_to_us(&sim, sim.now()),
                queue_bytes: ecm::cp_queue_bytes(&sim, cp),
                rate_bps: [rate(0), rate(1)],
                egress_bytes: egress,
                drops,
            });
            progress.inc(1);
        }
    }
    let s = ecm::check(sim.run(|_| {})?, "ecm-fig1")?;
    if rows.len() < 2 {
        return Err(ReproError::Invariant(
            "ecm-fig1: the run is shorter than two samples".into(),
        ));
    }
    let c = sim.partner(0).rp().line_rate_bps();
    let qeq = sim.plan().derived.ecm.qeq as u64 * 64;
    let window = (setup.window_ms * 1000.0 / setup.sample_us).round() as usize;
    let conv = convergence_index(&rows, window, c as f64, setup.band);
    let from = conv.unwrap_or(rows.len() / 2);
    let summary = summarize(&rows, from, conv.map(|i| rows[i].time_us), qeq, c as f64);
    let fig = Fig1 {
        setup: *setup,
        summary,
        line_rate_bps: c,
        parameters: ecm::parameters(&sim),
        ecm_frames: ["regular", "max", "zero"].map(|k| s.ecm_frames.get(k).copied().unwrap_or(0)),
        rp_events: ecm::event_totals(&s),
        pfc_pause_frames: s.pfc_pause_frames,
        drops_total: drops,
        rows,
    };
    write_outputs(&fig, out)?;
    Ok(fig)
}

fn write_outputs(f: &Fig1, out: &Path) -> Result<(), ReproError> {
    /// One line of `fig1.csv` ([`CSV_HEADER`]).
    #[derive(Default, serde::Serialize)]
    struct Line {
        time_us: Fixed<2>,
        queue_bytes: u64,
        rate0_bps: u64,
        rate1_bps: u64,
    }
    let lines = f.rows.iter().map(|r| Line {
        time_us: Fixed(r.time_us),
        queue_bytes: r.queue_bytes,
        rate0_bps: r.rate_bps[0],
        rate1_bps: r.rate_bps[1],
    });
    super::write_csv(&out.join("fig1.csv"), lines)?;
    let s = &f.summary;
    let json = serde_json::json!({
        "qeq_bytes": s.qeq_bytes,
        "queue_mean_bytes": s.queue_mean_bytes,
        "queue_std_bytes": s.queue_std_bytes,
        "jain": s.jain,
        "utilization": s.utilization,
        "convergence_us": s.convergence_us,
        "drops": s.drops,
    });
    let text = serde_json::to_string_pretty(&json).map_err(|e| ReproError::Plot {
        path: out.join("fig1-summary.json"),
        message: e.to_string(),
    })?;
    write_file(&out.join("fig1-summary.json"), &(text + "\n"))?;

    // Charts: 100 us averages, so that the lines stay readable over 100 ms.
    let bin = ((100.0 / f.setup.sample_us).round() as usize).max(1);
    let avg = |g: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> {
        f.rows
            .chunks(bin)
            .map(|c| {
                let t = c[c.len() - 1].time_us / 1000.0;
                (t, c.iter().map(g).sum::<f64>() / c.len() as f64)
            })
            .collect()
    };
    let t_end = f.rows.last().map_or(0.0, |r| r.time_us / 1000.0);
    let flat = |y: f64| vec![(0.0, y), (t_end, y)];
    let kib = |b: f64| b / 1024.0;
    let mut queue = vec![
        Series {
            name: "queue at the CP (qlen), KiB, 100 us means".into(),
            points: avg(&|r| kib(r.queue_bytes as f64)),
            line: true,
        },
        Series {
            name: format!("Qeq = {:.0} KiB", kib(s.qeq_bytes as f64)),
            points: flat(kib(s.qeq_bytes as f64)),
            line: true,
        },
    ];
    let mut rates = vec![
        Series {
            name: "rate of A (NIC 0), Gb/s".into(),
            points: avg(&|r| r.rate_bps[0] as f64 / 1e9),
            line: true,
        },
        Series {
            name: "rate of B (NIC 1), Gb/s".into(),
            points: avg(&|r| r.rate_bps[1] as f64 / 1e9),
            line: true,
        },
        Series {
            name: "C/2".into(),
            points: flat(f.line_rate_bps as f64 / 2e9),
            line: true,
        },
    ];
    if let Some(t) = s.convergence_us {
        let mark = |series: &mut Vec<Series>, top: f64| {
            series.push(Series {
                name: format!("convergence at {:.2} ms", t / 1000.0),
                points: vec![(t / 1000.0, 0.0), (t / 1000.0, top)],
                line: true,
            })
        };
        let qtop = f.rows.iter().map(|r| r.queue_bytes).max().unwrap_or(0) as f64;
        mark(&mut queue, kib(qtop));
        mark(&mut rates, f.line_rate_bps as f64 / 1e9);
    }
    xy_chart(
        &out.join("fig1-queue.png"),
        "ECM Fig. 1: queue of the congested 10G link, two sources at 10G",
        "time, ms",
        "KiB",
        &queue,
    )?;
    xy_chart(
        &out.join("fig1-rates.png"),
        "ECM Fig. 1: rate-limiter rates of the two sources",
        "time, ms",
        "Gb/s",
        &rates,
    )
}

/// The text report.
pub fn report(f: &Fig1, out: &Path) -> String {
    let s = &f.summary;
    let c = f.line_rate_bps as f64;
    let mut rep = format!(
        "ECM section 2 / Figure 1: two end nodes at 10 Gb/s into one 10 Gb/s link, {} ms, samples every {} us\n{}",
        f.setup.run_ms, f.setup.sample_us, f.parameters
    );
    match s.convergence_us {
        Some(t) => {
            let _ = writeln!(
                rep,
                "convergence: {:.0} us (both {} ms mean rates within +-{:.0} % of C/2 = {:.2} Gb/s from then on)",
                t,
                f.setup.window_ms,
                f.setup.band * 100.0,
                c / 2e9
            );
        }
        None => {
            let _ = writeln!(
                rep,
                "convergence: not reached (the last {} ms window is outside +-{:.0} % of C/2); measured over the second half",
                f.setup.window_ms,
                f.setup.band * 100.0
            );
        }
    }
    let _ = writeln!(
        rep,
        "after {:.0} us: queue mean {:.0} B (Qeq {} B, {:.3} Qeq), std {:.0} B, rms from Qeq {:.0} B\n\
         mean rates {:.3} and {:.3} Gb/s, Jain {:.5}, link utilisation {:.4}, drops of priority {PRIO} {} (whole run {})",
        s.from_us,
        s.queue_mean_bytes,
        s.qeq_bytes,
        s.queue_mean_bytes / s.qeq_bytes as f64,
        s.queue_std_bytes,
        s.queue_rms_from_qeq_bytes,
        s.mean_rate_bps[0] / 1e9,
        s.mean_rate_bps[1] / 1e9,
        s.jain,
        s.utilization,
        s.drops,
        f.drops_total
    );
    let ev: Vec<String> = f
        .rp_events
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let _ = writeln!(
        rep,
        "ECM frames: {} regular, {} ECM-Max, {} ECM(0,0); limiter events: {}; PFC pause frames {}",
        f.ecm_frames[0],
        f.ecm_frames[1],
        f.ecm_frames[2],
        ev.join(", "),
        f.pfc_pause_frames
    );
    let _ = writeln!(
        rep,
        "{}",
        wrote(
            out,
            &[
                "fig1.csv",
                "fig1-summary.json",
                "fig1-queue.png",
                "fig1-rates.png"
            ]
        )
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let f = measure(&Setup::paper(), out, progress)?;
    Ok(report(&f, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: f64, r0: u64, r1: u64) -> Row {
        Row {
            time_us: t,
            queue_bytes: 0,
            rate_bps: [r0, r1],
            egress_bytes: 0,
            drops: 0,
        }
    }

    #[test]
    fn convergence_is_after_the_last_window_outside_the_band() {
        // C = 10, C/2 = 5, band 10 %: [4.5, 5.5]; windows of 2 samples.
        let rows = [
            row(0.0, 10, 0),
            row(1.0, 5, 5),
            row(2.0, 5, 5),
            row(3.0, 7, 3),
            row(4.0, 5, 5),
            row(5.0, 5, 5),
        ];
        // Window means at 1..5: (7.5, 2.5), (5, 5), (6, 4), (6, 4), (5, 5).
        assert_eq!(convergence_index(&rows, 2, 10.0, 0.1), Some(5));
        assert_eq!(convergence_index(&rows, 2, 10.0, 0.25), Some(2));
        assert_eq!(convergence_index(&rows[..4], 2, 10.0, 0.1), None);
        assert_eq!(convergence_index(&rows[1..3], 2, 10.0, 0.1), Some(1));
    }
}
