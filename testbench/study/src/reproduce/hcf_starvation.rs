//! HCF section V-B (long-flow starvation): many long-lived TCP flows and a little UDP share
//! a 100 Mb/s bottleneck with a 20-packet buffer; per-flow throughput in a final window,
//! drop-tail FIFO vs HCF (K = 20, c0 = 1, dynamic period, 10 + 10 packets).
//!
//! The paper's setup, as modelled ([`Setup::paper`]): 400 TCP flows (Reno-like with NewReno
//! partial ACKs, `stimulus::tcp`), RTT 100 us (see `super::hcf` for the ACK timing), 1500 B
//! packets, min RTO 200 ms (back-off up to 64x, Karn's rule as in ns-2's TCP: the back-off
//! ends only with the ACK of data sent once after the last timeout), initial window 2, plus
//! Poisson UDP at 5 % of the bottleneck; 3 minutes, of which the last 10 s are measured.
//! Every sender sits behind one ingress link of 0.6 Gb/s (6x the bottleneck: the
//! dumbbell's left side), so the bottleneck queue is the only ingress queue of the lossy
//! pool and the FIFO tail-drops at 20 packets (see `super::hcf`). The core clock is 1 MHz:
//! a 1500 B packet takes 121.6 cycles on the 100 Mb/s wire. Flows start 1/N s apart over
//! the first second.
//!
//! Measured in the window `[warm-up, warm-up + window)`, per TCP flow: packets that left
//! the bottleneck (retransmissions included: the paper's "packets sent ... during T"),
//! in-order goodput and timeouts; over the whole run the flow's longest gap between two of
//! its packets leaving the bottleneck (from its start, and up to the end: the paper's
//! Fig. 5 "starvation time"). Unfairness = population variance of the per-flow packet
//! counts; starvation = share of flows with no packet in the window; link utilization =
//! wire time of all packets (TCP and UDP, 20 B of preamble and gap included) over the
//! window.
//!
//! The runs are sweeps on the engine ([`crate::sweep`]) over [`MEASURE`] (`hcf-vb`): the
//! built-in sweep spec `hcf-starvation` ([`spec_text`]), run into `OUT/sweep/`, and the
//! CSVs and plot are made from its rows.

use super::hcf::{
    self, build, check_discipline, Bottleneck, Discipline, HcfKnobs, QueueWatch, Tcp,
};
use super::plot::{xy_chart, xy_chart_legend_at, Series, SeriesLabelPosition};
use super::{from_fields, to_fields, wrote, Progress, ReproError};
use crate::sweep::stats::{mean, variance};
use crate::sweep::{Measure, Spec, Values};
use hw_model::{CellFate, DropReason};
use scenario::Ns2Keys;
use scenario::{Overrides, Scenario};
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::{Fixed, Plain};

/// Header of `starvation.csv`.
pub const CSV_HEADER: &str =
    "policy,flows,window_s,starved_pct,throughput_variance,link_utilization";
/// Header of `starvation_flows.csv`.
pub const FLOWS_CSV_HEADER: &str = "policy,flow,packets,goodput_bytes,timeouts,longest_gap_s";

/// The paper's numbers (V-B-2): starved %, variance.
pub const PAPER_FIFO: (f64, f64) = (32.0, 5.55e4);
pub const PAPER_HCF: (f64, f64) = (1.5, 6.74e3);

/// `hcf-starvation-ns2`: the spreads of the flows' starts, s: together, 10 ms, and the
/// 1 s of `hcf-starvation`.
pub const NS2_SPREADS_S: [f64; 3] = [0.0, 0.01, 1.0];
/// `hcf-starvation-ns2`: the seeds of every spread and discipline.
pub const NS2_SEEDS: [u64; 3] = [1, 2, 3];
/// `hcf-starvation-ns2`: each flow's start is jittered by a draw in `[0, 20)` us from the
/// seed, as `hcf-incast`'s jittered trials are: less than one 1500 B packet time on the
/// bottleneck (121.6 us), so the flows still start together, but their order on the
/// shared ingress link and their phases differ from seed to seed.
pub const NS2_JITTER_US: u64 = 20;

/// Core clock, MHz: one cycle is 1 us.
const CLOCK_MHZ: u32 = 1;
const PACKET_BYTES: u32 = 1500;
/// `B`, packets.
pub const BUFFER_PACKETS: u32 = 20;

