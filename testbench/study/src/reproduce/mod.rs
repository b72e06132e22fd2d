//! Paper reproductions: `mmu-sim reproduce NAME --out DIR`.
//!
//! Each reproduction drives the model through the same [`Sim`](switch_run::Sim) as `mmu-sim run`,
//! writes its CSV (and plot) into the output directory, and returns a human-readable
//! report for stdout. All are deterministic for their built-in seeds.
//!
//! A reproduction that is a sweep runs on the sweep engine ([`crate::sweep`]): its runs are
//! a built-in sweep spec ([`builtin_spec`]) over a [`Measure`], run into `OUT/sweep/`, and
//! the reproduction's tables and plots are made from the rows. `mmu-sim sweep plan NAME
//! --out OUT/sweep --emit slurm` runs the same runs on a cluster; `mmu-sim reproduce NAME
//! --out OUT` then finds every row done and writes the same files.

pub mod collateral;
pub mod dsh_collateral_fabric;
pub mod dsh_deadlock;
pub mod dsh_fct;
pub mod dsh_fig11;
pub mod dsh_theorem;
pub mod dsh_workloads;
pub mod ecm;
pub mod ecm_fig1;
pub mod ecm_severe;
pub mod ecm_two_cps;
pub mod fabric_net;
pub mod hcf;
pub mod hcf_bins;
pub mod hcf_incast;
pub mod hcf_starvation;
pub mod headroom;
pub mod l2bm_clos;
pub mod l2bm_hybrid;
pub mod plot;

