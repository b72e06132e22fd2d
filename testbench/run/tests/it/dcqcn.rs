//! DCQCN (Zhu et al., SIGCOMM 2015; `stimulus::dcqcn`, docs/ecn.md): two flows into one
//! port share it fairly with the queue in the RED band, the flows a cycle's events touched
//! (what the waveform compares), and the range errors of the pattern's keys.

use scenario::builtin;
use scenario::{Overrides, Scenario};
use stimulus::dcqcn::{DcqcnFlows, DcqcnReg};
use switch_run::Sim;

/// What two DCQCN flows into one port show after the second has started.
#[derive(Debug)]
struct Shared {
    /// Each flow's delivered rate over the measurement window, Gb/s.
    gbps: [f64; 2],
    /// Bottleneck queue (port 0, queue 1), bytes: time-average and largest, every 1000 cycles.
    mean_queue: f64,
    max_queue: u32,
    /// Cells dropped in the measurement window (the second flow's start drops some).
    drops: u64,
    cnps: u64,
}

/// DCQCN's recommended RED curve (section 5): `Kmin` 5 KB, `Kmax` 200 KB, `Pmax` 1 %.
const KMIN: f64 = 5120.0;
const KMAX: f64 = 204_800.0;
/// The lossy pool, bytes: room above `Kmax` so that the curve, not the buffer, holds the
/// queue.
const POOL: u64 = 1 << 20;
/// The flows' DCQCN keys.
const DCQCN: &str = "r_ai_mbps = 400, r_hai_mbps = 1000";

/// Flow 0 from port 1 starts at 0, flow 1 from port 2 at 0.5 ms, both into port 0 with the
/// paper's defaults; 6 ms, measured over the last 2 ms. `ecn` is the `[switch.ecn]` body.
fn two_flows(ecn: &str) -> Shared {
    let flow = |src: usize, start: u64| {
        format!(
            "[[flows]]\nsrc = {src}\ndst = 0\nprio = 1\nsize_bytes = 1500\nstart_cycle = {start}\n\
             pattern = {{ dcqcn = {{ {DCQCN} }} }}\n"
        )
    };
    let (warm, cycles) = (4_000_000, 6_000_000);
    let s = Scenario::parse(
        &format!(
            "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nlossy_pool_bytes = {POOL}\n\n\
             [switch.ecn]\n{ecn}\n\n[run]\ncycles = {cycles}\n\n{}{}",
            flow(1, 0),
            flow(2, 500_000)
        ),
        "dcqcn",
    )
    .unwrap();
    let mut sim = Sim::new(&s, Overrides::default()).unwrap();
    let delivered = |sim: &Sim| -> Vec<u64> {
        sim.dcqcn_stats()
            .iter()
            .map(|t| t.bytes_delivered)
            .collect()
    };
    let (mut sum, mut n, mut max_queue, mut at_warm) = (0.0, 0u64, 0, vec![0, 0]);
    let mut drops_at_warm = 0;
    while sim.now() < cycles {
        for _ in 0..1000 {
            sim.step().unwrap();
        }
        if sim.now() == warm {
            at_warm = delivered(&sim);
            drops_at_warm = sim.summary(0.0).cells_dropped_lossy;
        }
        if sim.now() > warm {
            let q = sim.mmu().ecn_queues()[0].qlen;
            sum += q as f64;
            n += 1;
            max_queue = max_queue.max(q);
        }
    }
    let summary = sim.summary(0.0);
    assert!(summary.ok(), "{summary}");
    assert_eq!(summary.to_string().matches("dcqcn flow").count(), 2);
    let end = delivered(&sim);
    let rate = |i: usize| (end[i] - at_warm[i]) as f64 * 8.0 / (cycles - warm) as f64;
    Shared {
        gbps: [rate(0), rate(1)],
        mean_queue: sum / n as f64,
        max_queue,
        drops: summary.cells_dropped_lossy - drops_at_warm,
        cnps: sim.dcqcn_stats().iter().map(|t| t.cnps_received).sum(),
    }
}

