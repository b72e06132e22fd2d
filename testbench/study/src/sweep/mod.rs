//! Parameter sweeps: `mmu-sim sweep plan | run | merge` (docs/sweep.md).
//!
//! A [`Spec`] expands into runs (a Cartesian product of parameter axes and seeds), each
//! with an id that hashes its resolved scenario and the tool version. `run` executes the
//! runs of a shard (`--shard I/N`: the runs whose index is `I` modulo `N`) on the cores of
//! one machine and appends one JSON Lines row per run to `DIR/rows/`; runs whose row is
//! already there are skipped, so an interrupted sweep resumes. `merge` gathers the rows
//! in plan order into one CSV table, the same bytes however the runs were spread.
//!
//! Directory layout: `DIR/manifest.json` (the runs and their parameters), `DIR/rows/*.jsonl`
//! (one file per shard, or `local.jsonl`), and with `--emit slurm` `DIR/sweep.sbatch`.

pub mod spec;
pub mod stats;

pub use spec::{Job, Measure, Run, Source, Spec, Values};

use scenario::ScenarioError;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use switch_run::{RunError, Sim};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum SweepError {
    /// A bad spec, option or directory (exit 2).
    #[error("{0}")]
    Input(#[from] ScenarioError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> SweepError + '_ {
    move |source| SweepError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn input(field: &str, message: impl Into<String>) -> SweepError {
    SweepError::Input(ScenarioError::new(field, message))
}

/// `--shard I/N`: the runs whose index is `I` modulo `N` (`I` in `0..=N-1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Every run.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    pub fn parse(text: &str) -> Result<Self, ScenarioError> {
        let bad = |m: &str| ScenarioError::new(format!("--shard {text}"), m);
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| bad("expected I/N; allowed: I in 0..=N-1, e.g. 3/10"))?;
        let (Ok(index), Ok(count)) = (i.trim().parse::<usize>(), n.trim().parse::<usize>()) else {
            return Err(bad("I and N must be integers; allowed: I in 0..=N-1"));
        };
        if count == 0 || index >= count {
            return Err(bad(&format!(
                "allowed: I in 0..=N-1, here 0..={}",
                count.max(1) - 1
            )));
        }
        Ok(Self { index, count })
    }

    pub fn contains(&self, run: usize) -> bool {
        run % self.count == self.index
    }

    /// How many of `runs` runs (indices `0..runs`) are this shard's.
    pub fn runs_of(&self, runs: usize) -> usize {
        (runs + self.count - 1 - self.index) / self.count
    }

    /// The rows file of this shard within `DIR/rows/`.
    fn file_name(&self) -> String {
        if *self == Self::ALL {
            "local.jsonl".into()
        } else {
            format!("shard-{}-of-{}.jsonl", self.index, self.count)
        }
    }
}

/// `DIR/manifest.json`: what the sweep is, so shards and merge agree on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub sweep: String,
    pub tool_version: String,
    pub base: String,
    /// Parameter keys, in axis order.
    pub keys: Vec<String>,
    pub collect: Vec<String>,
    pub runs: Vec<ManifestRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRun {
    pub index: usize,
    pub id: String,
    /// One value per key of [`Manifest::keys`].
    pub values: Vec<Json>,
}

impl Manifest {
    pub fn new(spec: &Spec, runs: &[Run]) -> Self {
        Self {
            sweep: spec.name.clone(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            base: spec.source_name().to_string(),
            keys: spec.keys(),
            collect: spec.collect.clone(),
            runs: runs
                .iter()
                .map(|r| ManifestRun {
                    index: r.index,
                    id: r.id.clone(),
                    values: r.params.iter().map(|(_, v)| v.clone()).collect(),
                })
                .collect(),
        }
    }

    pub fn read(dir: &Path) -> Result<Self, SweepError> {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        serde_json::from_str(&text).map_err(|e| {
            input(
                &path.display().to_string(),
                format!("not a sweep manifest: {e}"),
            )
        })
    }

    /// Write `DIR/manifest.json`, or check that the one there is the same sweep (shards
    /// started at once all write the same bytes, each through a rename).
    pub fn store(&self, dir: &Path) -> Result<(), SweepError> {
        std::fs::create_dir_all(dir.join("rows")).map_err(io_err(dir))?;
        let path = dir.join("manifest.json");
        let text = serde_json::to_string_pretty(self).expect("a manifest serializes") + "\n";
        match std::fs::read_to_string(&path) {
            Ok(old) if old == text => Ok(()),
            Ok(_) => Err(input(
                "--out",
                format!(
                    "{} holds another sweep (its manifest differs: another spec or mmu-sim version); allowed: a new directory, or the same spec",
                    dir.display()
                ),
            )),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let tmp = dir.join(format!("manifest.json.{}", std::process::id()));
                std::fs::write(&tmp, &text).map_err(io_err(&tmp))?;
                std::fs::rename(&tmp, &path).map_err(io_err(&path))
            }
            Err(e) => Err(io_err(&path)(e)),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran to the end with every invariant held.
    Ok,
    /// Ran, but broke an invariant (the summary's violations, e.g. a lossless drop).
    Violation,
    /// Stopped by a model error.
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Violation => "violation",
            Status::Error => "error",
        }
    }
}

