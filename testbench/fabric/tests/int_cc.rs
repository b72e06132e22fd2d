//! HPCC and PowerTCP across the fabric: every switch on the path stamps its INT hop
//! record, the records travel beside the data packet to the receiver and back in its ACK,
//! and the sender's law runs over all hops. A line of three switches whose middle link is
//! the bottleneck: two flows share it fairly and keep its queue small; with INT off on
//! the middle switch the senders see only idle hops and fill its queue (the companion);
//! the bytes are the same on one and two threads.

use fabric::deadlock::DeadlockOptions;
use fabric::flows::Flow;
use fabric::routing::Ecmp;
use fabric::topology::{Header, Link, NodeId, Topology};
use fabric::transport::Transports;
use fabric::units::{BitRate, Picos};
use fabric::{FabricSummary, Network, RunOptions};
use hw_model::{Policy, SwitchConfig};
use scenario::params::{CcLaw, IntCcParams};
use scenario::FabricTransport;

const GBPS: u64 = 1_000_000_000;
/// The small profile's clock: 1 GHz, a cycle a nanosecond.
const US: u64 = 1000;
/// Hosts 0 and 1 under switch 3, host 2 under switch 5, switch 4 between them.
const MIDDLE: NodeId = 4;

fn link(src: NodeId, dst: NodeId, gbps: u64) -> Link {
    Link {
        src,
        dst,
        rate: BitRate(gbps * GBPS),
        delay: Picos(1_000_000),
        error_rate: 0.0,
        up: true,
    }
}

/// Senders 0 and 1 (100G) under switch 3, 200G to switch 4, 100G (the bottleneck) to
/// switch 5, 200G to receiver 2; every link 1 us. The hops before and after the
/// bottleneck run at half their line rate.
fn line() -> Topology {
    let links = vec![
        link(0, 3, 100),
        link(1, 3, 100),
        link(3, 4, 200),
        link(4, 5, 100),
        link(5, 2, 200),
    ];
    let header = Header {
        nodes: 6,
        switches: vec![3, 4, 5],
        tors: None,
    };
    Topology::new(header, links).unwrap()
}

fn params(law: CcLaw) -> FabricTransport {
    type P = IntCcParams;
    let (ai, gamma) = match law {
        CcLaw::Hpcc => (P::HPCC_RATE_AI_MBPS, P::POWERTCP_GAMMA),
        CcLaw::PowerTcp => (P::POWERTCP_BETA_MBPS, P::POWERTCP_GAMMA),
        CcLaw::ThetaPowerTcp => (P::POWERTCP_BETA_MBPS, P::THETA_GAMMA),
    };
    FabricTransport::IntCc(IntCcParams {
        law,
        base_rtt_ns: P::BASE_RTT_US * 1000,
        rate_ai_bps: ai * 1_000_000,
        min_rate_bps: P::MIN_RATE_MBPS * 1_000_000,
        u_target: P::U_TARGET,
        mi_thresh: P::MI_THRESH,
        gamma,
        line_bps: 0,
    })
}

/// Lossless class 3, INT on in every switch but `int_off`.
fn network(law: CcLaw, int_off: Option<NodeId>) -> Network {
    let flows: Vec<Flow> = (0..2)
        .map(|s| Flow {
            src: s,
            dst: 2,
            pg: 3,
            dport: 100,
            size: 20_000_000,
            start: Picos(0),
        })
        .collect();
    let transports = Transports {
        by_pg: [params(law); 8],
        feedback_pg: None,
        ecm_pg: 0,
    };
    Network::new(line(), &flows, Ecmp { fabric_seed: 1 }, &transports, |n| {
        SwitchConfig {
            policy: Policy::Sih,
            lossless_priorities: vec![3],
            int: Some(n) != int_off,
            ..SwitchConfig::small()
        }
    })
    .unwrap()
}

fn options(end_cycle: u64, threads: usize) -> RunOptions {
    RunOptions {
        end_cycle,
        deadlock: DeadlockOptions::default(),
        stop_at_deadlock: false,
        threads,
        horizon_error: 0,
    }
}

/// Cells sent from `from` to `to`.
fn cells(s: &FabricSummary, from: NodeId, to: NodeId) -> u64 {
    let l = s.links.iter().find(|l| l.from == from && l.to == to);
    l.expect("a link").cells
}

/// What the run shows over 200..300 us (20 to 30 `T`): each sender's share of the
/// bottleneck's cells, the bottleneck's use, and the middle switch's queued bytes
/// sampled every microsecond (mean, largest).
struct Measured {
    shares: Vec<f64>,
    utilisation: f64,
    mean_queue: f64,
    max_queue: u64,
    summary: FabricSummary,
}

