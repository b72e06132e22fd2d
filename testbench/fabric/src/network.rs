//! The network of cycle-level MMUs: one `hw_model::Mmu` per switch of a [`Topology`],
//! joined by its links, with the hosts' NICs sending open-loop flows and their sinks
//! receiving them, all at one core clock.
//!
//! Built by [`Network::new`] from a topology (failed links included: they keep their
//! ports, and routing avoids them), the flows (`flows::Flow`, from a flow file or a
//! generator) and a switch configuration per switch (a profile with its policy, buffer and
//! alpha; the network sets its port count and per-port speeds from the switch's links, and
//! its `link_delay_ns`, which sizes the PFC headroom, to the longest of them; its SRAM
//! cells per cycle at most its port count).
//!
//! The loop ([`Network::run`]) is event driven per switch: a switch is stepped only in a
//! cycle in which it has something to do (its MMU's `next_event`, a NIC's, an arrival on a
//! link), and the MMU jumps over the cycles in between with `skip_to`; the network jumps to
//! the earliest cycle any switch or the deadlock detector needs. Switches exchange only
//! [`Envelope`](crate::link::Envelope)s, delivered after each cycle's steps; every
//! envelope arrives at least a cycle after it was sent, so the order in which switches
//! step within a cycle does not matter. With [`RunOptions::threads`] above 1 the switches
//! are partitioned and run in windows, one thread per partition (`crate::parallel`).
//! An MPI rank builds only its partition's part ([`Network::of_rank`], `crate::ranks`).

use crate::deadlock::{Deadlock, DeadlockOptions, Shape};
use crate::flows::{self, Flow};
use crate::link::{ArmedFault, LinkFault};
use crate::parallel::{self, Part, Plan};
use crate::report::{self, FabricSummary, FlowReport, SwitchReport};
use crate::routing::{self, Ecmp, Routes, Unreachable};
use crate::switch::{FlowState, Nic, Occupancy, Port, PortEnd, Switch, SwitchError};
use crate::topology::{NodeId, Topology};
use crate::trace::{self, OutputError};
use crate::transport::{self, Sender, Transports};
use crate::waves::{self, FabricWaves};
use hw_model::config::ConfigError;
use hw_model::{Derived, Ecn, PacketHdr, PfcFrame, SwitchConfig};
use scenario::params::EcmRpParams;
use scenario::{default_proc_cycles, Arbitration, Link, MIN_PACKET_BYTES};
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;
use stimulus::link_partner::LinkPartner;
use stimulus::reaction_point::ReactionPoint;
use stimulus::timeline::Timeline;
use thiserror::Error;
use wave::{Format, SignalFilter, SignalSpec, WaveError, Window};

/// A network that cannot be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// A switch's configuration does not validate.
    #[error("switch {switch}: {field}: {message}", field = .error.field, message = .error.message)]
    Config { switch: NodeId, error: ConfigError },
    /// A switch's clock or cell size differs from the first switch's.
    #[error("switch {switch}: {field} is {value}; allowed: {allowed} (the first switch's: every switch runs on one clock and one cell size)")]
    Mismatch {
        switch: NodeId,
        field: &'static str,
        value: u64,
        allowed: u64,
    },
    /// A switch with more links than its configuration's ports.
    #[error("switch {switch}: ports: {links} links; allowed: at most {ports} (its configuration's ports: the profile's, or `ports` in [switch] or [[fabric.switch]])")]
    Ports {
        switch: NodeId,
        links: usize,
        ports: usize,
    },
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// More flows than the model's 32-bit flow ids.
    #[error("{0} flows; allowed: at most {max}", max = u32::MAX)]
    TooManyFlows(usize),
    /// A switch with congestion points whose cell cannot hold an ECM frame.
    #[error("switch {switch}: cell_bytes: a {bytes} B ECM frame takes {cells} cells; allowed: one (cell_bytes at least {bytes} plus packet_overhead_bytes with [switch.ecm]: a frame enters the buffer in one idle ingress cycle)")]
    EcmCells {
        switch: NodeId,
        bytes: u32,
        cells: u32,
    },
}

/// How long to run and what to watch for.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Cycles to run: `0..end_cycle`.
    pub end_cycle: u64,
    pub deadlock: DeadlockOptions,
    /// End the run at the cycle a deadlock is found.
    pub stop_at_deadlock: bool,
    /// Partitions of the switches, each run by a thread (`crate::parallel`); at most the
    /// switch count. The results do not depend on it.
    pub threads: usize,
    /// Cycles each window runs past its safe horizon: 0, but for the test that shows a
    /// wrong horizon changing the results.
    #[doc(hidden)]
    pub horizon_error: u64,
}