/// Machine-dependent facts of a run: in the row, never in the merged table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowMeta {
    pub tool_version: String,
    pub shard: String,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
}

/// One JSON Lines row: a run's parameters, collected fields and metadata. The line ends
/// with `"check"`, SHA-256 (16 hex digits) of the line before it, so a torn or edited row
/// is told from a finished one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub index: usize,
    pub params: BTreeMap<String, Json>,
    pub status: Status,
    /// The violations or the error; empty when `ok`.
    pub error: String,
    /// The collected summary fields (`null` where the summary has nothing).
    pub fields: BTreeMap<String, Json>,
    pub meta: RowMeta,
}

/// The check of a row's JSON text without its check.
fn check_of(body: &str) -> String {
    Sha256::digest(body.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Row {
    /// The row as one line (with its check and a newline).
    pub fn line(&self) -> String {
        let body = serde_json::to_string(self).expect("a row serializes");
        let open = &body[..body.len() - 1];
        format!("{open},\"check\":\"{}\"}}\n", check_of(open))
    }

    /// Parse a line written by [`line`](Self::line); `Err` says why it is not a row.
    pub fn parse(line: &str) -> Result<Self, String> {
        let (open, tail) = line
            .rsplit_once(",\"check\":\"")
            .ok_or("no check (a torn or foreign line)")?;
        let check = tail.strip_suffix("\"}").ok_or("no check (a torn line)")?;
        if check != check_of(open) {
            return Err("the check does not match (a corrupted row)".into());
        }
        serde_json::from_str(&format!("{open}}}")).map_err(|e| format!("not a row: {e}"))
    }
}

/// The rows found in `DIR/rows/`, by id (the first valid row of a run), and the lines
/// that are not valid rows, as `file:line: why`.
pub struct Found {
    pub rows: BTreeMap<String, Row>,
    pub bad: Vec<String>,
}

/// Read every `DIR/rows/*.jsonl`, in file-name order.
pub fn read_rows(dir: &Path) -> Result<Found, SweepError> {
    let rows_dir = dir.join("rows");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&rows_dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err(&rows_dir)(e)),
    };
    files.sort();
    let mut found = Found {
        rows: BTreeMap::new(),
        bad: Vec::new(),
    };
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(io_err(&f))?;
        for (n, line) in text.lines().enumerate() {
            if line.is_empty() {
                continue;
            }
            match Row::parse(line) {
                Ok(row) => {
                    found.rows.entry(row.id.clone()).or_insert(row);
                }
                Err(why) => found.bad.push(format!("{}:{}: {why}", f.display(), n + 1)),
            }
        }
    }
    Ok(found)
}

/// A row is the result of a run of the manifest if its id, index and fields are the
/// run's.
fn row_fits(row: &Row, run: &ManifestRun, collect: &[String]) -> bool {
    row.index == run.index && collect.iter().all(|f| row.fields.contains_key(f))
}

/// Run one run and make its row.
pub fn execute(run: &Run, collect: &[String], shard: Shard) -> Row {
    let t0 = std::time::Instant::now();
    let cpu0 = switch_run::sim::thread_cpu_seconds();
    let nulls = || collect.iter().map(|f| (f.clone(), Json::Null)).collect();
    let scenario = match &run.job {
        Job::Scenario(s) | Job::Network(s, _) => s,
        Job::Measure(m) => {
            let values: Values = run.params.iter().cloned().collect();
            let (status, error, fields) = match (m.run)(&values) {
                Ok(mut got) => (
                    Status::Ok,
                    String::new(),
                    collect
                        .iter()
                        .map(|f| (f.clone(), got.remove(f).unwrap_or(Json::Null)))
                        .collect(),
                ),
                Err(e) => (Status::Error, e, nulls()),
            };
            return row(run, shard, status, error, fields, t0, cpu0);
        }
    };
    let result = match &run.job {
        Job::Network(scenario, dir) => network(scenario, dir),
        _ => Sim::new(scenario, scenario::Overrides::default())
            .map_err(|e| e.to_string())
            .and_then(|mut sim| sim.run(|_| {}).map_err(|e: RunError| e.to_string()))
            .map(|summary| {
                let violations = summary.violations.clone();
                (
                    serde_json::to_value(&summary).expect("a summary serializes"),
                    violations,
                )
            }),
    };
    let (status, error, fields) = match result {
        Ok((json, violations)) => {
            let fields = collect
                .iter()
                .map(|f| {
                    (
                        f.clone(),
                        spec::field(&json, f).cloned().unwrap_or(Json::Null),
                    )
                })
                .collect();
            if violations.is_empty() {
                (Status::Ok, String::new(), fields)
            } else {
                (Status::Violation, violations.join("; "), fields)
            }
        }
        Err(e) => (Status::Error, e, nulls()),
    };
    row(run, shard, status, error, fields, t0, cpu0)
}

