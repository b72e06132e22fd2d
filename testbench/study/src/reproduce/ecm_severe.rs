//! ECM draft, section 3.3.2 and Figure 8 (timeout and random restart): a fan-in drives
//! the CP's queue past `Qsc`, the CP answers with ECM(0,0), and each rate limiter that
//! gets one drops to rate 0 for a random time in `[0, Tmax)`, restarts at `Rmin`, and
//! halves `Rmin` and doubles `Tmax` (exponential back-off) until positive feedback
//! restores them.
//!
//! Modelled (`super::ecm`): [`Setup::sources`] NICs (ports `0..sources`) send 10 Gb/s of
//! 1500 B frames each on the ECM priority into one 10 Gb/s port (the last port). The
//! fan-in alone overshoots `Qsc` once, at the start, before the limiters exist. To make
//! severe congestion recur, so that a restarted limiter can meet ECM(0,0) again (the
//! back-off), one more NIC sends line-rate bursts on priority 7, the switch's
//! strict-priority control queue, to the same port: during a burst the ECM queue is
//! served only when queue 7 is momentarily empty, and it stays above `Qsc` even when the
//! limiters restart at `Rmin`. This is a choice: the draft gives no scenario for its
//! Figure 8.
//!
//! Outputs: `severe.csv` (`time_us,queue_bytes,rate0_bps,...`, the queue and the rate that
//! limits each source, every [`Setup::sample_us`]), `severe-rp.csv` (the `--trace-rp`
//! trace), `severe-queue.png`, `severe-rates.png` (each NIC's limiter rate from the trace,
//! exact) and `severe-backoff.png` (the rate of every restart: `Rmin` at that moment).

use super::ecm::{self, RpLine, PRIO};
use super::plot::{xy_chart, Series};
use super::{wrote, Progress, ReproError};
use std::fmt::Write;
use std::path::Path;
use stimulus::reaction_point::TMAX_CAP_US;
use switch_run::Sim;

/// The strict-priority control queue of the `small` profile (lossy).
const BLOCKER_PRIO: u8 = 7;

/// Size and timing of the experiment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// ECM sources (NICs), each at line rate.
    pub sources: usize,
    pub run_ms: f64,
    pub sample_us: f64,
    /// The priority-7 bursts: first at `burst_start_ms`, `burst_on_ms` long, then
    /// `burst_off_ms` of silence, repeated.
    pub burst_start_ms: f64,
    pub burst_on_ms: f64,
    pub burst_off_ms: f64,
}

impl Setup {
    /// Six sources, 30 ms, bursts of 2 ms every 5 ms from 5 ms.
    pub fn paper() -> Self {
        Self {
            sources: 6,
            run_ms: 30.0,
            sample_us: 10.0,
            burst_start_ms: 5.0,
            burst_on_ms: 2.0,
            burst_off_ms: 3.0,
        }
    }

    /// The congested port.
    pub fn port(&self) -> usize {
        self.sources + 1
    }

    /// The scenario text (CP and RP parameters: `super::ecm`).
    pub fn scenario(&self) -> String {
        let cyc = |ms: f64| (ms * ecm::CLOCK_MHZ as f64 * 1000.0).round() as u64;
        let mut s = ecm::header("ecm-severe", self.sources + 2, cyc(self.run_ms));
        for src in 0..self.sources {
            s += &ecm::flow(src, self.port(), PRIO, ecm::PORT_GBPS, ecm::CONSTANT);
        }
        s += &ecm::flow(
            self.sources,
            self.port(),
            BLOCKER_PRIO,
            ecm::PORT_GBPS,
            &format!(
                "pattern = \"on_off\"\non_cycles = {}\noff_cycles = {}\nstart_cycle = {}",
                cyc(self.burst_on_ms),
                cyc(self.burst_off_ms),
                cyc(self.burst_start_ms)
            ),
        );
        s
    }
}