/// One experiment's size and timing.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setup {
    /// Long-lived TCP flows.
    pub flows: usize,
    /// Simulated seconds before the window.
    pub warmup_s: f64,
    /// The measured window, seconds.
    pub window_s: f64,
    /// Flow `i` starts at `i * start_spread_s / flows`.
    pub start_spread_s: f64,
    /// The paper's round-trip time, us; the flows' `base_rtt_us` adds the packet's time
    /// on the bottleneck wire ([`Bottleneck::ack_delay_us`](super::hcf::Bottleneck::ack_delay_us)).
    pub base_rtt_us: u64,
    pub min_rto_us: u64,
    pub init_cwnd: u32,
    /// Karn's rule in the senders (the `tcp` key `karn`, `stimulus::tcp`): the backed-off RTO
    /// is kept until a packet sent once, first after the last timeout, is acknowledged.
    pub karn: bool,
    /// UDP load, fraction of the bottleneck.
    pub udp_fraction: f64,
    pub bottleneck_gbps: f64,
    pub ingress_gbps: f64,
    /// The senders' TCP (`model` when absent: the variant before the key existed).
    #[serde(default, skip_serializing_if = "Tcp::is_model")]
    pub tcp: Tcp,
    /// Each flow's start is delayed by a draw uniform in `[0, start_jitter_us)` us from
    /// `seed` ([`hcf::start_jitter`]); 0 (or absent): no jitter.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_jitter_us: u64,
    /// ns-2 keys of the flows' `tcp` table that override `tcp = "ns2"`'s defaults (only
    /// with it; the scenario refuses them with the model's TCP): the experiments that take
    /// ns-2's start-up (`syn_`, `rtxcur_init_`) or its back-off cap (`maxrto_`) away;
    /// absent: none.
    #[serde(default, skip_serializing_if = "Ns2Keys::is_none")]
    pub ns2: Ns2Keys,
    /// The run's seed (`[run] seed`: the UDP arrivals, and the start jitter); 1 when absent.
    #[serde(default = "seed_one", skip_serializing_if = "is_one")]
    pub seed: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn is_one(x: &u64) -> bool {
    *x == 1
}

fn seed_one() -> u64 {
    1
}

impl Setup {
    /// V-B as published: 400 flows, 3 minutes, the last 10 s measured.
    pub fn paper() -> Self {
        Self {
            flows: 400,
            warmup_s: 170.0,
            window_s: 10.0,
            start_spread_s: 1.0,
            base_rtt_us: 100,
            min_rto_us: 200_000,
            init_cwnd: 2,
            karn: true,
            udp_fraction: 0.05,
            bottleneck_gbps: 0.1,
            ingress_gbps: 0.6,
            tcp: Tcp::Model,
            start_jitter_us: 0,
            ns2: Ns2Keys::default(),
            seed: 1,
        }
    }

    /// V-B under ns-2's TCP with the flows' starts spread over `start_spread_s`, each
    /// jittered by up to [`NS2_JITTER_US`] from `seed`: the runs of `hcf-starvation-ns2`.
    pub fn ns2(start_spread_s: f64, seed: u64) -> Self {
        Self {
            tcp: Tcp::Ns2,
            start_spread_s,
            start_jitter_us: NS2_JITTER_US,
            seed,
            ..Self::paper()
        }
    }

    pub fn switch(&self) -> Bottleneck {
        Bottleneck {
            clock_mhz: CLOCK_MHZ,
            packet_bytes: PACKET_BYTES,
            ingress_gbps: vec![self.ingress_gbps],
            bottleneck_gbps: self.bottleneck_gbps,
            buffer_packets: BUFFER_PACKETS,
            pool_cells: super::hcf::pool_cells_for_single_port(BUFFER_PACKETS),
            link_delay_ns: 1000,
        }
    }

    fn cycles(&self, s: f64) -> u64 {
        (s * CLOCK_MHZ as f64 * 1e6).round() as u64
    }

    /// Cycle the window starts and ends.
    pub fn window_cycles(&self) -> (u64, u64) {
        let w0 = self.cycles(self.warmup_s);
        (w0, w0 + self.cycles(self.window_s))
    }

    /// The scenario text under `disc`.
    pub fn scenario(&self, disc: Discipline) -> String {
        let sw = self.switch();
        let (_, end) = self.window_cycles();
        let mut s = sw.header("hcf-starvation", disc, end, self.seed);
        let tcp = self.tcp.keys(
            sw.ack_delay_us(self.base_rtt_us),
            self.min_rto_us,
            self.init_cwnd,
            self.karn,
        ) + &self.ns2.toml();
        let spread = self.cycles(self.start_spread_s);
        let jitter = self.start_jitter_us * CLOCK_MHZ as u64;
        for i in 0..self.flows {
            let start =
                i as u64 * spread / self.flows as u64 + hcf::start_jitter(self.seed, i, jitter);
            s += &sw.tcp_flow(0, &tcp, start);
        }
        s += &sw.udp_flow(0, self.udp_fraction * self.bottleneck_gbps);
        s
    }
}

/// One flow's numbers.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowResult {
    /// Packets of the flow that left the bottleneck in the window.
    pub packets: u64,
    /// In-order bytes delivered in the window.
    pub goodput_bytes: u64,
    /// Retransmission timeouts in the window.
    pub timeouts: u64,
    /// Longest time between two of its packets leaving the bottleneck, over the run, s.
    pub longest_gap_s: f64,
}

/// One run (one discipline).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Run {
    pub disc: Discipline,
    pub setup: Setup,
    pub flows: Vec<FlowResult>,
    pub starved_pct: f64,
    pub variance: f64,
    pub mean_packets: f64,
    pub link_utilization: f64,
    pub udp_packets: u64,
    /// Drops in the window by reason (`DropReason::ALL` order), packets.
    pub window_drops: [u64; DropReason::ALL.len()],
    /// Largest bottleneck queue and the smallest queue a packet was dropped at, packets
    /// (whole run).
    pub max_queue: u32,
    pub min_queue_at_drop: u32,
    /// Share of the run's drops that met a queue of `B` packets or more, percent.
    pub pct_drops_at_b: f64,
    /// HCF priority periods that started in the window (0 under FIFO).
    pub periods: u64,
    /// HCF: share of the packets the queue took in the window that joined HP, percent.
    pub hp_pct: f64,
    /// What the bottleneck did with the TCP packets of the whole run ([`Silences`]).
    #[serde(default)]
    pub silences: Silences,
}

