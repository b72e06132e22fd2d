//! `mmu-sim`: run, list and validate MMU scenarios, and reproduce the DSH paper's figures.
//!
//! Exit codes: 0 success; 1 a violated invariant (reordering, conservation, a lossless
//! drop where the scenario expects none, a model invariant); 2 invalid input (bad or
//! unknown scenario, bad option, unwritable output path) or an output write failure (named by
//! its option and path, or stdout).

use clap::{Parser, Subcommand};
use hw_model::Policy;
use indicatif::{ProgressBar, ProgressStyle};
use scenario::{builtin, eta_report, resolve_scenario, Overrides, Plan, Scenario, ScenarioError};
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use study::reproduce::{self, Progress, ReproError};
use switch_run::{sim, waves, RunError, Sim};
use wave::{Format, SignalFilter, Window};

mod fabric_run;
mod sweep;

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
    Run(Box<RunArgs>),
    /// List the built-in scenarios.
    List,
    /// Check a scenario file (or built-in name) without running it.
    Validate {
        file: String,
        #[command(flatten)]
        set: SetArgs,
    },
    /// Print a built-in scenario (or a file) as TOML, to start a scenario file from; with
    /// --set, the resolved scenario.
    Show {
        name: String,
        #[command(flatten)]
        set: SetArgs,
    },
    /// Check a DUT's event stream (docs/cosim.md) against the model configured by the
    /// scenario (its flows are ignored: the stream is the stimulus).
    Check(CheckArgs),
    /// Reproduce a figure or table of the DSH, HCF, ECM or L2BM paper into a directory (see --list).
    #[command(after_help = reproductions_help())]
    Reproduce(ReproduceArgs),
    /// Parameter sweeps: plan, run (locally or one shard of a cluster job), merge (docs/sweep.md).
    #[command(subcommand)]
    Sweep(sweep::SweepCmd),
}

#[derive(clap::Args)]
struct ReproduceArgs {
    /// Reproduction to run.
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// Directory for the CSV and PNG files (created if missing).
    #[arg(long, required_unless_present = "list", value_name = "DIR")]
    out: Option<PathBuf>,
    /// List the reproductions.
    #[arg(long, conflicts_with_all = ["name", "out"])]
    list: bool,
}

/// The reproductions as a help section, so `reproduce --help` names them; every
/// description starts in the column after the longest name.
fn reproductions_help() -> String {
    let width = reproduce::REPRODUCTIONS
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(0);
    let mut s =
        String::from("Reproductions (name, CPU time of a whole run, what it reproduces):\n");
    for r in reproduce::REPRODUCTIONS {
        s.push_str(&format!(
            "  {:<width$}  {:>6}  {}\n",
            r.name,
            cpu_time(r.cpu_seconds),
            r.description
        ));
    }
    s
}

/// A reproduction's CPU time as `--list` shows it: seconds up to two minutes, then minutes.
fn cpu_time(seconds: f64) -> String {
    if seconds < 1.0 {
        "<1 s".to_string()
    } else if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.0} min", seconds / 60.0)
    }
}

