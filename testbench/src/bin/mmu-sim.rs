//! `mmu-sim`: run, list and validate MMU scenarios, and reproduce the DSH paper's figures.
//!
//! Exit codes: 0 success; 1 a violated invariant (reordering, conservation, a lossless
//! drop where the scenario expects none, a model invariant); 2 invalid input (bad or
//! unknown scenario, bad option, unwritable output path) or an output write failure.

use clap::{Parser, Subcommand};
use hw_model::Policy;
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::File;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use testbench::reproduce::{self, Progress, ReproError};
use testbench::scenario::{eta_report, Overrides, Plan, Scenario, ScenarioError};
use testbench::{builtin, waves, RunError, Sim};
use wave::{SignalFilter, Window};

#[derive(Parser)]
#[command(
    name = "mmu-sim",
    version,
    about = "Cycle-level simulator of a shared-memory switch MMU"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario: a built-in name (see `list`) or a TOML file.
    Run(RunArgs),
    /// List the built-in scenarios.
    List,
    /// Check a scenario file (or built-in name) without running it.
    Validate { file: String },
    /// Print a built-in scenario as TOML, to start a scenario file from.
    Show { name: String },
    /// Reproduce a figure or table of the DSH, HCF, ECM or L2BM paper into a directory (see --list).
    #[command(after_help = reproductions_help())]
    Reproduce(ReproduceArgs),
}

#[derive(clap::Args)]
struct ReproduceArgs {
    /// Reproduction to run.
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// Directory for the CSV and PNG files (created if missing).
    #[arg(long, required_unless_present = "list")]
    out: Option<PathBuf>,
    /// List the reproductions.
    #[arg(long, conflicts_with_all = ["name", "out"])]
    list: bool,
}

/// The reproductions as a help section, so `reproduce --help` names them.
fn reproductions_help() -> String {
    let mut s = String::from("Reproductions:\n");
    for r in reproduce::REPRODUCTIONS {
        s.push_str(&format!("  {:<12} {}\n", r.name, r.description));
    }
    s
}

#[derive(clap::Args)]
struct RunArgs {
    /// Built-in scenario name or TOML path.
    #[arg(default_value = builtin::DEFAULT)]
    scenario: String,
    /// Lossless buffer policy (overrides switch.policy).
    #[arg(long)]
    policy: Option<String>,
    /// Cycles to simulate (overrides run.cycles).
    #[arg(long)]
    cycles: Option<u64>,
    /// Random seed (overrides run.seed).
    #[arg(long)]
    seed: Option<u64>,
    /// Run every egress queue as FIFO, ignoring the scenario's [[switch.hcf]] entries
    /// (compare FIFO and HCF on the same stimulus).
    #[arg(long)]
    fifo: bool,
    /// Write a VCD waveform here, and a GTKWave save file beside it (.gtkw).
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Comma-separated globs of signal paths to dump, e.g. "top.mmu.ingress.p0*.*".
    #[arg(long, requires = "vcd")]
    vcd_signals: Option<String>,
    /// Cycle window to dump, FROM:TO (either side may be empty).
    #[arg(long, requires = "vcd")]
    vcd_window: Option<String>,
    /// Write the summary as JSON here.
    #[arg(long)]
    summary_json: Option<PathBuf>,
    /// Write one CSV line per cell event here.
    #[arg(long)]
    trace_cells: Option<PathBuf>,
    /// Write one CSV line per ECM frame the congestion points send here.
    #[arg(long)]
    trace_ecm: Option<PathBuf>,
    /// Write one CSV line per ECM rate-limiter event of the reaction points here.
    #[arg(long)]
    trace_rp: Option<PathBuf>,
}

/// How a command failed, mapped to the exit code.
enum Failure {
    Input(String),
    Violation(String),
}