/// The bottleneck's treatment of TCP packets that end a silence of their flow, next to all
/// TCP packets, over the whole run. A packet ends a silence when its flow had no packet
/// reach the bottleneck for [`SILENCE_S`] or more: after a retransmission timeout, the
/// first packet of the go-back-N (an ACK-clocked flow is never idle that long).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Silences {
    /// TCP packets that reached the bottleneck queue, and those it dropped.
    pub tcp_packets: u64,
    pub tcp_dropped: u64,
    /// Packets that ended a silence, those dropped, and those HCF put in HP.
    pub after_silence: u64,
    pub after_silence_dropped: u64,
    pub after_silence_hp: u64,
}

impl Silences {
    /// Share of the packets that ended a silence that HCF put in HP, percent.
    pub fn hp_pct(&self) -> f64 {
        100.0 * self.after_silence_hp as f64 / self.after_silence.max(1) as f64
    }

    /// Drop rate of all TCP packets and of the packets that end a silence, percent.
    pub fn drop_pcts(&self) -> (f64, f64) {
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        (
            pct(self.tcp_dropped, self.tcp_packets),
            pct(self.after_silence_dropped, self.after_silence),
        )
    }
}

/// The silence after which a flow's next packet counts in [`Silences`], s: the minimum RTO
/// of both TCPs (the model's `min_rto_us` of [`Setup::paper`] and ns-2's `minrto_`).
pub const SILENCE_S: f64 = 0.2;

impl Run {
    /// The measures that count the same packets two ways agree: a flow with no packet in
    /// the window was silent for at least the window (its longest gap); the packets in the
    /// window (per flow, plus UDP) are the link's utilization times its capacity; the
    /// starved share is the share of flows with no packet; no more packets end a silence,
    /// are dropped after one, or join HP after one, than there are.
    pub fn consistent(&self) -> Result<(), ReproError> {
        let bad = |what: String| {
            Err(ReproError::Invariant(format!(
                "hcf-starvation {}: {what}",
                self.disc.label()
            )))
        };
        let window = self.setup.window_s;
        if let Some((i, f)) = self
            .flows
            .iter()
            .enumerate()
            .find(|(_, f)| f.packets == 0 && f.longest_gap_s < window)
        {
            return bad(format!(
                "flow {i} has no packet in the {window} s window but its longest gap is {} s",
                f.longest_gap_s
            ));
        }
        let packets: u64 = self.flows.iter().map(|f| f.packets).sum::<u64>() + self.udp_packets;
        let sw = self.setup.switch();
        let capacity = self.setup.bottleneck_gbps * 1e9 * window / sw.wire_bits() as f64;
        if (packets as f64 - self.link_utilization * capacity).abs() > 0.5 {
            return bad(format!(
                "{packets} packets in the window, but utilization {} of {capacity} packets",
                self.link_utilization
            ));
        }
        let starved = self.flows.iter().filter(|f| f.packets == 0).count();
        if (self.starved_pct - 100.0 * starved as f64 / self.flows.len().max(1) as f64).abs() > 1e-9
        {
            return bad(format!(
                "{} % starved, but {starved} flows have no packet",
                self.starved_pct
            ));
        }
        let s = &self.silences;
        if s.after_silence > s.tcp_packets
            || s.after_silence_dropped > s.after_silence.min(s.tcp_dropped)
            || s.after_silence_hp + s.after_silence_dropped > s.after_silence
        {
            return bad(format!("silences out of range: {s:?}"));
        }
        Ok(())
    }

    /// The smallest and largest per-flow packet counts.
    pub fn min_max_packets(&self) -> (u64, u64) {
        let it = self.flows.iter().map(|f| f.packets);
        (it.clone().min().unwrap_or(0), it.max().unwrap_or(0))
    }

    fn sorted_gaps(&self) -> Vec<f64> {
        let mut g: Vec<f64> = self.flows.iter().map(|f| f.longest_gap_s).collect();
        g.sort_by(f64::total_cmp);
        g
    }

    /// Median and largest per-flow longest gap, s.
    pub fn gap_median_max(&self) -> (f64, f64) {
        let g = self.sorted_gaps();
        if g.is_empty() {
            return (0.0, 0.0);
        }
        (g[g.len() / 2], g[g.len() - 1])
    }
}

/// HCF registers of the bottleneck queue: periods started, packets sent to HP and to LP
/// (all 0 under FIFO).
fn hcf_counts(sim: &switch_run::Sim, port: usize) -> [u64; 3] {
    sim.mmu()
        .hcf(port, super::hcf::QUEUE as usize)
        .map_or([0; 3], |(h, _)| [h.periods as u64, h.to_hp, h.to_lp])
}

/// The fields [`MEASURE`] yields: those of [`Run`] but its parameters `disc` and `setup`.
const FIELDS: &[&str] = &[
    "flows",
    "starved_pct",
    "variance",
    "mean_packets",
    "link_utilization",
    "udp_packets",
    "window_drops",
    "max_queue",
    "min_queue_at_drop",
    "pct_drops_at_b",
    "periods",
    "hp_pct",
    "silences",
];