/// Picoseconds to cycles at `clock_hz`, rounded up (a delay is never shortened).
fn ps_to_cycles(ps: u64, clock_hz: u64) -> u64 {
    (ps as u128 * clock_hz as u128).div_ceil(1_000_000_000_000) as u64
}

/// The network and its state.
pub struct Network {
    topo: Topology,
    clock_hz: u64,
    /// The switches built here, by index: every switch, or an MPI rank's own
    /// ([`of_rank`](Self::of_rank)).
    pub(crate) switches: Vec<Switch>,
    /// Every switch's shape, by index, built here or not.
    shapes: Vec<Shape>,
    pub(crate) flows: Vec<FlowState>,
    /// Per flow: the switches of its source and destination hosts.
    ends: Vec<(usize, usize)>,
    faults: Vec<ArmedFault>,
    deadlock: Option<Deadlock>,
    now: u64,
    /// The outputs asked for: the waveform, the directory of the event streams.
    waves: Option<FabricWaves>,
    events: Option<PathBuf>,
    /// The plan's lossless queues that can overflow their headroom, for the summary.
    pub headroom_warnings: Vec<String>,
}

impl Network {
    /// Build the network: `config(switch)` gives each switch's configuration (its
    /// `ports`, `port_speeds_gbps` and `link_delay_ns` are set here from its links).
    pub fn new(
        topo: Topology,
        flows: &[Flow],
        ecmp: Ecmp,
        transports: &Transports,
        config: impl Fn(NodeId) -> SwitchConfig,
    ) -> Result<Network, BuildError> {
        Self::build(topo, flows, (ecmp, transports), config, |_| true)
    }

    /// The part of the network MPI rank `rank` of `ranks` runs (`run_ranks`): the switches
    /// of its partition (`crate::parallel::partition`) with their hosts' NICs and sinks;
    /// every other switch only as its shape (`crate::deadlock::Shape`: its ports' far ends
    /// and its routes' turns, which the deadlock detector reads).
    /// Every flow's state is kept (a switch reads the route of any cell crossing it).
    pub fn of_rank(
        topo: Topology,
        flows: &[Flow],
        ecmp: Ecmp,
        transports: &Transports,
        config: impl Fn(NodeId) -> SwitchConfig,
        (rank, ranks): (usize, usize),
    ) -> Result<Network, BuildError> {
        let part_of = parallel::partition(&topo, &parallel::line_rate(&topo), ranks);
        Self::build(topo, flows, (ecmp, transports), config, |i| {
            part_of[i] == rank
        })
    }

