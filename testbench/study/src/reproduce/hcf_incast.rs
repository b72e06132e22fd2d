//! HCF section V-A-1 (TCP incast, "typical data center"): `N` servers each send `block / N`
//! bytes to one client through a 1 Gb/s port with a 32-packet buffer, all starting
//! together; block goodput = block / the longest flow completion time, vs `N`, drop-tail
//! FIFO vs HCF (16 bins, c0 = 1, 16 + 16 packets, dynamic period).
//!
//! As modelled: every server has its own 1 Gb/s ingress port (so `N` is at most
//! [`MAX_SERVERS`]: 64 ports), the client's port is the bottleneck; 1000 B packets (one
//! cell each), TCP Reno-like with NewReno partial ACKs (`stimulus::tcp`), base RTT 100 us,
//! min RTO 200 ms (the paper takes the scenario of its ref. \[2\], whose collapse comes from
//! the 200 ms minimum RTO; it does not restate the RTO), Karn's rule for the RTO back-off
//! (as ns-2's TCP), initial window 2. The core clock is 2 MHz: 1 Gb/s moves at most 0.74
//! cells per cycle for the worst packet size, within the one-cell-per-cycle port limit. The
//! FIFO's buffer is the lossy pool of 32 cells; with one port per server the pool's DT
//! (alpha = 8) can refuse a packet before the queue reaches 32 when one or two servers hold
//! most of it, so each run reports the largest queue it saw and the smallest queue a packet
//! was dropped at.
//!
//! A flow's completion time runs from its start to the ACK of its last byte (which comes
//! back one base RTT after the packet leaves the switch).
//!
//! The runs are the built-in sweep spec `hcf-incast` ([`spec_text`]) over [`MEASURE`], run
//! by the sweep engine into `OUT/sweep/`; the CSVs and plots are made from its rows.

use super::hcf::{self, build, check, Bottleneck, Discipline, HcfKnobs, QueueWatch, Tcp};
use super::plot::{xy_chart, Series};
use super::{from_fields, int_field, to_fields, to_json, Progress, ReproError};
use crate::sweep::stats::mean;
use crate::sweep::{Measure, Spec, Values};
use scenario::{Overrides, Scenario};
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

pub const CSV_HEADER: &str = "policy,servers,block_bytes,goodput_mbps,max_fct_ms,timeouts";
/// Header of `incast_jitter.csv`: [`CSV_HEADER`]'s columns as means over the jittered
/// trials, their number, and the range of the goodput.
pub const JITTER_CSV_HEADER: &str =
    "policy,servers,block_bytes,goodput_mbps,max_fct_ms,timeouts,trials,goodput_min_mbps,goodput_max_mbps";

/// Most servers: one ingress port each, one port for the client, 64 ports.
pub const MAX_SERVERS: usize = 63;
const CLOCK_MHZ: u32 = 2;
const PACKET_BYTES: u32 = 1000;
const LINK_GBPS: f64 = 1.0;
/// `B`, packets (16 + 16 under HCF).
pub const BUFFER_PACKETS: u32 = 32;
/// `hcf-incast-ns2`'s limit on a run, simulated s.
pub const NS2_CAP_S: f64 = 600.0;
/// HCF of V-A: 16 bins, one credit, dynamic period.
pub const HCF: HcfKnobs = HcfKnobs::dynamic(16, 1);