fn measure(law: CcLaw, int_off: Option<NodeId>) -> Measured {
    let mut net = network(law, int_off);
    let start = net.run(&options(200 * US, 1)).unwrap();
    let mut queue = Vec::new();
    let mut s = start.clone();
    for t in 201..=300 {
        s = net.run(&options(t * US, 1)).unwrap();
        let middle = s.switches.iter().find(|w| w.switch == MIDDLE).unwrap();
        queue.push(
            middle
                .egress_queues
                .iter()
                .map(|q| q.curr_occupancy_bytes)
                .sum::<u64>(),
        );
    }
    let sent = |h| (cells(&s, h, 3) - cells(&start, h, 3)) as f64;
    let total = sent(0) + sent(1);
    // Full-size packets only: the bottleneck's cells per second when it is busy.
    let c = SwitchConfig::small();
    let packets_per_s = 100.0 * GBPS as f64 / ((c.mtu_bytes + c.wire_overhead_bytes) as f64 * 8.0);
    let full = packets_per_s * c.mtu_bytes.div_ceil(c.cell_bytes) as f64 * 100e-6;
    let bottleneck = (cells(&s, MIDDLE, 5) - cells(&start, MIDDLE, 5)) as f64;
    Measured {
        shares: vec![sent(0) / total, sent(1) / total],
        utilisation: bottleneck / full,
        mean_queue: queue.iter().sum::<u64>() as f64 / queue.len() as f64,
        max_queue: queue.iter().copied().max().unwrap_or(0),
        summary: s,
    }
}

/// The check: each flow within 15 % of its fair share (a half), the bottleneck at 85 % at
/// least, the queue small (as docs/int.md's single-switch check: mean below 10 KB, every
/// sample below 40 KB).
fn check(m: &Measured) -> Result<(), String> {
    let fair = m.shares.iter().all(|s| (s - 0.5).abs() <= 0.5 * 0.15);
    if !fair || m.utilisation < 0.85 || m.mean_queue > 10_000.0 || m.max_queue > 40_000 {
        return Err(format!(
            "shares {:?}, utilisation {:.3}, queue mean {:.0} B, largest {} B",
            m.shares, m.utilisation, m.mean_queue, m.max_queue
        ));
    }
    Ok(())
}

fn holds_and_fails_without_int(law: CcLaw) {
    let m = measure(law, None);
    eprintln!(
        "{}: shares {:?}, utilisation {:.3}, queue mean {:.0} B, largest {} B",
        law.name(),
        m.shares,
        m.utilisation,
        m.mean_queue,
        m.max_queue
    );
    assert!(m.summary.ok(), "{}", m.summary);
    check(&m).unwrap();
    for f in &m.summary.fct {
        assert_eq!(f.sender.transport, law.name());
        assert!(f.sender.acks_with_int > 0, "{:?}", f.sender);
    }
    let off = measure(law, Some(MIDDLE));
    let e = check(&off).expect_err("INT off on the bottleneck switch");
    eprintln!("{}, INT off on switch {MIDDLE}: {e}", law.name());
}

#[test]
fn hpcc_shares_a_bottleneck_two_hops_away_and_fails_without_its_int() {
    holds_and_fails_without_int(CcLaw::Hpcc);
}

#[test]
fn powertcp_shares_a_bottleneck_two_hops_away_and_fails_without_its_int() {
    holds_and_fails_without_int(CcLaw::PowerTcp);
}

/// The records cross partitions beside their packets: one and two threads, same bytes.
#[test]
fn int_runs_give_the_same_bytes_on_one_and_two_threads() {
    for law in [CcLaw::Hpcc, CcLaw::PowerTcp] {
        let bytes = |threads| {
            let mut s = network(law, None).run(&options(100 * US, threads)).unwrap();
            assert!(s.ok(), "{s}");
            s.run = fabric::report::Speed::new(0, 1, 0.0, 0.0, Vec::new());
            s.to_json() + &s.fct_txt()
        };
        assert_eq!(bytes(1), bytes(2), "{}", law.name());
    }
}

/// theta-PowerTCP reads only RTTs: it holds the check with INT off on the bottleneck.
#[test]
fn theta_powertcp_shares_the_bottleneck_without_int() {
    let m = measure(CcLaw::ThetaPowerTcp, Some(MIDDLE));
    eprintln!(
        "theta_powertcp, INT off on switch {MIDDLE}: shares {:?}, utilisation {:.3}, queue mean {:.0} B, largest {} B",
        m.shares, m.utilisation, m.mean_queue, m.max_queue
    );
    assert!(m.summary.ok(), "{}", m.summary);
    check(&m).unwrap();
}