    /// The network with the switches `here` says (by index) built; every switch's shape.
    fn build(
        topo: Topology,
        flows: &[Flow],
        (ecmp, transports): (Ecmp, &Transports),
        config: impl Fn(NodeId) -> SwitchConfig,
        here: impl Fn(usize) -> bool,
    ) -> Result<Network, BuildError> {
        if flows.len() > u32::MAX as usize {
            return Err(BuildError::TooManyFlows(flows.len()));
        }
        let routes = Routes::compute(&topo)?;
        let derived = switch_configs(&topo, config)?;
        let clock_hz = derived[0].clock_hz;
        let mut index = vec![usize::MAX; topo.node_count()];
        for (i, &s) in topo.switches().iter().enumerate() {
            index[s as usize] = i;
        }
        let prop = |link: usize| ps_to_cycles(topo.links()[link].delay.0, clock_hz).max(1);
        // Per host: its switch's index, its port there and its NIC's index.
        let mut nic_of = vec![(usize::MAX, 0u8, usize::MAX); topo.node_count()];
        let mut shapes = Vec::with_capacity(derived.len());
        let mut switches = Vec::new();
        for (i, (&node, d)) in topo.switches().iter().zip(&derived).enumerate() {
            let mut hosts = 0;
            let ends: Vec<PortEnd> = topo
                .ports(node)
                .iter()
                .enumerate()
                .map(|(p, &link)| {
                    let peer = topo.links()[link].peer(node);
                    if topo.is_switch(peer) {
                        let q = topo.ports(peer).iter().position(|&l| l == link);
                        PortEnd::Switch {
                            switch: index[peer as usize],
                            port: q.expect("a link is a port of both ends") as u8,
                        }
                    } else {
                        nic_of[peer as usize] = (i, p as u8, hosts);
                        hosts += 1;
                        PortEnd::Host(hosts - 1)
                    }
                })
                .collect();
            if here(i) {
                let links = topo.ports(node).iter().zip(&ends).enumerate();
                let ports = links
                    .clone()
                    .map(|(p, (&link, &end))| Port {
                        end,
                        link,
                        prop_cycles: prop(link),
                        peer_proc_cycles: match end {
                            PortEnd::Switch { switch, port } => {
                                default_proc_cycles(&derived[switch], port as usize)
                            }
                            PortEnd::Host(_) => 0,
                        },
                        rate_bps: d.rate_bps[p],
                        last_arrival: 0,
                        stats: Default::default(),
                    })
                    .collect();
                let nics = links
                    .filter(|(_, (_, end))| matches!(end, PortEnd::Host(_)))
                    .map(|(p, (&link, _))| nic(topo.links()[link].peer(node), p, prop(link), d))
                    .collect();
                let mut sw = Switch::new(node, i, d.clone(), ports);
                sw.nics = nics;
                switches.push(sw);
            }
            shapes.push(Shape::new(node, ends));
        }
        // A built switch's position among those built here.
        let local =
            |s: usize, switches: &[Switch]| switches.binary_search_by_key(&s, |sw| sw.index).ok();
        let tuples = flows::five_tuples(flows);
        let mut states = Vec::with_capacity(flows.len());
        let mut feedback = Vec::new();
        let route = Route {
            topo: &topo,
            routes: &routes,
            ecmp: &ecmp,
            index: &index,
        };
        for (f, (flow, tuple)) in flows.iter().zip(tuples).enumerate() {
            let (s, port, n) = nic_of[flow.src as usize];
            let d = &derived[s];
            let line_bps = d.rate_bps[port as usize];
            let packets = flow.size.div_ceil(d.cfg.mtu_bytes as u64);
            let sender =
                transport::sender(&transports.by_pg[flow.pg as usize], packets, line_bps, d);
            let mut state = route.flow_state(&mut shapes, f, *flow, tuple, d)?;
            state.header.src = port;
            state.packets = packets;
            state.sender = sender;
            if !matches!(state.sender, Sender::OpenLoop) {
                state.feedback = Some(flows.len() + feedback.len());
                feedback.push(f);
            }
            if let Some(at) = local(s, &switches) {
                switches[at].nics[n].flows.push(f);
            }
            states.push(state);
        }
        for of in feedback {
            let data = &states[of];
            let t = data.tuple;
            let back = Flow {
                src: data.flow.dst,
                dst: data.flow.src,
                pg: transports.feedback_pg.unwrap_or(data.flow.pg),
                dport: t.sport,
                size: 0,
                start: data.flow.start,
            };
            let tuple = t.reversed();
            let (s, port, _) = nic_of[back.src as usize];
            let f = states.len();
            let mut state = route.flow_state(&mut shapes, f, back, tuple, &derived[s])?;
            state.header.src = port;
            state.sender = Sender::Feedback { of };
            states.push(state);
            for host in [back.src, back.dst] {
                let (s, _, n) = nic_of[host as usize];
                if let Some(at) = local(s, &switches) {
                    switches[at].nics[n].answers = true;
                }
            }
        }
        // The ECM flows, after the feedback flows: per flow from a host and switch with
        // congestion points on its path, one from that switch back to the host.
        let cps: Vec<bool> = derived
            .iter()
            .map(|d| !d.cfg.ecm.priorities.is_empty())
            .collect();
        for (i, d) in derived.iter().enumerate().filter(|&(i, _)| cps[i]) {
            let cells = d.cells_for(MIN_PACKET_BYTES);
            if cells != 1 {
                return Err(BuildError::EcmCells {
                    switch: topo.switches()[i],
                    bytes: MIN_PACKET_BYTES,
                    cells,
                });
            }
        }
        if cps.contains(&true) {
            for f in 0..states.len() {
                for j in 0..states[f].hops.len() {
                    if !cps[states[f].hops[j].0] {
                        continue;
                    }
                    let e = states.len();
                    let state = route.ecm_flow(&mut shapes, &states[f], j, e, transports.ecm_pg);
                    states[f].ecm.push((state.hops[0].0, e as u32));
                    states.push(state);
                }
                if !states[f].ecm.is_empty() {
                    let (s, _, n) = nic_of[states[f].flow.src as usize];
                    if let Some(at) = local(s, &switches) {
                        switches[at].nics[n].answers = true;
                    }
                }
            }
            if states.len() > u32::MAX as usize {
                return Err(BuildError::TooManyFlows(states.len()));
            }
        }
        for nic in switches.iter_mut().flat_map(|s| s.nics.iter_mut()) {
            nic.flows.sort_by_key(|&f| (states[f].start_cycle, f));
        }
        for s in &mut switches {
            s.init_due(&states);
        }
        Ok(Network {
            topo,
            clock_hz,
            switches,
            shapes,
            ends: states
                .iter()
                .map(|f| {
                    let dst = nic_of[f.flow.dst as usize].0;
                    match f.sender {
                        // An ECM flow starts at its congestion point's switch.
                        Sender::Ecm => (f.hops[0].0, dst),
                        _ => (nic_of[f.flow.src as usize].0, dst),
                    }
                })
                .collect(),
            flows: states,
            faults: Vec::new(),
            deadlock: None,
            now: 0,
            waves: None,
            events: None,
            headroom_warnings: Vec::new(),
        })
    }

