//! Paper reproductions: `mmu-sim reproduce NAME --out DIR`.
//!
//! Each reproduction drives the model through the same [`Sim`](crate::Sim) as `mmu-sim run`,
//! writes its CSV (and plot) into the output directory, and returns a human-readable
//! report for stdout. All are deterministic for their built-in seeds.
//!
//! A reproduction that is a sweep runs on the sweep engine ([`crate::sweep`]): its runs are
//! a built-in sweep spec ([`builtin_spec`]) over a [`Measure`], run into `OUT/sweep/`, and
//! the reproduction's tables and plots are made from the rows. `mmu-sim sweep plan NAME
//! --out OUT/sweep --emit slurm` runs the same runs on a cluster; `mmu-sim reproduce NAME
//! --out OUT` then finds every row done and writes the same files.

pub mod collateral;
pub mod dsh_fig11;
pub mod dsh_theorem;
pub mod ecm;
pub mod ecm_fig1;
pub mod ecm_severe;
pub mod ecm_two_cps;
pub mod hcf;
pub mod hcf_bins;
pub mod hcf_incast;
pub mod hcf_starvation;
pub mod headroom;
pub mod l2bm_hybrid;
pub mod plot;

use crate::sweep::{self, Measure, Row, Shard, Spec, Status, SweepError, Values};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use thiserror::Error;

/// Progress of a long reproduction (the CLI shows it as a bar on a terminal). `Send`: the
/// sweep engine reports from its worker threads.
pub trait Progress: Send {
    /// Total units of work (e.g. simulation runs or cycles).
    fn set_len(&mut self, len: u64);
    /// `n` more units done.
    fn inc(&mut self, n: u64);
    /// What is being done now (e.g. "dsh, burst 40 %").
    fn message(&mut self, msg: &str);
}

/// A progress sink that shows nothing (tests, non-terminal stderr).
pub struct NoProgress;

impl Progress for NoProgress {
    fn set_len(&mut self, _: u64) {}
    fn inc(&mut self, _: u64) {}
    fn message(&mut self, _: &str) {}
}

