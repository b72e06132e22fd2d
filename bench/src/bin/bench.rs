//! `make bench`'s table: the built-ins run through the testbench library, as `mmu-sim run`
//! runs them, timed in CPU time of the running thread (`RunMeta::cpu_seconds`), without
//! waves and with every signal dumped to a VCD; then the model's cycle loop alone under
//! criterion's load ([`mmu_bench::Load`]); then the network built-ins, each run by the
//! `mmu-sim` binary (`--mmu-sim`) as a user runs it, timed by the CPU seconds of its
//! cycle loop that its summary reports. Run it pinned to one core (`make bench` does:
//! `taskset -c 1`, which the `mmu-sim` runs inherit); each figure is the median of `--runs`
//! runs, with their range. With `--ns3-leafspine WORK` the rounds of
//! `leafspine-256-websearch` alternate with ns-3 on its topology and workload
//! ([`mmu_bench::ns3_leafspine`]), and the table's last lines give each side's simulated
//! time per CPU second and the median and range of their per-round ratio, with the load.

use clap::Parser;
use hw_model::{Mmu, Policy, SwitchConfig};
use mmu_bench::ns3_leafspine::{Ns3Leafspine, Ns3Run, Workload};
use mmu_bench::{run, Load, CYCLES};
use scenario::{builtin, Overrides};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use switch_run::sim::thread_cpu_seconds;
use switch_run::Sim;
use wave::{Format, SignalFilter, Window};

#[derive(Parser)]
#[command(about = "Time the built-ins and the cycle loop (CPU time of this thread)")]
struct Args {
    /// Runs of each case; the table shows the median and the range.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    runs: u32,
    /// Leave out the runs with a VCD.
    #[arg(long)]
    no_waves: bool,
    /// Directory of the VCD files (each deleted after its run).
    #[arg(long, default_value_os_t = std::env::temp_dir())]
    wave_dir: PathBuf,
    /// The `mmu-sim` binary that runs the network built-ins.
    #[arg(long, default_value = "target/release/mmu-sim")]
    mmu_sim: PathBuf,
    /// Simulated microseconds of `leafspine-256-websearch` after its idle start (its
    /// workload's `start_us`), and of ns-3's run beside it.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    leafspine_us: u64,
    /// The folder the ns-3 anchor's `leafspine.sh build` used (its `WORK`): each round of
    /// `leafspine-256-websearch` is followed by ns-3's run of the same length.
    #[arg(long)]
    ns3_leafspine: Option<PathBuf>,
    /// Only the cases whose name contains one of these words (all by default).
    cases: Vec<String>,
}

/// The network built-ins (docs/fabric.md), each for its own `run.cycles` but the last,
/// which runs `--leafspine-us` after its idle start.
const NETWORKS: [&str; 3] = ["dsh-deadlock", "l2bm-clos", LEAFSPINE];
const LEAFSPINE: &str = "leafspine-256-websearch";