/// One back-off level seen: the restarts at back-off depth `depth`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Restarts of the limiter since it was instantiated or last increased.
    pub depth: u32,
    /// The restart rate, `Rmin` at that depth.
    pub rate_bps: u64,
    /// `Tmax` of the timers that ended in these restarts, us.
    pub tmax_us: f64,
    pub restarts: u64,
    /// Timer lengths (timeout to restart), us.
    pub timer_mean_us: f64,
    pub timer_max_us: f64,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Severe {
    pub setup: Setup,
    pub parameters: String,
    /// ECM frames the CP sent: regular, ECM-Max, ECM(0,0).
    pub ecm_frames: [u64; 3],
    pub timeouts: u64,
    pub restarts: u64,
    /// ECM frames that reached a limiter in TIMEOUT (ignored, 3.3.2).
    pub ignored_in_timeout: u64,
    /// Back-off levels, fastest restart first.
    pub levels: Vec<Level>,
    /// Timeouts per NIC.
    pub timeouts_per_nic: Vec<u64>,
    pub max_queue_bytes: u64,
    /// Samples with the queue above `Qsc`.
    pub samples_above_qsc: usize,
    pub samples: usize,
    pub qsc_bytes: u64,
    pub qeq_bytes: u64,
    pub drops: u64,
    pub pfc_pause_frames: u64,
    pub rp_events: Vec<(String, u64)>,
}

/// Run `setup`, writing the files of the module doc into `out`.
pub fn measure(
    setup: &Setup,
    out: &Path,
    progress: &mut dyn Progress,
) -> Result<Severe, ReproError> {
    let mut sim = Sim::from_plan(ecm::plan(&setup.scenario(), "ecm-severe")?);
    let trace_path = out.join("severe-rp.csv");
    ecm::attach_rp_trace(&mut sim, &trace_path)?;
    let port = setup.port();
    let cp = ecm::cp_index(&sim, port)?;
    let flowids: Vec<u32> = (0..setup.sources)
        .map(|i| ecm::flowid_of(&sim, i))
        .collect();
    let every = ecm::us_to_cycles(&sim, setup.sample_us).max(1);
    let end = sim.plan().cycles;
    progress.set_len(end / every);
    // One rate column per source, so the row is a record, not a struct: header and rows
    // still come from one place.
    let csv_path = out.join("severe.csv");
    let io = |e: csv::Error| ReproError::io(&csv_path, std::io::Error::other(e.to_string()));
    let mut csv = csv::Writer::from_path(&csv_path).map_err(io)?;
    let header = ["time_us".to_string(), "queue_bytes".to_string()]
        .into_iter()
        .chain((0..setup.sources).map(|k| format!("rate{k}_bps")));
    csv.write_record(header).map_err(io)?;
    let qeq_bytes = sim.plan().derived.ecm.qeq as u64 * 64;
    let qsc_bytes = sim.plan().derived.ecm.qsc as u64 * 64;
    let (mut drops, mut max_q, mut above, mut samples) = (0u64, 0u64, 0usize, 0usize);
    let mut queue_pts = Vec::new();
    while sim.now() < end {
        sim.step()?;
        drops += ecm::prio_drops(&sim);
        if sim.now().is_multiple_of(every) {
            let q = ecm::cp_queue_bytes(&sim, cp);
            let t = ecm::cycles_to_us(&sim, sim.now());
            let rates = flowids
                .iter()
                .enumerate()
                .map(|(k, &f)| ecm::flow_rate(sim.partner(k).rp(), f, PRIO).to_string());
            let record = [format!("{t:.2}"), q.to_string()].into_iter().chain(rates);
            csv.write_record(record).map_err(io)?;
            queue_pts.push((t / 1000.0, q as f64 / 1024.0));
            max_q = max_q.max(q);
            above += usize::from(q > qsc_bytes);
            samples += 1;
            progress.inc(1);
        }
    }
    let s = ecm::check(sim.run(|_| {})?, "ecm-severe")?;
    csv.flush().map_err(|e| ReproError::io(&csv_path, e))?;
    let lines = ecm::read_rp_trace(&trace_path)?;
    let clock = sim.plan().derived.clock_hz as f64;
    let p = sim.plan().ecm_rp;
    let levels = backoff_levels(&lines, clock, p.tmax_us);
    let count = |e: &str| lines.iter().filter(|l| l.event == e).count() as u64;
    let mut timeouts_per_nic = vec![0u64; setup.sources];
    for l in lines.iter().filter(|l| l.event == "timeout") {
        if let Some(n) = timeouts_per_nic.get_mut(l.nic as usize) {
            *n += 1;
        }
    }
    let r = Severe {
        setup: *setup,
        parameters: ecm::parameters(&sim),
        ecm_frames: ["regular", "max", "zero"].map(|k| s.ecm_frames.get(k).copied().unwrap_or(0)),
        timeouts: count("timeout"),
        restarts: count("restart"),
        ignored_in_timeout: s.ecm_rp.iter().map(|r| r.ignored_in_timeout).sum(),
        levels,
        timeouts_per_nic,
        max_queue_bytes: max_q,
        samples_above_qsc: above,
        samples,
        qsc_bytes,
        qeq_bytes,
        drops,
        pfc_pause_frames: s.pfc_pause_frames,
        rp_events: ecm::event_totals(&s),
    };
    charts(&r, &lines, queue_pts, clock, out)?;
    Ok(r)
}