/// The sweep. In a run's `setup` parameter ([`MEASURE`]) without `servers` and
/// `jitter_trials`, which are the axes `servers` and `trial` of the sweep.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setup {
    /// Server counts.
    #[serde(skip)]
    pub servers: Vec<usize>,
    /// The block; each of `N` servers sends `block_bytes / N` bytes (rounded down).
    pub block_bytes: u64,
    /// The paper's round-trip time, us; the flows' `base_rtt_us` adds the packet's time
    /// on the bottleneck wire ([`Bottleneck::ack_delay_us`](super::hcf::Bottleneck::ack_delay_us)).
    pub base_rtt_us: u64,
    pub min_rto_us: u64,
    pub init_cwnd: u32,
    /// Karn's rule in the senders (the `tcp` key `karn`, `stimulus::tcp`): the backed-off RTO
    /// is kept until a packet sent once, first after the last timeout, is acknowledged.
    pub karn: bool,
    /// Give up on a run after this many simulated seconds.
    pub cap_s: f64,
    /// Extra trials per point whose flows start at a uniformly random time in
    /// `[0, jitter_us)` (trial 0 starts every flow at cycle 0).
    #[serde(skip)]
    pub jitter_trials: u32,
    pub jitter_us: u64,
    /// The senders' TCP (`model` when absent: the variant before the key existed).
    #[serde(default, skip_serializing_if = "Tcp::is_model")]
    pub tcp: Tcp,
}

impl Setup {
    /// The published scenario: 1 MB blocks, up to [`MAX_SERVERS`] servers.
    pub fn paper() -> Self {
        Self {
            servers: vec![1, 2, 4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 56, 63],
            block_bytes: 1_000_000,
            base_rtt_us: 100,
            min_rto_us: 200_000,
            init_cwnd: 2,
            karn: true,
            cap_s: 120.0,
            jitter_trials: 5,
            jitter_us: 20,
            tcp: Tcp::Model,
        }
    }

    /// The published scenario under ns-2's TCP (`hcf-incast-ns2`): a lost SYN waits 3 s
    /// and the back-off reaches 60 s, so a run may take minutes of simulated time.
    pub fn ns2() -> Self {
        Self {
            tcp: Tcp::Ns2,
            cap_s: NS2_CAP_S,
            ..Self::paper()
        }
    }

    pub fn switch(servers: usize) -> Bottleneck {
        Bottleneck {
            clock_mhz: CLOCK_MHZ,
            packet_bytes: PACKET_BYTES,
            ingress_gbps: vec![LINK_GBPS; servers],
            bottleneck_gbps: LINK_GBPS,
            buffer_packets: BUFFER_PACKETS,
            pool_cells: BUFFER_PACKETS,
            link_delay_ns: 1000,
        }
    }

    /// Bytes each of `n` servers sends.
    pub fn flow_bytes(&self, n: usize) -> u64 {
        self.block_bytes / n as u64
    }

    /// Start cycle of flow `i` in `trial`.
    pub fn start_cycle(&self, trial: u32, i: usize) -> u64 {
        if trial == 0 {
            return 0;
        }
        hcf::start_jitter(trial as u64, i, self.jitter_us * CLOCK_MHZ as u64)
    }