/// One network run: `mmu-sim run NAME --summary-json FILE` (for `cycles`, if given), and
/// the summary's cycles and CPU seconds.
fn run_network(
    mmu_sim: &Path,
    name: &str,
    cycles: Option<u64>,
    dir: &Path,
) -> Result<Sample, String> {
    let json = dir.join(format!("mmu-bench-{}-{name}.json", std::process::id()));
    let mut cmd = std::process::Command::new(mmu_sim);
    cmd.args(["run", name, "--summary-json"]).arg(&json);
    if let Some(c) = cycles {
        cmd.args(["--cycles", &c.to_string()]);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", mmu_sim.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let _ = std::fs::remove_file(&json);
    let summary: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let num = |path: &str| {
        summary
            .pointer(path)
            .and_then(serde_json::Value::as_f64)
            .ok_or_else(|| format!("{name}: no {path} in the summary"))
    };
    Ok(Sample {
        cycles: num("/cycles")? as u64,
        cells: num("/cells_injected")? as u64,
        cpu: num("/run/cpu_seconds")?,
        vcd: None,
        simulated_us: num("/cycles")? * 1e6 / num("/clock_hz")?,
    })
}

/// One row: a built-in with its overrides.
struct Case {
    name: &'static str,
    scenario: &'static str,
    policy: Option<Policy>,
    cycles: Option<u64>,
}

const CASES: [Case; 7] = [
    Case {
        name: "occamy-shaped",
        scenario: "occamy-shaped",
        policy: None,
        cycles: None,
    },
    Case {
        name: "fanin-burst",
        scenario: "fanin-burst",
        policy: None,
        cycles: None,
    },
    Case {
        name: "fanin-burst 2M",
        scenario: "fanin-burst",
        policy: None,
        cycles: Some(2_000_000),
    },
    Case {
        name: "fanin-burst dsh",
        scenario: "fanin-burst",
        policy: Some(Policy::Dsh),
        cycles: None,
    },
    Case {
        name: "fanin-burst l2bm",
        scenario: "fanin-burst",
        policy: Some(Policy::L2bm),
        cycles: None,
    },
    Case {
        name: "hcf-tcp",
        scenario: "hcf-tcp",
        policy: None,
        cycles: None,
    },
    Case {
        name: "ecm-fanin",
        scenario: "ecm-fanin",
        policy: None,
        cycles: None,
    },
];

/// What one run gave.
struct Sample {
    cycles: u64,
    cells: u64,
    cpu: f64,
    /// Bytes of the VCD, if one was written.
    vcd: Option<u64>,
    /// Simulated microseconds (the network runs; 0 elsewhere).
    simulated_us: f64,
}

fn run_case(c: &Case, vcd: Option<&Path>) -> Result<Sample, String> {
    let scenario = builtin::load(c.scenario).map_err(|e| e.to_string())?;
    let ov = Overrides {
        policy: c.policy,
        cycles: c.cycles,
        ..Overrides::default()
    };
    let mut sim = Sim::new(&scenario, ov).map_err(|e| e.to_string())?;
    if let Some(path) = vcd {
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        sim.attach_waves(file, path, Format::Vcd, &SignalFilter::all(), Window::all())
            .map_err(|e| e.to_string())?;
    }
    let s = sim.run(|_| {}).map_err(|e| e.to_string())?;
    if !s.ok() {
        return Err(format!("{}: the run failed its checks\n{s}", c.name));
    }
    let bytes = vcd.map(|p| {
        let n = std::fs::metadata(p).map_or(0, |m| m.len());
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(switch_run::waves::gtkw_path(p));
        n
    });
    Ok(Sample {
        cycles: s.cycles,
        cells: s.cells_injected,
        cpu: s.run.cpu_seconds,
        vcd: bytes,
        simulated_us: 0.0,
    })
}

/// The cycle loop of the criterion benchmark, warmed up as there.
fn cycle_loop() -> Sample {
    let d = SwitchConfig::tomahawk()
        .build()
        .expect("tomahawk profile is valid");
    let mut mmu = Mmu::new(d);
    let mut load = Load::new(&mmu);
    run(&mut mmu, &mut load);
    let t0 = thread_cpu_seconds();
    run(&mut mmu, &mut load);
    Sample {
        cycles: CYCLES,
        cells: 0,
        cpu: thread_cpu_seconds() - t0,
        vcd: None,
        simulated_us: 0.0,
    }
}

/// Median and range of `f` over the samples, formatted as `median (min-max)`.
fn spread(samples: &[Sample], f: impl Fn(&Sample) -> f64, digits: usize) -> String {
    spread_of(samples.iter().map(f).collect(), digits)
}

/// Median and range of `v`, formatted as `median (min-max)`.
fn spread_of(mut v: Vec<f64>, digits: usize) -> String {
    v.sort_by(f64::total_cmp);
    let (lo, mid, hi) = (v[0], v[v.len() / 2], v[v.len() - 1]);
    if v.len() == 1 {
        format!("{mid:.digits$}")
    } else {
        format!("{mid:.digits$} ({lo:.digits$}-{hi:.digits$})")
    }
}

fn mega_per_s(n: u64, s: &Sample) -> f64 {
    if s.cpu > 0.0 {
        n as f64 / s.cpu / 1e6
    } else {
        0.0
    }
}

fn row(name: &str, plain: &[Sample], waves: &[Sample]) -> String {
    let first = &plain[0];
    let cells = if first.cells > 0 {
        spread(plain, |s| mega_per_s(s.cells, s), 2)
    } else {
        "-".to_string()
    };
    let (wave_cps, wave_mb) = match waves.first().and_then(|s| s.vcd) {
        Some(bytes) => (
            spread(waves, |s| mega_per_s(s.cycles, s), 2),
            format!("{:.1}", bytes as f64 / 1e6),
        ),
        None => ("-".to_string(), "-".to_string()),
    };
    format!(
        "| {name} | {} | {} | {} | {cells} | {wave_cps} | {wave_mb} |",
        first.cycles,
        spread(plain, |s| s.cpu, 3),
        spread(plain, |s| mega_per_s(s.cycles, s), 2),
    )
}

fn main() -> ExitCode {
    let a = Args::parse();
    let wanted =
        |name: &str| a.cases.is_empty() || a.cases.iter().any(|w| name.contains(w.as_str()));
    println!("| case | cycles | CPU s | M cycles/s | M cells/s | M cycles/s, VCD | VCD MB |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for c in CASES.iter().filter(|c| wanted(c.name)) {
        let vcd = a
            .wave_dir
            .join(format!("mmu-bench-{}.vcd", std::process::id()));
        let mut plain = Vec::new();
        let mut waves = Vec::new();
        for _ in 0..a.runs {
            let measured = run_case(c, None).and_then(|p| {
                plain.push(p);
                if a.no_waves {
                    return Ok(());
                }
                waves.push(run_case(c, Some(&vcd))?);
                Ok(())
            });
            if let Err(e) = measured {
                eprintln!("bench: {}: {e}", c.name);
                return ExitCode::FAILURE;
            }
        }
        println!("{}", row(c.name, &plain, &waves));
    }
    if wanted("cycle loop") {
        let samples: Vec<Sample> = (0..a.runs).map(|_| cycle_loop()).collect();
        println!("{}", row("cycle loop (criterion's load)", &samples, &[]));
    }
    let networks: Vec<&str> = NETWORKS.into_iter().filter(|n| wanted(n)).collect();
    if !networks.is_empty() {
        println!();
        println!("| network | cycles | CPU s | M cycles/s | simulated us per CPU s |");
        println!("| --- | ---: | ---: | ---: | ---: |");
    }
    let leafspine = match networks
        .contains(&LEAFSPINE)
        .then(leafspine_setup)
        .transpose()
    {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bench: {LEAFSPINE}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let anchor = match (&a.ns3_leafspine, leafspine) {
        (Some(work), Some((_, w))) => {
            match Ns3Leafspine::new(work, &a.wave_dir.join("mmu-bench-ns3-leafspine")) {
                Ok(n) => Some((n, w)),
                Err(e) => {
                    eprintln!("bench: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        _ => None,
    };
    let mut ns3_rounds = Vec::new();
    for name in networks {
        let cycles = leafspine
            .filter(|_| name == LEAFSPINE)
            .map(|(mhz, w)| (w.start_us + a.leafspine_us) * mhz);
        let mut samples = Vec::new();
        for _ in 0..a.runs {
            let round = run_network(&a.mmu_sim, name, cycles, &a.wave_dir).and_then(|s| {
                samples.push(s);
                if let (Some((n, w)), true) = (&anchor, name == LEAFSPINE) {
                    ns3_rounds.push(n.run(a.leafspine_us, w)?);
                }
                Ok(())
            });
            if let Err(e) = round {
                eprintln!("bench: {name}: {e}");
                return ExitCode::FAILURE;
            }
        }
        println!(
            "| {name} | {} | {} | {} | {} |",
            samples[0].cycles,
            spread(&samples, |s| s.cpu, 3),
            spread(&samples, |s| mega_per_s(s.cycles, s), 2),
            spread(&samples, |s| s.simulated_us / s.cpu, 0),
        );
        if name == LEAFSPINE && !ns3_rounds.is_empty() {
            print_anchor(&samples, &ns3_rounds);
        }
    }
    ExitCode::SUCCESS
}

/// `leafspine-256-websearch`'s switch clock (MHz, cycles per simulated microsecond) and the
/// workload the ns-3 anchor runs beside it.
fn leafspine_setup() -> Result<(u64, Workload), String> {
    let s = builtin::load(LEAFSPINE).map_err(|e| e.to_string())?;
    Ok((s.switch.core_clock_mhz as u64, Workload::of(&s)?))
}

/// The model's rounds of `leafspine-256-websearch` beside ns-3's: simulated ms per CPU
/// second of the model's cycle loop and of ns-3's `Simulator::Run()`, and their ratio per
/// round (the model's over ns-3's), with the load average.
fn print_anchor(model: &[Sample], ns3: &[Ns3Run]) {
    let model: Vec<f64> = model.iter().map(|s| s.simulated_us / 1e3 / s.cpu).collect();
    let ns3: Vec<f64> = ns3.iter().map(|r| r.sim_s * 1e3 / r.run_cpu_s).collect();
    let ratios: Vec<f64> = model.iter().zip(&ns3).map(|(m, n)| m / n).collect();
    let rounds = ratios.len();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!();
    println!("| {LEAFSPINE} against ns-3, alternated | simulated ms per CPU s | rounds |");
    println!("| --- | ---: | ---: |");
    println!(
        "| model (cycle loop) | {} | {rounds} |",
        spread_of(model, 3)
    );
    println!(
        "| ns-3 (`Simulator::Run()`) | {} | {rounds} |",
        spread_of(ns3, 3)
    );
    println!(
        "| ratio, model / ns-3, per round | {} | {rounds} |",
        spread_of(ratios, 3)
    );
    println!("load average at the end: {}", load.trim());
}