/// Restarts grouped by back-off depth `k`, the limiter's restarts since it was
/// instantiated or last increased (positive feedback restores `Rmin` and `Tmax`, 3.3.2),
/// each paired with the timeout of the same limiter before it. At depth `k` the timer ran
/// with `Tmax = min(tmax0 * 2^k, 1 s)`, and the restart rate is that depth's `Rmin` (it
/// halves down to 1 Mb/s; `Tmax` keeps doubling below that floor).
pub fn backoff_levels(lines: &[RpLine], clock_hz: f64, tmax0_us: u32) -> Vec<Level> {
    let mut started: Vec<((u8, u8), u64)> = Vec::new();
    let mut depth: Vec<((u8, u8), u32)> = Vec::new();
    // (depth, restart rate, timer us)
    let mut timers: Vec<(u32, u64, f64)> = Vec::new();
    for l in lines {
        let key = (l.nic, l.limiter);
        let k = match depth.iter().position(|(d, _)| *d == key) {
            Some(i) => i,
            None => {
                depth.push((key, 0));
                depth.len() - 1
            }
        };
        match l.event.as_str() {
            "instantiate" | "increase" | "coarse" => depth[k].1 = 0,
            "timeout" => match started.iter_mut().find(|(s, _)| *s == key) {
                Some(e) => e.1 = l.cycle,
                None => started.push((key, l.cycle)),
            },
            "restart" => {
                if let Some(i) = started.iter().position(|(s, _)| *s == key) {
                    let (_, t0) = started.swap_remove(i);
                    let us = (l.cycle - t0) as f64 * 1e6 / clock_hz;
                    timers.push((depth[k].1, l.rate_after_bps, us));
                }
                depth[k].1 += 1;
            }
            _ => {}
        }
    }
    let mut depths: Vec<u32> = timers.iter().map(|t| t.0).collect();
    depths.sort_unstable();
    depths.dedup();
    depths
        .into_iter()
        .map(|k| {
            let at: Vec<&(u32, u64, f64)> = timers.iter().filter(|t| t.0 == k).collect();
            let tmax = (tmax0_us as u64)
                .checked_shl(k)
                .unwrap_or(u64::MAX)
                .min(TMAX_CAP_US as u64);
            Level {
                depth: k,
                rate_bps: at[0].1,
                tmax_us: tmax as f64,
                restarts: at.len() as u64,
                timer_mean_us: crate::sweep::stats::mean(at.iter().map(|t| t.2)),
                timer_max_us: at.iter().map(|t| t.2).fold(0.0, f64::max),
            }
        })
        .collect()
}

