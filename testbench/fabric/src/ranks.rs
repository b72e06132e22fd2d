//! The window loop's partitions as MPI ranks (feature `mpi`): `mmu-sim run NET --mpi`
//! under `mpirun -np N` or `srun -n N` runs partition `r` of `N` (`crate::parallel`'s,
//! as `--threads N` would) on rank `r`, with the same results byte for byte.
//!
//! Every rank builds the whole network from the same inputs (the build is deterministic)
//! and steps only its own partition's switches; the others stay as built, for what the
//! loop reads of their structure (far ends, routes' turns, signal names). Every rank runs
//! the same loop (`crate::parallel::drive`); each of its steps is a collective that gives
//! every rank the same answer:
//! - the earliest wake and whether a rank failed: a reduction (minimum);
//! - at the horizon, each rank's envelopes and carried values for other partitions
//!   (`crate::parallel`'s `cross`): gathered to every rank, which takes its own in rank
//!   order, the order the threads' exchange hands them over in;
//! - a deadlock look: every rank's [`Look`]s gathered to every rank, each running the
//!   same search;
//! - the waveform: each rank's recorded changes gathered to rank 0, which writes the dump;
//! - at the end: each rank's switch and flow reports gathered to rank 0, which writes the
//!   summary; the first error (by cycle, then switch) gathered to every rank.
//!
//! The window's messages travel in postcard's encoding; the end's reports as JSON, whose
//! types leave out empty fields as the summary's JSON does.

use crate::deadlock::{self, Deadlock, DeadlockOptions, Look};
use crate::network::RunOptions;
use crate::parallel::{drive, Part, Partitions, Plan};
use crate::report::{FlowReport, Speed, SwitchReport};
use crate::switch::{FlowState, Outbox, Switch, SwitchError};
use crate::topology::Topology;
use crate::waves::{self, FabricWaves, Recorded};
use hw_model::InvariantError;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use mpi::Count;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use switch_run::sim::thread_cpu_seconds;

/// Every rank's `bytes`, in rank order.
fn all_gather(world: &SimpleCommunicator, bytes: &[u8]) -> Vec<Vec<u8>> {
    let n = world.size() as usize;
    let mut counts = vec![0 as Count; n];
    world.all_gather_into(&count(bytes), &mut counts[..]);
    let (displs, total) = displacements(&counts);
    let mut all = vec![0u8; total];
    let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
    world.all_gather_varcount_into(bytes, &mut into);
    split(&all, &counts, &displs)
}

/// Every rank's `bytes`, in rank order, on rank 0 (`None` elsewhere).
fn gather(world: &SimpleCommunicator, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.gather_into(&count(bytes));
        root.gather_varcount_into(bytes);
        return None;
    }
    let mut counts = vec![0 as Count; world.size() as usize];
    root.gather_into_root(&count(bytes), &mut counts[..]);
    let (displs, total) = displacements(&counts);
    let mut all = vec![0u8; total];
    let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
    root.gather_varcount_into_root(bytes, &mut into);
    Some(split(&all, &counts, &displs))
}

/// The length of a message: MPI counts are 32-bit.
fn count(bytes: &[u8]) -> Count {
    Count::try_from(bytes.len()).expect("a rank's message below 2 GiB (one window's traffic)")
}

fn displacements(counts: &[Count]) -> (Vec<Count>, usize) {
    let mut displs = Vec::with_capacity(counts.len());
    let mut at: Count = 0;
    for &c in counts {
        displs.push(at);
        at = at.checked_add(c).expect("the ranks' messages below 2 GiB");
    }
    (displs, at as usize)
}

fn split(all: &[u8], counts: &[Count], displs: &[Count]) -> Vec<Vec<u8>> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
        .collect()
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("the exchanged values encode")
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> T {
    postcard::from_bytes(bytes).expect("a rank's message decodes as it was encoded")
}

/// This rank's partition and the others' switches as built (by index).
struct Ranks<'a> {
    world: &'a SimpleCommunicator,
    part: Part,
    rest: Vec<Switch>,
    plan: &'a Plan<'a>,
    topo: &'a Topology,
}

impl Ranks<'_> {
    /// Every switch of the network, by its index.
    fn all(&self) -> Vec<&Switch> {
        let mut all: Vec<&Switch> = self.part.switches.iter().chain(&self.rest).collect();
        all.sort_by_key(|s| s.index);
        all
    }
}

