//! The network of MMUs: runs on small topologies, the fabric's checks and their companions
//! (a link that loses a packet, one that swaps two, one that loses PFC frames), random
//! small topologies under SIH, DSH and L2BM, the same bytes on 1, 2 and 4 threads (and a
//! wrong horizon caught), and DSH's Fig. 12 deadlock.

use fabric::deadlock::DeadlockOptions;
use fabric::flows::Flow;
use fabric::generate::LeafSpine;
use fabric::link::LinkFault;
use fabric::routing::Ecmp;
use fabric::topology::{Header, Link, NodeId, Topology};
use fabric::transport::Transports;
use fabric::units::{BitRate, Picos};
use fabric::{FabricSummary, Network, RunOptions};
use hw_model::config::{EcmConfig, EcnConfig};
use hw_model::{Policy, SwitchConfig};
use proptest::prelude::*;
use scenario::params::{DcqcnParams, Ns2Params};
use scenario::{FabricTransport, TcpParams};

const GBPS: u64 = 1_000_000_000;

/// A small switch: one lossless class (3, the flows' priority group), so that the SIH
/// headroom of every port fits the buffer; up to 16 ports (the random fabrics' switches
/// have up to 10 links).
fn small(policy: Policy) -> SwitchConfig {
    SwitchConfig {
        policy,
        ports: 16,
        lossless_priorities: vec![3],
        buffer_bytes: 1 << 20,
        ..SwitchConfig::small()
    }
}

fn link(src: NodeId, dst: NodeId, gbps: u64, delay_ns: u64) -> Link {
    Link {
        src,
        dst,
        rate: BitRate(gbps * GBPS),
        delay: Picos(delay_ns * 1000),
        error_rate: 0.0,
        up: true,
    }
}

/// `hosts[s]` hosts under switch `s`, then the switch links `(a, b, delay_ns)`: hosts are
/// numbered first, then the switches; host links at 100G with 200 ns.
fn topology(hosts: &[u32], switch_links: &[(u32, u32, u64)]) -> Topology {
    let n_hosts: u32 = hosts.iter().sum();
    let sw = |s: u32| n_hosts + s;
    let mut links = Vec::new();
    let mut h = 0;
    for (s, &n) in hosts.iter().enumerate() {
        for _ in 0..n {
            links.push(link(h, sw(s as u32), 100, 200));
            h += 1;
        }
    }
    for &(a, b, delay) in switch_links {
        links.push(link(sw(a), sw(b), 100, delay));
    }
    let header = Header {
        nodes: n_hosts + hosts.len() as u32,
        switches: (n_hosts..n_hosts + hosts.len() as u32).collect(),
        tors: None,
    };
    Topology::new(header, links).unwrap()
}

fn flow(src: NodeId, dst: NodeId, size: u64, start_ns: u64) -> Flow {
    Flow {
        src,
        dst,
        pg: 3,
        dport: 100,
        size,
        start: Picos(start_ns * 1000),
    }
}

/// Run to `end_cycle` (or to a deadlock, with `stop`) with the default detector.
fn options(end_cycle: u64, stop: bool) -> RunOptions {
    RunOptions {
        end_cycle,
        deadlock: DeadlockOptions::default(),
        stop_at_deadlock: stop,
        threads: 1,
        horizon_error: 0,
    }
}

fn run_with(
    topo: Topology,
    flows: &[Flow],
    policy: Policy,
    end_cycle: u64,
    fault: Option<LinkFault>,
) -> FabricSummary {
    let mut net = Network::new(
        topo,
        flows,
        Ecmp { fabric_seed: 1 },
        &Transports::open_loop(),
        |_| small(policy),
    )
    .unwrap();
    if let Some(f) = fault {
        net.inject_fault(f);
    }
    net.run(&options(end_cycle, false)).unwrap()
}

/// Two switches, two hosts each: hosts 0, 1 under switch 4, hosts 2, 3 under switch 5.
fn two_switches() -> Topology {
    topology(&[2, 2], &[(0, 1, 1000)])
}

/// Two senders, one under each switch, to host 3: the second switch's port to host 3 is
/// the bottleneck, and its ingress queue from the first switch pauses the link.
fn incast_flows() -> Vec<Flow> {
    vec![flow(0, 3, 1_000_000, 0), flow(2, 3, 1_000_000, 0)]
}

