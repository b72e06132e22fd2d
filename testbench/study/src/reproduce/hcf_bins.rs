//! HCF section V-C (Figs. 7 and 8): unfairness and starvation of the V-B setup vs the number
//! of credit bins `K` (with `c0 = 1`) and vs the initial credits `c0` (with `K = 20`),
//! dynamic period, against the drop-tail FIFO of the same run length.
//!
//! The setup is [`hcf_starvation`]'s with a shorter warm-up
//! ([`sweep_setup`]: 20 s instead of 170 s, the same 10 s window), so that the eleven runs
//! fit in about a minute on two cores.
//!
//! The runs are the built-in sweep spec `hcf-bins` ([`spec_text`]) over the measure
//! `hcf-vb` ([`hcf_starvation::MEASURE`]), run by the
//! sweep engine into `OUT/sweep/`; the CSV and plots are made from its rows.

use super::hcf::{Discipline, HcfKnobs};
use super::hcf_starvation::{self, Run, Setup};
use super::plot::{xy_chart, Series};
use super::{Progress, ReproError};
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::{Fixed, Plain};

pub const CSV_HEADER: &str =
    "policy,sweep,bins,c0,flows,window_s,starved_pct,throughput_variance,link_utilization";

/// `K` values of the bins sweep (c0 = 1).
pub const BINS: &[u32] = &[1, 2, 5, 10, 20, 50];
/// `c0` values of the credits sweep (K = 20).
pub const C0S: &[u32] = &[1, 2, 4, 8, 16];
/// `K` of the credits sweep and `c0` of the bins sweep: the V-B baseline.
pub const BASE_BINS: u32 = 20;
pub const BASE_C0: u32 = 1;

/// The V-B setup with a 20 s warm-up.
pub fn sweep_setup() -> Setup {
    Setup {
        warmup_s: 20.0,
        ..Setup::paper()
    }
}

/// Which sweep a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    Fifo,
    Bins,
    C0,
    /// The baseline (K = 20, c0 = 1) is a point of both sweeps.
    Both,
}

impl Sweep {
    fn name(self) -> &'static str {
        match self {
            Self::Fifo => "reference",
            Self::Bins => "bins",
            Self::C0 => "c0",
            Self::Both => "bins+c0",
        }
    }
    fn in_bins(self) -> bool {
        matches!(self, Self::Bins | Self::Both)
    }
    fn in_c0(self) -> bool {
        matches!(self, Self::C0 | Self::Both)
    }
}

/// The runs of the two sweeps (each distinct configuration once) and the FIFO reference.
pub fn jobs(bins: &[u32], c0s: &[u32]) -> Vec<(Sweep, Discipline)> {
    let mut jobs = vec![(Sweep::Fifo, Discipline::Fifo)];
    for &k in bins {
        let sweep = if k == BASE_BINS && c0s.contains(&BASE_C0) {
            Sweep::Both
        } else {
            Sweep::Bins
        };
        jobs.push((sweep, Discipline::Hcf(HcfKnobs::dynamic(k, BASE_C0))));
    }
    for &c0 in c0s {
        if c0 == BASE_C0 && bins.contains(&BASE_BINS) {
            continue;
        }
        jobs.push((Sweep::C0, Discipline::Hcf(HcfKnobs::dynamic(BASE_BINS, c0))));
    }
    jobs
}

/// The built-in sweep spec `hcf-bins`: the runs of [`jobs`] on `setup`, in order.
pub fn spec_text(setup: &Setup, bins: &[u32], c0s: &[u32]) -> String {
    let discs: Vec<Discipline> = jobs(bins, c0s).into_iter().map(|j| j.1).collect();
    hcf_starvation::spec_text("hcf-bins", std::slice::from_ref(setup), &discs)
}

fn knobs(d: &Discipline) -> Option<HcfKnobs> {
    match d {
        Discipline::Hcf(k) => Some(*k),
        Discipline::Fifo => None,
    }
}

/// One x axis of the plots: which runs belong to it and their x value.
struct Axis {
    file: &'static str,
    name: &'static str,
    label: &'static str,
    member: fn(Sweep) -> bool,
    x: fn(&HcfKnobs) -> u32,
}