#[derive(Debug, Error)]
pub enum ReproError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("scenario: {0}")]
    Scenario(#[from] crate::ScenarioError),
    #[error("simulation: {0}")]
    Run(#[from] crate::RunError),
    #[error("plot {path}: {message}")]
    Plot { path: PathBuf, message: String },
    /// A reproduced figure broke an invariant (e.g. a lossless drop): the numbers are void.
    #[error("invariant: {0}")]
    Invariant(String),
    #[error("sweep: {0}")]
    Sweep(#[from] SweepError),
}

impl ReproError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Write `rows` as the CSV file `path` ([`crate::csv_file`]: the header is the row's
/// field names).
pub fn write_csv<R: serde::Serialize + Default>(
    path: &Path,
    rows: impl IntoIterator<Item = R>,
) -> Result<(), ReproError> {
    crate::csv_file::write(path, rows).map_err(|e| ReproError::io(path, e))
}

/// Write a whole file (a report or JSON) into the output directory.
pub fn write_file(path: &Path, contents: &str) -> Result<(), ReproError> {
    std::fs::write(path, contents).map_err(|e| ReproError::io(path, e))
}

/// The `name`, `[switch]` and `[run]` part of a reproduction's scenario on the `tomahawk`
/// profile (seed 1, a lossless drop fails the run); flows follow from [`flow_toml`]. The
/// headroom is the paper's, Eq. 1's bytes rounded up to cells (`headroom = "paper-bytes"`):
/// these reproductions compare with the paper's byte-accounted numbers, and their packets
/// are whole cells, for which the paper's headroom is enough (the plan checks it).
pub fn tomahawk_header(name: &str, cycles: u64) -> String {
    format!(
        "name = \"{name}\"\n[switch]\nprofile = \"tomahawk\"\nheadroom = \"paper-bytes\"\n[run]\ncycles = {cycles}\nseed = 1\nexpect_lossless = true\n"
    )
}

/// The report line that says which headroom [`tomahawk_header`] selects, with `eta` as the
/// plan derived it.
pub fn paper_headroom_line(plan: &crate::Plan) -> String {
    let s = plan.derived.eta_sizing[0];
    format!(
        "headroom = \"paper-bytes\": the paper's eta, Eq. 1's {} B rounded up to {} cells (the packets are whole cells)\n",
        s.wire_bytes, s.cells
    )
}

/// One `[[flows]]` table of fixed-size packets; `pattern` is the pattern key and its
/// parameters as TOML lines (e.g. `pattern = "constant"`).
pub fn flow_toml(src: usize, dst: usize, prio: usize, size_bytes: u32, pattern: &str) -> String {
    format!(
        "\n[[flows]]\nsrc = {src}\ndst = {dst}\nprio = {prio}\nsize_bytes = {size_bytes}\n{pattern}\n"
    )
}

/// The report's last line: `wrote DIR/a, DIR/b, ...`.
pub fn wrote(out: &Path, files: &[&str]) -> String {
    let paths: Vec<String> = files
        .iter()
        .map(|f| out.join(f).display().to_string())
        .collect();
    format!("wrote {}", paths.join(", "))
}

/// Core cycles to nanoseconds (the model's clock need not be 1 GHz).
pub fn cycles_to_ns(cycles: u64, clock_hz: u64) -> f64 {
    cycles as f64 * 1e9 / clock_hz as f64
}

/// A named reproduction.
pub struct Reproduction {
    pub name: &'static str,
    pub description: &'static str,
    /// Run it, writing files into the directory; returns the report printed on stdout.
    pub run: fn(&Path, &mut dyn Progress) -> Result<String, ReproError>,
}

pub static REPRODUCTIONS: &[Reproduction] = &[
    Reproduction {
        name: "headroom",
        description: "DSH Eq. 1, 3 and 4 for the paper's Trident2 and Tomahawk examples (table)",
        run: headroom::run,
    },
    Reproduction {
        name: "dsh-theorem",
        description: "DSH Theorems 1-2: time to the first PAUSE of bursting queues, predicted vs measured, SIH and DSH",
        run: dsh_theorem::run,
    },
    Reproduction {
        name: "dsh-fig11",
        description: "DSH Fig. 11 on tomahawk: pause duration and PAUSE frames of a 16-to-1 fan-in vs burst size, SIH vs DSH",
        run: dsh_fig11::run,
    },
    Reproduction {
        name: "collateral",
        description: "DSH Fig. 13a as far as one switch shows it: an innocent flow's throughput next to fan-in congestion, SIH vs DSH",
        run: collateral::run,
    },
    Reproduction {
        name: "hcf-starvation",
        description: "HCF V-B: 400 long-lived TCP flows + UDP on a 100 Mb/s, 20-packet bottleneck; per-flow throughput, starvation and unfairness, FIFO vs HCF",
        run: hcf_starvation::run,
    },
    Reproduction {
        name: "hcf-incast",
        description: "HCF V-A / Fig. 2(a): TCP incast block goodput vs number of servers (1 MB block, 1 Gb/s, 32-packet buffer), FIFO vs HCF",
        run: hcf_incast::run,
    },
    Reproduction {
        name: "hcf-bins",
        description: "HCF V-C / Figs. 7-8: unfairness and starvation of the V-B setup vs credit bins K and initial credits c0 (20 s warm-up), with the FIFO reference",
        run: hcf_bins::run,
    },
    Reproduction {
        name: "ecm-fig1",
        description: "ECM section 2 / Fig. 1: two 10G end nodes into one 10G link; queue around Qeq, rates to the fair share (convergence, Jain, utilisation)",
        run: ecm_fig1::run,
    },
    Reproduction {
        name: "ecm-severe",
        description: "ECM 3.3.2 / Fig. 8: a fan-in past Qsc; ECM(0,0) timeouts, random restarts at Rmin and the Tmax/Rmin back-off",
        run: ecm_severe::run,
    },
    Reproduction {
        name: "ecm-two-cps",
        description: "ECM 3.3: a connection re-routed from a congested port A to a congested port B; the limiter's CPID moves from CP A to CP B",
        run: ecm_two_cps::run,
    },
    Reproduction {
        name: "l2bm-hybrid",
        description: "L2BM IV-A / Table II / Fig. 7: lossless web-search flows at load 0.4 + TCP at load 0.1-0.8 on one switch; PFC PAUSE frames, p99 occupancy and p99 FCT slowdown, DT 1/8 vs DT 1/2 vs L2BM",
        run: l2bm_hybrid::run,
    },
];

/// The measures of the reproductions that are sweeps.
pub static MEASURES: &[Measure] = &[dsh_fig11::MEASURE];

/// A built-in sweep spec by name: the runs of a reproduction that is a sweep, as its name
/// and spec text.
pub fn builtin_spec(name: &str) -> Option<(&'static str, String)> {
    match name {
        "dsh-fig11" => Some(("dsh-fig11", dsh_fig11::spec_text(dsh_fig11::BURST_PCTS))),
        _ => None,
    }
}

/// Run `spec` on every core into `dir` (runs with a row there are skipped), and return its
/// rows in plan order; a failed run voids the reproduction.
pub fn sweep_rows(
    spec: &Spec,
    dir: &Path,
    progress: &mut dyn Progress,
) -> Result<Vec<Row>, ReproError> {
    progress.set_len(spec.len() as u64);
    let progress = Mutex::new(progress);
    sweep::run(spec, dir, Shard::ALL, 0, &|row| {
        let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
        p.message(&format!("run {} done", row.index));
        p.inc(1);
    })?;
    let manifest = sweep::Manifest::read(dir)?;
    let mut found = sweep::read_rows(dir)?;
    manifest
        .runs
        .iter()
        .map(|r| {
            let row = found.rows.remove(&r.id).ok_or_else(|| {
                ReproError::Invariant(format!("run {} ({}) has no row", r.index, r.id))
            })?;
            if row.status != Status::Ok {
                return Err(ReproError::Invariant(format!(
                    "run {} ({}): {}",
                    r.index, r.id, row.error
                )));
            }
            Ok(row)
        })
        .collect()
}

/// An integer field of a row (or a run's values).
pub fn int_field(values: &Values, key: &str) -> Result<u64, ReproError> {
    values
        .get(key)
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| ReproError::Invariant(format!("{key}: missing or not an integer")))
}

pub fn find(name: &str) -> Option<&'static Reproduction> {
    REPRODUCTIONS.iter().find(|r| r.name == name)
}

/// Run `f` over `jobs` on all cores (at most one thread per job), results in job order;
/// `label` names a finished job in the progress line.
pub fn run_parallel<J: Sync, R: Send>(
    jobs: &[J],
    label: impl Fn(&J) -> String,
    f: impl Fn(&J) -> Result<R, ReproError> + Sync,
    progress: &mut dyn Progress,
) -> Result<Vec<R>, ReproError> {
    progress.set_len(jobs.len() as u64);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut results: Vec<Option<Result<R, ReproError>>> = jobs.iter().map(|_| None).collect();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                if tx.send((i, f(job))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, r) in rx {
            progress.message(&format!("{} done", label(&jobs[i])));
            progress.inc(1);
            results[i] = Some(r);
        }
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ReproError::Invariant("a run did not report".into()))))
        .collect()
}