    /// Break a link on purpose (companion tests of the checks). A pause for ever is
    /// held by the pausing switch's input (`Switch::held`).
    pub fn inject_fault(&mut self, fault: LinkFault) {
        if let LinkFault::PauseForever { link, from, class } = fault {
            let port = self.topo.ports(from).iter().position(|&l| l == link);
            let sw = self.switches.iter_mut().find(|s| s.node == from);
            if let (Some(sw), Some(port)) = (sw, port) {
                let mut frame = PfcFrame {
                    class_enable: 1 << class,
                    ..PfcFrame::default()
                };
                frame.quanta[class as usize] = u16::MAX;
                sw.held = Some((port as u8, frame));
            }
        }
        self.faults.push(ArmedFault::new(fault));
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The core clock every switch runs at.
    pub fn clock_hz(&self) -> u64 {
        self.clock_hz
    }

    /// The MMU of `switch` (a node id), if it is a switch.
    pub fn mmu(&self, switch: NodeId) -> Option<&hw_model::Mmu> {
        self.switches
            .iter()
            .find(|s| s.node == switch)
            .map(|s| &s.mmu)
    }

    /// Every host NIC's ECM reaction point gets parameters `p` (`[ecm_rp]`), its random
    /// stream `seed` and the host's node id (by default `[ecm_rp]`'s defaults and seed 1).
    pub fn set_ecm_rp(&mut self, p: &EcmRpParams, seed: u64) {
        for s in &mut self.switches {
            let d = s.mmu.config();
            for nic in &mut s.nics {
                let stream = seed ^ (nic.host as u64) << 32;
                *nic.partner.rp_mut() = ReactionPoint::new(nic.port, p, d, stream);
            }
        }
    }

    /// The ECM reaction point of `host`'s NIC, if it is a host.
    pub fn reaction_point(&self, host: NodeId) -> Option<&ReactionPoint> {
        let nics = self.switches.iter().flat_map(|s| &s.nics);
        nics.into_iter()
            .find(|n| n.host == host)
            .map(|n| n.partner.rp())
    }

    /// For companion tests that corrupt a switch's model on purpose.
    pub fn mmu_mut(&mut self, switch: NodeId) -> Option<&mut hw_model::Mmu> {
        self.switches
            .iter_mut()
            .find(|s| s.node == switch)
            .map(|s| &mut s.mmu)
    }

    /// Every signal a waveform of the network holds, `top.swNN...` (`crate::waves`): what
    /// `--wave-signals` globs must match.
    pub fn wave_signals(&self) -> Vec<SignalSpec> {
        waves::signals(&self.switches)
    }

    /// Write the signals that pass `filter` in `format` into `file` (created at `path`)
    /// during a run of `cycles` cycles, and a `.gtkw` beside it at
    /// [`finish_outputs`](Self::finish_outputs).
    #[allow(clippy::too_many_arguments)]
    pub fn attach_waves(
        &mut self,
        file: File,
        path: &Path,
        format: Format,
        filter: &SignalFilter,
        window: Window,
        cycles: u64,
    ) -> Result<(), WaveError> {
        let w = FabricWaves::new(
            &mut self.switches,
            self.clock_hz,
            file,
            path,
            format,
            filter,
            window,
            cycles,
        )?;
        self.waves = Some(w);
        Ok(())
    }

    /// Record each switch's buffer occupancy per `interval` cycles (its summary's
    /// `occupancy`).
    pub fn sample_occupancy(&mut self, interval: u64) {
        for s in &mut self.switches {
            s.occupancy = Some(Occupancy::new(interval.max(1)));
        }
    }

    /// Write each switch's event stream and its check scenario into `dir` during a run of
    /// `cycles` cycles (`crate::trace`); `seed` goes into the streams' `meta` lines.
    pub fn attach_events(&mut self, dir: &Path, cycles: u64, seed: u64) -> Result<(), OutputError> {
        trace::attach(&mut self.switches, dir, cycles, seed)?;
        self.events = Some(dir.to_path_buf());
        Ok(())
    }

    /// [`attach_events`](Self::attach_events) for the switches MPI rank `rank` of `ranks`
    /// runs (`run_ranks`, feature `mpi`): each rank writes its own switches' streams
    /// into `dir`, which every rank must see (one machine, or a shared file system).
    pub fn attach_events_of_rank(
        &mut self,
        dir: &Path,
        (cycles, seed): (u64, u64),
        (rank, ranks): (usize, usize),
    ) -> Result<(), OutputError> {
        let part_of = parallel::partition(&self.topo, &parallel::line_rate(&self.topo), ranks);
        let own = self
            .switches
            .iter_mut()
            .filter(|s| part_of[s.index] == rank);
        trace::attach(own, dir, cycles, seed)?;
        self.events = Some(dir.to_path_buf());
        Ok(())
    }

    /// Complete the outputs after [`run`](Self::run): the event streams' last lines, the
    /// waveform and its view.
    pub fn finish_outputs(&mut self) -> Result<(), OutputError> {
        if let Some(dir) = self.events.take() {
            trace::finish(&mut self.switches, &dir, self.now)?;
        }
        if let Some(w) = self.waves.take() {
            w.finish(&mut self.switches, self.now)?;
        }
        Ok(())
    }

    /// Run to `opts.end_cycle` (or to the deadlock, with `stop_at_deadlock`) and report.
    pub fn run(&mut self, opts: &RunOptions) -> Result<FabricSummary, SwitchError> {
        assert_eq!(
            self.switches.len(),
            self.shapes.len(),
            "a rank's part of the network runs with run_ranks"
        );
        let t0 = Instant::now();
        // A fault rewrites a link's queue as cells join it, in the order one partition
        // delivers them.
        let n = match self.faults.is_empty() {
            true => opts.threads.clamp(1, self.switches.len().max(1)),
            false => 1,
        };
        // Threads hold the whole network: the cut weighs what the flows bring each switch.
        let part_of = match n {
            1 => vec![0; self.switches.len()],
            _ => parallel::partition(&self.topo, &self.expected_load(opts.end_cycle), n),
        };
        let plan = plan(
            &self.topo,
            &self.shapes,
            &self.ends,
            self.clock_hz,
            &part_of,
        );
        let mut groups: Vec<Vec<Switch>> = (0..n).map(|_| Vec::new()).collect();
        for s in self.switches.drain(..) {
            groups[part_of[s.index]].push(s);
        }
        let flows = std::mem::take(&mut self.flows);
        let mut views: Vec<Vec<FlowState>> = (1..n).map(|_| flows.clone()).collect();
        views.push(flows);
        let parts: Vec<Mutex<Part>> = groups
            .into_iter()
            .zip(views)
            .enumerate()
            .map(|(i, (switches, flows))| Mutex::new(Part::new(i, switches, flows)))
            .collect();
        parts[0].lock().expect("not shared yet").faults = std::mem::take(&mut self.faults);
        let known = self.deadlock.take();
        let outcome = parallel::run(
            &parts,
            &plan,
            &self.topo,
            (self.now, known),
            self.waves.as_mut(),
            opts,
        );
        let mut parts: Vec<Part> = parts
            .into_iter()
            .map(|p| p.into_inner().expect("a partition's thread panicked"))
            .collect();
        self.faults = std::mem::take(&mut parts[0].faults);
        let mut views = Vec::with_capacity(n);
        for p in parts {
            self.switches.extend(p.switches);
            views.push(p.flows);
        }
        self.switches.sort_by_key(|s| s.index);
        self.flows = parallel::merge_flows(views, &plan);
        let outcome = outcome?;
        let end = outcome.end;
        self.now = end;
        self.deadlock = outcome.deadlock;
        for s in &mut self.switches {
            s.finish(end, &mut self.flows);
        }
        let speed = report::Speed::new(
            end,
            self.clock_hz,
            t0.elapsed().as_secs_f64(),
            outcome.cpu_seconds,
            outcome.busy_share,
        );
        let switches: Vec<SwitchReport> = self
            .switches
            .iter_mut()
            .map(|s| SwitchReport::of(s, &self.topo, end))
            .collect();
        let flows: Vec<FlowReport> = self.flows.iter().map(FlowReport::of).collect();
        Ok(self.summarize(switches, &flows, speed))
    }

    /// Per switch (by index), the work the flows are expected to bring it in a run to
    /// cycle `end` (`crate::parallel::expected_load`).
    pub(crate) fn expected_load(&self, end: u64) -> Vec<u64> {
        let switches = self.shapes.len();
        parallel::expected_load(&self.flows, &self.ends, switches, end, self.clock_hz)
    }

    fn summarize(
        &self,
        switches: Vec<SwitchReport>,
        flows: &[FlowReport],
        speed: report::Speed,
    ) -> FabricSummary {
        let (end, clock_hz) = (self.now, self.clock_hz);
        let deadlock = self.deadlock.clone();
        let summary = report::summarize(
            &self.topo,
            switches,
            &self.flows,
            flows,
            deadlock,
            end,
            clock_hz,
            speed,
        );
        FabricSummary {
            headroom_warnings: self.headroom_warnings.clone(),
            ..summary
        }
    }

    /// Whether the network runs on `ranks` MPI ranks, one partition each: at most one per
    /// switch, and no injected fault (a fault needs one partition).
    pub fn check_ranks(&self, ranks: usize) -> Result<(), String> {
        let switches = self.shapes.len();
        if !(1..=switches).contains(&ranks) {
            return Err(format!(
                "{ranks} MPI ranks; allowed: 1..={switches} (one partition of the {switches} switches per rank)"
            ));
        }
        if !self.faults.is_empty() && ranks > 1 {
            return Err(format!(
                "{ranks} MPI ranks with an injected link fault; allowed: 1"
            ));
        }
        Ok(())
    }

    /// Run as this rank of `world`, one partition per rank (`crate::ranks`, checked by
    /// [`check_ranks`](Self::check_ranks)), the network built whole or as the rank's part
    /// ([`of_rank`](Self::of_rank)): the summary on rank 0, `None` on the others. The
    /// outputs attached on each rank: its own switches' event streams
    /// ([`attach_events_of_rank`](Self::attach_events_of_rank)), the waveform on rank 0
    /// (another rank's dump is not finished; a dump needs the whole network on every rank).
    #[cfg(feature = "mpi")]
    pub fn run_ranks(
        &mut self,
        opts: &RunOptions,
        world: &mpi::topology::SimpleCommunicator,
    ) -> Result<Option<FabricSummary>, SwitchError> {
        use mpi::traits::Communicator;
        let t0 = Instant::now();
        let (n, me) = (world.size() as usize, world.rank() as usize);
        let mut switches = std::mem::take(&mut self.switches);
        // The cut `of_rank` built this rank's part by.
        let part_of = parallel::partition(&self.topo, &parallel::line_rate(&self.topo), n);
        let plan = plan(
            &self.topo,
            &self.shapes,
            &self.ends,
            self.clock_hz,
            &part_of,
        );
        let (own, rest): (Vec<Switch>, Vec<Switch>) =
            switches.drain(..).partition(|s| part_of[s.index] == me);
        let mut part = Part::new(me, own, std::mem::take(&mut self.flows));
        part.faults = std::mem::take(&mut self.faults);
        let start = (self.now, self.deadlock.take());
        let out = crate::ranks::run(
            world,
            (part, rest),
            &plan,
            &self.topo,
            start,
            self.waves.as_mut(),
            opts,
            (t0, self.clock_hz),
        );
        let out = out?;
        self.switches = out.switches;
        self.flows = out.flows;
        self.now = out.end;
        self.deadlock = out.deadlock;
        if me != 0 {
            self.waves = None;
        }
        Ok(out
            .reports
            .map(|(switches, flows, speed)| self.summarize(switches, &flows, speed)))
    }
}

/// The map of a run of the switches (`shapes`, by index) of `topo` cut into partitions
/// (`part_of`, per switch; `crate::parallel::partition`): per switch its partition and its
/// index there, each partition's switches in the network's order; per flow its `ends`;
/// the lookahead at `clock_hz`.
fn plan<'a>(
    topo: &Topology,
    shapes: &'a [Shape],
    ends: &'a [(usize, usize)],
    clock_hz: u64,
    part_of: &[usize],
) -> Plan<'a> {
    let n = part_of.iter().max().map_or(1, |&p| p + 1);
    let lookahead = shapes
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let ports = topo.ports(s.node).iter().zip(&s.ends);
            ports.map(move |(&link, end)| (i, link, *end))
        })
        .filter_map(|(i, link, end)| match end {
            PortEnd::Switch { switch, .. } if part_of[switch] != part_of[i] => {
                Some(ps_to_cycles(topo.links()[link].delay.0, clock_hz).max(1))
            }
            _ => None,
        })
        .min()
        .unwrap_or(u64::MAX);
    let mut count = vec![0; n];
    let at = part_of
        .iter()
        .map(|&p| {
            count[p] += 1;
            (p, count[p] - 1)
        })
        .collect();
    Plan {
        at,
        ends,
        shapes,
        lookahead,
    }
}