impl Partitions for Ranks<'_> {
    fn poll(&mut self) -> (u64, bool) {
        // One reduction: the earliest wake, and 0 where a rank failed.
        let mine = [self.part.next_wake(), u64::from(self.part.error.is_none())];
        let mut all = [0u64; 2];
        self.world
            .all_reduce_into(&mine[..], &mut all[..], SystemOperation::min());
        (all[0], all[1] == 0)
    }

    fn window(&mut self, horizon: u64) {
        self.part.window(horizon, self.plan, self.topo);
    }

    fn exchange(&mut self) {
        let sent = std::mem::take(&mut self.part.cross);
        let bytes = encode(&(&sent.envelopes, &sent.carried));
        let me = self.part.index;
        for (from, bytes) in all_gather(self.world, &bytes).iter().enumerate() {
            if from == me {
                continue;
            }
            let (envelopes, carried) = decode(bytes);
            let got = Outbox { envelopes, carried };
            self.part.take_in(&got, self.plan, self.topo);
        }
        // The emptied buffers keep their room for the next window.
        let mut sent = sent;
        sent.envelopes.clear();
        sent.carried.clear();
        self.part.cross = sent;
    }

    fn flush(&mut self, w: &mut FabricWaves) {
        // Rank 0's own switches keep what they recorded; the others send theirs.
        let mine: Vec<(usize, Recorded)> = match self.part.index {
            0 => Vec::new(),
            _ => self
                .part
                .switches
                .iter_mut()
                .map(|s| (s.index, waves::take_recorded(s)))
                .collect(),
        };
        let Some(all) = gather(self.world, &encode(&mine)) else {
            return;
        };
        for bytes in &all {
            for (index, rec) in decode::<Vec<(usize, Recorded)>>(bytes) {
                let at = self.rest.binary_search_by_key(&index, |s| s.index);
                let sw = &mut self.rest[at.expect("another rank's switch is in rest")];
                waves::put_recorded(sw, rec);
            }
        }
        let mut all: Vec<&mut Switch> = self
            .part
            .switches
            .iter_mut()
            .chain(self.rest.iter_mut())
            .collect();
        all.sort_by_key(|s| s.index);
        w.flush(&mut all);
    }

    fn deadlock(&mut self, now: u64, opts: &DeadlockOptions) -> Option<Deadlock> {
        let mine: Vec<(usize, Look)> = self
            .part
            .switches
            .iter()
            .map(|s| (s.index, Look::of(s)))
            .collect();
        let mut looks = vec![Look::default(); self.plan.at.len()];
        for bytes in all_gather(self.world, &encode(&mine)) {
            for (index, look) in decode::<Vec<(usize, Look)>>(&bytes) {
                looks[index] = look;
            }
        }
        deadlock::find(now, &self.all(), &looks, opts)
    }
}

/// The first error of a rank: its cycle, switch index, node and what broke.
#[derive(Serialize, Deserialize)]
struct RankError {
    cycle: u64,
    index: usize,
    node: u32,
    at: u64,
    what: String,
}

/// What a rank reports at the end (rank 0 merges them).
#[derive(Serialize, Deserialize)]
struct RankReport {
    switches: Vec<(usize, SwitchReport)>,
    flows: Vec<FlowReport>,
    cpu_seconds: f64,
    busy_seconds: f64,
}

/// How a rank's run went: every switch back by index and the rank's view of the flows;
/// on rank 0, every switch's report and the merged flows' reports with the run's cost.
pub(crate) struct RankOutcome {
    pub end: u64,
    pub deadlock: Option<Deadlock>,
    pub switches: Vec<Switch>,
    pub flows: Vec<FlowState>,
    pub reports: Option<(Vec<SwitchReport>, Vec<FlowReport>, Speed)>,
}