#[derive(clap::Args)]
struct CheckArgs {
    /// Built-in scenario name or TOML path: the switch the DUT is.
    scenario: String,
    #[command(flatten)]
    set: SetArgs,
    /// The DUT's event stream (JSON Lines).
    #[arg(long, value_name = "PATH")]
    dut_events: PathBuf,
    /// follow: the model follows the DUT and checks its decisions against the rules;
    /// lockstep: the model steps with the DUT's inputs and every event must match.
    #[arg(long, value_enum, default_value = "follow")]
    mode: CheckMode,
    /// List every divergence as it is found, not only the first, then their counts by
    /// check and by egress queue.
    #[arg(long)]
    keep_going: bool,
    /// How fast an egress port may send: one cell per cycle, or the scenario's port rate.
    #[arg(long, value_enum, default_value = "scenario")]
    line_rate: LineRateArg,
    /// Cycles a sent PAUSE/RESUME may differ from the model's, and a departure may follow
    /// a received PAUSE.
    #[arg(long, default_value_t = 2, value_name = "CYCLES")]
    pfc_tolerance: u64,
    /// reported: the stream has an admit or drop for every start of packet, checked
    /// against the model's; inferred: the stream has arrive and depart only, the model
    /// decides each arrival (an admitted packet that never departs is a loss, a dropped
    /// one that departs an admission divergence).
    #[arg(long, value_enum, default_value = "reported")]
    decisions: DecisionsArg,
    /// Write the verdict as JSON here: every divergence as an object, the counts by check
    /// and by egress queue, the events read.
    #[arg(long, value_name = "PATH")]
    report_json: Option<PathBuf>,
    /// Write the verdict as JUnit XML here: one test case per check, failed with its
    /// divergences.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum DecisionsArg {
    Reported,
    Inferred,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CheckMode {
    Follow,
    Lockstep,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LineRateArg {
    CellPerCycle,
    Scenario,
}

/// `--set KEY=VALUE`, shared by run, validate and show.
#[derive(clap::Args)]
struct SetArgs {
    // The help is an attribute, not a doc comment: rustdoc would read `flows[3]` as a link.
    #[arg(
        long = "set",
        value_name = "KEY=VALUE",
        help = "Set a scenario key before the checks, e.g. switch.alpha_log2=-6, flows[3].prio=2, switch.hcf[0].bins=8 (repeatable; the value is TOML, a bare word a string)"
    )]
    set: Vec<String>,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Built-in scenario name or TOML path.
    #[arg(default_value = builtin::DEFAULT)]
    scenario: String,
    #[command(flatten)]
    set: SetArgs,
    /// Lossless buffer policy (overrides switch.policy).
    #[arg(long, value_parser = PolicyArg)]
    policy: Option<String>,
    /// Cycles to simulate, 1..=2^40 (overrides run.cycles).
    #[arg(long, value_parser = cycles_arg)]
    cycles: Option<u64>,
    /// Random seed, 0..=18446744073709551615 (overrides run.seed).
    #[arg(long, value_parser = seed_arg, allow_negative_numbers = true)]
    seed: Option<u64>,
    /// Run every egress queue as FIFO, ignoring the scenario's [[switch.hcf]] entries
    /// (compare FIFO and HCF on the same stimulus).
    #[arg(long)]
    fifo: bool,
    /// A network scenario's threads, 1..=256: its switches in as many partitions (at most
    /// one a switch), each run by a thread; the results are the same for any number.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: Option<u16>,
    /// A network scenario as one rank of `mpirun -np N` (or `srun -n N`): its switches in N
    /// partitions, one a rank, with the results of --threads N (a build with `--features
    /// mpi`).
    #[arg(long, conflicts_with = "threads")]
    mpi: bool,
    /// The memory a network run may take (per rank with --mpi), bytes with an optional K, M,
    /// G or T (powers of 1024), 1M..=1024T; a run whose estimated peak is above it is refused.
    /// Default: the machine's available memory, or its cgroup limit when lower.
    #[arg(long, value_name = "BYTES", value_parser = fabric_run::mem_limit_arg)]
    mem_limit: Option<u64>,
    /// Cycles each window of a network run goes past its safe horizon: 0; more only for
    /// the companion test of the MPI and threads comparisons (.ci/mpi-check).
    #[arg(long, hide = true, default_value_t = 0)]
    horizon_error: u64,
    /// Write a VCD waveform here (any name but .fst: --wave writes FST), and a GTKWave save file beside it (.gtkw).
    #[arg(long, group = "dump", value_name = "PATH")]
    vcd: Option<PathBuf>,
    /// Write a waveform here in the format its extension names (.vcd or .fst), and a GTKWave save file beside it (.gtkw).
    #[arg(long, group = "dump", value_name = "PATH")]
    wave: Option<PathBuf>,
    /// Comma-separated globs of signal paths to dump, e.g. "top.mmu.ingress.p0*.*"; a glob that matches no signal is an error.
    #[arg(long, alias = "vcd-signals", requires = "dump", value_name = "GLOBS")]
    wave_signals: Option<String>,
    /// Cycle window to dump, FROM:TO (either side may be empty; within the run).
    #[arg(long, alias = "vcd-window", requires = "dump", value_name = "FROM:TO")]
    wave_window: Option<String>,
    /// Write the summary as JSON here.
    #[arg(long, value_name = "PATH")]
    summary_json: Option<PathBuf>,
    /// Write one CSV line per cell event here.
    #[arg(long, value_name = "PATH")]
    trace_cells: Option<PathBuf>,
    /// Write the co-simulation event stream (JSON Lines, docs/cosim.md) here; for a
    /// network, a directory: each switch's stream (swNN.jsonl) and its scenario (swNN.toml).
    #[arg(long, value_name = "PATH")]
    trace_events: Option<PathBuf>,
    /// Write one CSV line per ECM frame the congestion points send here.
    #[arg(long, value_name = "PATH")]
    trace_ecm: Option<PathBuf>,
    /// Write one CSV line per ECM rate-limiter event of the reaction points here.
    #[arg(long, value_name = "PATH")]
    trace_rp: Option<PathBuf>,
    /// Write fct.txt, pfc.txt and qlen.txt in the HPCC ns-3 simulator's formats into this
    /// directory (created if missing).
    #[arg(long, value_name = "DIR")]
    ns3_out: Option<PathBuf>,
}