/// Every switch's configuration, with its ports from its links, validated; the clock and
/// cell size must be the same everywhere.
pub(crate) fn switch_configs(
    topo: &Topology,
    config: impl Fn(NodeId) -> SwitchConfig,
) -> Result<Vec<Derived>, BuildError> {
    let mut derived: Vec<Derived> = Vec::with_capacity(topo.switches().len());
    for &node in topo.switches() {
        let links: Vec<_> = topo.ports(node).iter().map(|&l| &topo.links()[l]).collect();
        let mut cfg = config(node);
        if links.len() > cfg.ports {
            return Err(BuildError::Ports {
                switch: node,
                links: links.len(),
                ports: cfg.ports,
            });
        }
        cfg.ports = links.len();
        // A profile's SRAM ports are sized for its own port count; a switch of fewer
        // ports writes and reads at most one cell per port and cycle.
        cfg.sram_write_cells_per_cycle = cfg.sram_write_cells_per_cycle.min(cfg.ports as u32);
        cfg.sram_read_cells_per_cycle = cfg.sram_read_cells_per_cycle.min(cfg.ports as u32);
        cfg.port_speeds_gbps = links.iter().map(|l| l.rate.0 as f64 / 1e9).collect();
        let longest_ps = links.iter().map(|l| l.delay.0).max().unwrap_or(0);
        cfg.link_delay_ns = longest_ps.div_ceil(1000).min(u32::MAX as u64) as u32;
        let d = cfg.build().map_err(|error| BuildError::Config {
            switch: node,
            error,
        })?;
        if let Some(first) = derived.first() {
            for (field, value, allowed) in [
                ("core_clock_hz", d.clock_hz, first.clock_hz),
                (
                    "cell_bytes",
                    d.cfg.cell_bytes as u64,
                    first.cfg.cell_bytes as u64,
                ),
            ] {
                if value != allowed {
                    return Err(BuildError::Mismatch {
                        switch: node,
                        field,
                        value,
                        allowed,
                    });
                }
            }
        }
        derived.push(d);
    }
    Ok(derived)
}

