//! `mmu-sim sweep plan | run | merge` (docs/sweep.md).

use super::{to_stdout, Failure};
use clap::{Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use study::sweep::{self, Shard, Spec, SweepError, Tick};

#[derive(Subcommand)]
pub enum SweepCmd {
    /// Expand a spec into DIR/manifest.json; with --emit slurm, also DIR/sweep.sbatch (a job array).
    Plan {
        /// Sweep spec (TOML), or a built-in spec (a reproduction's name, e.g. dsh-fig11).
        spec: PathBuf,
        /// Output directory (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Also write a batch script for a cluster scheduler.
        #[arg(long)]
        emit: Option<Emit>,
        /// Runs per array task (--emit slurm).
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
        runs_per_task: u64,
    },
    /// Run the sweep (or one shard of it) on this machine, skipping runs already in DIR.
    Run {
        /// Sweep spec (TOML), or a built-in spec (a reproduction's name, e.g. dsh-fig11).
        spec: PathBuf,
        /// Output directory (created if missing); rows go to DIR/rows/.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Runs at a time; 0, the default, is one per core.
        #[arg(long, default_value_t = 0, hide_default_value = true)]
        jobs: usize,
        /// Only the runs whose index is I modulo N (I in 0..=N-1): a Slurm array task, a
        /// Kubernetes indexed job, GNU parallel.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
    },
    /// Gather DIR's rows into one CSV table in plan order; report missing and failed runs.
    Merge {
        dir: PathBuf,
        /// The CSV file to write.
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Emit {
    /// An sbatch script of a Slurm job array.
    Slurm,
}

impl From<SweepError> for Failure {
    fn from(e: SweepError) -> Self {
        Failure::Input(e.to_string())
    }
}

pub fn sweep(cmd: SweepCmd) -> Result<(), Failure> {
    match cmd {
        SweepCmd::Plan {
            spec,
            out,
            emit,
            runs_per_task,
        } => plan(&spec, &out, emit, runs_per_task as usize),
        SweepCmd::Run {
            spec,
            out,
            jobs,
            shard,
        } => run(&spec, &out, jobs, shard.as_deref()),
        SweepCmd::Merge { dir, output } => merge(&dir, &output),
    }
}

fn read_spec(path: &Path) -> Result<Spec, Failure> {
    Spec::load(&path.to_string_lossy())
        .map_err(|e| Failure::Input(format!("{}: {e}", path.display())))
}

fn plan(spec_path: &Path, out: &Path, emit: Option<Emit>, per_task: usize) -> Result<(), Failure> {
    let spec = read_spec(spec_path)?;
    let runs = sweep::plan(&spec, out)?;
    let mut report = format!(
        "sweep {}: {} runs ({} parameters) -> {}\n",
        spec.name,
        runs.len(),
        spec.keys().len(),
        out.join("manifest.json").display()
    );
    if let Some(Emit::Slurm) = emit {
        let abs = |p: &Path| {
            std::path::absolute(p).map_err(|e| Failure::Input(format!("{}: {e}", p.display())))
        };
        let exe = std::env::current_exe()
            .map_err(|e| Failure::Input(format!("the mmu-sim executable: {e}")))?;
        let tasks = runs.len().div_ceil(per_task).max(1);
        // A built-in spec is named, not a path.
        let spec_arg = if spec_path.exists() {
            abs(spec_path)?
        } else {
            spec_path.to_path_buf()
        };
        let script =
            sweep::slurm_script(&exe, &spec_arg, &abs(out)?, &spec.name, runs.len(), tasks);
        let path = out.join("sweep.sbatch");
        std::fs::write(&path, script)
            .map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?;
        report += &format!(
            "{tasks} array tasks of up to {per_task} runs -> {} (submit with: sbatch {})\n",
            path.display(),
            path.display()
        );
    }
    to_stdout(format_args!("{report}"))
}

fn run(spec_path: &Path, out: &Path, jobs: usize, shard: Option<&str>) -> Result<(), Failure> {
    let spec = read_spec(spec_path)?;
    let shard = shard.map(Shard::parse).transpose()?.unwrap_or(Shard::ALL);
    let bar = if std::io::stderr().is_terminal() {
        let style = ProgressStyle::with_template("{bar:40} {pos}/{len} runs {msg} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(shard.runs_of(spec.len()) as u64).with_style(style)
    } else {
        ProgressBar::hidden()
    };
    let report = sweep::run(&spec, out, shard, jobs, &|tick| match tick {
        Tick::Skipped(n) => {
            bar.set_message(format!("{n} already done"));
            bar.inc(n as u64);
        }
        Tick::Done(row) => {
            bar.set_message(format!("run {} {}", row.index, row.status.name()));
            bar.inc(1);
        }
    });
    bar.finish_and_clear();
    let report = report?;
    for b in &report.bad_rows {
        eprintln!("warning: {b}: its run is done again");
    }
    for f in &report.failed {
        eprintln!("failed: {f}");
    }
    to_stdout(format_args!(
        "sweep {} shard {}/{}: {} runs, {} already done, {} run now, {} failed -> {}\n",
        spec.name,
        shard.index,
        shard.count,
        report.planned,
        report.skipped,
        report.ran,
        report.failed.len(),
        out.join("rows").display()
    ))?;
    if report.failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::Violation(format!(
            "{} run(s) broke an invariant or stopped (status column of the merged table)",
            report.failed.len()
        )))
    }
}

fn merge(dir: &Path, output: &Path) -> Result<(), Failure> {
    let out_err = |e: std::io::Error| Failure::Input(format!("-o {}: {e}", output.display()));
    let mut file = std::fs::File::create(output).map_err(out_err)?;
    let report = sweep::merge(dir, &mut file)?;
    file.flush().map_err(out_err)?;
    for b in &report.bad_rows {
        eprintln!("warning: {b}");
    }
    for f in &report.failed {
        eprintln!("failed: {f}");
    }
    for m in &report.missing {
        eprintln!("missing: {m}");
    }
    to_stdout(format_args!(
        "{} runs: {} rows, {} missing, {} failed -> {}\n",
        report.runs,
        report.runs - report.missing.len(),
        report.missing.len(),
        report.failed.len(),
        output.display()
    ))?;
    if report.missing.is_empty() {
        Ok(())
    } else {
        Err(Failure::Violation(format!(
            "{} of {} runs have no row (run `mmu-sim sweep run` again to finish them)",
            report.missing.len(),
            report.runs
        )))
    }
}