    /// The scenario text for `n` servers under `disc` in `trial`.
    pub fn scenario(&self, n: usize, disc: Discipline, trial: u32) -> String {
        let sw = Self::switch(n);
        let cap = (self.cap_s * CLOCK_MHZ as f64 * 1e6) as u64;
        let mut s = sw.header("hcf-incast", disc, cap, 1);
        let tcp = format!(
            "{}, flow_bytes = {}",
            self.tcp.keys(
                sw.ack_delay_us(self.base_rtt_us),
                self.min_rto_us,
                self.init_cwnd,
                self.karn
            ),
            self.flow_bytes(n)
        );
        for src in 0..n {
            s += &sw.tcp_flow(src, &tcp, self.start_cycle(trial, src));
        }
        s
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    pub disc: Discipline,
    pub servers: usize,
    /// 0: every flow starts at cycle 0; otherwise a jittered trial.
    pub trial: u32,
    /// Bytes actually sent: `servers * flow_bytes`.
    pub block_bytes: u64,
    pub goodput_mbps: f64,
    pub max_fct_ms: f64,
    /// Retransmission timeouts, all flows.
    pub timeouts: u64,
    pub drops: u64,
    pub max_queue: u32,
    pub min_queue_at_drop: u32,
}

/// The fields [`MEASURE`] yields: those of [`Point`] but its parameters.
const FIELDS: &[&str] = &[
    "block_bytes",
    "goodput_mbps",
    "max_fct_ms",
    "timeouts",
    "drops",
    "max_queue",
    "min_queue_at_drop",
];

/// One run as a sweep measure: parameters `setup` (a [`Setup`] table), `servers`, `trial`
/// and the discipline ([`hcf::DISCIPLINE_PARAMS`]).
pub const MEASURE: Measure = Measure {
    name: "hcf-incast",
    params: &["setup", "servers", "trial", "policy", "bins", "c0"],
    fields: FIELDS,
    check: |v| {
        let (setup, n, disc, trial) = params(v)?;
        Scenario::parse(&setup.scenario(n, disc, trial), "hcf-incast")?
            .plan(&Overrides::default())
            .map(|_| ())
    },
    run: |v| {
        let (setup, n, disc, trial) = params(v).map_err(|e| e.to_string())?;
        to_fields(
            &measure(&setup, n, disc, trial).map_err(|e| e.to_string())?,
            FIELDS,
        )
    },
};

fn params(v: &Values) -> Result<(Setup, usize, Discipline, u32), scenario::ScenarioError> {
    let bad =
        |k: &str, allowed: &str| scenario::ScenarioError::new(k, format!("allowed: {allowed}"));
    let n = v
        .get("servers")
        .and_then(|n| n.as_u64())
        .filter(|n| (1..=MAX_SERVERS as u64).contains(n))
        .ok_or_else(|| bad("servers", &format!("integers 1..={MAX_SERVERS}")))?;
    let trial = v
        .get("trial")
        .and_then(|t| t.as_u64())
        .and_then(|t| u32::try_from(t).ok())
        .ok_or_else(|| bad("trial", "integers 0..=2^32-1"))?;
    Ok((
        hcf::setup_of(v)?,
        n as usize,
        Discipline::from_values(v)?,
        trial,
    ))
}

/// The built-in sweep spec `name` (`hcf-incast`, `hcf-incast-ns2`) of `setup`: its
/// servers x trials, FIFO and HCF.
pub fn spec_text(name: &str, setup: &Setup) -> String {
    let servers = setup.servers.iter().map(|&n| n as u64).collect();
    let trials = (0..=setup.jitter_trials as u64).collect();
    hcf::spec_text(
        name,
        MEASURE.name,
        FIELDS,
        std::slice::from_ref(setup),
        &[("servers", servers), ("trial", trials)],
        &DISCIPLINES,
    )
}

/// `n` servers under `disc` in `trial`, until every flow completed.
pub fn measure(setup: &Setup, n: usize, disc: Discipline, trial: u32) -> Result<Point, ReproError> {
    let sw = Setup::switch(n);
    let port = sw.port();
    let mut sim = build(&setup.scenario(n, disc, trial), "hcf-incast")?;
    let cap = sim.plan().cycles;
    let mut watch = QueueWatch::new();
    // The flows finish with an ACK, which a step processes: look every RTT or so.
    let every = (setup.base_rtt_us * CLOCK_MHZ as u64).max(1);
    loop {
        sim.step()?;
        watch.observe(&sim, port);
        if sim.now() % every == 0 && sim.tcp_stats().iter().all(|s| s.fct_cycles.is_some()) {
            break;
        }
        if sim.now() >= cap {
            return Err(ReproError::Invariant(format!(
                "hcf-incast {} N = {n} trial {trial}: flows unfinished after {} s",
                disc.name(),
                setup.cap_s
            )));
        }
    }
    check(
        &sim,
        &format!("hcf-incast {} N = {n} trial {trial}", disc.name()),
    )?;
    let stats = sim.tcp_stats();
    let clock = sim.plan().derived.clock_hz as f64;
    let fct = stats.iter().filter_map(|s| s.fct_cycles).max().unwrap_or(0) as f64 / clock;
    let block = setup.flow_bytes(n) * n as u64;
    Ok(Point {
        disc,
        servers: n,
        trial,
        block_bytes: block,
        goodput_mbps: if fct > 0.0 {
            block as f64 * 8.0 / fct / 1e6
        } else {
            0.0
        },
        max_fct_ms: fct * 1e3,
        timeouts: stats.iter().map(|s| s.timeouts).sum(),
        drops: watch.dropped(),
        max_queue: watch.max_occupancy,
        min_queue_at_drop: watch.min_occupancy_at_drop,
    })
}

/// Mean goodput (and its range), largest FCT and timeouts of the jittered trials of one
/// point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JitterMean {
    pub goodput_mbps: f64,
    /// The smallest and largest goodput of a trial.
    pub goodput_min_mbps: f64,
    pub goodput_max_mbps: f64,
    pub max_fct_ms: f64,
    pub timeouts: f64,
    pub trials: usize,
}