/// Run a network scenario (files relative to `dir`) on one thread: its summary as JSON
/// and its violations.
fn network(scenario: &scenario::Scenario, dir: &Path) -> Result<(Json, Vec<String>), String> {
    let mut built =
        fabric::build::build(scenario, dir, Default::default()).map_err(|e| e.to_string())?;
    let summary = built.net.run(&built.options).map_err(|e| e.to_string())?;
    let json = serde_json::to_value(&summary).expect("a summary serializes");
    Ok((json, summary.violations))
}

/// A run's row, its metadata measured from `t0` and `cpu0`.
fn row(
    run: &Run,
    shard: Shard,
    status: Status,
    error: String,
    fields: BTreeMap<String, Json>,
    t0: std::time::Instant,
    cpu0: f64,
) -> Row {
    Row {
        id: run.id.clone(),
        index: run.index,
        params: run.params.iter().cloned().collect(),
        status,
        error,
        fields,
        meta: RowMeta {
            tool_version: env!("CARGO_PKG_VERSION").into(),
            shard: format!("{}/{}", shard.index, shard.count),
            wall_seconds: t0.elapsed().as_secs_f64(),
            cpu_seconds: switch_run::sim::thread_cpu_seconds() - cpu0,
        },
    }
}

/// What [`run`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Runs of the shard.
    pub planned: usize,
    /// Of those, already done (skipped).
    pub skipped: usize,
    /// Run now, and how many of those failed (violation or error).
    pub ran: usize,
    pub failed: Vec<String>,
    /// Lines of `DIR/rows/` that are not valid rows (their runs were run again).
    pub bad_rows: Vec<String>,
}

/// Plan the sweep into `dir` (manifest) and return its runs.
pub fn plan(spec: &Spec, dir: &Path) -> Result<Vec<Run>, SweepError> {
    let runs = spec.runs()?;
    Manifest::new(spec, &runs).store(dir)?;
    Ok(runs)
}

/// What [`run`] tells its caller as it goes (a progress bar counts both).
pub enum Tick<'a> {
    /// This many runs of the shard already had their row and are skipped (once, first).
    Skipped(usize),
    /// A run finished with this row.
    Done(&'a Row),
}

/// Run the shard's runs that have no row yet in `dir`, `jobs` at a time (0: one per core),
/// appending rows to `DIR/rows/<shard>.jsonl`; `tick` hears of the skipped runs, then of
/// each run done.
pub fn run(
    spec: &Spec,
    dir: &Path,
    shard: Shard,
    jobs: usize,
    tick: &(dyn Fn(Tick) + Sync),
) -> Result<RunReport, SweepError> {
    use rayon::prelude::*;
    let runs = plan(spec, dir)?;
    let found = read_rows(dir)?;
    let mine: Vec<&Run> = runs.iter().filter(|r| shard.contains(r.index)).collect();
    let manifest = Manifest::new(spec, &runs);
    let todo: Vec<&Run> = mine
        .iter()
        .copied()
        .filter(|r| {
            !found
                .rows
                .get(&r.id)
                .is_some_and(|row| row_fits(row, &manifest.runs[r.index], &spec.collect))
        })
        .collect();
    tick(Tick::Skipped(mine.len() - todo.len()));
    let path = dir.join("rows").join(shard.file_name());
    let out = Mutex::new(open_rows(&path)?);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| input("--jobs", format!("{e}")))?;
    let failed = pool.install(|| {
        todo.par_iter()
            .map(|r| {
                let row = execute(r, &spec.collect, shard);
                let mut f = out.lock().unwrap_or_else(|p| p.into_inner());
                // One write per row: an interrupted sweep leaves at most one torn line.
                f.write_all(row.line().as_bytes()).map_err(io_err(&path))?;
                drop(f);
                tick(Tick::Done(&row));
                Ok((row.status != Status::Ok).then(|| {
                    format!(
                        "run {} ({}): {} {}",
                        row.index,
                        row.id,
                        row.status.name(),
                        row.error
                    )
                }))
            })
            .collect::<Result<Vec<_>, SweepError>>()
    })?;
    Ok(RunReport {
        planned: mine.len(),
        skipped: mine.len() - todo.len(),
        ran: todo.len(),
        failed: failed.into_iter().flatten().collect(),
        bad_rows: found.bad,
    })
}