/// A flow alone on an idle path completes in about its standalone time, and every cell is
/// delivered; the fct.txt line carries its 5-tuple and times.
#[test]
fn a_lone_flow_takes_its_standalone_time() {
    let s = run_with(
        two_switches(),
        &[flow(0, 3, 30_000, 1000)],
        Policy::Sih,
        100_000,
        None,
    );
    assert!(s.ok(), "{s}");
    assert_eq!(s.flows_completed, 1, "{s}");
    assert_eq!(s.cells_delivered, s.cells_injected);
    let f = &s.fct[0];
    let slowdown = f.slowdown.unwrap();
    assert!(
        (0.95..1.1).contains(&slowdown),
        "slowdown {slowdown}: {f:?}"
    );
    let line = s.fct_txt();
    assert!(
        line.starts_with(&format!(
            "{:08x} {:08x} 10000 100 30000 1000 ",
            f.sip, f.dip
        )),
        "{line}"
    );
    let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(json["conservation_ok"], true);
    assert_eq!(json["cells_dropped_lossless"], 0);
}

/// An incast across the link pauses it (PFC frames from switch 5 to switch 4, pause time
/// on that direction), loses nothing, and completes both flows.
#[test]
fn an_incast_across_a_link_pauses_it_and_loses_nothing() {
    for policy in [Policy::Sih, Policy::Dsh, Policy::L2bm] {
        let s = run_with(two_switches(), &incast_flows(), policy, 400_000, None);
        assert!(s.ok(), "{policy:?}: {s}");
        assert_eq!(s.flows_completed, 2, "{policy:?}: {s}");
        let across = s.links.iter().find(|l| l.from == 4 && l.to == 5).unwrap();
        assert!(
            across.pfc_pause_frames > 0 && across.pause_cycles > 0,
            "{policy:?}: {across:?}"
        );
    }
}

/// The incast under SIH with `fault` on the link between the switches (link 4).
fn broken_incast(fault: LinkFault) -> FabricSummary {
    run_with(
        two_switches(),
        &incast_flows(),
        Policy::Sih,
        400_000,
        Some(fault),
    )
}

/// Companion: a link that loses a packet breaks conservation (and the flow never
/// completes).
#[test]
fn a_lost_packet_is_caught_by_conservation() {
    let s = broken_incast(LinkFault::DropPacket {
        link: 4,
        from: 4,
        nth: 10,
    });
    assert!(!s.conservation_ok, "{s}");
    assert!(
        s.violations.iter().any(|v| v.starts_with("conservation")),
        "{s}"
    );
    assert_eq!(s.flows_completed, 1, "{s}");
}

/// Companion: a link that swaps two packets of a flow is caught by the end-to-end order
/// check.
#[test]
fn swapped_packets_are_caught_by_the_order_check() {
    let s = broken_incast(LinkFault::SwapPackets {
        link: 4,
        from: 4,
        nth: 10,
    });
    assert!(s.conservation_ok, "{s}");
    assert!(s.reordered_cells > 0, "{s}");
    assert!(
        s.violations.iter().any(|v| v.contains("out of order")),
        "{s}"
    );
}

/// Companion: a link that loses every PFC frame toward switch 4 lets it overrun switch
/// 5's headroom: a lossless drop, named at switch 5.
#[test]
fn lost_pfc_frames_are_caught_as_lossless_drops() {
    let s = broken_incast(LinkFault::DropPfc { link: 4, from: 4 });
    assert!(s.cells_dropped_lossless > 0, "{s}");
    assert!(
        s.violations
            .iter()
            .any(|v| v.starts_with("lossless cells dropped: ") && v.contains("at switch 5")),
        "{s}"
    );
}

/// Companion: a switch whose model is corrupted is reported by its invariant check.
#[test]
fn a_corrupt_switch_model_is_caught() {
    let mut net = Network::new(
        two_switches(),
        &incast_flows(),
        Ecmp { fabric_seed: 1 },
        &Transports::open_loop(),
        |_| small(Policy::Sih),
    )
    .unwrap();
    net.mmu_mut(5)
        .unwrap()
        .inject_fault(hw_model::Fault::LeakCell);
    let s = net.run(&options(5_000, false)).unwrap();
    assert!(
        s.violations
            .iter()
            .any(|v| v.contains("switch 5: model invariant")),
        "{s}"
    );
}

