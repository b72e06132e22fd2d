//! The window loop's partitions as MPI ranks (feature `mpi`): `mmu-sim run NET --mpi`
//! under `mpirun -np N` or `srun -n N` runs partition `r` of `N` (`crate::parallel`'s,
//! as `--threads N` would) on rank `r`, with the same results byte for byte.
//!
//! A rank builds only its own partition's switches, with their hosts' NICs and sinks
//! (`Network::of_rank`); every other switch is there only as its shape (its ports' far
//! ends and its routes' turns, `crate::deadlock::Shape`), for the envelopes' addresses and
//! the deadlock detector. Every rank keeps every flow's state (a switch reads the route of
//! any cell crossing it). A waveform needs every switch's signals on every rank, so a run
//! with `--vcd`/`--wave` builds the whole network on each (the others' switches then
//! stay as built, and rank 0 gives them what their ranks recorded).
//!
//! Every rank runs the same loop (`crate::parallel::drive`); each of its steps gives every
//! rank the same answer:
//! - at the horizon, one all-gather of a header per rank: its earliest wake (lowered to
//!   the cycles its messages for other ranks act at), whether it failed, whether it holds
//!   a paused queue, and the length of its messages; then, only if some rank sent any,
//!   the envelopes and carried values for other partitions (`crate::parallel`'s `cross`)
//!   gathered to every rank, which takes its own in rank order (the threads' order). The
//!   header answers the next poll: one collective a window without cross traffic, two
//!   with;
//! - a deadlock look, at the detector's cadence: every rank's [`Look`]s ride with its
//!   messages at the check's horizon (so that window's second all-gather always runs),
//!   and every rank runs the same search, only when some rank holds a paused queue;
//! - the waveform: each rank's recorded changes gathered to rank 0, which writes the dump
//!   (the held queues, which only the view reads, once at the end);
//! - at the end: each rank's switch and flow reports gathered to rank 0, which writes the
//!   summary; the first error (by cycle, then switch) gathered to every rank.
//!
//! The window's messages travel in postcard's encoding; the end's reports as JSON, whose
//! types leave out empty fields as the summary's JSON does.

use crate::deadlock::{self, Deadlock, DeadlockOptions, Look};
use crate::network::RunOptions;
use crate::parallel::{deliver, drive, merge_flows, FlowCopy, Part, Partitions, Plan, Poll};
use crate::report::{FlowReport, Speed, SwitchReport};
use crate::switch::{FlowState, Outbox, Switch, SwitchError};
use crate::topology::Topology;
use crate::waves::{self, FabricWaves, Recorded};
use hw_model::InvariantError;
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
    all_gather_counted(world, bytes, &counts)
}

/// Every rank's `bytes`, in rank order, their lengths known (`counts`).
fn all_gather_counted(world: &SimpleCommunicator, bytes: &[u8], counts: &[Count]) -> Vec<Vec<u8>> {
    let (displs, total) = displacements(counts);
    let mut all = vec![0u8; total];
    let mut into = PartitionMut::new(&mut all[..], counts, &displs[..]);
    world.all_gather_varcount_into(bytes, &mut into);
    split(&all, counts, &displs)
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

/// This rank's partition, the others' switches as built (by index; only for a waveform),
/// and where the ranks stood at the last exchange (the next poll's answer).
struct Ranks<'a> {
    world: &'a SimpleCommunicator,
    part: Part,
    rest: Vec<Switch>,
    plan: &'a Plan<'a>,
    topo: &'a Topology,
    polled: Option<Poll>,
    /// Every switch's look at the last check, as the exchange brought them.
    looks: Vec<Look>,
}

/// A rank's header at the horizon: its earliest wake, whether it failed, whether it
/// holds a paused queue, the length of its messages.
const HEADER: usize = 4;