/// Open a rows file for appending; a torn last line (no newline) is ended first, so the
/// next row starts on a line of its own.
fn open_rows(path: &Path) -> Result<File, SweepError> {
    let mut f = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(io_err(path))?;
    let len = f.metadata().map_err(io_err(path))?.len();
    if len > 0 {
        let mut last = [0u8];
        f.seek(SeekFrom::Start(len - 1))
            .and_then(|_| f.read_exact(&mut last))
            .map_err(io_err(path))?;
        if last[0] != b'\n' {
            f.write_all(b"\n").map_err(io_err(path))?;
        }
    }
    Ok(f)
}

/// What [`merge`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeReport {
    pub runs: usize,
    /// Runs without a row, as `index (id): params`.
    pub missing: Vec<String>,
    /// Runs whose row is a violation or an error.
    pub failed: Vec<String>,
    pub bad_rows: Vec<String>,
}

/// Gather the rows of `dir` in plan order into CSV: `id`, the parameter keys, the
/// collected fields, `status`, `error`. Runs without a row are left out and reported.
pub fn merge(dir: &Path, out: impl Write) -> Result<MergeReport, SweepError> {
    let manifest = Manifest::read(dir)?;
    let found = read_rows(dir)?;
    let mut w = csv::Writer::from_writer(out);
    let csv_err = |e: csv::Error| input("-o", e.to_string());
    let header = ["id"]
        .into_iter()
        .chain(manifest.keys.iter().map(String::as_str))
        .chain(manifest.collect.iter().map(String::as_str))
        .chain(["status", "error"]);
    w.write_record(header).map_err(csv_err)?;
    let mut report = MergeReport {
        runs: manifest.runs.len(),
        missing: Vec::new(),
        failed: Vec::new(),
        bad_rows: found.bad,
    };
    for run in &manifest.runs {
        let describe = || {
            let p: Vec<String> = manifest
                .keys
                .iter()
                .zip(&run.values)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!("run {} ({}): {}", run.index, run.id, p.join(", "))
        };
        let Some(row) = found
            .rows
            .get(&run.id)
            .filter(|row| row_fits(row, run, &manifest.collect))
        else {
            report.missing.push(describe());
            continue;
        };
        if row.status != Status::Ok {
            report.failed.push(format!(
                "{}: {} {}",
                describe(),
                row.status.name(),
                row.error
            ));
        }
        let record = [run.id.clone()]
            .into_iter()
            .chain(run.values.iter().map(cell))
            .chain(manifest.collect.iter().map(|f| cell(&row.fields[f])))
            .chain([row.status.name().to_string(), row.error.clone()]);
        w.write_record(record).map_err(csv_err)?;
    }
    w.flush().map_err(|e| input("-o", e.to_string()))?;
    Ok(report)
}

/// A JSON value as a CSV cell: a string without quotes, nothing for null, compact JSON
/// for a list or table.
fn cell(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The `sbatch` script of a Slurm job array over `dir`'s sweep: `tasks` array tasks, task
/// `$SLURM_ARRAY_TASK_ID` running shard `ID/tasks`. Paths are absolute, so the script can
/// be submitted from anywhere on a shared file system.
pub fn slurm_script(
    exe: &Path,
    spec: &Path,
    dir: &Path,
    name: &str,
    runs: usize,
    tasks: usize,
) -> String {
    let q = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', r"'\''"));
    format!(
        "#!/bin/bash
# Slurm job array of sweep {name}: {runs} runs in {tasks} array tasks (mmu-sim sweep plan --emit slurm).
# Submit: sbatch {script}; then: mmu-sim sweep merge {dirq} -o results.csv
#SBATCH --job-name=sweep-{name}
#SBATCH --array=0-{last}
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output={out}/slurm-%A_%a.out
set -euo pipefail
exec {exe} sweep run {spec} --out {dirq} --shard \"$SLURM_ARRAY_TASK_ID/{tasks}\" --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"
",
        script = q(&dir.join("sweep.sbatch")),
        dirq = q(dir),
        last = tasks.max(1) - 1,
        out = dir.display(),
        exe = q(exe),
        spec = q(spec),
    )
}
