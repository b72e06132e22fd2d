//! `mmu-sim run` of a network scenario, one with a `[fabric]` table (docs/fabric.md),
//! built by `fabric::build` (relative files from the scenario file's directory) and run
//! for `run.cycles`. Bad input exits 2 naming the file, line and field. Its outputs: the
//! summary, `--ns3-out`, each switch's event stream (`--trace-events DIR`) and one
//! waveform with a scope per switch (`--vcd`, `--wave`).

use crate::{Failure, RunArgs};
use fabric::build::{plan, Built, Overrides, Plan};
use fabric::memory::Sizes;
use fabric::{Network, RunOptions};
use hw_model::Policy;
use scenario::{FabricTransport, Scenario};
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
            "{flag}: not available for a network scenario ([fabric]); allowed: --policy, --cycles, --threads, --mpi, --mem-limit, --summary-json, --ns3-out, --trace-events, --vcd, --wave, --wave-signals, --wave-window"
        )));
    }
    let dir = Path::new(&a.scenario).parent().unwrap_or(Path::new(""));
    let ov = Overrides {
        policy,
        cycles: a.cycles,
    };
    let plan = plan(scenario, dir, ov).map_err(|e| Failure::Input(e.to_string()))?;
    let mpi = Mpi::start(a)?;
    let rank = mpi.as_ref().map(Mpi::rank);
    let prepared = prepare(scenario, a, plan, mpi.as_ref(), rank);
    let (mut net, opts) = match &mpi {
        Some(m) => m.agree(prepared)?,
        None => prepared?,
    };
    let summary = match &mpi {
        Some(m) => m.run(&mut net, &opts),
        None => net.run(&opts).map(Some),
    };
    let summary = summary.map_err(|e| Failure::Violation(e.to_string()))?;
    net.finish_outputs()
        .map_err(|e| Failure::Input(format!("outputs: {e}")))?;
    // With --mpi, rank 0 reports; the others are done.
    let Some(summary) = summary else {
        return Ok(());
    };
    crate::to_stdout(format_args!("{summary}\n"))?;
    if let Some(p) = &a.summary_json {
        fs::write(p, summary.to_json())
            .map_err(|e| Failure::Input(format!("--summary-json {}: {e}", p.display())))?;
    }
    if let Some(dir) = &a.ns3_out {
        ns3_out(dir, &net, &summary.fct_txt())?;
    }
    crate::verdict(&summary.violations)
}

/// The network of `plan`, weighed against the memory it may take, with its outputs
/// attached, and the options of its run. Under `--mpi` each rank builds and prepares its
/// own part (the whole network when a waveform is asked for: its writer numbers every
/// switch's signals).
fn prepare(
    scenario: &Scenario,
    a: &RunArgs,
    plan: Plan<'_>,
    mpi: Option<&Mpi>,
    rank: Option<(usize, usize)>,
) -> Result<(Network, RunOptions), Failure> {
    let (filter, window, dump) = crate::wave_args(a)?;
    let part = rank.filter(|_| dump.is_none());
    fits_memory(a, &plan, mpi, part.is_some())?;
    let Built {
        mut net, options, ..
    } = plan
        .build_part(part)
        .map_err(|e| Failure::Input(e.to_string()))?;
    let end_cycle = options.end_cycle;
    if let Some((_, ranks)) = rank {
        net.check_ranks(ranks).map_err(|e| {
            Failure::Input(format!(
                "--mpi: {e}; the job's rank count is mpirun's -np or srun's -n"
            ))
        })?;
    }
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
        let seed = scenario.fabric.as_ref().map_or(1, |f| f.ecmp_seed).into();
        match rank {
            Some(r) => net.attach_events_of_rank(dir, (end_cycle, seed), r),
            None => net.attach_events(dir, end_cycle, seed),
        }
        .map_err(|e| {
            Failure::Input(format!(
                "--trace-events {e}; allowed: a directory (created if missing)"
            ))
        })?;
    }
    if let Some((flag, path, format)) = dump {
        let file = match rank {
            // Rank 0 writes the dump; the others record their switches' changes for it.
            Some((r, _)) if r > 0 => fs::File::create("/dev/null")
                .map_err(|e| Failure::Input(format!("{flag}: /dev/null: {e}")))?,
            _ => {
                let gtkw = gtkw_path(path);
                let [file, _] = crate::open_outputs([
                    (flag, Some(path.as_path())),
                    ("GTKWave save file", Some(gtkw.as_path())),
                ])?;
                file.expect("asked for")
            }
        };
        net.attach_waves(file, path, format, &filter, window, end_cycle)
            .map_err(|e| Failure::Input(format!("{flag} {}: {e}", path.display())))?;
    }
    let opts = RunOptions {
        threads: a.threads.map_or(1, usize::from),
        horizon_error: a.horizon_error,
        ..options
    };
    Ok((net, opts))
}