/// Run this rank's partition `part` (`rest`: the other switches, by index) from cycle `now` to
/// `opts.end_cycle` (or the deadlock); `t0` when the run started, for its wall time.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    world: &SimpleCommunicator,
    (part, rest): (Part, Vec<Switch>),
    plan: &Plan,
    topo: &Topology,
    start: (u64, Option<Deadlock>),
    mut waves: Option<&mut FabricWaves>,
    opts: &RunOptions,
    (t0, clock_hz): (Instant, u64),
) -> Result<RankOutcome, SwitchError> {
    let cpu0 = thread_cpu_seconds();
    let mut ranks = Ranks {
        world,
        part,
        rest,
        plan,
        topo,
    };
    let (end, deadlock) = drive(
        &mut ranks,
        plan.lookahead,
        start,
        waves.as_deref_mut(),
        opts,
    );
    if let Some(w) = waves {
        // The switches' first PAUSE and held queues as they end, for the view.
        ranks.flush(w);
    }
    first_error(world, ranks.part.error.take())?;
    let Ranks {
        mut part, mut rest, ..
    } = ranks;
    for s in &mut part.switches {
        s.finish(end, &mut part.flows);
    }
    let mine = RankReport {
        switches: part
            .switches
            .iter()
            .map(|s| (s.index, SwitchReport::of(s, topo, end)))
            .collect(),
        flows: part.flows.iter().map(FlowReport::of).collect(),
        cpu_seconds: thread_cpu_seconds() - cpu0,
        busy_seconds: part.busy.as_secs_f64(),
    };
    let json = serde_json::to_vec(&mine).expect("a rank's report serializes");
    let reports = gather(world, &json).map(|all| {
        let all: Vec<RankReport> = all
            .iter()
            .map(|b| serde_json::from_slice(b).expect("a rank's report reads back"))
            .collect();
        merge(all, &part.flows, plan, (t0, clock_hz, end))
    });
    rest.append(&mut part.switches);
    rest.sort_by_key(|s| s.index);
    Ok(RankOutcome {
        end,
        deadlock,
        switches: rest,
        flows: part.flows,
        reports,
    })
}

/// The first error of any rank (by cycle, then switch), on every rank.
fn first_error(
    world: &SimpleCommunicator,
    mine: Option<(u64, usize, SwitchError)>,
) -> Result<(), SwitchError> {
    let mine = mine.map(|(cycle, index, e)| RankError {
        cycle,
        index,
        node: e.switch,
        at: e.error.cycle,
        what: e.error.what,
    });
    let first = all_gather(world, &encode(&mine))
        .iter()
        .filter_map(|b| decode::<Option<RankError>>(b))
        .min_by_key(|e| (e.cycle, e.index));
    match first {
        None => Ok(()),
        Some(e) => Err(SwitchError {
            switch: e.node,
            error: InvariantError {
                cycle: e.at,
                what: e.what,
            },
        }),
    }
}

/// On rank 0: the switches' reports by index, the flows' merged as
/// `crate::parallel::merge_flows` merges the threads' views (`flows`: rank 0's, for the
/// senders' transport names), and the run's cost over every rank.
fn merge(
    all: Vec<RankReport>,
    flows: &[FlowState],
    plan: &Plan,
    (t0, clock_hz, end): (Instant, u64, u64),
) -> (Vec<SwitchReport>, Vec<FlowReport>, Speed) {
    let wall = t0.elapsed().as_secs_f64();
    let cpu: f64 = all.iter().map(|r| r.cpu_seconds).sum();
    let busy = all
        .iter()
        .map(|r| r.busy_seconds / wall.max(f64::MIN_POSITIVE))
        .collect();
    let mut switches: Vec<(usize, SwitchReport)> = Vec::with_capacity(plan.at.len());
    let mut views = Vec::with_capacity(all.len());
    for r in all {
        switches.extend(r.switches);
        views.push(r.flows);
    }
    switches.sort_by_key(|s| s.0);
    let part = |switch: usize| plan.at[switch].0;
    let merged = (0..plan.ends.len())
        .map(|f| {
            let (src, dst) = plan.ends[f];
            let mut r = views[part(dst)][f].clone();
            r.received = views.iter().map(|v| v[f].received).sum();
            r.reordered = views.iter().map(|v| v[f].reordered).sum();
            r.sender = views[part(src)][f].sender.clone();
            r.sender.transport = flows[f].sender.stats().transport;
            r
        })
        .collect();
    let speed = Speed::new(end, clock_hz, wall, cpu, busy);
    (switches.into_iter().map(|s| s.1).collect(), merged, speed)
}
