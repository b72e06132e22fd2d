//! `mmu-sim run` of a network scenario, one with a `[fabric]` table (docs/fabric.md),
//! built by `fabric::build` (relative files from the scenario file's directory) and run
//! for `run.cycles`. Bad input exits 2 naming the file, line and field. Its outputs: the
//! summary, `--ns3-out`, each switch's event stream (`--trace-events DIR`) and one
//! waveform with a scope per switch (`--vcd`, `--wave`).

use crate::{Failure, RunArgs};
use fabric::build::{build, Built, Overrides};
use fabric::RunOptions;
use hw_model::Policy;
use scenario::Scenario;
use std::fs;
use std::path::Path;
use switch_run::waves::gtkw_path;

/// The single switch's options a network run does not have yet: each refused with exit 2.
fn unsupported(a: &RunArgs) -> Option<&'static str> {
    [
        ("--trace-cells", a.trace_cells.is_some()),
        ("--trace-ecm", a.trace_ecm.is_some()),
        ("--trace-rp", a.trace_rp.is_some()),
        ("--fifo", a.fifo),
        ("--seed", a.seed.is_some()),
    ]
    .into_iter()
    .find(|f| f.1)
    .map(|f| f.0)
}

/// Run the network of `scenario` (named on the command line as `a.scenario`).
pub fn run(scenario: &Scenario, policy: Option<Policy>, a: &RunArgs) -> Result<(), Failure> {
    if let Some(flag) = unsupported(a) {
        return Err(Failure::Input(format!(
            "{flag}: not available for a network scenario ([fabric]); allowed: --policy, --cycles, --threads, --summary-json, --ns3-out, --trace-events, --vcd, --wave, --wave-signals, --wave-window"
        )));
    }
    let dir = Path::new(&a.scenario).parent().unwrap_or(Path::new(""));
    let ov = Overrides {
        policy,
        cycles: a.cycles,
    };
    let Built {
        mut net, options, ..
    } = build(scenario, dir, ov).map_err(|e| Failure::Input(e.to_string()))?;
    let end_cycle = options.end_cycle;
    let (filter, window, dump) = crate::wave_args(a)?;
    if dump.is_some() {
        filter
            .check_matches(&net.wave_signals())
            .map_err(|e| Failure::Input(format!("--wave-signals: {e}")))?;
        window
            .check_within(end_cycle)
            .map_err(|e| Failure::Input(format!("--wave-window: {e}")))?;
    }
    // Every input is checked above: a refused run leaves the files of an earlier one.
    if let Some(dir) = &a.trace_events {
        let ecmp_seed = scenario.fabric.as_ref().map_or(1, |f| f.ecmp_seed);
        net.attach_events(dir, end_cycle, ecmp_seed.into())
            .map_err(|e| {
                Failure::Input(format!(
                    "--trace-events {e}; allowed: a directory (created if missing)"
                ))
            })?;
    }
    if let Some((flag, path, format)) = dump {
        let gtkw = gtkw_path(path);
        let [file, _] = crate::open_outputs([
            (flag, Some(path.as_path())),
            ("GTKWave save file", Some(gtkw.as_path())),
        ])?;
        let file = file.expect("asked for");
        net.attach_waves(file, path, format, &filter, window, end_cycle)
            .map_err(|e| Failure::Input(format!("{flag} {}: {e}", path.display())))?;
    }
    let opts = RunOptions {
        threads: a.threads.map_or(1, usize::from),
        ..options
    };
    let summary = net
        .run(&opts)
        .map_err(|e| Failure::Violation(e.to_string()))?;
    net.finish_outputs()
        .map_err(|e| Failure::Input(format!("outputs: {e}")))?;
    crate::to_stdout(format_args!("{summary}\n"))?;
    if let Some(p) = &a.summary_json {
        fs::write(p, summary.to_json())
            .map_err(|e| Failure::Input(format!("--summary-json {}: {e}", p.display())))?;
    }
    if let Some(dir) = &a.ns3_out {
        fs::create_dir_all(dir)
            .and_then(|()| fs::write(dir.join("fct.txt"), summary.fct_txt()))
            .map_err(|e| Failure::Input(format!("--ns3-out {}: {e}", dir.display())))?;
    }
    crate::verdict(&summary.violations)
}