/// The claim (section 3, Fig. 6 and 8): each flow within 10 % of the fair share of the
/// line's goodput, no loss, the time-average queue inside the marking band
/// `Kmin..=Kmax` and its largest sample at most `Kmax`.
fn fair_in_band(s: &Shared) -> Result<(), String> {
    let fair = 100.0 * 1500.0 / 1520.0 / 2.0;
    let fair_ok = s.gbps.iter().all(|g| (g - fair).abs() <= 0.1 * fair);
    if fair_ok
        && s.drops == 0
        && (KMIN..=KMAX).contains(&s.mean_queue)
        && f64::from(s.max_queue) <= KMAX
    {
        Ok(())
    } else {
        Err(format!("{s:?}"))
    }
}

#[test]
fn two_flows_converge_to_the_fair_share_with_the_queue_in_the_band() {
    let s = two_flows("priorities = [1]");
    eprintln!("dcqcn: {s:?}");
    fair_in_band(&s).unwrap();
    assert!(s.cnps > 0);
}

/// Companion: with the curve moved out of reach (`Kmin = Kmax` = the largest value) no
/// packet is marked, no CNP is sent, both flows stay at line rate and the check fails.
#[test]
fn companion_without_marks_the_check_fails() {
    let s = two_flows("priorities = [1]\nkmin = 134217727\nkmax = 134217727");
    eprintln!("no marks: {s:?}");
    assert_eq!(s.cnps, 0);
    fair_in_band(&s).expect_err("no marks, no rate control");
}

/// Every register of every flow's reaction point, in flow order.
fn registers(t: &DcqcnFlows) -> Vec<Vec<u64>> {
    (0..t.places().count())
        .map(|i| DcqcnReg::ALL.iter().map(|&r| t.reg(i, r)).collect())
        .collect()
}

/// Step `sim` to its end; in each cycle, every flow whose registers moved must be among
/// `DcqcnFlows::touched` (the waveform compares only those). Returns the flow-cycles in
/// which a register moved and those touched.
fn touched_covers_every_change(mut sim: Sim) -> (u64, u64) {
    let (mut moved, mut touched) = (0, 0);
    let mut before = registers(sim.dcqcn());
    while sim.now() < sim.plan().cycles {
        let c = sim.now();
        sim.step().unwrap();
        let after = registers(sim.dcqcn());
        let listed: Vec<usize> = sim.dcqcn().touched(c).collect();
        for (i, (b, a)) in before.iter().zip(&after).enumerate() {
            if b != a {
                moved += 1;
                assert!(
                    listed.contains(&i),
                    "cycle {c}: flow {i} {b:?} -> {a:?} not touched"
                );
            }
        }
        touched += listed.len() as u64;
        before = after;
    }
    (moved, touched)
}

/// `dcqcn-fanin` (long-lived flows: CNPs, both timers) and three message flows (an idle
/// flow restarts its RP at each message; 400-600 KB messages at 30 Gb/s each into a marking
/// port, a byte counter `B` of 100 KB): a
/// register moves only in cycles that list its flow, and few cycles list one (the
/// waveform's saving: 3 of 3 x 300 k flow-cycles would be every one).
#[test]
fn touched_lists_every_flow_whose_registers_moved() {
    let fanin = Sim::new(
        &builtin::load("dcqcn-fanin").unwrap(),
        Overrides {
            cycles: Some(1_000_000),
            ..Overrides::default()
        },
    )
    .unwrap();
    let (moved, touched) = touched_covers_every_change(fanin);
    eprintln!("dcqcn-fanin: {moved} flow-cycles moved, {touched} touched");
    assert!(moved > 20, "CNPs and timers move the registers");
    assert!(touched < 3 * 1_000_000 / 1000, "{touched}");

    let flow = |src: u32| {
        format!(
            "[[flows]]\nsrc = {src}\ndst = 0\nprio = 1\nsize_bytes = 1000\nrate_gbps = 30\n\
             message_cdf = [[400000, 0.0], [600000, 1.0]]\npattern = {{ dcqcn = {{ qp = \"pair\", b_bytes = 100000 }} }}\n"
        )
    };
    let text = format!(
        "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nlossy_pool_bytes = {POOL}\n\
         [switch.ecn]\npriorities = [1]\n[run]\ncycles = 1000000\n{}{}{}",
        flow(1),
        flow(2),
        flow(3)
    );
    let sim = Sim::new(
        &Scenario::parse(&text, "dcqcn-messages").unwrap(),
        Overrides::default(),
    )
    .unwrap();
    let (moved, _) = touched_covers_every_change(sim);
    eprintln!("messages: {moved} flow-cycles moved");
    assert!(
        moved > 10,
        "restarts, CNPs, timers and the byte counter move the registers"
    );
}
