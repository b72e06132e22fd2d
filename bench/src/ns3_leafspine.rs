//! The ns-3 anchor of `leafspine-256-websearch`: ns3-datacenter's PowerTCP workload example
//! (`simulator/ns-3.39/examples/PowerTCP/powertcp-evaluation-workload.cc`) as the anchor's
//! `leafspine.sh build` made it (`../shared/anchors/ns3/`, outside the repository: the
//! example with counters added, among them the `ANCHOR` line with `Run()`'s CPU time), run
//! with the command line `leafspine.sh run` gives it: DCQCN (`--algorithm=1`, no window),
//! web search sizes, every server sending (`LEAF_COUNT=8`), Poisson arrivals at `--load` of
//! the ToR uplinks from the start and with the seed of the built-in's workload
//! ([`Workload::of`]). `bench --ns3-leafspine WORK` runs it beside the built-in, `WORK` being
//! the folder `leafspine.sh build` used.

use std::path::{Path, PathBuf};
use std::process::Command;

use scenario::Scenario;

/// What the anchor takes from the built-in's `[[fabric.workload]]`, so both sides run the
/// same load from the same start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Workload {
    /// Simulated microseconds before the first flow arrives (`start_us`; `leafspine.sh`'s
    /// `START_US`).
    pub start_us: u64,
    /// The Poisson generator's load of the ToR uplinks (`load`; ns-3's `--load`).
    pub load: f64,
    /// ns-3's `--randomSeed` (`seed`; the two draw different flows from it all the same).
    pub seed: u64,
}

impl Workload {
    /// The first `poisson` workload of `s`, which must have `start_us`, `load` and `seed`.
    pub fn of(s: &Scenario) -> Result<Self, String> {
        let w = s
            .fabric
            .as_ref()
            .and_then(|f| {
                f.workload
                    .iter()
                    .find(|w| w.kind == scenario::WorkloadKind::Poisson)
            })
            .ok_or_else(|| format!("{}: no [[fabric.workload]] of kind poisson", s.name))?;
        match (w.start_us, w.load, w.seed) {
            (Some(start_us), Some(load), Some(seed)) => Ok(Self {
                start_us,
                load,
                seed,
            }),
            _ => Err(format!(
                "{}: its poisson workload lacks start_us, load or seed",
                s.name
            )),
        }
    }
}

/// The built ns-3 tree and the folder of the run's configuration and outputs.
pub struct Ns3Leafspine {
    tree: PathBuf,
    bin: PathBuf,
    config: PathBuf,
}

/// What one ns-3 run reports.
pub struct Ns3Run {
    /// Simulated seconds of `Simulator::Run()` (0 to the end time).
    pub sim_s: f64,
    /// CPU seconds of `Simulator::Run()`.
    pub run_cpu_s: f64,
}

impl Ns3Leafspine {
    /// The anchor in `work`, with its configuration written into `out`: the example's
    /// `config-burst.txt` (which names `topology-256.txt`) with its output files in `out`.
    pub fn new(work: &Path, out: &Path) -> Result<Self, String> {
        let tree = work.join("simulator/ns-3.39");
        let bin = tree.join("build/scratch/powertcp-wl/ns3.39-powertcp-wl-optimized");
        if !bin.is_file() {
            return Err(format!(
                "--ns3-leafspine {}: no {} (run the anchor's leafspine.sh build with WORK={0})",
                work.display(),
                bin.display()
            ));
        }
        let example = tree.join("examples/PowerTCP/config-burst.txt");
        let text =
            std::fs::read_to_string(&example).map_err(|e| format!("{}: {e}", example.display()))?;
        std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let redirected: Vec<String> = text
            .lines()
            .map(|line| {
                let key = line.split_whitespace().next().unwrap_or("");
                let file = line.rsplit('/').next().unwrap_or("");
                match key {
                    "FCT_OUTPUT_FILE" | "PFC_OUTPUT_FILE" | "TRACE_OUTPUT_FILE"
                    | "QLEN_MON_FILE" => format!("{key} {}", out.join(file).display()),
                    _ => line.to_string(),
                }
            })
            .collect();
        let config = out.join("config.txt");
        std::fs::write(&config, redirected.join("\n") + "\n")
            .map_err(|e| format!("{}: {e}", config.display()))?;
        Ok(Self { tree, bin, config })
    }

    /// One run of the workload's start plus `sim_us` simulated microseconds.
    pub fn run(&self, sim_us: u64, w: &Workload) -> Result<Ns3Run, String> {
        let start = w.start_us as f64 * 1e-6;
        let end = (w.start_us + sim_us) as f64 * 1e-6;
        let cdf = self.tree.join("examples/PowerTCP/websearch.txt");
        let out = Command::new(&self.bin)
            .current_dir(&self.tree)
            .arg(format!("--conf={}", self.config.display()))
            .args([
                "--algorithm=1",
                "--wien=false",
                "--delayWien=false",
                "--windowCheck=0",
                "--queryRequestRate=0",
                "--request=0",
                "--SERVER_COUNT=32",
                "--LEAF_COUNT=8",
                "--SPINE_COUNT=2",
                "--LEAF_SERVER_CAPACITY=25",
                "--SPINE_LEAF_CAPACITY=100",
                "--incast=10",
            ])
            .arg(format!("--randomSeed={}", w.seed))
            .arg(format!("--load={}", w.load))
            .arg(format!("--START_TIME={start}"))
            .arg(format!("--END_TIME={end}"))
            .arg(format!("--FLOW_LAUNCH_END_TIME={end}"))
            .arg(format!("--cdfFileName={}", cdf.display()))
            .output()
            .map_err(|e| format!("{}: {e}", self.bin.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("{}: {}", self.bin.display(), out.status));
        }
        parse_anchor(&stdout).ok_or_else(|| {
            format!(
                "{}: no ANCHOR line with sim_s and run_cpu_s (a binary of leafspine.sh build?)",
                self.bin.display()
            )
        })
    }
}

/// The `ANCHOR key=value ...` line the anchor's patch prints after `Simulator::Run()`.
fn parse_anchor(stdout: &str) -> Option<Ns3Run> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("ANCHOR "))?;
    let value = |key: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
    };
    Some(Ns3Run {
        sim_s: value("sim_s")?,
        run_cpu_s: value("run_cpu_s")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anchor_runs_the_built_ins_workload_and_refuses_one_without_it() {
        let mut s = scenario::builtin::load("leafspine-256-websearch").unwrap();
        let w = Workload::of(&s).unwrap();
        assert_eq!((w.start_us, w.load, w.seed), (100, 0.8, 7));
        s.fabric.as_mut().unwrap().workload[0].load = None;
        assert!(Workload::of(&s)
            .unwrap_err()
            .contains("lacks start_us, load or seed"));
        s.fabric = None;
        assert!(Workload::of(&s)
            .unwrap_err()
            .contains("no [[fabric.workload]]"));
    }

    #[test]
    fn the_anchor_line_is_read_and_a_missing_field_is_not() {
        let out =
            "Total flow: 12\nANCHOR sim_s=0.0021 events=5 rx_switch=1 run_wall_s=2 run_cpu_s=1.5\n";
        let r = parse_anchor(out).unwrap();
        assert_eq!((r.sim_s, r.run_cpu_s), (0.0021, 1.5));
        assert!(parse_anchor("ANCHOR sim_s=0.0021 events=5\n").is_none());
        assert!(parse_anchor("Total flow: 12\n").is_none());
    }
}