/// The NIC of `host` on ToR port `port`: a link partner with the host link's delay and
/// the default reaction delay.
fn nic(host: NodeId, port: usize, prop_cycles: u64, d: &Derived) -> Nic {
    let link = Link {
        prop_cycles,
        proc_cycles: default_proc_cycles(d, port),
        arbitration: Arbitration::RoundRobin,
    };
    Nic {
        host,
        port: port as u8,
        partner: LinkPartner::new(port as u8, link, d),
        wake: u64::MAX,
        flows: Vec::new(),
        next: 0,
        sink: VecDeque::new(),
        cells_sent: 0,
        events: Timeline::new(),
        answers: false,
        carried_out: Vec::new(),
    }
}

/// What routes a flow: the topology, its routes, ECMP and each node's switch index.
struct Route<'a> {
    topo: &'a Topology,
    routes: &'a Routes,
    ecmp: &'a Ecmp,
    index: &'a [usize],
}

impl Route<'_> {
    /// The state of flow `f` (5-tuple `tuple`, from a host under a switch configured as `d`)
    /// before it starts: its route, which also marks the turns it takes at each switch
    /// (`Shape::turns`, for the deadlock detector).
    fn flow_state(
        &self,
        shapes: &mut [Shape],
        f: usize,
        flow: Flow,
        tuple: routing::FiveTuple,
        d: &Derived,
    ) -> Result<FlowState, BuildError> {
        let (topo, index) = (self.topo, self.index);
        let path = self
            .routes
            .path(topo, self.ecmp, &tuple)
            .ok_or_else(|| Unreachable {
                count: 1,
                pairs: vec![(flow.src, flow.dst)],
            })?;
        let hops: Vec<(usize, u8)> = path[1..]
            .iter()
            .map(|h| (index[h.node as usize], h.port as u8))
            .collect();
        let links = Routes::links_of(topo, &path);
        for (w, hop) in links.windows(2).zip(&path[1..]) {
            let shape = &mut shapes[index[hop.node as usize]];
            let from = topo.ports(hop.node).iter().position(|&l| l == w[0]);
            let n = shape.ends.len();
            let from = from.expect("a path's links are ports of its nodes");
            shape.turns[from * n + hop.port] |= 1 << flow.pg;
        }
        Ok(FlowState {
            flow,
            tuple,
            start_cycle: ps_to_cycles(flow.start.0, d.clock_hz),
            header: header(f, &tuple, flow.pg, hops[0].1),
            hops,
            packets: 0,
            next_tx: 0,
            sender: Sender::OpenLoop,
            feedback: None,
            ecm: Vec::new(),
            standalone_ns: standalone_ns(topo, &links, flow.size, d),
            recv: Default::default(),
        })
    }

    /// The port of switch `hop` of flow `fs`'s path its cells come in on: from its source
    /// host, or from the previous switch's egress port.
    fn in_port(&self, fs: &FlowState, hop: usize) -> u8 {
        let node = self.topo.switches()[fs.hops[hop].0];
        let ports = self.topo.ports(node);
        let links = self.topo.links();
        let p = match hop.checked_sub(1) {
            None => ports
                .iter()
                .position(|&l| links[l].peer(node) == fs.flow.src),
            Some(prev) => {
                let (s, port) = fs.hops[prev];
                let link = self.topo.ports(self.topo.switches()[s])[port as usize];
                ports.iter().position(|&l| l == link)
            }
        };
        p.expect("a path's links are ports of its nodes") as u8
    }

    /// ECM flow `e` from the switch at hop `cp` of flow `fs`'s path to its source, on class
    /// `pg`: `fs`'s path back, each switch sending it out of the port `fs` comes in on (a
    /// shortest path to the source, as `fs`'s is from it). It starts at the congestion
    /// point's ingress slot and leaves by the same port; the turns it takes are marked
    /// for the deadlock detector.
    fn ecm_flow(
        &self,
        shapes: &mut [Shape],
        fs: &FlowState,
        cp: usize,
        e: usize,
        pg: u8,
    ) -> FlowState {
        let ins: Vec<u8> = (0..=cp).map(|k| self.in_port(fs, k)).collect();
        let hops: Vec<(usize, u8)> = (0..=cp).rev().map(|k| (fs.hops[k].0, ins[k])).collect();
        for k in 0..=cp {
            let from = if k == cp { ins[k] } else { fs.hops[k].1 };
            let shape = &mut shapes[fs.hops[k].0];
            let n = shape.ends.len();
            shape.turns[from as usize * n + ins[k] as usize] |= 1 << pg;
        }
        let node = self.topo.switches()[fs.hops[cp].0];
        let t = fs.tuple;
        let tuple = routing::FiveTuple {
            src: node,
            dst: t.src,
            sport: t.dport,
            dport: t.sport,
            protocol: t.protocol,
        };
        let mut header = header(e, &tuple, pg, ins[cp]);
        header.src = ins[cp];
        header.len = MIN_PACKET_BYTES as u16;
        FlowState {
            flow: Flow {
                src: node,
                dst: fs.flow.src,
                pg,
                dport: t.sport,
                size: 0,
                start: fs.flow.start,
            },
            tuple,
            start_cycle: fs.start_cycle,
            hops,
            header,
            packets: 0,
            next_tx: 0,
            sender: Sender::Ecm,
            feedback: None,
            ecm: Vec::new(),
            standalone_ns: 0,
            recv: Default::default(),
        }
    }
}