use crate::sweep::{self, Measure, Row, Shard, Spec, Status, SweepError, Tick, Values};
use scenario::ScenarioError;
use std::path::{Path, PathBuf};
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
    Scenario(#[from] scenario::ScenarioError),
    #[error("simulation: {0}")]
    Run(#[from] switch_run::RunError),
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

/// Write `rows` as the CSV file `path` ([`switch_run::csv_file`]: the header is the row's
/// field names).
pub fn write_csv<R: serde::Serialize + Default>(
    path: &Path,
    rows: impl IntoIterator<Item = R>,
) -> Result<(), ReproError> {
    switch_run::csv_file::write(path, rows).map_err(|e| ReproError::io(path, e))
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
pub fn paper_headroom_line(plan: &scenario::Plan) -> String {
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
    /// CPU seconds of a whole run (user + system, every worker), measured once with the
    /// release build on a 2-core machine (docs/results.md, "What each costs"): what a run
    /// costs, for `reproduce --list`; not a target.
    pub cpu_seconds: f64,
}

pub static REPRODUCTIONS: &[Reproduction] = &[
    Reproduction {
        name: "headroom",
        description: "DSH Eq. 1, 3 and 4 for the paper's Trident2 and Tomahawk examples (table)",
        run: headroom::run,
        cpu_seconds: 0.0,
    },
    Reproduction {
        name: "dsh-theorem",
        description: "DSH Theorems 1-2: time to the first PAUSE of bursting queues, predicted vs measured, SIH and DSH",
        run: dsh_theorem::run,
        cpu_seconds: 0.7,
    },
    Reproduction {
        name: "dsh-fig11",
        description: "DSH Fig. 11 on tomahawk: pause duration and PAUSE frames of a 16-to-1 fan-in vs burst size, SIH vs DSH",
        run: dsh_fig11::run,
        cpu_seconds: 1.6,
    },
    Reproduction {
        name: "collateral",
        description: "DSH Fig. 13a as far as one switch shows it: an innocent flow's throughput next to fan-in congestion, SIH vs DSH",
        run: collateral::run,
        cpu_seconds: 0.07,
    },
    Reproduction {
        name: "hcf-starvation",
        description: "HCF V-B: 400 long-lived TCP flows + UDP on a 100 Mb/s, 20-packet bottleneck; per-flow throughput, starvation and unfairness, FIFO vs HCF",
        run: hcf_starvation::run,
        cpu_seconds: 21.0,
    },
    Reproduction {
        name: "hcf-starvation-ns2",
        description: "HCF V-B under ns-2's TCP: hcf-starvation with flows starting together, 10 ms or 1 s apart, over seeds (mean and min-max), FIFO vs HCF",
        run: hcf_starvation::run_ns2,
        cpu_seconds: 188.0,
    },
    Reproduction {
        name: "hcf-incast",
        description: "HCF V-A / Fig. 2(a): TCP incast block goodput vs number of servers (1 MB block, 1 Gb/s, 32-packet buffer), FIFO vs HCF",
        run: hcf_incast::run,
        cpu_seconds: 17.0,
    },
    Reproduction {
        name: "hcf-incast-ns2",
        description: "HCF Fig. 2(a) under ns-2's TCP: hcf-incast's flows started together and its jittered trials (mean and min-max), FIFO vs HCF",
        run: hcf_incast::run_ns2,
        cpu_seconds: 24.0,
    },
    Reproduction {
        name: "hcf-bins",
        description: "HCF V-C / Figs. 7-8: unfairness and starvation of the V-B setup vs credit bins K and initial credits c0 (20 s warm-up), with the FIFO reference",
        run: hcf_bins::run,
        cpu_seconds: 20.0,
    },
    Reproduction {
        name: "ecm-fig1",
        description: "ECM section 2 / Fig. 1: two 10G end nodes into one 10G link; queue around Qeq, rates to the fair share (convergence, Jain, utilisation)",
        run: ecm_fig1::run,
        cpu_seconds: 0.66,
    },
    Reproduction {
        name: "ecm-severe",
        description: "ECM 3.3.2 / Fig. 8: a fan-in past Qsc; ECM(0,0) timeouts, random restarts at Rmin and the Tmax/Rmin back-off",
        run: ecm_severe::run,
        cpu_seconds: 0.24,
    },
    Reproduction {
        name: "ecm-two-cps",
        description: "ECM 3.3: a connection re-routed from a congested port A to a congested port B; the limiter's CPID moves from CP A to CP B",
        run: ecm_two_cps::run,
        cpu_seconds: 0.38,
    },
    Reproduction {
        name: "l2bm-hybrid",
        description: "L2BM IV-A / Table II / Fig. 7: lossless web-search flows at load 0.4 + TCP at load 0.1-0.8 on one switch, open loop + Reno and DCQCN + DCTCP, seeds 1-3; PFC PAUSE frames, p99 occupancy and p99 FCT slowdown (mean, min-max), DT 1/8 vs DT 1/2 vs L2BM",
        run: l2bm_hybrid::run,
        cpu_seconds: 415.0,
    },
    Reproduction {
        name: "dsh-deadlock",
        description: "DSH Fig. 12b on the fabric: leaf-spine with two failed links, four fan-ins of 1, 8 and 15 senders, DCQCN and PowerTCP, 3 runs of 5 ms per point; the CDF of deadlock onset, SIH vs DSH",
        run: dsh_deadlock::run,
        cpu_seconds: 69.1,
    },
    Reproduction {
        name: "dsh-collateral-fabric",
        description: "DSH Fig. 13 on the fabric: innocent flow F0's throughput through S0 and S1 next to a 24 x 64 KB fan-in, DCQCN and PowerTCP, 2 seeds, SIH vs DSH",
        run: dsh_collateral_fabric::run,
        cpu_seconds: 1.6,
    },
    Reproduction {
        name: "l2bm-clos",
        description: "L2BM Table II / Fig. 7 on the fabric: the 10-switch Clos, RDMA (DCQCN) load 0.4 + TCP (DCTCP) load 0.1-0.8, 2 seeds of 5 ms; PAUSE frames, p99 FCT slowdown, ToR occupancy (mean, sd), DT 1/8 vs DT 1/2 vs L2BM",
        run: l2bm_clos::run,
        cpu_seconds: 341.0,
    },
    Reproduction {
        name: "dsh-fct",
        description: "DSH Fig. 14: the 16 x 16 leaf-spine (256 hosts, 100G), web search background at load 0.3-0.7 + 16 x 64 KB fan-in bursts, total 0.9, DCQCN and PowerTCP, 2 seeds of 700 us; average FCT of background and fan-in flows, DSH / SIH",
        run: dsh_fct::run,
        cpu_seconds: 357.2,
    },
    Reproduction {
        name: "dsh-workloads",
        description: "DSH Fig. 15: background FCT under web search, data mining, cache and Hadoop sizes on the 16 x 16 leaf-spine and the k = 16 fat-tree, DCQCN, total load 0.9, 2 seeds; DSH / SIH",
        run: dsh_workloads::run,
        cpu_seconds: 411.9,
    },
];

/// The measures of the reproductions that are sweeps.
pub static MEASURES: &[Measure] = &[
    dsh_fig11::MEASURE,
    dsh_theorem::MEASURE,
    hcf_starvation::MEASURE,
    hcf_incast::MEASURE,
    l2bm_hybrid::MEASURE,
    dsh_deadlock::MEASURE,
    dsh_collateral_fabric::MEASURE,
    l2bm_clos::MEASURE,
    dsh_fct::MEASURE,
    dsh_workloads::MEASURE,
];

/// Specs that may name the reproductions' [`MEASURES`] and, by name, their built-in specs
/// ([`builtin_spec`]). The sweep engine takes the measures as an argument
/// ([`Spec::parse_with`]), so that it depends on no reproduction; these are the
/// constructors everything else calls.
impl Spec {
    /// A built-in spec ([`builtin_spec`]) by name, else a spec file.
    pub fn load(arg: &str) -> Result<Self, ScenarioError> {
        if let Some((name, text)) = builtin_spec(arg) {
            return Self::parse(&text, name, Path::new("."));
        }
        Self::read(Path::new(arg))
    }

    /// Read a spec file; a relative `base` path is taken from the spec's directory.
    pub fn read(path: &Path) -> Result<Self, ScenarioError> {
        Self::read_with(path, MEASURES)
    }

    /// Parse spec text; `default_name` names it without a `name` key, `dir` is where a
    /// relative base file is.
    pub fn parse(text: &str, default_name: &str, dir: &Path) -> Result<Self, ScenarioError> {
        Self::parse_with(text, default_name, dir, MEASURES)
    }
}

/// A built-in sweep spec by name: the runs of a reproduction that is a sweep, as its name
/// and spec text.
pub fn builtin_spec(name: &str) -> Option<(&'static str, String)> {
    match name {
        "dsh-collateral-fabric" => Some((
            "dsh-collateral-fabric",
            dsh_collateral_fabric::spec_text(dsh_collateral_fabric::SEEDS),
        )),
        "dsh-deadlock" => Some((
            "dsh-deadlock",
            dsh_deadlock::spec_text(&dsh_deadlock::Grid::default_grid()),
        )),
        "dsh-fct" => Some((
            "dsh-fct",
            dsh_fct::spec_text(&dsh_fct::Grid::default_grid()),
        )),
        "dsh-workloads" => Some((
            "dsh-workloads",
            dsh_workloads::spec_text(&dsh_workloads::Grid::default_grid()),
        )),
        "dsh-fig11" => Some(("dsh-fig11", dsh_fig11::spec_text(dsh_fig11::BURST_PCTS))),
        "dsh-theorem" => Some(("dsh-theorem", dsh_theorem::spec_text(&dsh_theorem::grid()))),
        "hcf-bins" => Some((
            "hcf-bins",
            hcf_bins::spec_text(&hcf_bins::sweep_setup(), hcf_bins::BINS, hcf_bins::C0S),
        )),
        "hcf-incast" => Some((
            "hcf-incast",
            hcf_incast::spec_text("hcf-incast", &hcf_incast::Setup::paper()),
        )),
        "hcf-incast-ns2" => Some((
            "hcf-incast-ns2",
            hcf_incast::spec_text("hcf-incast-ns2", &hcf_incast::Setup::ns2()),
        )),
        "l2bm-clos" => Some((
            "l2bm-clos",
            l2bm_clos::spec_text(&l2bm_clos::Grid::default_grid()),
        )),
        "l2bm-hybrid" => Some((
            "l2bm-hybrid",
            l2bm_hybrid::spec_text(&l2bm_hybrid::Setup::scaled()),
        )),
        "hcf-starvation" => Some((
            "hcf-starvation",
            hcf_starvation::spec_text(
                "hcf-starvation",
                &[hcf_starvation::Setup::paper()],
                &hcf_starvation::DISCIPLINES,
            ),
        )),
        "hcf-starvation-ns2" => Some((
            "hcf-starvation-ns2",
            hcf_starvation::spec_text(
                "hcf-starvation-ns2",
                &hcf_starvation::ns2_setups(
                    &hcf_starvation::NS2_SPREADS_S,
                    &hcf_starvation::NS2_SEEDS,
                ),
                &hcf_starvation::DISCIPLINES,
            ),
        )),
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
    sweep::run(spec, dir, Shard::ALL, 0, &|tick| {
        let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
        match tick {
            Tick::Skipped(n) => {
                p.message(&format!("{n} runs already done"));
                p.inc(n as u64);
            }
            Tick::Done(row) => {
                p.message(&format!("run {} done", row.index));
                p.inc(1);
            }
        }
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

/// A measured value as a run's fields: the `fields` keys of its JSON object (the others
/// are the run's parameters). Floats come back bit for bit from a row ([`from_fields`]):
/// serde_json writes the shortest decimal that reads back the same `f64`, and its
/// `float_roundtrip` feature (on in this crate) reads it back exactly.
pub fn to_fields<T: serde::Serialize>(value: &T, fields: &[&str]) -> Result<Values, String> {
    let json = serde_json::to_value(value).map_err(|e| e.to_string())?;
    fields
        .iter()
        .map(|&f| {
            let v = json
                .get(f)
                .ok_or_else(|| format!("{f}: not a measured field"))?;
            Ok((f.to_string(), v.clone()))
        })
        .collect()
}

/// The inverse of [`to_fields`]: the value from a row's fields and the parameters the
/// fields leave out, as `(key, JSON)`.
pub fn from_fields<T: serde::de::DeserializeOwned>(
    fields: &Values,
    params: impl IntoIterator<Item = (&'static str, serde_json::Value)>,
) -> Result<T, ReproError> {
    let mut object: serde_json::Map<String, serde_json::Value> =
        fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    object.extend(params.into_iter().map(|(k, v)| (k.to_string(), v)));
    serde_json::from_value(serde_json::Value::Object(object))
        .map_err(|e| ReproError::Invariant(format!("a row's fields: {e}")))
}

/// A parameter as the JSON [`from_fields`] takes.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ReproError> {
    serde_json::to_value(value).map_err(|e| ReproError::Invariant(e.to_string()))
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