/// One run of the V-B setup as a sweep measure: parameters `setup` (a [`Setup`] table) and
/// the discipline ([`hcf::DISCIPLINE_PARAMS`]).
pub const MEASURE: Measure = Measure {
    name: "hcf-vb",
    params: &["setup", "policy", "bins", "c0"],
    fields: FIELDS,
    check: |v| {
        let (setup, disc) = params(v)?;
        Scenario::parse(&setup.scenario(disc), "hcf-starvation")?
            .plan(&Overrides::default())
            .map(|_| ())
    },
    run: |v| {
        let (setup, disc) = params(v).map_err(|e| e.to_string())?;
        to_fields(&measure(&setup, disc).map_err(|e| e.to_string())?, FIELDS)
    },
};

fn params(v: &Values) -> Result<(Setup, Discipline), scenario::ScenarioError> {
    Ok((hcf::setup_of(v)?, Discipline::from_values(v)?))
}

/// The sweep spec `name` of `setups` under the disciplines `discs`, in order (every setup
/// under every discipline, the disciplines inner).
pub fn spec_text(name: &str, setups: &[Setup], discs: &[Discipline]) -> String {
    hcf::spec_text(name, MEASURE.name, FIELDS, setups, &[], discs)
}

/// Run the sweep `name` of `setups` under `discs` into `dir` (the engine, every core): the
/// runs in [`spec_text`]'s order.
pub fn sweep_runs(
    dir: &Path,
    name: &str,
    setups: &[Setup],
    discs: &[Discipline],
    progress: &mut dyn Progress,
) -> Result<Vec<Run>, ReproError> {
    let spec = Spec::parse(&spec_text(name, setups, discs), name, Path::new("."))?;
    let rows = super::sweep_rows(&spec, dir, progress)?;
    let jobs = setups
        .iter()
        .flat_map(|setup| discs.iter().map(move |disc| (setup, disc)));
    rows.iter()
        .zip(jobs)
        .map(|(row, (setup, disc))| {
            from_fields(
                &row.fields,
                [
                    ("disc", super::to_json(disc)?),
                    ("setup", super::to_json(setup)?),
                ],
            )
        })
        .collect()
}

/// Run `setup` under `disc`.
pub fn measure(setup: &Setup, disc: Discipline) -> Result<Run, ReproError> {
    let sw = setup.switch();
    let port = sw.port();
    let mut sim = build(&setup.scenario(disc), "hcf-starvation")?;
    let (w0, w1) = setup.window_cycles();
    let clock = sim.plan().derived.clock_hz as f64;
    let n = setup.flows;
    let starts: Vec<u64> = sim.plan().flows.iter().map(|f| f.start_cycle).collect();
    let mut last_dep = starts.clone();
    let mut longest = vec![0u64; n];
    let mut packets = vec![0u64; n + 1];
    let mut watch = QueueWatch::new();
    let mut at_w0 = (Vec::new(), watch.drops, [0u64; 3]);
    let silence = (SILENCE_S * clock).round() as u64;
    let mut last_arrival = starts.clone();
    let mut silences = Silences::default();
    let mut hp_seen = 0;
    while sim.now() < w1 {
        if sim.now() == w0 {
            at_w0 = (sim.tcp_stats(), watch.drops, hcf_counts(&sim, port));
        }
        sim.step()?;
        watch.observe(&sim, port);
        let now = sim.now() - 1;
        for ev in &sim.outputs().cell_events {
            if ev.beat.hdr.dst as usize != port || !ev.beat.sop() {
                continue;
            }
            // One ingress link: at most one packet arrives in a cycle, so HCF's HP
            // counter moved for this one if at all.
            let hp = hcf_counts(&sim, port)[1];
            let joined_hp = hp > hp_seen;
            hp_seen = hp;
            let f = ev.beat.hdr.flow as usize;
            if f >= n {
                continue;
            }
            let dropped = matches!(ev.fate, CellFate::Dropped(_));
            silences.tcp_packets += 1;
            silences.tcp_dropped += dropped as u64;
            if now - last_arrival[f] >= silence {
                silences.after_silence += 1;
                silences.after_silence_dropped += dropped as u64;
                silences.after_silence_hp += joined_hp as u64;
            }
            last_arrival[f] = now;
        }
        for dep in &sim.outputs().departures {
            if dep.port as usize != port || !dep.beat.eop() {
                continue;
            }
            let f = dep.beat.hdr.flow as usize;
            if now >= w0 {
                packets[f] += 1;
            }
            if f < n {
                longest[f] = longest[f].max(now - last_dep[f]);
                last_dep[f] = now;
            }
        }
    }
    check_discipline(&sim, &format!("hcf-starvation {}", disc.label()), &disc)?;
    let end = sim.now();
    let stats = sim.tcp_stats();
    let (before, drops0, hcf0) = at_w0;
    let hcf1 = hcf_counts(&sim, port);
    let (to_hp, to_lp) = (hcf1[1] - hcf0[1], hcf1[2] - hcf0[2]);
    let flows: Vec<FlowResult> = (0..n)
        .map(|i| {
            let (b0, t0) = before
                .get(i)
                .map_or((0, 0), |s| (s.bytes_delivered, s.timeouts));
            FlowResult {
                packets: packets[i],
                goodput_bytes: stats[i].bytes_delivered - b0,
                timeouts: stats[i].timeouts - t0,
                longest_gap_s: longest[i].max(end - last_dep[i]) as f64 / clock,
            }
        })
        .collect();
    let counts: Vec<f64> = flows.iter().map(|f| f.packets as f64).collect();
    let starved = flows.iter().filter(|f| f.packets == 0).count();
    let all: u64 = packets.iter().sum();
    let wire_s = (all * sw.wire_bits()) as f64 / (setup.bottleneck_gbps * 1e9);
    let mut window_drops = watch.drops;
    for (d, d0) in window_drops.iter_mut().zip(drops0) {
        *d -= d0;
    }
    Ok(Run {
        disc,
        setup: *setup,
        starved_pct: 100.0 * starved as f64 / n.max(1) as f64,
        variance: variance(&counts),
        mean_packets: mean(counts.iter().copied()),
        link_utilization: wire_s / setup.window_s,
        udp_packets: packets[n],
        window_drops,
        max_queue: watch.max_occupancy,
        min_queue_at_drop: watch.min_occupancy_at_drop,
        pct_drops_at_b: watch.pct_dropped_at_or_above(BUFFER_PACKETS),
        periods: hcf1[0] - hcf0[0],
        hp_pct: 100.0 * to_hp as f64 / (to_hp + to_lp).max(1) as f64,
        silences,
        flows,
    })
    .and_then(|r| r.consistent().map(|()| r))
}