/// The header of flow `f`'s packets (5-tuple `tuple`, class `pg`, leaving its first
/// switch by port `dst`) before `seq`, `len`, `src` and `ecn` are set per packet.
fn header(f: usize, tuple: &routing::FiveTuple, pg: u8, dst: u8) -> PacketHdr {
    PacketHdr {
        flow: f as u32,
        seq: 0,
        src: 0,
        dst,
        prio: pg,
        len: 0,
        tuple: hw_model::FiveTuple {
            src_ip: routing::ipv4_of(tuple.src),
            dst_ip: routing::ipv4_of(tuple.dst),
            src_port: tuple.sport,
            dst_port: tuple.dport,
            proto: tuple.protocol,
        },
        cm_tag: None,
        ecn: Ecn::NotEct,
    }
}

/// HPCC's standalone FCT for the fabric: the path's propagation delay plus the message's
/// wire bytes (each packet with its wire overhead) at the slowest link of the path.
fn standalone_ns(topo: &Topology, links: &[usize], size: u64, d: &Derived) -> u64 {
    let prop_ps: u64 = links.iter().map(|&l| topo.links()[l].delay.0).sum();
    let rate = links
        .iter()
        .map(|&l| topo.links()[l].rate.0)
        .min()
        .unwrap_or(1)
        .max(1);
    let packets = size.div_ceil(d.cfg.mtu_bytes as u64);
    let wire_bits = (size + packets * d.cfg.wire_overhead_bytes as u64) * 8;
    prop_ps / 1000 + (wire_bits as u128 * 1_000_000_000 / rate as u128) as u64
}