/// The trial-0 point of `(policy, n)`.
pub fn together<'a>(points: &'a [Point], policy: &str, n: usize) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.disc.name() == policy && p.servers == n && p.trial == 0)
}

/// The mean over the jittered trials of `(policy, n)`, if there are any.
pub fn jitter_mean(points: &[Point], policy: &str, n: usize) -> Option<JitterMean> {
    let t: Vec<&Point> = points
        .iter()
        .filter(|p| p.disc.name() == policy && p.servers == n && p.trial > 0)
        .collect();
    if t.is_empty() {
        return None;
    }
    let goodput = t.iter().map(|p| p.goodput_mbps);
    Some(JitterMean {
        goodput_mbps: mean(goodput.clone()),
        goodput_min_mbps: goodput.clone().fold(f64::INFINITY, f64::min),
        goodput_max_mbps: goodput.fold(f64::NEG_INFINITY, f64::max),
        max_fct_ms: mean(t.iter().map(|p| p.max_fct_ms)),
        timeouts: mean(t.iter().map(|p| p.timeouts as f64)),
        trials: t.len(),
    })
}

const DISCIPLINES: [Discipline; 2] = [Discipline::Fifo, Discipline::Hcf(HCF)];

/// The sweep for FIFO and HCF (runs in `out/sweep/`): writes `incast.csv` (flows started together),
/// `incast_jitter.csv` (means of the jittered trials), `incast.png` (goodput) and
/// `incast_fct.png` (longest completion time) into `out`.
pub fn sweep(
    out: &Path,
    name: &str,
    setup: &Setup,
    progress: &mut dyn Progress,
) -> Result<Vec<Point>, ReproError> {
    let spec = Spec::parse(&spec_text(name, setup), name, Path::new("."))?;
    let rows = super::sweep_rows(&spec, &out.join("sweep"), progress)?;
    let mut points = rows
        .iter()
        .map(|r| {
            let disc = Discipline::from_values(&r.params)?;
            let params = [
                ("disc", to_json(&disc)?),
                ("servers", int_field(&r.params, "servers")?.into()),
                ("trial", int_field(&r.params, "trial")?.into()),
            ];
            from_fields(&r.fields, params)
        })
        .collect::<Result<Vec<Point>, ReproError>>()?;
    points.sort_by_key(|p| (p.disc.name(), p.servers, p.trial));
    /// One line of `incast.csv` ([`CSV_HEADER`]).
    #[derive(Default, serde::Serialize)]
    struct Line {
        policy: &'static str,
        servers: usize,
        block_bytes: u64,
        goodput_mbps: Fixed<2>,
        max_fct_ms: Fixed<3>,
        timeouts: u64,
    }
    /// One line of `incast_jitter.csv`: means over the trials.
    #[derive(Default, serde::Serialize)]
    struct JitterLine {
        policy: &'static str,
        servers: usize,
        block_bytes: u64,
        goodput_mbps: Fixed<2>,
        max_fct_ms: Fixed<3>,
        timeouts: Fixed<2>,
        trials: usize,
        goodput_min_mbps: Fixed<2>,
        goodput_max_mbps: Fixed<2>,
    }
    let grid = || {
        DISCIPLINES
            .iter()
            .flat_map(|d| setup.servers.iter().map(move |&n| (d.name(), n)))
    };
    let lines = grid().filter_map(|(d, n)| {
        together(&points, d, n).map(|p| Line {
            policy: d,
            servers: n,
            block_bytes: p.block_bytes,
            goodput_mbps: Fixed(p.goodput_mbps),
            max_fct_ms: Fixed(p.max_fct_ms),
            timeouts: p.timeouts,
        })
    });
    super::write_csv(&out.join("incast.csv"), lines)?;
    if setup.jitter_trials > 0 {
        let lines = grid().filter_map(|(d, n)| {
            jitter_mean(&points, d, n).map(|m| JitterLine {
                policy: d,
                servers: n,
                block_bytes: setup.flow_bytes(n) * n as u64,
                goodput_mbps: Fixed(m.goodput_mbps),
                max_fct_ms: Fixed(m.max_fct_ms),
                timeouts: Fixed(m.timeouts),
                trials: m.trials,
                goodput_min_mbps: Fixed(m.goodput_min_mbps),
                goodput_max_mbps: Fixed(m.goodput_max_mbps),
            })
        });
        super::write_csv(&out.join("incast_jitter.csv"), lines)?;
    }
    type Metric = fn(&Point) -> f64;
    type MeanMetric = fn(&JitterMean) -> f64;
    let charts: [(&str, &str, Metric, MeanMetric); 2] = [
        (
            "incast.png",
            "block goodput (Mb/s)",
            |p| p.goodput_mbps,
            |m| m.goodput_mbps,
        ),
        (
            "incast_fct.png",
            "longest flow completion time (ms)",
            |p| p.max_fct_ms,
            |m| m.max_fct_ms,
        ),
    ];
    for (file, y_label, y, ym) in charts {
        let mut series: Vec<Series> = DISCIPLINES
            .iter()
            .map(|d| Series {
                name: format!("{}, flows start together", d.label()),
                points: setup
                    .servers
                    .iter()
                    .filter_map(|&n| together(&points, d.name(), n).map(|p| (n as f64, y(p))))
                    .collect(),
                line: true,
            })
            .collect();
        if setup.jitter_trials > 0 {
            for d in DISCIPLINES {
                series.push(Series {
                    name: format!(
                        "{}, mean of {} trials with 0-{} us start jitter",
                        d.name().to_uppercase(),
                        setup.jitter_trials,
                        setup.jitter_us
                    ),
                    points: setup
                        .servers
                        .iter()
                        .filter_map(|&n| {
                            jitter_mean(&points, d.name(), n).map(|m| (n as f64, ym(&m)))
                        })
                        .collect(),
                    line: true,
                });
            }
        }
        xy_chart(
            &out.join(file),
            &format!(
                "HCF Fig. 2(a): TCP incast, {} KB block, 1 Gb/s, B = {BUFFER_PACKETS} packets",
                setup.block_bytes / 1000
            ),
            "servers N",
            y_label,
            &series,
        )?;
    }
    Ok(points)
}