/// The baseline HCF of V-B: K = 20, c0 = 1, dynamic period.
pub const BASELINE: HcfKnobs = HcfKnobs::dynamic(20, 1);

/// One line of `starvation.csv` ([`CSV_HEADER`]).
#[derive(Debug, Default, serde::Serialize)]
pub struct CsvRow {
    pub policy: &'static str,
    pub flows: usize,
    pub window_s: Plain,
    pub starved_pct: Fixed<2>,
    pub throughput_variance: Fixed<1>,
    pub link_utilization: Fixed<4>,
}

/// One line of `starvation_flows.csv` ([`FLOWS_CSV_HEADER`]).
#[derive(Debug, Default, serde::Serialize)]
pub struct FlowCsvRow {
    pub policy: &'static str,
    pub flow: usize,
    pub packets: u64,
    pub goodput_bytes: u64,
    pub timeouts: u64,
    pub longest_gap_s: Fixed<3>,
}

/// The `starvation.csv` row of a run.
pub fn csv_row(r: &Run) -> CsvRow {
    CsvRow {
        policy: r.disc.name(),
        flows: r.setup.flows,
        window_s: Plain(r.setup.window_s),
        starved_pct: Fixed(r.starved_pct),
        throughput_variance: Fixed(r.variance),
        link_utilization: Fixed(r.link_utilization),
    }
}

/// The disciplines of the comparison, in the CSVs' order.
pub const DISCIPLINES: [Discipline; 2] = [Discipline::Fifo, Discipline::Hcf(BASELINE)];

/// FIFO and baseline HCF on `setup`, runs in `out/sweep/`: writes `starvation.csv`,
/// `starvation_flows.csv` and `starvation.png` into `out`, returns the runs.
pub fn compare(
    out: &Path,
    setup: &Setup,
    progress: &mut dyn Progress,
) -> Result<Vec<Run>, ReproError> {
    let runs = sweep_runs(
        &out.join("sweep"),
        "hcf-starvation",
        std::slice::from_ref(setup),
        &DISCIPLINES,
        progress,
    )?;
    super::write_csv(&out.join("starvation.csv"), runs.iter().map(csv_row))?;
    let flows = runs.iter().flat_map(|r| {
        r.flows.iter().enumerate().map(|(i, f)| FlowCsvRow {
            policy: r.disc.name(),
            flow: i,
            packets: f.packets,
            goodput_bytes: f.goodput_bytes,
            timeouts: f.timeouts,
            longest_gap_s: Fixed(f.longest_gap_s),
        })
    });
    super::write_csv(&out.join("starvation_flows.csv"), flows)?;
    histogram_png(&out.join("starvation.png"), &runs)?;
    Ok(runs)
}

/// The per-flow throughput distributions (the paper's Fig. 4) as frequency polygons: flows
/// per bin of packets, one line per discipline.
fn histogram_png(path: &Path, runs: &[Run]) -> Result<(), ReproError> {
    let max = runs
        .iter()
        .map(|r| r.min_max_packets().1)
        .max()
        .unwrap_or(0);
    let width = (max / 25 + 1).max(1);
    let bins = (max / width + 1) as usize;
    let series: Vec<Series> = runs
        .iter()
        .map(|r| {
            let mut h = vec![0u64; bins];
            for f in &r.flows {
                h[(f.packets / width) as usize] += 1;
            }
            Series {
                name: format!(
                    "{}: {:.1} % starved, variance {:.3e}",
                    r.disc.label(),
                    r.starved_pct,
                    r.variance
                ),
                points: h
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| ((i as f64 + 0.5) * width as f64, c as f64))
                    .collect(),
                line: true,
            }
        })
        .collect();
    let s = runs.first().map(|r| r.setup).unwrap_or_else(Setup::paper);
    xy_chart(
        path,
        &format!(
            "HCF V-B: per-flow throughput, {} TCP flows, last {} s",
            s.flows, s.window_s
        ),
        &format!("packets in the window (bins of {width})"),
        "flows",
        &series,
    )
}