/// `--cycles`: refused with the range of `run.cycles` (0 passes here and is refused, named,
/// by the plan with the scenario's own checks).
fn cycles_arg(s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("allowed: an integer in 1..={}", scenario::MAX_CYCLES))
}

/// `--policy`: one of `Policy::NAMES`, listed in the help as clap lists possible values;
/// a misspelt one gets the scenario keys' "did you mean", which finds transpositions
/// (`dhs`) that clap's own suggestion misses.
#[derive(Clone)]
struct PolicyArg;

impl clap::builder::TypedValueParser for PolicyArg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let name = value.to_string_lossy();
        if Policy::NAMES.contains(&name.as_ref()) {
            return Ok(name.into_owned());
        }
        let message = format!(
            "--policy: {name:?} is not a policy{}; allowed: {}\n",
            scenario::suggest::did_you_mean(&name, Policy::NAMES.iter().copied()),
            Policy::NAMES.join(", ")
        );
        Err(clap::Error::raw(clap::error::ErrorKind::InvalidValue, message).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue>>> {
        Some(Box::new(
            Policy::NAMES.iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

/// `--seed`: any u64; a negative or other number is refused with the range.
fn seed_arg(s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("allowed: an integer in 0..={}", u64::MAX))
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
        Cmd::Run(args) => run(*args),
        Cmd::List => {
            let mut list = String::new();
            for b in builtin::BUILTINS {
                let mark = if b.name == builtin::DEFAULT {
                    " (default)"
                } else {
                    ""
                };
                list += &format!("{:<16} {}{mark}\n", b.name, b.description);
            }
            to_stdout(format_args!("{list}"))
        }
        Cmd::Validate { file, set } => validate(&file, &set.set),
        Cmd::Reproduce(args) => reproduce_cmd(args),
        Cmd::Check(args) => check(args),
        Cmd::Show { name, set } => show(&name, &set.set),
        Cmd::Sweep(cmd) => sweep::sweep(cmd),
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

/// A built-in name, else a TOML file, with the `--set` assignments applied. Without them the
/// tables of the file's arrays are read one at a time (`scenario_file`).
fn load(arg: &str, sets: &[String]) -> Result<Scenario, Failure> {
    if sets.is_empty() {
        let (text, name) = source(arg)?;
        return Scenario::parse(&text, &name).map_err(|e| in_file(arg, e));
    }
    let (table, name) = load_table(arg, sets)?;
    Scenario::from_table(table, &name).map_err(|e| in_file(arg, e))
}

/// A scenario error, prefixed with the file it is in (not for a built-in).
fn in_file(arg: &str, e: ScenarioError) -> Failure {
    if builtin::find(arg).is_some() {
        e.into()
    } else {
        Failure::Input(format!("{arg}: {e}"))
    }
}

/// The text of a built-in or file, and its name without a `name` key.
fn source(arg: &str) -> Result<(String, String), Failure> {
    let s = resolve_scenario(arg).map_err(|e| Failure::Input(e.to_string()))?;
    Ok((s.text, s.name))
}

/// The TOML table of a built-in or file after `--set`, and its name without a `name` key.
fn load_table(arg: &str, sets: &[String]) -> Result<(toml::Table, String), Failure> {
    let (text, name) = source(arg)?;
    let mut table = scenario::parse_table(&text).map_err(|e| in_file(arg, e))?;
    for a in sets {
        scenario::set_key(&mut table, a)?;
    }
    Ok((table, name))
}

/// `show`: the text as written, or with `--set` the checked, resolved table.
fn show(arg: &str, sets: &[String]) -> Result<(), Failure> {
    if sets.is_empty() {
        return to_stdout(format_args!("{}", source(arg)?.0));
    }
    let (table, name) = load_table(arg, sets)?;
    Scenario::from_table(table.clone(), &name)
        .and_then(|s| s.plan(&Overrides::default()))
        .map_err(|e| in_file(arg, e))?;
    let text = toml::to_string(&table)
        .map_err(|e| Failure::Input(format!("cannot print the scenario as TOML: {e}")))?;
    to_stdout(format_args!("{text}"))
}

fn validate(arg: &str, sets: &[String]) -> Result<(), Failure> {
    let s = load(arg, sets)?;
    let plan = s
        .plan(&Overrides::default())
        .map_err(|e| Failure::Input(format!("{arg}: {e}")))?;
    to_stdout(format_args!(
        "ok: {} ({} ports, {} flows, {} links overridden, {} scripted PFC frames, {} cycles)\n",
        plan.name,
        plan.derived.ports,
        plan.flows.len(),
        s.links.len(),
        plan.pfc_script.len(),
        plan.cycles
    ))?;
    let mut report = String::new();
    for line in eta_report(&plan.derived) {
        report += &format!("{line}\n");
    }
    to_stdout(format_args!("{report}"))?;
    warn(&plan);
    Ok(())
}

/// Write to stdout; a closed pipe or a full disk is a failed output (exit 2), not a panic.
fn to_stdout(text: std::fmt::Arguments) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_fmt(text)
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::Input(format!("stdout: {e}")))
}

/// A run that stopped: a broken model invariant (exit 1), or an output that failed, named
/// by its option and path (exit 2).
fn run_failure(e: RunError, a: &RunArgs) -> Failure {
    let output = match &e {
        RunError::Model(_) => return Failure::Violation(e.to_string()),
        RunError::Trace(_) => Some(("--trace-cells", &a.trace_cells)),
        RunError::Output(what, _) if *what == sim::ECM_TRACE => Some(("--trace-ecm", &a.trace_ecm)),
        RunError::Output(what, _) if *what == sim::RP_TRACE => Some(("--trace-rp", &a.trace_rp)),
        RunError::Output(what, _) if *what == sim::EVENT_TRACE => {
            Some(("--trace-events", &a.trace_events))
        }
        RunError::Output(what, _) if *what == sim::NS3_OUTPUT => Some(("--ns3-out", &a.ns3_out)),
        RunError::Output(..) => None,
        RunError::Wave(_) if a.vcd.is_some() => Some(("--vcd", &a.vcd)),
        RunError::Wave(_) => Some(("--wave", &a.wave)),
    };
    match output {
        Some((flag, Some(path))) => Failure::Input(format!("{flag} {}: {e}", path.display())),
        _ => Failure::Input(e.to_string()),
    }
}

/// Print the plan's headroom warnings on stderr.
fn warn(plan: &Plan) {
    for w in &plan.headroom_warnings {
        eprintln!("warning: {w}");
    }
}

/// Open a run's outputs (`None`: not asked for), then empty them, so that a path that
/// cannot be opened fails before the simulation and before any file of the list lost
/// what an earlier run wrote; a file this call created is removed again. Only regular
/// files are emptied: `/dev/stdout` or a pipe cannot be.
pub(crate) fn open_outputs<const N: usize>(
    wanted: [(&str, Option<&Path>); N],
) -> Result<[Option<File>; N], Failure> {
    let failed = |what: &str, p: &Path, e: std::io::Error| {
        Failure::Input(format!("{what} {}: {e}", p.display()))
    };
    let mut files = Vec::with_capacity(N);
    let mut created = Vec::new();
    for (what, path) in wanted {
        let Some(p) = path else {
            files.push(None);
            continue;
        };
        let existed = p.exists();
        // Emptied only once every output is open (below).
        let open = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(p);
        match open {
            Ok(f) => files.push(Some(f)),
            Err(e) => {
                for c in created {
                    let _ = std::fs::remove_file(c);
                }
                return Err(failed(what, p, e));
            }
        }
        if !existed {
            created.push(p);
        }
    }
    for (f, (what, p)) in files.iter().zip(wanted) {
        if let (Some(f), Some(p)) = (f, p) {
            if f.metadata().is_ok_and(|m| m.is_file()) {
                f.set_len(0).map_err(|e| failed(what, p, e))?;
            }
        }
    }
    let mut files = files.into_iter();
    Ok(std::array::from_fn(|_| files.next().flatten()))
}

/// The dump asked for: `--vcd` or `--wave`, the path and the format.
pub(crate) type Dump<'a> = (&'static str, &'a PathBuf, Format);

/// `--wave-signals`, `--wave-window` and the dump asked for, parsed; shared by the single
/// switch and the network.
pub(crate) fn wave_args(a: &RunArgs) -> Result<(SignalFilter, Window, Option<Dump<'_>>), Failure> {
    let filter = match &a.wave_signals {
        Some(g) => {
            SignalFilter::parse(g).map_err(|e| Failure::Input(format!("--wave-signals: {e}")))?
        }
        None => SignalFilter::all(),
    };
    let window = match &a.wave_window {
        Some(w) => Window::parse(w).map_err(|e| Failure::Input(format!("--wave-window: {e}")))?,
        None => Window::all(),
    };
    let dump = match (&a.vcd, &a.wave) {
        // A VCD named .fst would not open in GTKWave, which reads the format from the name.
        (Some(p), _) if Format::from_path(p).is_ok_and(|f| f != Format::Vcd) => {
            return Err(Failure::Input(format!(
                "--vcd {}: --vcd writes VCD text, which GTKWave will not open under this name; \
                 allowed: another name (e.g. .vcd), or --wave {} for FST",
                p.display(),
                p.display()
            )))
        }
        (Some(p), _) => Some(("--vcd", p, Format::Vcd)),
        (None, Some(p)) => Some((
            "--wave",
            p,
            Format::from_path(p).map_err(|e| Failure::Input(format!("--wave: {e}")))?,
        )),
        (None, None) => None,
    };
    Ok((filter, window, dump))
}

fn run(a: RunArgs) -> Result<(), Failure> {
    let scenario = load(&a.scenario, &a.set.set)?;
    let policy = a
        .policy
        .as_deref()
        .map(Policy::parse)
        .transpose()
        .map_err(|e| Failure::Input(format!("--{e}")))?;
    if scenario.fabric.is_some() {
        return fabric_run::run(&scenario, policy, &a);
    }
    let network_only = [
        ("--threads", a.threads.is_some()),
        ("--mpi", a.mpi),
        ("--mem-limit", a.mem_limit.is_some()),
    ];
    if let Some((flag, _)) = network_only.iter().find(|f| f.1) {
        return Err(Failure::Input(format!(
            "{flag}: only for a network scenario ([fabric]); a single switch runs on one thread"
        )));
    }
    let ov = Overrides {
        policy,
        cycles: a.cycles,
        seed: a.seed,
        fifo: a.fifo,
    };
    let mut sim = Sim::new(&scenario, ov)?;
    warn(sim.plan());
    let (filter, window, dump) = wave_args(&a)?;
    if dump.is_some() {
        filter
            .check_matches(sim.wave_signals().specs())
            .map_err(|e| Failure::Input(format!("--wave-signals: {e}")))?;
        window
            .check_within(sim.plan().cycles)
            .map_err(|e| Failure::Input(format!("--wave-window: {e}")))?;
    }
    // Every input is checked above: a refused run leaves the files of an earlier one as
    // they were.
    let gtkw = dump.map(|(_, p, _)| waves::gtkw_path(p));
    let [summary_file, cells, events, ecm, rp, dump_file, _] = open_outputs([
        ("--summary-json", a.summary_json.as_deref()),
        ("--trace-cells", a.trace_cells.as_deref()),
        ("--trace-events", a.trace_events.as_deref()),
        ("--trace-ecm", a.trace_ecm.as_deref()),
        ("--trace-rp", a.trace_rp.as_deref()),
        (
            dump.map_or("", |(flag, ..)| flag),
            dump.map(|(_, p, _)| p.as_path()),
        ),
        ("GTKWave save file", gtkw.as_deref()),
    ])?;
    let named = |flag: &str, p: &Option<PathBuf>, e: &dyn std::fmt::Display| {
        let p = p.as_deref().unwrap_or(Path::new(""));
        Failure::Input(format!("{flag} {}: {e}", p.display()))
    };
    type Attach = fn(&mut Sim, File) -> std::io::Result<()>;
    let traces: [(Option<File>, &str, &Option<PathBuf>, Attach); 4] = [
        (cells, "--trace-cells", &a.trace_cells, Sim::attach_trace),
        (
            events,
            "--trace-events",
            &a.trace_events,
            Sim::attach_events,
        ),
        (ecm, "--trace-ecm", &a.trace_ecm, Sim::attach_ecm_trace),
        (rp, "--trace-rp", &a.trace_rp, Sim::attach_rp_trace),
    ];
    for (file, flag, path, attach) in traces {
        if let Some(f) = file {
            attach(&mut sim, f).map_err(|e| named(flag, path, &e))?;
        }
    }
    if let Some(dir) = &a.ns3_out {
        sim.attach_ns3(dir)
            .map_err(|e| named("--ns3-out", &a.ns3_out, &e))?;
    }
    if let (Some(f), Some((flag, p, format))) = (dump_file, dump) {
        sim.attach_waves(f, p, format, &filter, window)
            .map_err(|e| Failure::Input(format!("{flag} {}: {e}", p.display())))?;
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
    let summary = result.map_err(|e| run_failure(e, &a))?;
    to_stdout(format_args!("{summary}"))?;
    if let (Some(f), Some(p)) = (summary_file, &a.summary_json) {
        serde_json::to_writer_pretty(f, &summary)
            .map_err(|e| Failure::Input(format!("--summary-json {}: {e}", p.display())))?;
    }
    verdict(&summary.violations)
}

/// A run's exit: 0 without violations, 1 with.
fn verdict(violations: &[String]) -> Result<(), Failure> {
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Failure::Violation(format!(
            "{} invariant(s) violated",
            violations.len()
        )))
    }
}

/// `check`: exit 0 if the stream is consistent with the model, 1 at a divergence (each
/// printed), 2 if the stream or the scenario cannot be used.
fn check(a: CheckArgs) -> Result<(), Failure> {
    let scenario = load(&a.scenario, &a.set.set)?;
    let plan = scenario
        .plan(&Overrides::default())
        .map_err(|e| Failure::Input(format!("{}: {e}", a.scenario)))?;
    let path = a.dut_events.display();
    let file = File::open(&a.dut_events)
        .map_err(|e| Failure::Input(format!("--dut-events {path}: {e}")))?;
    let opts = checker::Options {
        mode: match a.mode {
            CheckMode::Follow => checker::Mode::Follow,
            CheckMode::Lockstep => checker::Mode::Lockstep,
        },
        line_rate: match a.line_rate {
            LineRateArg::CellPerCycle => checker::LineRate::CellPerCycle,
            LineRateArg::Scenario => checker::LineRate::Scenario,
        },
        pfc_tolerance: a.pfc_tolerance,
        decisions: match a.decisions {
            DecisionsArg::Reported => checker::Decisions::Reported,
            DecisionsArg::Inferred => checker::Decisions::Inferred,
        },
    };
    let json_err = |e: std::io::Error| {
        let p = a.report_json.as_deref().unwrap_or(std::path::Path::new(""));
        Failure::Input(format!("--report-json {}: {e}", p.display()))
    };
    let mut report = match &a.report_json {
        Some(p) => {
            let o = Output::create("--report-json", p)?;
            Some(checker::verdict::JsonReport::new(o).map_err(json_err)?)
        }
        None => None,
    };
    let mut junit = checker::verdict::Junit::default();
    let mut written: Result<(), Failure> = Ok(());
    let sum = checker::check_each(
        plan.derived,
        std::io::BufReader::new(file),
        opts,
        a.keep_going,
        |d| {
            junit.add(&d);
            if written.is_ok() {
                written = to_stdout(format_args!("divergence at {d}\n"));
            }
            if let (Some(r), Ok(())) = (report.as_mut(), &written) {
                written = r.add(&d).map_err(json_err);
            }
        },
    )
    .map_err(|e| Failure::Input(format!("--dut-events {path}: {e}")))?;
    written?;
    for w in &sum.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(r) = report {
        r.finish(&sum.tally, sum.events, sum.last_cycle)
            .map_err(json_err)?
            .commit()?;
    }
    if let Some(p) = &a.junit {
        let mut o = Output::create("--junit", p)?;
        junit
            .write(&mut o.file, &path.to_string())
            .map_err(|e| o.failed(e))?;
        o.commit()?;
    }
    let mode = match a.mode {
        CheckMode::Follow => "follow",
        CheckMode::Lockstep => "lockstep",
    };
    let n = sum.tally.total;
    let mut text = String::new();
    if a.keep_going && n > 0 {
        text += &format!("{}\n", sum.tally);
    }
    text += &format!(
        "{}: {} events to cycle {} checked against {} ({mode})\n",
        if n == 0 { "consistent" } else { "DIVERGED" },
        sum.events,
        sum.last_cycle,
        plan.name
    );
    to_stdout(format_args!("{text}"))?;
    match n {
        0 => Ok(()),
        _ => Err(Failure::Violation(format!(
            "{n} divergence(s) from the model{}",
            if a.keep_going {
                ""
            } else {
                " (the first; --keep-going lists all)"
            }
        ))),
    }
}

/// An output file written under a temporary name beside it and renamed once complete, so
/// that a refused or failed check leaves no partial file under the name asked for.
struct Output {
    option: &'static str,
    path: PathBuf,
    tmp: PathBuf,
    file: std::io::BufWriter<File>,
}

impl Output {
    fn create(option: &'static str, path: &std::path::Path) -> Result<Self, Failure> {
        let name = path
            .file_name()
            .map_or("out".into(), |n| n.to_string_lossy());
        let tmp = path.with_file_name(format!(".{name}.partial"));
        let file = File::create(&tmp)
            .map_err(|e| Failure::Input(format!("{option} {}: {e}", path.display())))?;
        Ok(Self {
            option,
            path: path.to_path_buf(),
            tmp,
            file: std::io::BufWriter::new(file),
        })
    }

    fn failed(&self, e: std::io::Error) -> Failure {
        Failure::Input(format!("{} {}: {e}", self.option, self.path.display()))
    }

    fn commit(mut self) -> Result<(), Failure> {
        self.file.flush().map_err(|e| self.failed(e))?;
        std::fs::rename(&self.tmp, &self.path).map_err(|e| self.failed(e))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Output {
    /// Not committed: the partial file goes (after a commit, the rename moved it).
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
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
        return to_stdout(format_args!("{}", reproductions_help()));
    }
    let (Some(name), Some(out)) = (a.name, a.out) else {
        unreachable!("clap requires NAME and --out without --list")
    };
    let Some(repro) = reproduce::find(&name) else {
        let names: Vec<_> = reproduce::REPRODUCTIONS.iter().map(|r| r.name).collect();
        return Err(Failure::Input(format!(
            "unknown reproduction {name:?}{}; allowed: {}",
            scenario::suggest::did_you_mean(&name, names.iter().copied()),
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
        Ok(report) => to_stdout(format_args!("{report}")),
        Err(e @ ReproError::Invariant(_)) => Err(Failure::Violation(e.to_string())),
        Err(e @ ReproError::Run(RunError::Model(_))) => Err(Failure::Violation(e.to_string())),
        Err(e) => Err(Failure::Input(e.to_string())),
    }
}