pub fn report(setup: &Setup, points: &[Point], out: &Path) -> String {
    let mut rep = format!(
        "HCF V-A incast: N servers x {} B / N to one 1 Gb/s port, B = {BUFFER_PACKETS} x {PACKET_BYTES} B packets, RTT {} us, {}\n\
         HCF: K = {}, c0 = {}, 16 + 16 packets, dynamic period\n\
         'together': every flow starts at cycle 0; 'jitter': mean [min-max] of {} trials with starts uniform in 0-{} us\n\n",
        setup.block_bytes,
        setup.base_rtt_us,
        setup
            .tcp
            .describe(setup.min_rto_us, setup.init_cwnd, setup.karn),
        HCF.bins,
        HCF.c0,
        setup.jitter_trials,
        setup.jitter_us
    );
    let _ = writeln!(
        rep,
        "{:>7} | {:>10} {:>9} {:>5} {:>5} {:>6} | {:>10} {:>9} {:>5} {:>5} {:>6} | {:>20} {:>20}",
        "servers",
        "FIFO Mb/s",
        "fct ms",
        "RTOs",
        "qmax",
        "q@drop",
        "HCF Mb/s",
        "fct ms",
        "RTOs",
        "qmax",
        "q@drop",
        "FIFO jitter",
        "HCF jitter"
    );
    let q = |v: u32| {
        if v == u32::MAX {
            "-".to_string()
        } else {
            v.to_string()
        }
    };
    let jm = |name: &str, n: usize| {
        jitter_mean(points, name, n).map_or("-".to_string(), |m| {
            format!(
                "{:.1} [{:.1}-{:.1}]",
                m.goodput_mbps, m.goodput_min_mbps, m.goodput_max_mbps
            )
        })
    };
    for &n in &setup.servers {
        let (Some(f), Some(h)) = (together(points, "fifo", n), together(points, "hcf", n)) else {
            continue;
        };
        let _ = writeln!(
            rep,
            "{n:>7} | {:>10.1} {:>9.2} {:>5} {:>5} {:>6} | {:>10.1} {:>9.2} {:>5} {:>5} {:>6} | {:>20} {:>20}",
            f.goodput_mbps,
            f.max_fct_ms,
            f.timeouts,
            f.max_queue,
            q(f.min_queue_at_drop),
            h.goodput_mbps,
            h.max_fct_ms,
            h.timeouts,
            h.max_queue,
            q(h.min_queue_at_drop),
            jm("fifo", n),
            jm("hcf", n),
        );
    }
    let count = |g: &dyn Fn(&str, usize) -> Option<f64>| {
        let (mut above, mut below) = (0, 0);
        for &n in &setup.servers {
            if let (Some(f), Some(h)) = (g("fifo", n), g("hcf", n)) {
                if h > f * 1.05 {
                    above += 1;
                } else if h < f / 1.05 {
                    below += 1;
                }
            }
        }
        (above, below)
    };
    let (a, b) = count(&|name, n| together(points, name, n).map(|p| p.goodput_mbps));
    let _ = writeln!(
        rep,
        "\nflows started together: HCF goodput more than 5 % above FIFO at {a}, more than 5 % below at {b} of {} server counts",
        setup.servers.len()
    );
    if setup.jitter_trials > 0 {
        let (a, b) = count(&|name, n| jitter_mean(points, name, n).map(|m| m.goodput_mbps));
        let _ = writeln!(
            rep,
            "jittered starts (mean): HCF more than 5 % above FIFO at {a}, more than 5 % below at {b}"
        );
    }
    let _ = writeln!(
        rep,
        "paper (Fig. 2(a)): HCF above FIFO over most N: collapse below 25 servers, preservation 25-100, recovery above 100"
    );
    let _ = writeln!(
        rep,
        "wrote {}, {}, {}{}",
        out.join("incast.csv").display(),
        out.join("incast.png").display(),
        out.join("incast_fct.png").display(),
        if setup.jitter_trials > 0 {
            format!(", {}", out.join("incast_jitter.csv").display())
        } else {
            String::new()
        }
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let setup = Setup::paper();
    let points = sweep(out, "hcf-incast", &setup, progress)?;
    Ok(report(&setup, &points, out))
}

/// `hcf-incast-ns2`: the same under ns-2's TCP ([`Setup::ns2`]).
pub fn run_ns2(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let setup = Setup::ns2();
    let points = sweep(out, "hcf-incast-ns2", &setup, progress)?;
    Ok(report(&setup, &points, out))
}