/// Run the sweeps on `setup` (runs in `out/sweep/`): writes `bins.csv` and four PNGs into
/// `out`.
pub fn sweep(
    out: &Path,
    setup: &Setup,
    bins: &[u32],
    c0s: &[u32],
    progress: &mut dyn Progress,
) -> Result<Vec<(Sweep, Run)>, ReproError> {
    let jobs = jobs(bins, c0s);
    let discs: Vec<Discipline> = jobs.iter().map(|j| j.1).collect();
    let runs = hcf_starvation::sweep_runs(
        &out.join("sweep"),
        "hcf-bins",
        std::slice::from_ref(setup),
        &discs,
        progress,
    )?;
    let runs: Vec<(Sweep, Run)> = jobs.iter().map(|j| j.0).zip(runs).collect();
    /// One line of `bins.csv` ([`CSV_HEADER`]); `bins` and `c0` are empty for FIFO.
    #[derive(Default, serde::Serialize)]
    struct Line {
        policy: &'static str,
        sweep: &'static str,
        bins: Option<u32>,
        c0: Option<u32>,
        flows: usize,
        window_s: Plain,
        starved_pct: Fixed<2>,
        throughput_variance: Fixed<1>,
        link_utilization: Fixed<4>,
    }
    let lines = runs.iter().map(|(sweep, r)| {
        let k = knobs(&r.disc);
        Line {
            policy: r.disc.name(),
            sweep: sweep.name(),
            bins: k.map(|k| k.bins),
            c0: k.map(|k| k.c0),
            flows: r.setup.flows,
            window_s: Plain(r.setup.window_s),
            starved_pct: Fixed(r.starved_pct),
            throughput_variance: Fixed(r.variance),
            link_utilization: Fixed(r.link_utilization),
        }
    });
    super::write_csv(&out.join("bins.csv"), lines)?;
    let fifo = runs.iter().find(|(s, _)| *s == Sweep::Fifo).map(|(_, r)| r);
    type Pick = fn(&Run) -> f64;
    let metrics: [(&str, &str, Pick); 2] = [
        ("starved", "fully starved flows (%)", |r| r.starved_pct),
        (
            "variance",
            "variance of per-flow packets in the window",
            |r| r.variance,
        ),
    ];
    let axes = [
        Axis {
            file: "k",
            name: "K",
            label: "credit bins K (c0 = 1)",
            member: Sweep::in_bins,
            x: |k| k.bins,
        },
        Axis {
            file: "c0",
            name: "c0",
            label: "initial credits c0 (K = 20)",
            member: Sweep::in_c0,
            x: |k| k.c0,
        },
    ];
    for Axis {
        file: axis,
        name: axis_name,
        label: x_label,
        member,
        x: x_of,
    } in axes
    {
        let pts: Vec<(f64, &Run)> = runs
            .iter()
            .filter(|(s, _)| member(*s))
            .filter_map(|(_, r)| knobs(&r.disc).map(|k| (x_of(&k) as f64, r)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let (lo, hi) = pts
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p.0), b.max(p.0))
            });
        for (metric, y_label, y) in metrics {
            let title = if metric == "starved" {
                "starvation"
            } else {
                "unfairness"
            };
            let mut series = vec![Series {
                name: "HCF, dynamic period".into(),
                points: pts.iter().map(|(x, r)| (*x, y(r))).collect(),
                line: true,
            }];
            if let Some(f) = fifo {
                series.push(Series {
                    name: "FIFO (drop-tail, same B)".into(),
                    points: vec![(lo, y(f)), (hi, y(f))],
                    line: true,
                });
            }
            xy_chart(
                &out.join(format!("bins_{axis}_{metric}.png")),
                &format!(
                    "HCF V-C: {title} vs {axis_name}, {} flows, {} s window",
                    setup.flows, setup.window_s
                ),
                x_label,
                y_label,
                &series,
            )?;
        }
    }
    Ok(runs)
}

pub fn report(runs: &[(Sweep, Run)], out: &Path) -> String {
    let s = runs.first().map(|r| r.1.setup).unwrap_or_else(sweep_setup);
    let mut rep = format!(
        "HCF V-C parameter sweeps on the V-B setup: {} TCP flows, warm-up {} s, window {} s, B = 20 packets, Karn's rule {}\n\n",
        s.flows,
        s.warmup_s,
        s.window_s,
        if s.karn { "on" } else { "off" }
    );
    let _ = writeln!(
        rep,
        "{:<10} {:>5} {:>4} {:>10} {:>11} {:>8} {:>9} {:>9} {:>6}",
        "sweep", "K", "c0", "starved %", "variance", "util", "min/max", "periods", "HP %"
    );
    for (sweep, r) in runs {
        let (k, c0) = knobs(&r.disc).map_or(("-".into(), "-".into()), |k| {
            (k.bins.to_string(), k.c0.to_string())
        });
        let (lo, hi) = r.min_max_packets();
        let _ = writeln!(
            rep,
            "{:<10} {k:>5} {c0:>4} {:>10.2} {:>11.1} {:>8.4} {:>9} {:>9} {:>6.1}",
            sweep.name(),
            r.starved_pct,
            r.variance,
            r.link_utilization,
            format!("{lo}/{hi}"),
            r.periods,
            r.hp_pct
        );
    }
    let _ = writeln!(
        rep,
        "\npaper (Figs. 7, 8): unfairness and starvation fall with K (a few dozen bins are enough) and rise with c0"
    );
    let _ = writeln!(
        rep,
        "wrote {} and bins_{{k,c0}}_{{starved,variance}}.png in {}",
        out.join("bins.csv").display(),
        out.display()
    );
    rep
}

pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    let runs = sweep(out, &sweep_setup(), BINS, C0S, progress)?;
    Ok(report(&runs, out))
}