/// DSH's Fig. 12 network (`LeafSpine::dsh()`: hosts 0-63, leaves L0-L3 = 64-67, spines
/// S0, S1 = 68, 69), with S0-L3 and S1-L0 failed if `failed`, and fan-in flows L0 -> L3,
/// L3 -> L0, L1 -> L2, L2 -> L1: 8 hosts of one leaf each send 4 MB at 0 to the first host
/// of the other; SIH, 4 MiB buffers, lossless class 3. Run to `end_cycle` or a deadlock.
fn dsh_fig12(failed: bool, end_cycle: u64) -> FabricSummary {
    let mut topo = LeafSpine::dsh().build().unwrap();
    if failed {
        topo.fail_links(&[(68, 67), (69, 64)]).unwrap();
    }
    let mut flows = Vec::new();
    for (from, to) in [(0, 3), (3, 0), (1, 2), (2, 1)] {
        for s in 1..=8 {
            flows.push(flow(from * 16 + s, to * 16, 4_000_000, 0));
        }
    }
    let cfg = SwitchConfig {
        policy: Policy::Sih,
        lossless_priorities: vec![3],
        buffer_bytes: 4 << 20,
        ..SwitchConfig::tomahawk()
    };
    let mut net = Network::new(
        topo,
        &flows,
        Ecmp { fabric_seed: 1 },
        &Transports::open_loop(),
        |_| cfg.clone(),
    )
    .unwrap();
    net.run(&options(end_cycle, true)).unwrap()
}

/// Under SIH the fan-ins fill the buffers around the cyclic route and PFC freezes the
/// ring: the detector finds the paper's cycle S0 -> L1 -> S1 -> L2 -> S0 (each hop an
/// egress queue paused by the next switch's ingress queue, into which that queue's flows
/// turn: L0 -> L3 at L1, L1 -> L2 at S1, L3 -> L0 at L2, L2 -> L1 at S0), reports it once
/// it has stood still for the hold time, and the run still ends with every cell accounted
/// for and none lossless lost. A small-scale version: 4 MiB buffers, fan-in 8 (it freezes
/// at about 47 us).
#[test]
fn dsh_fig12_deadlocks_under_sih_and_the_detector_names_the_cycle() {
    let s = dsh_fig12(true, 2_000_000);
    let d = s
        .deadlock
        .as_ref()
        .unwrap_or_else(|| panic!("no deadlock: {s}"));
    assert!(s.ok(), "{s}");
    assert_eq!(d.class, 3);
    // L1 -> S1 -> L2 -> S0 -> L1: the paper's S0 -> L1 -> S1 -> L2 -> S0, written from
    // the lowest node id.
    assert_eq!(d.switches(), [65, 69, 66, 68, 65], "{d}");
    assert!(
        d.detected_cycle >= d.onset_cycle + DeadlockOptions::default().hold_cycles,
        "{d}"
    );
}

/// Companion: the same fan-ins on the full leaf-spine (no failed link) route up and down
/// only, with no cyclic buffer dependency: PFC pauses the spines' links, and no deadlock
/// is reported.
#[test]
fn the_full_leaf_spine_pauses_but_does_not_deadlock() {
    let s = dsh_fig12(false, 150_000);
    assert!(s.ok(), "{s}");
    assert_eq!(s.deadlock, None, "{s}");
    let spine_pauses: u64 = s
        .links
        .iter()
        .filter(|l| l.from >= 68)
        .map(|l| l.pfc_pause_frames)
        .sum();
    assert!(spine_pauses > 0, "{s}");
}