impl Ranks<'_> {
    /// Every rank's header (this one's: `first`, `bytes`), and where the ranks stand.
    fn headers(&self, first: u64, bytes: usize) -> (Vec<u64>, Poll) {
        let mine = [
            first,
            u64::from(self.part.error.is_some()),
            u64::from(self.part.holds_paused()),
            bytes as u64,
        ];
        let mut all = vec![0u64; HEADER * self.world.size() as usize];
        self.world.all_gather_into(&mine[..], &mut all[..]);
        let rows = || all.chunks(HEADER);
        let poll = Poll {
            first: rows().map(|h| h[0]).min().unwrap_or(u64::MAX),
            failed: rows().any(|h| h[1] != 0),
            paused: rows().any(|h| h[2] != 0),
        };
        (all, poll)
    }

    /// At the horizon: what another rank `sent` to this one's switches and flows, in its
    /// sending order.
    fn take_in(&mut self, sent: &Outbox) {
        let (part, plan) = (&mut self.part, self.plan);
        for &e in &sent.envelopes {
            let (p, i) = plan.at[e.switch];
            if p == part.index {
                deliver(e, &mut part.switches[i], &mut part.faults, self.topo);
            }
        }
        for &c in &sent.carried {
            let (_, to) = plan.ends[c.flow as usize];
            if plan.at[to].0 == part.index {
                c.deliver(&mut part.flows);
            }
        }
    }

    /// What this rank's switches recorded for the dump, gathered to rank 0 into the
    /// others' switches there, and merged into the dump; with the queues that held cells
    /// when `held` (only the view at the end reads them).
    fn gather_recorded(&mut self, w: &mut FabricWaves, held: bool) {
        // Rank 0's own switches keep what they recorded; the others send theirs.
        let mine: Vec<(usize, Recorded)> = match self.part.index {
            0 => Vec::new(),
            _ => self
                .part
                .switches
                .iter_mut()
                .map(|s| (s.index, waves::take_recorded(s, held)))
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
}

impl Partitions for Ranks<'_> {
    fn poll(&mut self) -> Poll {
        match self.polled.take() {
            Some(p) => p,
            None => self.headers(self.part.next_wake(), 0).1,
        }
    }

    fn window(&mut self, horizon: u64) {
        self.part.window(horizon, self.plan, self.topo);
    }

    fn exchange(&mut self, check: bool) {
        let mut sent = std::mem::take(&mut self.part.cross);
        // At a check the looks ride with the messages: no collective of their own.
        let looks: Vec<(usize, Look)> = match check {
            true => self
                .part
                .switches
                .iter()
                .map(|s| {
                    let mut look = Look::default();
                    look.take(s);
                    (s.index, look)
                })
                .collect(),
            false => Vec::new(),
        };
        let empty = sent.envelopes.is_empty() && sent.carried.is_empty() && looks.is_empty();
        let bytes = match empty {
            true => Vec::new(),
            false => encode(&(&sent.envelopes, &sent.carried, &looks)),
        };
        // A message wakes its switch at its cycle: the wake it gives is known here.
        let first = sent
            .envelopes
            .iter()
            .map(|e| e.at)
            .fold(self.part.next_wake(), u64::min);
        let (headers, poll) = self.headers(first, bytes.len());
        self.polled = Some(poll);
        let counts: Vec<Count> = headers
            .chunks(HEADER)
            .map(|h| Count::try_from(h[3]).expect("a rank's message below 2 GiB"))
            .collect();
        if counts.iter().any(|&c| c > 0) {
            self.looks.resize_with(self.plan.at.len(), Look::default);
            for (from, bytes) in all_gather_counted(self.world, &bytes, &counts)
                .iter()
                .enumerate()
            {
                if bytes.is_empty() {
                    continue;
                }
                let (envelopes, carried, looks): (_, _, Vec<(usize, Look)>) = decode(bytes);
                for (index, look) in looks {
                    self.looks[index] = look;
                }
                if from != self.part.index {
                    self.take_in(&Outbox { envelopes, carried });
                }
            }
        }
        // The emptied buffers keep their room for the next window.
        sent.envelopes.clear();
        sent.carried.clear();
        self.part.cross = sent;
    }

    fn flush(&mut self, w: &mut FabricWaves) {
        self.gather_recorded(w, false);
    }

    fn deadlock(&mut self, now: u64, opts: &DeadlockOptions) -> Option<Deadlock> {
        // The looks came with the check's exchange.
        deadlock::find(now, self.plan.shapes, &self.looks, opts)
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

/// How a rank's run went: the switches built here back by index and the rank's view of the flows;
/// on rank 0, every switch's report and the merged flows' reports with the run's cost.
pub(crate) struct RankOutcome {
    pub end: u64,
    pub deadlock: Option<Deadlock>,
    pub switches: Vec<Switch>,
    pub flows: Vec<FlowState>,
    pub reports: Option<(Vec<SwitchReport>, Vec<FlowReport>, Speed)>,
}

/// Run this rank's partition `part` (`rest`: the other switches built here, by index: only
/// for a waveform) from cycle `now` to
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
        polled: None,
        looks: Vec::new(),
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
        ranks.gather_recorded(w, true);
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
            .iter_mut()
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

impl FlowCopy for FlowReport {
    fn counts(&mut self) -> (&mut u64, &mut u64) {
        (&mut self.received, &mut self.reordered)
    }

    fn with_sender(mut self, src: Self) -> Self {
        self.sender = src.sender;
        self
    }
}

/// On rank 0: the switches' reports by index, the flows' merged as the threads' views are
/// (`crate::parallel::merge_flows`; `flows`: rank 0's, for the senders' transport names,
/// which the reports do not carry), and the run's cost over every rank.
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
    let mut merged = merge_flows(views, plan);
    for (r, f) in merged.iter_mut().zip(flows) {
        r.sender.transport = f.sender.stats().transport;
    }
    let speed = Speed::new(end, clock_hz, wall, cpu, busy);
    (switches.into_iter().map(|s| s.1).collect(), merged, speed)
}