/// `--mem-limit`: bytes with an optional K, M, G or T (powers of 1024), 1M..=1024T.
pub(crate) fn mem_limit_arg(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s.trim().char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 10),
        Some((i, 'M' | 'm')) => (&s[..i], 20),
        Some((i, 'G' | 'g')) => (&s[..i], 30),
        Some((i, 'T' | 't')) => (&s[..i], 40),
        _ => (s.trim(), 0),
    };
    let bytes = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|b| (1 << 20..=1 << 50).contains(b));
    bytes.ok_or_else(|| {
        format!("{s:?}; allowed: 1M..=1024T, bytes with an optional K, M, G or T (1024-based)")
    })
}

/// The memory this process may take: the machine's available memory, or the room its
/// cgroup and the cgroups above it leave when lower (cgroup v2, where a Slurm job's
/// `--mem` is; then v1's memory controller), shared by `sharing` processes of the run.
fn available_memory(sharing: usize) -> Option<u64> {
    let read = |p: &str| fs::read_to_string(p).ok();
    let meminfo = read("/proc/meminfo")?;
    let kib = meminfo.lines().find_map(|l| {
        let rest = l.strip_prefix("MemAvailable:")?;
        rest.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
    })?;
    let number = |p: &str| read(p).and_then(|t| t.trim().parse::<u64>().ok());
    let room = |max: &str, used: &str| Some(number(max)?.saturating_sub(number(used).unwrap_or(0)));
    // This process's cgroup and each one above it: v2 (`0::PATH` in /proc/self/cgroup),
    // else v1's memory controller (`N:memory:PATH`).
    let groups = read("/proc/self/cgroup").unwrap_or_default();
    let within = |tag: &str, root: &str, max: &str, used: &str| {
        let own = groups
            .lines()
            .find_map(|l| l.split_once(tag).map(|(_, p)| p.to_owned()))?;
        Path::new(&own)
            .ancestors()
            .filter_map(|a| {
                let dir = Path::new(root).join(a.strip_prefix("/").unwrap_or(a));
                let file = |f: &str| dir.join(f).to_string_lossy().into_owned();
                room(&file(max), &file(used))
            })
            .min()
    };
    let cgroup = within("0::", "/sys/fs/cgroup", "memory.max", "memory.current").or_else(|| {
        within(
            ":memory:",
            "/sys/fs/cgroup/memory",
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
        )
    });
    let room = cgroup.map_or(kib * 1024, |c| c.min(kib * 1024));
    Some(room / sharing.max(1) as u64)
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// Refuse, before the network is built, a run whose estimated peak (`fabric::memory`) is
/// above the memory it may take (`--mem-limit`, or [`available_memory`] shared by the
/// job's ranks on this machine), saying how many ranks would fit it. Under `--mpi` the
/// peak is the largest rank's part when the ranks build `parts`, else the whole network.
fn fits_memory(
    a: &RunArgs,
    plan: &Plan<'_>,
    mpi: Option<&Mpi>,
    parts: bool,
) -> Result<(), Failure> {
    let (ranks, sharing) = match mpi {
        Some(m) => (m.rank().1, m.on_this_machine()),
        None => (1, 1),
    };
    let (limit, from) = match a.mem_limit {
        Some(l) => (l, "--mem-limit"),
        None => match available_memory(sharing) {
            Some(l) => (
                l,
                "the available memory (MemAvailable, or the cgroup's room when lower)",
            ),
            None => return Ok(()),
        },
    };
    let closed = plan
        .flows
        .iter()
        .filter(|f| plan.transports.by_pg[f.pg as usize] != FabricTransport::OpenLoop)
        .count();
    let topo = &plan.topo;
    let cells = |s| {
        let cfg = plan.configs.of(s);
        cfg.buffer_bytes / u64::from(cfg.cell_bytes.max(1))
    };
    let sizes = Sizes {
        topo,
        flows: plan.flows.len() + closed + plan.ecm_flows,
        cell_bytes: topo
            .switches()
            .first()
            .map_or(1, |&s| plan.configs.of(s).cell_bytes),
        cells: &cells,
        intervals: plan.occupancy_intervals(),
    };
    let (estimate, whose) = match (mpi, parts) {
        (Some(_), true) => (sizes.per_rank(ranks), "the largest rank's part"),
        (Some(_), false) => (
            sizes.whole(1),
            "the whole network on every rank, for the waveform",
        ),
        (None, _) => (
            sizes.whole(a.threads.map_or(1, usize::from)),
            "the whole network",
        ),
    };
    if estimate.peak() <= limit {
        return Ok(());
    }
    let switches = topo.switches().len();
    let fit = match sizes.ranks_to_fit(limit, switches) {
        Some(n) => format!(
            "{n} MPI ranks of this memory each would fit it (mpirun -np {n} or srun -n {n} ... --mpi{})",
            if parts || mpi.is_none() { "" } else { ", without --vcd/--wave" }
        ),
        None => format!(
            "no rank count fits it: {switches} ranks, one switch each, need {} MiB a rank; a machine with more memory would",
            mib(sizes.per_rank(switches).peak())
        ),
    };
    Err(Failure::Input(format!(
        "memory: the run's estimated peak is {} MiB per process ({whose}: {} MiB as built, {} MiB more as it runs); allowed: at most {} MiB, {from}; {fit}",
        mib(estimate.peak()),
        mib(estimate.built),
        mib(estimate.running),
        mib(limit)
    )))
}

/// `--mpi`: this process as a rank of an MPI job (`fabric::Network::run_ranks`); MPI is
/// finalized when it is dropped.
#[cfg(feature = "mpi")]
pub(crate) struct Mpi {
    universe: mpi::environment::Universe,
}

#[cfg(feature = "mpi")]
impl Mpi {
    /// MPI started, if `--mpi` is given.
    fn start(a: &RunArgs) -> Result<Option<Self>, Failure> {
        if !a.mpi {
            return Ok(None);
        }
        let universe = mpi::initialize()
            .ok_or_else(|| Failure::Input("--mpi: MPI is initialized already".into()))?;
        Ok(Some(Self { universe }))
    }

    /// The ranks of the job on this rank's machine (which share its memory).
    fn on_this_machine(&self) -> usize {
        use mpi::traits::Communicator;
        let world = self.universe.world();
        world.split_shared(world.rank()).size() as usize
    }

    /// This process's rank and the job's rank count.
    fn rank(&self) -> (usize, usize) {
        use mpi::traits::Communicator;
        let world = self.universe.world();
        (world.rank() as usize, world.size() as usize)
    }

    fn run(
        &self,
        net: &mut Network,
        opts: &RunOptions,
    ) -> Result<Option<fabric::FabricSummary>, fabric::SwitchError> {
        net.run_ranks(opts, &self.universe.world())
    }

    /// `prepared` on this rank, if every rank prepared its part: a rank that refused the
    /// run alone would leave the others waiting in the run's first collective.
    fn agree<T>(&self, prepared: Result<T, Failure>) -> Result<T, Failure> {
        use mpi::collective::{CommunicatorCollectives, SystemOperation};
        let (ok, mut all) = (u8::from(prepared.is_ok()), 0u8);
        self.universe
            .world()
            .all_reduce_into(&ok, &mut all, SystemOperation::min());
        match prepared {
            Ok(_) if all == 0 => Err(Failure::Input(
                "--mpi: another rank refused the run (its message is on its standard error)".into(),
            )),
            p => p,
        }
    }
}

/// Without the feature there is no rank: `--mpi` is refused.
#[cfg(not(feature = "mpi"))]
pub(crate) enum Mpi {}

#[cfg(not(feature = "mpi"))]
impl Mpi {
    fn start(a: &RunArgs) -> Result<Option<Self>, Failure> {
        match a.mpi {
            false => Ok(None),
            true => Err(Failure::Input(
                "--mpi: this mmu-sim is built without MPI; allowed: a build with \
                 `cargo build --release -p mmu-sim --features mpi` (OpenMPI: \
                 apt-get install libopenmpi-dev openmpi-bin libclang-dev)"
                    .into(),
            )),
        }
    }

    fn rank(&self) -> (usize, usize) {
        match *self {}
    }

    fn on_this_machine(&self) -> usize {
        match *self {}
    }

    fn run(
        &self,
        _: &mut Network,
        _: &RunOptions,
    ) -> Result<Option<fabric::FabricSummary>, fabric::SwitchError> {
        match *self {}
    }

    fn agree<T>(&self, _: Result<T, Failure>) -> Result<T, Failure> {
        match *self {}
    }
}

/// `--ns3-out DIR`: the flows' `fct.txt`, and the topology as it ran (generated or read,
/// failed links included) as ns3-datacenter's `topology.txt`, so a generated network can
/// be compared with an ns-3 file or run by ns-3 itself.
fn ns3_out(dir: &Path, net: &Network, fct: &str) -> Result<(), Failure> {
    fs::create_dir_all(dir)
        .and_then(|()| fs::write(dir.join("fct.txt"), fct))
        .and_then(|()| fs::write(dir.join("topology.txt"), net.topology().to_ns3()))
        .map_err(|e| Failure::Input(format!("--ns3-out {}: {e}", dir.display())))
}