impl From<ScenarioError> for Failure {
    fn from(e: ScenarioError) -> Self {
        Failure::Input(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Run(args) => run(args),
        Cmd::List => {
            for b in builtin::BUILTINS {
                let mark = if b.name == builtin::DEFAULT {
                    " (default)"
                } else {
                    ""
                };
                println!("{:<16} {}{mark}", b.name, b.description);
            }
            Ok(())
        }
        Cmd::Validate { file } => validate(&file),
        Cmd::Reproduce(args) => reproduce_cmd(args),
        Cmd::Show { name } => match builtin::find(&name) {
            Some(b) => {
                print!("{}", b.toml());
                Ok(())
            }
            None => Err(Failure::Input(format!(
                "unknown scenario {name:?}; built-in: {}",
                builtin::names().join(", ")
            ))),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Violation(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

/// A built-in name, else a TOML file.
fn load(arg: &str) -> Result<Scenario, Failure> {
    if let Some(b) = builtin::find(arg) {
        return Ok(Scenario::parse(&b.toml(), b.name)?);
    }
    let path = Path::new(arg);
    if !path.exists() {
        return Err(Failure::Input(format!(
            "unknown scenario {arg:?}: not a built-in ({}) and no such file",
            builtin::names().join(", ")
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Failure::Input(format!("{arg}: {e}")))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or(arg);
    Scenario::parse(&text, stem).map_err(|e| Failure::Input(format!("{arg}: {e}")))
}

fn validate(arg: &str) -> Result<(), Failure> {
    let s = load(arg)?;
    let plan = s
        .plan(&Overrides::default())
        .map_err(|e| Failure::Input(format!("{arg}: {e}")))?;
    println!(
        "ok: {} ({} ports, {} flows, {} links overridden, {} scripted PFC frames, {} cycles)",
        plan.name,
        plan.derived.ports,
        plan.flows.len(),
        s.links.len(),
        plan.pfc_script.len(),
        plan.cycles
    );
    for line in eta_report(&plan.derived) {
        println!("{line}");
    }
    warn(&plan);
    Ok(())
}

/// Print the plan's headroom warnings on stderr.
fn warn(plan: &Plan) {
    for w in &plan.headroom_warnings {
        eprintln!("warning: {w}");
    }
}

/// Create an output file now, so an unwritable path fails before the simulation.
fn create(path: &Path, what: &str) -> Result<File, Failure> {
    File::create(path).map_err(|e| Failure::Input(format!("{what} {}: {e}", path.display())))
}

fn run(a: RunArgs) -> Result<(), Failure> {
    let scenario = load(&a.scenario)?;
    let policy = a
        .policy
        .as_deref()
        .map(Policy::parse)
        .transpose()
        .map_err(|e| Failure::Input(format!("--{e}")))?;
    let ov = Overrides {
        policy,
        cycles: a.cycles,
        seed: a.seed,
        fifo: a.fifo,
    };
    let mut sim = Sim::new(&scenario, ov)?;
    warn(sim.plan());
    let filter = match &a.vcd_signals {
        Some(g) => {
            SignalFilter::parse(g).map_err(|e| Failure::Input(format!("--vcd-signals: {e}")))?
        }
        None => SignalFilter::all(),
    };
    let window = match &a.vcd_window {
        Some(w) => Window::parse(w).map_err(|e| Failure::Input(format!("--vcd-window: {e}")))?,
        None => Window::all(),
    };
    let summary_file = a
        .summary_json
        .as_deref()
        .map(|p| create(p, "--summary-json"))
        .transpose()?;
    if let Some(p) = &a.trace_cells {
        let f = create(p, "--trace-cells")?;
        sim.attach_trace(f)
            .map_err(|e| Failure::Input(format!("--trace-cells {}: {e}", p.display())))?;
    }
    if let Some(p) = &a.trace_ecm {
        let f = create(p, "--trace-ecm")?;
        sim.attach_ecm_trace(f)
            .map_err(|e| Failure::Input(format!("--trace-ecm {}: {e}", p.display())))?;
    }
    if let Some(p) = &a.trace_rp {
        let f = create(p, "--trace-rp")?;
        sim.attach_rp_trace(f)
            .map_err(|e| Failure::Input(format!("--trace-rp {}: {e}", p.display())))?;
    }
    if let Some(p) = &a.vcd {
        let f = create(p, "--vcd")?;
        create(&waves::gtkw_path(p), "GTKWave save file")?;
        sim.attach_vcd(f, p, &filter, window)
            .map_err(|e| Failure::Input(format!("--vcd {}: {e}", p.display())))?;
    }

    let bar = if std::io::stderr().is_terminal() {
        let style = ProgressStyle::with_template("{bar:40} {pos}/{len} cycles {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(sim.plan().cycles).with_style(style)
    } else {
        ProgressBar::hidden()
    };
    let result = sim.run(|c| bar.set_position(c));
    bar.finish_and_clear();
    let summary = result.map_err(|e| match e {
        RunError::Model(_) => Failure::Violation(e.to_string()),
        RunError::Trace(_) | RunError::Output(..) | RunError::Wave(_) => {
            Failure::Input(e.to_string())
        }
    })?;
    print!("{summary}");
    if let (Some(f), Some(p)) = (summary_file, &a.summary_json) {
        serde_json::to_writer_pretty(f, &summary)
            .map_err(|e| Failure::Input(format!("--summary-json {}: {e}", p.display())))?;
    }
    if summary.ok() {
        Ok(())
    } else {
        Err(Failure::Violation(format!(
            "{} invariant(s) violated",
            summary.violations.len()
        )))
    }
}

/// The CLI's progress bar behind the reproductions' [`Progress`] trait.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn set_len(&mut self, len: u64) {
        self.0.set_length(len);
    }
    fn inc(&mut self, n: u64) {
        self.0.inc(n);
    }
    fn message(&mut self, msg: &str) {
        self.0.set_message(msg.to_string());
    }
}

fn reproduce_cmd(a: ReproduceArgs) -> Result<(), Failure> {
    if a.list {
        print!("{}", reproductions_help());
        return Ok(());
    }
    let (Some(name), Some(out)) = (a.name, a.out) else {
        unreachable!("clap requires NAME and --out without --list")
    };
    let Some(repro) = reproduce::find(&name) else {
        let names: Vec<_> = reproduce::REPRODUCTIONS.iter().map(|r| r.name).collect();
        return Err(Failure::Input(format!(
            "unknown reproduction {name:?}; allowed: {}",
            names.join(", ")
        )));
    };
    std::fs::create_dir_all(&out)
        .map_err(|e| Failure::Input(format!("--out {}: {e}", out.display())))?;
    let bar = if std::io::stderr().is_terminal() {
        let style = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        ProgressBar::new(0).with_style(style)
    } else {
        ProgressBar::hidden()
    };
    let mut progress = Bar(bar);
    let result = (repro.run)(&out, &mut progress);
    progress.0.finish_and_clear();
    match result {
        Ok(report) => {
            print!("{report}");
            Ok(())
        }
        Err(e @ ReproError::Invariant(_)) => Err(Failure::Violation(e.to_string())),
        Err(e @ ReproError::Run(RunError::Model(_))) => Err(Failure::Violation(e.to_string())),
        Err(e) => Err(Failure::Input(e.to_string())),
    }
}