/// The text report of a comparison.
pub fn report(runs: &[Run], out: &Path) -> String {
    let s = runs.first().map(|r| r.setup).unwrap_or_else(Setup::paper);
    let mut rep = format!(
        "HCF V-B long-flow starvation: {} TCP flows + UDP at {:.0} % of a {} Mb/s bottleneck, B = {BUFFER_PACKETS} packets of {PACKET_BYTES} B,\n\
         RTT {} us, min RTO {} ms, Karn's rule {}, warm-up {} s, window {} s\n\n",
        s.flows,
        s.udp_fraction * 100.0,
        s.bottleneck_gbps * 1000.0,
        s.base_rtt_us,
        s.min_rto_us / 1000,
        if s.karn { "on" } else { "off" },
        s.warmup_s,
        s.window_s
    );
    let _ = writeln!(
        rep,
        "{:<34} {:>9} {:>11} {:>7} {:>9} {:>8} {:>9} {:>11} {:>10} {:>9} {:>8} {:>6}",
        "policy",
        "starved %",
        "variance",
        "util",
        "mean pkt",
        "min/max",
        "UDP pkts",
        "drops win",
        "max queue",
        "gap med s",
        "periods",
        "HP %"
    );
    for r in runs {
        let (lo, hi) = r.min_max_packets();
        let drops: u64 = r.window_drops.iter().sum();
        let _ = writeln!(
            rep,
            "{:<34} {:>9.2} {:>11.1} {:>7.4} {:>9.1} {:>8} {:>9} {:>11} {:>10} {:>9.2} {:>8} {:>6.1}",
            r.disc.label(),
            r.starved_pct,
            r.variance,
            r.link_utilization,
            r.mean_packets,
            format!("{lo}/{hi}"),
            r.udp_packets,
            drops,
            r.max_queue,
            r.gap_median_max().0,
            r.periods,
            r.hp_pct
        );
    }
    let _ = writeln!(
        rep,
        "\npaper (ns-2): FIFO {} % starved, variance {:.3e}; HCF {} % starved, variance {:.3e}; utilization ~100 % for both",
        PAPER_FIFO.0, PAPER_FIFO.1, PAPER_HCF.0, PAPER_HCF.1
    );
    for r in runs {
        let by = |x: DropReason| {
            DropReason::ALL
                .iter()
                .position(|&y| y == x)
                .map_or(0, |i| r.window_drops[i])
        };
        let (med, max) = r.gap_median_max();
        let _ = writeln!(
            rep,
            "{}: window drops lossy_threshold {} hcf_full {}; queue max {} packets, smallest queue at a drop {}, {:.2} % of drops at >= {BUFFER_PACKETS}; longest per-flow gap median {med:.2} s, max {max:.2} s",
            r.disc.name(),
            by(DropReason::LossyThreshold),
            by(DropReason::HcfFull),
            r.max_queue,
            if r.min_queue_at_drop == u32::MAX {
                "-".to_string()
            } else {
                r.min_queue_at_drop.to_string()
            },
            r.pct_drops_at_b
        );
    }
    let _ = writeln!(
        rep,
        "{}",
        wrote(
            out,
            &["starvation.csv", "starvation_flows.csv", "starvation.png"]
        )
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let runs = compare(out, &Setup::paper(), progress)?;
    Ok(report(&runs, out))
}

/// The runs of `hcf-starvation-ns2`: V-B under ns-2's TCP ([`Setup::ns2`]) for every
/// spread of `spreads` (outer) and seed of `seeds`.
pub fn ns2_setups(spreads: &[f64], seeds: &[u64]) -> Vec<Setup> {
    spreads
        .iter()
        .flat_map(|&spread| seeds.iter().map(move |&seed| Setup::ns2(spread, seed)))
        .collect()
}

/// Header of `starvation_seeds.csv` (one line per run).
pub const SEEDS_CSV_HEADER: &str = "policy,tcp,start_spread_s,seed,starved_pct,throughput_variance,link_utilization,gap_median_s,gap_max_s,gap_over_20s_pct,window_drops,hp_pct,tcp_drop_pct,after_silence_drop_pct,after_silence_hp_pct";
/// Header of `starvation_spread.csv` (one line per discipline, spread and measure).
pub const SPREAD_CSV_HEADER: &str = "policy,tcp,start_spread_s,seeds,measure,mean,std,min,max";

/// A measure of a run: its column name and its value.
pub type SeedMeasure = (&'static str, fn(&Run) -> f64);

/// The measures [`spread_rows`] summarises over seeds.
pub const SEED_MEASURES: [SeedMeasure; 11] = [
    ("starved_pct", |r| r.starved_pct),
    ("throughput_variance", |r| r.variance),
    ("link_utilization", |r| r.link_utilization),
    ("gap_median_s", |r| r.gap_median_max().0),
    ("gap_max_s", |r| r.gap_median_max().1),
    ("gap_over_20s_pct", |r| r.pct_gap_over(20.0)),
    ("window_drops", |r| {
        r.window_drops.iter().sum::<u64>() as f64
    }),
    ("hp_pct", |r| r.hp_pct),
    ("tcp_drop_pct", |r| r.silences.drop_pcts().0),
    ("after_silence_drop_pct", |r| r.silences.drop_pcts().1),
    ("after_silence_hp_pct", |r| r.silences.hp_pct()),
];

impl Run {
    /// Share of the flows whose longest silence exceeds `s` seconds, percent.
    pub fn pct_gap_over(&self, s: f64) -> f64 {
        let n = self.flows.iter().filter(|f| f.longest_gap_s > s).count();
        100.0 * n as f64 / self.flows.len().max(1) as f64
    }
}

/// One measure over the seeds of one discipline and spread.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct SpreadRow {
    pub policy: &'static str,
    pub tcp: &'static str,
    pub start_spread_s: Plain,
    pub seeds: usize,
    pub measure: &'static str,
    pub mean: Fixed<3>,
    /// Population standard deviation over the seeds.
    pub std: Fixed<3>,
    pub min: Fixed<3>,
    pub max: Fixed<3>,
}

/// The [`SEED_MEASURES`] of `runs` over seeds: one row per (discipline, TCP, spread) in
/// the runs' order of first appearance, and measure.
pub fn spread_rows(runs: &[Run]) -> Vec<SpreadRow> {
    let key = |r: &Run| (r.disc, r.setup.tcp, r.setup.start_spread_s.to_bits());
    let mut keys = Vec::new();
    for r in runs {
        if !keys.contains(&key(r)) {
            keys.push(key(r));
        }
    }
    keys.iter()
        .flat_map(|k| {
            let group: Vec<&Run> = runs.iter().filter(|r| key(r) == *k).collect();
            SEED_MEASURES.iter().map(move |&(measure, f)| {
                let xs = group.iter().map(|r| f(r));
                let (m, sd) = crate::sweep::stats::mean_std(xs.clone());
                SpreadRow {
                    policy: k.0.name(),
                    tcp: k.1.name(),
                    start_spread_s: Plain(f64::from_bits(k.2)),
                    seeds: group.len(),
                    measure,
                    mean: Fixed(m),
                    std: Fixed(sd),
                    min: Fixed(xs.clone().fold(f64::INFINITY, f64::min)),
                    max: Fixed(xs.fold(f64::NEG_INFINITY, f64::max)),
                }
            })
        })
        .collect()
}

/// One line of `starvation_seeds.csv` ([`SEEDS_CSV_HEADER`]).
#[derive(Debug, Default, serde::Serialize)]
struct SeedLine {
    policy: &'static str,
    tcp: &'static str,
    start_spread_s: Plain,
    seed: u64,
    starved_pct: Fixed<2>,
    throughput_variance: Fixed<1>,
    link_utilization: Fixed<4>,
    gap_median_s: Fixed<3>,
    gap_max_s: Fixed<3>,
    gap_over_20s_pct: Fixed<2>,
    window_drops: u64,
    hp_pct: Fixed<2>,
    tcp_drop_pct: Fixed<2>,
    after_silence_drop_pct: Fixed<2>,
    after_silence_hp_pct: Fixed<2>,
}

/// FIFO and baseline HCF on every setup of `setups` (runs in `out/sweep/` as the sweep
/// `name`): writes `starvation_seeds.csv`, `starvation_spread.csv` and
/// `starvation_spread.png` into `out`.
pub fn compare_seeds(
    out: &Path,
    name: &str,
    setups: &[Setup],
    progress: &mut dyn Progress,
) -> Result<Vec<Run>, ReproError> {
    let runs = sweep_runs(&out.join("sweep"), name, setups, &DISCIPLINES, progress)?;
    let lines = runs.iter().map(|r| SeedLine {
        policy: r.disc.name(),
        tcp: r.setup.tcp.name(),
        start_spread_s: Plain(r.setup.start_spread_s),
        seed: r.setup.seed,
        starved_pct: Fixed(r.starved_pct),
        throughput_variance: Fixed(r.variance),
        link_utilization: Fixed(r.link_utilization),
        gap_median_s: Fixed(r.gap_median_max().0),
        gap_max_s: Fixed(r.gap_median_max().1),
        gap_over_20s_pct: Fixed(r.pct_gap_over(20.0)),
        window_drops: r.window_drops.iter().sum(),
        hp_pct: Fixed(r.hp_pct),
        tcp_drop_pct: Fixed(r.silences.drop_pcts().0),
        after_silence_drop_pct: Fixed(r.silences.drop_pcts().1),
        after_silence_hp_pct: Fixed(r.silences.hp_pct()),
    });
    super::write_csv(&out.join("starvation_seeds.csv"), lines)?;
    super::write_csv(&out.join("starvation_spread.csv"), spread_rows(&runs))?;
    spread_png(&out.join("starvation_spread.png"), &runs)?;
    Ok(runs)
}

/// A start spread as the chart names it: `together`, `10 ms`, `1 s`.
fn spread_name(s: f64) -> String {
    match s {
        0.0 => "together".into(),
        s if s < 1.0 => format!("{} ms", s * 1e3),
        s => format!("{s} s"),
    }
}

/// Starved flows per start spread (x: the spreads in the runs' order, 0, 1, ...), one
/// line per discipline through its mean over the seeds, its seeds as markers, and the
/// paper's ns-2 figures as flat lines; the legend in the upper right, above the lines that
/// fall with the spread.
fn spread_png(path: &Path, runs: &[Run]) -> Result<(), ReproError> {
    let mut spreads: Vec<f64> = Vec::new();
    for r in runs {
        if !spreads.contains(&r.setup.start_spread_s) {
            spreads.push(r.setup.start_spread_s);
        }
    }
    let x = |r: &Run| {
        spreads
            .iter()
            .position(|&s| s == r.setup.start_spread_s)
            .unwrap_or(0) as f64
    };
    let last = spreads.len().saturating_sub(1) as f64;
    let mut series = Vec::new();
    for d in DISCIPLINES {
        let mine: Vec<&Run> = runs.iter().filter(|r| r.disc == d).collect();
        let mean = (0..spreads.len()).filter_map(|i| {
            let at: Vec<f64> = mine
                .iter()
                .filter(|r| x(r) == i as f64)
                .map(|r| r.starved_pct)
                .collect();
            (!at.is_empty()).then(|| (i as f64, at.iter().sum::<f64>() / at.len() as f64))
        });
        series.push(Series {
            name: format!("{}: mean over the seeds", d.label()),
            points: mean.collect(),
            line: true,
        });
        series.push(Series {
            name: format!("{}: each seed", d.label()),
            points: mine.iter().map(|r| (x(r), r.starved_pct)).collect(),
            line: false,
        });
    }
    for (name, pct) in [("FIFO", PAPER_FIFO.0), ("HCF", PAPER_HCF.0)] {
        series.push(Series {
            name: format!("paper (ns-2) {name}: {pct} %"),
            points: vec![(0.0, pct), (last, pct)],
            line: true,
        });
    }
    let s = runs.first().map(|r| r.setup).unwrap_or_else(Setup::paper);
    let at: Vec<String> = spreads
        .iter()
        .enumerate()
        .map(|(i, &v)| format!("{i} = {}", spread_name(v)))
        .collect();
    xy_chart_legend_at(
        path,
        &format!(
            "HCF V-B under ns-2's TCP: starved flows of {}, last {} s",
            s.flows, s.window_s
        ),
        &format!("start spread ({})", at.join(", ")),
        "starved flows, %",
        &series,
        SeriesLabelPosition::UpperRight,
    )
}

/// The text report of [`compare_seeds`]: per discipline and spread, the mean and the
/// min-max over the seeds.
pub fn seeds_report(runs: &[Run], out: &Path) -> String {
    let s = runs.first().map(|r| r.setup).unwrap_or_else(Setup::paper);
    let mut rep = format!(
        "HCF V-B long-flow starvation, {}: {} flows + UDP at {:.0} % of {} Mb/s, B = {BUFFER_PACKETS} packets, warm-up {} s, window {} s;\n\
         flow i starts at i x spread / {} plus a draw in [0, {}) us from the seed; mean [min-max] over the seeds\n\n",
        s.tcp.describe(s.min_rto_us, s.init_cwnd, s.karn),
        s.flows,
        s.udp_fraction * 100.0,
        s.bottleneck_gbps * 1000.0,
        s.warmup_s,
        s.window_s,
        s.flows,
        s.start_jitter_us
    );
    let _ = writeln!(
        rep,
        "{:<7} {:>9} {:>5} {:>22} {:>26} {:>20} {:>22} {:>20} {:>20} {:>22} {:>20}",
        "policy",
        "spread s",
        "seeds",
        "starved %",
        "variance",
        "gap median s",
        "flows gap > 20 s %",
        "util",
        "TCP drop %",
        "drop after silence %",
        "HP after silence %"
    );
    let rows = spread_rows(runs);
    for group in rows.chunks(SEED_MEASURES.len()) {
        let cell = |m: &str, d: usize| {
            group
                .iter()
                .find(|r| r.measure == m)
                .map_or(String::new(), |r| {
                    format!("{:.d$} [{:.d$}-{:.d$}]", r.mean.0, r.min.0, r.max.0)
                })
        };
        let g = &group[0];
        let _ = writeln!(
            rep,
            "{:<7} {:>9} {:>5} {:>22} {:>26} {:>20} {:>22} {:>20} {:>20} {:>22} {:>20}",
            g.policy,
            g.start_spread_s.0,
            g.seeds,
            cell("starved_pct", 2),
            cell("throughput_variance", 0),
            cell("gap_median_s", 2),
            cell("gap_over_20s_pct", 1),
            cell("link_utilization", 4),
            cell("tcp_drop_pct", 1),
            cell("after_silence_drop_pct", 1),
            cell("after_silence_hp_pct", 1)
        );
    }
    let _ = writeln!(
        rep,
        "\npaper (ns-2): FIFO {} % starved, variance {:.3e}; HCF {} % starved, variance {:.3e}",
        PAPER_FIFO.0, PAPER_FIFO.1, PAPER_HCF.0, PAPER_HCF.1
    );
    let _ = writeln!(
        rep,
        "{}",
        wrote(
            out,
            &[
                "starvation_seeds.csv",
                "starvation_spread.csv",
                "starvation_spread.png"
            ]
        )
    );
    rep
}

/// `hcf-starvation-ns2`: V-B under ns-2's TCP over [`NS2_SPREADS_S`] x [`NS2_SEEDS`].
pub fn run_ns2(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let runs = compare_seeds(
        out,
        "hcf-starvation-ns2",
        &ns2_setups(&NS2_SPREADS_S, &NS2_SEEDS),
        progress,
    )?;
    Ok(seeds_report(&runs, out))
}