/// 2-6 switches joined by a random spanning tree plus random extra links (delays 100 ns to
/// 1 us), 1-2 hosts each, and 1-8 open-loop flows between random hosts (1 B to 60 kB,
/// starting in the first 5 us).
fn random_fabric() -> impl Strategy<Value = (Topology, Vec<Flow>)> {
    (2u32..=6)
        .prop_flat_map(|n| {
            let parents: Vec<_> = (1..n).map(|i| 0..i).collect();
            let extra = proptest::collection::vec((0..n, 0..n, 100u64..=1000), 0..4);
            let tree_delays = proptest::collection::vec(100u64..=1000, (n - 1) as usize);
            let hosts = proptest::collection::vec(1u32..=2, n as usize);
            (hosts, parents, tree_delays, extra)
        })
        .prop_flat_map(|(hosts, parents, delays, extra)| {
            let mut links: Vec<(u32, u32, u64)> = parents
                .iter()
                .enumerate()
                .map(|(i, &p)| (p, i as u32 + 1, delays[i]))
                .collect();
            for (a, b, d) in extra {
                let known = links
                    .iter()
                    .any(|&(x, y, _)| (x, y) == (a, b) || (y, x) == (a, b));
                if a != b && !known {
                    links.push((a, b, d));
                }
            }
            let topo = topology(&hosts, &links);
            let n_hosts: u32 = hosts.iter().sum();
            let flow = (0..n_hosts, 1..n_hosts, 1u64..=60_000, 0u64..5_000).prop_map(
                move |(src, off, size, start)| flow(src, (src + off) % n_hosts, size, start),
            );
            (Just(topo), proptest::collection::vec(flow, 1..=8))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On random small fabrics under each policy and transport, every check holds with the
    /// ACKs and CNPs counted: conservation, no lossless drop, no reordering; and every flow
    /// completes (flows this short cannot freeze a ring for the detector's hold time).
    #[test]
    fn random_small_fabrics_keep_every_check(
        (topo, mut flows) in random_fabric(),
        policy in prop_oneof![Just(Policy::Sih), Just(Policy::Dsh), Just(Policy::L2bm)],
        transport in prop_oneof![
            Just(FabricTransport::OpenLoop),
            Just(tcp(false)),
            Just(tcp(true)),
            Just(dcqcn()),
        ],
        seed: u32,
    ) {
        flows.sort_by_key(|f| f.start);
        let mut net = Network::new(topo, &flows, Ecmp { fabric_seed: seed }, &all(transport), |_| small(policy)).unwrap();
        let s = net.run(&options(300_000, false)).unwrap();
        prop_assert!(s.ok(), "{}", s);
        prop_assert_eq!(&s.deadlock, &None);
        prop_assert_eq!(s.flows_completed, flows.len(), "{}", s);
        prop_assert_eq!(s.cells_delivered, s.cells_injected);
    }
}

/// A run's results on `threads` threads, with each window `horizon_error` cycles past
/// the safe horizon, as bytes: the summary without its machine-dependent `run` section,
/// and the fct.txt. With `ecm`, every switch's class 3 is a congestion point sampling
/// every 2-3 kB above a 1 kB queue (so that the random fabrics' flows of up to 60 kB
/// draw frames), and its ECM frames travel on class 3 with the data.
fn parallel_bytes(
    topo: &Topology,
    flows: &[Flow],
    (t, policy, ecm): (FabricTransport, Policy, bool),
    threads: usize,
    horizon_error: u64,
) -> String {
    let transports = Transports {
        ecm_pg: 3,
        ..all(t)
    };
    let config = |_| SwitchConfig {
        ecm: EcmConfig {
            priorities: if ecm { vec![3] } else { Vec::new() },
            qeq_bytes: 1024,
            qmc_bytes: 2048,
            qsc_bytes: 4096,
            sf_bytes: 2000,
            sr_bytes: 1000,
            ..EcmConfig::default()
        },
        ..small(policy)
    };
    let mut net = Network::new(
        topo.clone(),
        flows,
        Ecmp { fabric_seed: 7 },
        &transports,
        config,
    )
    .unwrap();
    let opts = RunOptions {
        threads,
        horizon_error,
        ..options(300_000, false)
    };
    let mut s = net.run(&opts).unwrap();
    assert_eq!(
        s.run.partition_busy_share.len(),
        threads.min(topo.switches().len())
    );
    // Every check holds on the way, the ECM frames' cells among those checked (a window
    // past its horizon breaks one, which the comparison's companion shows).
    assert!(horizon_error > 0 || s.ok(), "{s}");
    s.run = fabric::report::Speed::new(0, 1, 0.0, 0.0, Vec::new());
    s.to_json() + &s.fct_txt()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// On random small fabrics, with ECM frames or without, every check holds and 2 and 4
    /// threads give the bytes one gives (with ECM most draw 18-90 frames).
    #[test]
    fn random_small_fabrics_give_the_same_bytes_on_any_number_of_threads(
        (topo, mut flows) in random_fabric(),
        policy in prop_oneof![Just(Policy::Sih), Just(Policy::Dsh)],
        transport in prop_oneof![Just(FabricTransport::OpenLoop), Just(tcp(true)), Just(dcqcn())],
        ecm: bool,
    ) {
        flows.sort_by_key(|f| f.start);
        let run = (transport, policy, ecm);
        let one = parallel_bytes(&topo, &flows, run, 1, 0);
        for threads in [2, 4] {
            prop_assert_eq!(&parallel_bytes(&topo, &flows, run, threads, 0), &one);
        }
    }
}

/// The companion: windows one cycle past the horizon let a cell arrive late at another
/// partition; the comparison of 2 threads with 1 catches it, and so does the check that
/// names the late messages.
#[test]
fn a_horizon_one_cycle_too_far_is_caught_by_the_comparison() {
    // Four switches in a line, 100 ns apart, two hosts each; every host sends across it.
    let topo = topology(&[2, 2, 2, 2], &[(0, 1, 100), (1, 2, 100), (2, 3, 100)]);
    let flows: Vec<Flow> = (0..8)
        .map(|h| flow(h, (h + 5) % 8, 50_000, 100 * h as u64))
        .collect();
    let run = (tcp(true), Policy::Dsh, false);
    let one = parallel_bytes(&topo, &flows, run, 1, 0);
    assert_eq!(parallel_bytes(&topo, &flows, run, 2, 0), one);
    let late = parallel_bytes(&topo, &flows, run, 2, 1);
    assert_ne!(late, one);
    assert!(late.contains("after it had run their cycle"), "{late}");
}

/// An MPI rank's part of the network (`Network::of_rank`) builds only its partition's
/// switches: over the parts of 2 and of 3 ranks every switch is built exactly once, and
/// no part holds all of them.
#[test]
fn a_rank_builds_only_its_partitions_switches() {
    let topo = topology(&[2, 2, 2, 2], &[(0, 1, 100), (1, 2, 100), (2, 3, 100)]);
    let flows: Vec<Flow> = (0..8).map(|h| flow(h, (h + 5) % 8, 5_000, 0)).collect();
    for ranks in [2, 3] {
        let mut built = [0; 4];
        for rank in 0..ranks {
            let part = Network::of_rank(
                topo.clone(),
                &flows,
                Ecmp { fabric_seed: 1 },
                &Transports::open_loop(),
                |_| small(Policy::Dsh),
                (rank, ranks),
            )
            .unwrap();
            let here: Vec<bool> = topo
                .switches()
                .iter()
                .map(|&s| part.mmu(s).is_some())
                .collect();
            assert!(
                here.contains(&true) && here.contains(&false),
                "rank {rank} of {ranks}: {here:?}"
            );
            for (b, h) in built.iter_mut().zip(here) {
                *b += usize::from(h);
            }
        }
        assert_eq!(built, [1; 4], "{ranks} ranks");
    }
}

/// DCQCN's parameters of the paper (`DcqcnParams`), the line rate set by the network.
fn dcqcn() -> FabricTransport {
    type D = DcqcnParams;
    FabricTransport::Dcqcn(DcqcnParams {
        g: D::G,
        k_ns: D::K_US * 1000,
        t_ns: D::T_US * 1000,
        b_bytes: D::B_BYTES,
        f: D::F,
        r_ai_bps: 400_000_000,
        r_hai_bps: 1_000_000_000,
        n_ns: D::N_US * 1000,
        min_rate_bps: D::MIN_RATE_MBPS * 1_000_000,
        cnp_delay_ns: 0,
        line_bps: 0,
        // Read only by the queue-pair-per-message NIC, which the network does not use.
        decrease_ns: 0,
        nack_ns: 0,
    })
}

fn tcp(dctcp: bool) -> FabricTransport {
    FabricTransport::Tcp(TcpParams {
        base_rtt_us: TcpParams::BASE_RTT_US,
        min_rto_us: 200,
        max_rto_us: 200 * TcpParams::MAX_RTO_FACTOR,
        init_cwnd: TcpParams::INIT_CWND,
        flow_bytes: None,
        karn: false,
        dctcp_shift_g: dctcp.then_some(TcpParams::DCTCP_SHIFT_G),
        ns2: None,
    })
}

/// ns-2's TCP (`flavor = "ns2"`) without its SYN, its receiver window `window_` packets.
fn ns2_tcp(window: u32) -> FabricTransport {
    let FabricTransport::Tcp(p) = tcp(false) else {
        unreachable!()
    };
    FabricTransport::Tcp(TcpParams {
        ns2: Some(Ns2Params {
            window,
            window_init: window,
            syn: false,
            ..Ns2Params::DEFAULT
        }),
        ..p
    })
}

/// Every priority group runs `t`; feedback on the data's group.
fn all(t: FabricTransport) -> Transports {
    Transports {
        by_pg: [t; 8],
        feedback_pg: None,
        ecm_pg: 0,
    }
}

/// Four senders under switch 5 into host 4 under switch 6, 1 MB each: the link between
/// the switches and host 4's link congest. Class 3 lossless, or lossy with `lossy`; ECN
/// marks class 3 above 30 kB (a step, as DCTCP's K).
fn dumbbell(t: FabricTransport, lossy: bool, end_cycle: u64) -> FabricSummary {
    let topo = topology(&[4, 1], &[(0, 1, 1000)]);
    let flows: Vec<Flow> = (0..4).map(|s| flow(s, 4, 1_000_000, 0)).collect();
    let cfg = SwitchConfig {
        lossless_priorities: if lossy { vec![] } else { vec![3] },
        ecn: EcnConfig {
            priorities: vec![3],
            kmin: 30_000,
            kmax: 30_000,
            ..EcnConfig::default()
        },
        ..small(Policy::Sih)
    };
    let mut net = Network::new(topo, &flows, Ecmp { fabric_seed: 1 }, &all(t), |_| {
        cfg.clone()
    })
    .unwrap();
    net.run(&options(end_cycle, false)).unwrap()
}

fn paused(s: &FabricSummary) -> u64 {
    s.links.iter().map(|l| l.pfc_pause_frames).sum()
}

/// ns-2's flavor runs in the network: its `window_` caps what a sender has in flight, so
/// with 1 packet the four flows deliver less than half of what 64 do in the same time, and
/// every check holds either way.
#[test]
fn ns2_tcp_is_held_to_its_window() {
    let (narrow, wide) = (
        dumbbell(ns2_tcp(1), true, 300_000),
        dumbbell(ns2_tcp(64), true, 300_000),
    );
    for s in [&narrow, &wide] {
        assert!(s.ok(), "{s}");
        assert!(s.fct.iter().all(|f| f.sender.transport == "tcp"), "{s}");
    }
    assert!(
        narrow.cells_delivered * 2 < wide.cells_delivered,
        "window 1: {} cells, window 64: {}",
        narrow.cells_delivered,
        wide.cells_delivered
    );
}

/// DCQCN through the fabric: the receiver's CNPs cross both switches back to the senders,
/// which cut their rates; the congested class pauses far less than with the same flows
/// open loop, and every check holds with the CNPs counted.
#[test]
fn dcqcn_senders_cut_their_rates_on_cnps_that_crossed_the_fabric() {
    let s = dumbbell(dcqcn(), false, 800_000);
    assert!(s.ok(), "{s}");
    assert_eq!(s.flows_completed, 4, "{s}");
    for f in &s.fct {
        assert_eq!(f.sender.transport, "dcqcn");
        assert!(f.sender.cnps > 0 && f.sender.cuts > 0, "{:?}", f.sender);
    }
    assert!(s.cells_injected > s.fct.len() as u64, "CNPs are cells too");
    let open = dumbbell(FabricTransport::OpenLoop, false, 800_000);
    assert!(open.ok(), "{open}");
    assert!(
        paused(&s) < paused(&open),
        "DCQCN {} PAUSE frames, open loop {}",
        paused(&s),
        paused(&open)
    );
}

/// DCTCP through the fabric on a lossy class: the ACKs echo the marks, the senders cut
/// their windows and keep the queue below the drop point; Reno on the same lossy class
/// (its packets are not ECN-capable) fills the buffer and loses packets, and recovers.
#[test]
fn dctcp_senders_cut_their_windows_on_ece_acks_that_crossed_the_fabric() {
    let s = dumbbell(tcp(true), true, 800_000);
    assert!(s.ok(), "{s}");
    assert_eq!(s.flows_completed, 4, "{s}");
    for f in &s.fct {
        assert_eq!(f.sender.transport, "dctcp");
        assert!(f.sender.ece_acks > 0 && f.sender.cuts > 0, "{:?}", f.sender);
    }
    assert_eq!(s.cells_dropped_lossy, 0, "{s}");
    let reno = dumbbell(tcp(false), true, 800_000);
    assert!(reno.ok(), "{reno}");
    assert!(reno.cells_dropped_lossy > 0, "{reno}");
    assert!(reno.fct.iter().any(|f| f.sender.retransmits > 0), "{reno}");
}

/// A switch with more links than its configuration's ports is refused, naming it.
#[test]
fn a_switch_with_more_links_than_ports_is_refused() {
    let cfg = SwitchConfig {
        ports: 2,
        ..small(Policy::Sih)
    };
    let e = Network::new(
        two_switches(),
        &incast_flows(),
        Ecmp { fabric_seed: 1 },
        &Transports::open_loop(),
        |_| cfg.clone(),
    )
    .err()
    .expect("3 links on 2 ports");
    assert_eq!(
        e.to_string().split(" (").next().unwrap(),
        "switch 4: ports: 3 links; allowed: at most 2"
    );
}

/// What the ECM line ([`ecm_line`]) runs with: ECM at switch 5, host 6's flow on the ECM
/// class back to host 0, a pause for ever, threads.
#[derive(Clone, Copy)]
struct EcmRun {
    ecm: bool,
    reverse: bool,
    pause_for_ever: bool,
    threads: usize,
}

const ECM_RUN: EcmRun = EcmRun {
    ecm: true,
    reverse: false,
    pause_for_ever: false,
    threads: 1,
};

/// The ECM frames' class, lossless.
const ECM_PG: u8 = 1;

/// Propagation from switch 5 to host 0 or 1: links 5-4, 4-3 and 3-host.
const ECM_PROP_NS: u64 = 1000 + 1000 + 200;

/// Hosts 0 and 1 under switch 3 send 2 MB each to host 2 under switch 5, through switch 4
/// (400G between the switches, 100G host links): switch 5's port to host 2, two hops from
/// the senders' switch, is the only bottleneck. With ECM on class 3 at switch 5 (`ecm`),
/// its congestion point's frames are packets on class 1 (lossless) through switches 5, 4
/// and 3 to the senders' reaction points. With `reverse`, host 6 (under switch 5, 400G)
/// sends 1 MB on class 1 to host 0 from 20 us: it fills switch 3's port to host 0, whose
/// PAUSE holds switch 4's class 1 toward switch 3, and the ECM frames queue behind it.
/// Returns the network, the summary and the summary's bytes without the
/// machine-dependent `run` section.
fn ecm_line(r: EcmRun) -> (Network, FabricSummary, String) {
    let links = vec![
        link(0, 3, 100, 200),
        link(1, 3, 100, 200),
        link(2, 5, 100, 200),
        link(3, 4, 400, 1000),
        link(4, 5, 400, 1000),
        link(6, 5, 400, 200),
    ];
    let header = Header {
        nodes: 7,
        switches: vec![3, 4, 5],
        tors: None,
    };
    let topo = Topology::new(header, links).unwrap();
    let mut flows = vec![flow(0, 2, 2_000_000, 0), flow(1, 2, 2_000_000, 0)];
    if r.reverse {
        flows.push(Flow {
            pg: ECM_PG,
            ..flow(6, 0, 1_000_000, 20_000)
        });
    }
    let cp = EcmConfig {
        priorities: vec![3],
        ..EcmConfig::default()
    };
    let config = |node: NodeId| SwitchConfig {
        ecm: if r.ecm && node == 5 {
            cp.clone()
        } else {
            EcmConfig::default()
        },
        lossless_priorities: vec![ECM_PG, 3],
        buffer_bytes: 2 << 20,
        ..small(Policy::Sih)
    };
    let transports = Transports {
        ecm_pg: ECM_PG,
        ..Transports::open_loop()
    };
    let mut net = Network::new(topo, &flows, Ecmp { fabric_seed: 1 }, &transports, config).unwrap();
    if r.pause_for_ever {
        // Switch 4's egress toward switch 3 (link 3) on the ECM class.
        net.inject_fault(LinkFault::PauseForever {
            link: 3,
            from: 4,
            class: ECM_PG,
        });
    }
    let opts = RunOptions {
        threads: r.threads,
        ..options(1_000_000, false)
    };
    let s = net.run(&opts).unwrap();
    assert!(s.ok(), "{:?}", s.violations);
    let pauses: u64 = s.switches.iter().map(|w| w.pfc_pause_frames).sum();
    let ecm_frames: Vec<u64> = s.switches.iter().map(|w| w.ecm_frames).collect();
    eprintln!(
        "ECM at switch 5: {}; reverse flow: {}; flows completed {}; PAUSE frames {pauses}; ECM frames sent by switches 3-5 {ecm_frames:?}; {:?}",
        r.ecm, r.reverse, s.flows_completed, s.ecm
    );
    // Only switch 5 has congestion points; the others carry its frames as packets.
    assert_eq!(ecm_frames[2] > 0, r.ecm, "{ecm_frames:?}");
    assert_eq!(ecm_frames[..2], [0, 0]);
    let mut bytes = s.clone();
    bytes.run = fabric::report::Speed::new(0, 1, 0.0, 0.0, Vec::new());
    (net, s, bytes.to_json())
}

/// Both senders' reaction points took ECM frames and held frames in a rate limiter.
fn throttled_by_ecm(net: &Network) -> Result<(), String> {
    for host in [0, 1] {
        let st = net.reaction_point(host).unwrap().stats();
        eprintln!(
            "host {host}: {} ECM frames received, {} frames sent through a limiter",
            st.ecm_rx, st.frames_limited
        );
        if st.ecm_rx == 0 || st.frames_limited == 0 {
            return Err(format!("host {host}: {st:?}"));
        }
    }
    Ok(())
}

/// The pause on the ECM class that switch 3 held switch 4's egress with, cycles, and the
/// longest delay of an ECM frame past the propagation from switch 5 to the senders, ns.
fn ecm_held(s: &FabricSummary) -> (u64, u64) {
    let paused = s
        .links
        .iter()
        .find(|l| (l.from, l.to) == (4, 3))
        .map_or(0, |l| l.pause_cycles);
    let ecm = s.ecm.as_ref().expect("ECM at switch 5");
    (paused, ecm.delay_max_ns.saturating_sub(ECM_PROP_NS))
}

#[test]
fn ecm_frames_from_two_hops_away_throttle_the_senders() {
    let (net, s, one) = ecm_line(ECM_RUN);
    throttled_by_ecm(&net).unwrap();
    // The frames are packets of the checks: every cell injected (theirs too) accounted for.
    assert!(s.conservation_ok, "{}", s.conservation);
    let ecm = s.ecm.as_ref().unwrap();
    assert!(ecm.frames_received > 0 && ecm.frames_received <= ecm.frames_sent);
    assert!(ecm.delay_min_ns >= ECM_PROP_NS, "{ecm:?}");
    // ECM frames cross partitions as packets: three threads, one switch each, give the
    // same summary and the same reaction points.
    let (net3, _, three) = ecm_line(EcmRun {
        threads: 3,
        ..ECM_RUN
    });
    assert_eq!(one, three);
    for host in [0, 1] {
        let rp = |n: &Network| format!("{:?}", n.reaction_point(host).unwrap().stats());
        assert_eq!(rp(&net), rp(&net3), "host {host}");
    }
    // Companion: ECM off at switch 5, nothing reaches the senders' reaction points.
    let (off, s, _) = ecm_line(EcmRun {
        ecm: false,
        ..ECM_RUN
    });
    throttled_by_ecm(&off).expect_err("no congestion point, no throttling");
    assert_eq!(s.ecm, None);
}

/// ECM frames go through the buffers: behind host 6's flow on their class, which switch
/// 3's PAUSE holds at switch 4, a frame reaches its sender well after the propagation
/// delay; without that flow none waits as long. Companion: the class paused for ever at
/// switch 4, no frame reaches a sender (they wait in switch 4's buffer).
#[test]
fn ecm_frames_queue_behind_data_and_wait_out_a_pause() {
    let quiet = ecm_held(&ecm_line(ECM_RUN).1);
    let (_, s, _) = ecm_line(EcmRun {
        reverse: true,
        ..ECM_RUN
    });
    let held = ecm_held(&s);
    eprintln!("switch 4 paused on the ECM class / the longest ECM delay past the propagation: {held:?}, without host 6's flow {quiet:?}");
    assert!(held.0 > 0 && held.1 > 1_000, "{held:?}");
    assert!(quiet.0 == 0 && quiet.1 < 500, "{quiet:?}");
    let (net, s, _) = ecm_line(EcmRun {
        pause_for_ever: true,
        ..ECM_RUN
    });
    let ecm = s.ecm.as_ref().unwrap();
    assert!(ecm.frames_sent > 0 && ecm.frames_received == 0, "{ecm:?}");
    throttled_by_ecm(&net).expect_err("every frame held at switch 4");
    assert!(s.switches[1].cells_buffered_at_end > 0);
}

/// An ECM frame enters the buffer as one cell: a switch with congestion points whose cell
/// cannot hold 64 B is refused, naming the switch and `cell_bytes`; the same switch
/// without congestion points builds.
#[test]
fn a_cell_too_small_for_an_ecm_frame_is_refused() {
    let topo = topology(&[1, 1], &[(0, 1, 100)]);
    let flows = [flow(0, 1, 1000, 0)];
    let build = |ecm: bool| {
        let config = |_| SwitchConfig {
            cell_bytes: 48,
            ecm: EcmConfig {
                priorities: if ecm { vec![3] } else { Vec::new() },
                ..EcmConfig::default()
            },
            ..small(Policy::Sih)
        };
        Network::new(
            topo.clone(),
            &flows,
            Ecmp { fabric_seed: 1 },
            &Transports::open_loop(),
            config,
        )
    };
    let e = build(true).err().expect("a 64 B frame in 48 B cells");
    assert!(
        e.to_string()
            .starts_with("switch 2: cell_bytes: a 64 B ECM frame takes 2 cells; allowed: one"),
        "{e}"
    );
    build(false).unwrap();
}