fn charts(
    r: &Severe,
    lines: &[RpLine],
    queue_pts: Vec<(f64, f64)>,
    clock_hz: f64,
    out: &Path,
) -> Result<(), ReproError> {
    let t_end = r.setup.run_ms;
    let ms = |cycle: u64| cycle as f64 * 1e3 / clock_hz;
    let kib = |b: u64| b as f64 / 1024.0;
    let queue = vec![
        Series {
            name: "queue at the CP (qlen), KiB".into(),
            points: queue_pts,
            line: true,
        },
        Series {
            name: format!("Qsc = {:.0} KiB", kib(r.qsc_bytes)),
            points: vec![(0.0, kib(r.qsc_bytes)), (t_end, kib(r.qsc_bytes))],
            line: true,
        },
        Series {
            name: format!("Qeq = {:.0} KiB", kib(r.qeq_bytes)),
            points: vec![(0.0, kib(r.qeq_bytes)), (t_end, kib(r.qeq_bytes))],
            line: true,
        },
    ];
    xy_chart(
        &out.join("severe-queue.png"),
        &format!(
            "ECM severe congestion: {} x 10G into 10G, priority-7 bursts of {} ms every {} ms",
            r.setup.sources,
            r.setup.burst_on_ms,
            r.setup.burst_on_ms + r.setup.burst_off_ms
        ),
        "time, ms",
        "KiB",
        &queue,
    )?;
    let nics = r.setup.sources;
    let steps: Vec<Series> = (0..nics)
        .map(|k| {
            let mut pts = Vec::new();
            for l in lines.iter().filter(|l| l.nic as usize == k) {
                pts.push((ms(l.cycle), l.rate_before_bps as f64 / 1e9));
                pts.push((ms(l.cycle), l.rate_after_bps as f64 / 1e9));
            }
            Series {
                name: format!("NIC {k} limiter rate, Gb/s"),
                points: pts,
                line: true,
            }
        })
        .collect();
    xy_chart(
        &out.join("severe-rates.png"),
        "ECM severe congestion: limiter rates (0 = ECM(0,0) timeout)",
        "time, ms",
        "Gb/s",
        &steps,
    )?;
    let restarts: Vec<Series> = (0..nics)
        .map(|k| Series {
            name: format!("NIC {k}: restart at Rmin, Mb/s"),
            points: lines
                .iter()
                .filter(|l| l.nic as usize == k && l.event == "restart")
                .map(|l| (ms(l.cycle), l.rate_after_bps as f64 / 1e6))
                .collect(),
            line: false,
        })
        .collect();
    xy_chart(
        &out.join("severe-backoff.png"),
        "ECM back-off: each restart at Rmin, which halves after every timeout",
        "time, ms",
        "Mb/s",
        &restarts,
    )
}

/// The text report.
pub fn report(r: &Severe, out: &Path) -> String {
    let mut rep = format!(
        "ECM section 3.3.2 / Figure 8: {} sources at 10 Gb/s into one 10 Gb/s port, priority-7 bursts at line rate ({} ms on, {} ms off from {} ms), {} ms\n{}",
        r.setup.sources,
        r.setup.burst_on_ms,
        r.setup.burst_off_ms,
        r.setup.burst_start_ms,
        r.setup.run_ms,
        r.parameters
    );
    let _ = writeln!(
        rep,
        "queue: max {} B, above Qsc ({} B) in {} of {} samples",
        r.max_queue_bytes, r.qsc_bytes, r.samples_above_qsc, r.samples
    );
    let _ = writeln!(
        rep,
        "ECM frames: {} regular, {} ECM-Max, {} ECM(0,0); {} timeouts, {} restarts, {} ECM frames ignored in timeout; timeouts per NIC {:?}",
        r.ecm_frames[0],
        r.ecm_frames[1],
        r.ecm_frames[2],
        r.timeouts,
        r.restarts,
        r.ignored_in_timeout,
        r.timeouts_per_nic
    );
    let _ = writeln!(
        rep,
        "back-off steps seen (restart rate = Rmin, Tmax of the timer):"
    );
    for l in &r.levels {
        let _ = writeln!(
            rep,
            "  restart at {:>4} Mb/s, Tmax {:>5.0} us: {:>3} restarts, timer mean {:.2} us, max {:.2} us",
            l.rate_bps / 1_000_000,
            l.tmax_us,
            l.restarts,
            l.timer_mean_us,
            l.timer_max_us
        );
    }
    let ev: Vec<String> = r
        .rp_events
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let _ = writeln!(
        rep,
        "limiter events: {}; drops of priority {PRIO} {}; PFC pause frames {}",
        ev.join(", "),
        r.drops,
        r.pfc_pause_frames
    );
    let _ = writeln!(
        rep,
        "{}",
        wrote(
            out,
            &[
                "severe.csv",
                "severe-rp.csv",
                "severe-queue.png",
                "severe-rates.png",
                "severe-backoff.png"
            ]
        )
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let r = measure(&Setup::paper(), out, progress)?;
    Ok(report(&r, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(cycle: u64, nic: u8, event: &str, after: u64) -> RpLine {
        RpLine {
            cycle,
            nic,
            limiter: 0,
            event: event.into(),
            rate_before_bps: 0,
            rate_after_bps: after,
        }
    }

    #[test]
    fn backoff_levels_pair_timeouts_with_restarts() {
        // 1 GHz: a cycle is 1 ns.
        let lines = [
            line(1000, 0, "timeout", 0),
            line(1000, 1, "timeout", 0),
            line(5000, 0, "restart", 100_000_000),
            line(9000, 1, "restart", 100_000_000),
            line(20_000, 0, "timeout", 0),
            line(32_000, 0, "restart", 50_000_000),
        ];
        let l = backoff_levels(&lines, 1e9, 10);
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].depth, l[0].rate_bps, l[0].restarts, l[0].tmax_us),
            (0, 100_000_000, 2, 10.0)
        );
        assert_eq!((l[0].timer_mean_us, l[0].timer_max_us), (6.0, 8.0));
        assert_eq!(
            (l[1].depth, l[1].rate_bps, l[1].restarts, l[1].tmax_us),
            (1, 50_000_000, 1, 20.0)
        );
        assert_eq!(l[1].timer_mean_us, 12.0);
    }

    /// At the 1 Mb/s floor `Rmin` stops halving but `Tmax` keeps doubling; an increase
    /// restores both.
    #[test]
    fn backoff_depth_counts_restarts_past_the_rmin_floor_and_resets_on_increase() {
        let lines = [
            line(0, 0, "timeout", 0),
            line(1_000, 0, "restart", 2_000_000),
            line(2_000, 0, "timeout", 0),
            line(3_000, 0, "restart", 1_000_000),
            line(4_000, 0, "timeout", 0),
            line(5_000, 0, "restart", 1_000_000),
            line(6_000, 0, "increase", 3_000_000),
            line(7_000, 0, "timeout", 0),
            line(8_000, 0, "restart", 2_000_000),
        ];
        let l = backoff_levels(&lines, 1e9, 10);
        let got: Vec<(u32, u64, u64, f64)> = l
            .iter()
            .map(|l| (l.depth, l.rate_bps, l.restarts, l.tmax_us))
            .collect();
        assert_eq!(
            got,
            [
                (0, 2_000_000, 2, 10.0),
                (1, 1_000_000, 1, 20.0),
                (2, 1_000_000, 1, 40.0)
            ]
        );
    }
}
