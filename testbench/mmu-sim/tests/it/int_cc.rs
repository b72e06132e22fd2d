//! HPCC, PowerTCP and theta-PowerTCP on a dumbbell (docs/int.md): N senders, each on a port
//! of its own, into port 0 of the small profile with 9 ports (100 Gb/s, 1 GHz), lossless
//! priority 3, 1000 B packets, `T` = 10 us.
//! The flows share the port fairly within the papers' time scale (tens of RTTs) with the
//! queue held near empty; the companions (INT off, a stuck transmitted-bytes counter) fail
//! the same check.

use hw_model::Fault;
use scenario::{Overrides, Scenario};
use switch_run::Sim;

/// What the flows show over the measurement window.
#[derive(Debug)]
struct Shared {
    /// Each flow's delivered rate, Gb/s.
    gbps: Vec<f64>,
    /// The bottleneck queue (port 0, queue 3), bytes: time-average and largest, every
    /// 1000 cycles.
    mean_queue: f64,
    max_queue: u64,
}

/// The run: 600 us, measured over 400..600 us (40 to 60 base RTTs).
const WARM: u64 = 400_000;
const CYCLES: u64 = 600_000;

/// The testbench of `n` (at most 8) flows of `law` (the pattern's key, with `keys` in its
/// table) from ports 1..=n into port 0, all started at 0; `int` is `[switch] int`.
fn bench(law: &str, keys: &str, n: usize, int: bool) -> Sim {
    let flows: String = (0..n)
        .map(|i| {
            format!(
                "[[flows]]\nsrc = {}\ndst = 0\nprio = 3\nsize_bytes = 1000\n\
                 pattern = {{ {law} = {{ {keys} }} }}\n",
                1 + i
            )
        })
        .collect();
    let s = Scenario::parse(
        &format!(
            "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nports = 9\nint = {int}\n\n\
             [run]\ncycles = {CYCLES}\n\n{flows}"
        ),
        "int-cc-dumbbell",
    )
    .unwrap();
    Sim::new(&s, Overrides::default()).unwrap()
}

/// [`bench`] run for 600 us (with `fault` injected), measured over its last 200 us.
fn dumbbell(law: &str, keys: &str, n: usize, int: bool, fault: Option<Fault>) -> Shared {
    let mut sim = bench(law, keys, n, int);
    if let Some(f) = fault {
        sim.mmu_mut().inject_fault(f);
    }
    let cell = sim.plan().derived.cfg.cell_bytes as u64;
    let delivered = |sim: &Sim| -> Vec<u64> {
        sim.int_cc_stats()
            .iter()
            .map(|t| t.bytes_delivered)
            .collect()
    };
    let (mut sum, mut samples, mut max_queue, mut at_warm) = (0u64, 0u64, 0, vec![]);
    while sim.now() < CYCLES {
        for _ in 0..1000 {
            sim.step().unwrap();
        }
        if sim.now() == WARM {
            at_warm = delivered(&sim);
        }
        if sim.now() > WARM {
            let q = sim.mmu().egress_cells(0, 3) as u64 * cell;
            sum += q;
            samples += 1;
            max_queue = max_queue.max(q);
        }
    }
    let summary = sim.summary(0.0);
    assert!(summary.ok(), "{summary}");
    let end = delivered(&sim);
    Shared {
        gbps: (0..n)
            .map(|i| (end[i] - at_warm[i]) as f64 * 8.0 / (CYCLES - WARM) as f64)
            .collect(),
        mean_queue: sum as f64 / samples as f64,
        max_queue,
    }
}

/// The claim: each flow within `tol` of the fair share of the line's goodput (1000 B in
/// 1020 B on the wire), the port at least `util` of it, the time-average queue below
/// `queue` bytes and every sample below four times that.
fn fair_and_short(s: &Shared, tol: f64, util: f64, queue: f64) -> Result<(), String> {
    let line = 100.0 * 1000.0 / 1020.0;
    let fair = line / s.gbps.len() as f64;
    let total: f64 = s.gbps.iter().sum();
    let fair_ok = s.gbps.iter().all(|g| (g - fair).abs() <= tol * fair);
    if fair_ok && total >= util * line && s.mean_queue <= queue && s.max_queue as f64 <= 4.0 * queue
    {
        Ok(())
    } else {
        Err(format!("{s:?}"))
    }
}

/// HPCC holds the link at `eta` = 95 % with (nearly) no queue: within 5 % of 95 % and a
/// mean queue below 10 KB (an eighth of a BDP).
fn hpcc_claim(s: &Shared) -> Result<(), String> {
    fair_and_short(s, 0.1, 0.9, 10_000.0)
}

#[test]
fn hpcc_two_and_eight_flows_share_the_port_with_the_queue_near_empty() {
    for n in [2, 8] {
        let s = dumbbell("hpcc", "", n, true, None);
        eprintln!("hpcc {n} flows: {s:?}");
        hpcc_claim(&s).unwrap();
    }
}

/// Companion: INT off, the ACKs carry no record, the flows stay at line rate with a
/// window of one BDP each, and the queue holds the excess windows.
#[test]
fn companion_hpcc_without_int_fails_the_check() {
    let s = dumbbell("hpcc", "", 2, false, None);
    eprintln!("hpcc, INT off: {s:?}");
    hpcc_claim(&s).expect_err("no INT, no control");
}

/// Companion: the ports' transmitted-bytes counters stuck: every record says the link is
/// idle, so only the queue term of `U` slows the flows, and the queue stands near `eta`
/// BDP.
#[test]
fn companion_hpcc_with_a_stuck_tx_counter_fails_the_check() {
    let s = dumbbell("hpcc", "", 2, true, Some(Fault::IntStuckTxBytes));
    eprintln!("hpcc, stuck counter: {s:?}");
    hpcc_claim(&s).expect_err("a stuck counter hides the link's rate");
}

/// PowerTCP: the port at 90 % at least, a mean queue below 10 KB, two flows fair within
/// 10 % and eight within 15 % (measured: PowerTCP's eight flows spread 10.9 to 13.2 Gb/s
/// around the fair 12.25 over 40..60 `T`, HPCC's 11.1 to 12.4).
fn power_claim(s: &Shared) -> Result<(), String> {
    let tol = if s.gbps.len() > 2 { 0.15 } else { 0.1 };
    fair_and_short(s, tol, 0.9, 10_000.0)
}

#[test]
fn powertcp_two_and_eight_flows_share_the_port_with_the_queue_near_empty() {
    for n in [2, 8] {
        let s = dumbbell("powertcp", "", n, true, None);
        eprintln!("powertcp {n} flows: {s:?}");
        power_claim(&s).unwrap();
    }
}

#[test]
fn companion_powertcp_without_int_and_with_a_stuck_counter_fails_the_check() {
    let s = dumbbell("powertcp", "", 2, false, None);
    eprintln!("powertcp, INT off: {s:?}");
    power_claim(&s).expect_err("no INT, no control");
    let s = dumbbell("powertcp", "", 2, true, Some(Fault::IntStuckTxBytes));
    eprintln!("powertcp, stuck counter: {s:?}");
    power_claim(&s).expect_err("a stuck counter hides the link's rate");
}

/// theta-PowerTCP needs no INT: the same claim with `int = false`.
#[test]
fn theta_powertcp_two_and_eight_flows_share_the_port_without_int() {
    for n in [2, 8] {
        let s = dumbbell("theta_powertcp", "", n, false, None);
        eprintln!("theta-powertcp {n} flows: {s:?}");
        power_claim(&s).unwrap();
    }
}

/// Port 0's `int.tx_bytes` register after 100 us of two HPCC flows, and the bytes its
/// receivers got.
fn tx_register(fault: Option<Fault>) -> (u64, u64) {
    let mut sim = bench("hpcc", "", 2, true);
    if let Some(f) = fault {
        sim.mmu_mut().inject_fault(f);
    }
    while sim.now() < 100_000 {
        sim.step().unwrap();
    }
    let mmu = sim.mmu();
    let i = mmu
        .signals()
        .iter()
        .position(|s| s.path == "top.mmu.egress.p00.int.tx_bytes")
        .expect("INT on: the register is probed");
    let delivered = sim.int_cc_stats().iter().map(|t| t.bytes_delivered).sum();
    (mmu.signal_value(i), delivered)
}

/// The register counts every byte the port dequeued: the bytes delivered plus the packet
/// on the wire at most.
#[test]
fn the_tx_bytes_register_counts_the_bytes_the_port_dequeued() {
    let (tx, delivered) = tx_register(None);
    assert!(delivered > 1_000_000, "{delivered}");
    assert!(
        (delivered..=delivered + 1000).contains(&tx),
        "{tx} vs {delivered}"
    );
}

/// Companion: `Fault::IntStuckTxBytes` leaves it at 0, and the same check fails.
#[test]
fn companion_a_stuck_tx_bytes_register_fails_the_count() {
    let (tx, delivered) = tx_register(Some(Fault::IntStuckTxBytes));
    assert_eq!(tx, 0);
    assert!(!(delivered..=delivered + 1000).contains(&tx));
}

/// `mmu-sim validate hpcc-fanin` with `sets` exits 2 with `want` in its error.
fn refused(sets: &[&str], want: &str) {
    let mut args = vec!["validate", "hpcc-fanin"];
    for set in sets {
        args.extend(["--set", set]);
    }
    let o = crate::common::mmu_sim(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "--set {sets:?}: {err}");
    assert!(err.contains(want), "--set {sets:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_int_and_sender_keys_exit_2_naming_the_key_and_its_range() {
    for (set, want) in [
        (
            "switch.port_speed_gbps=10",
            "switch.int: port 0 runs at 10 Gb/s, which INT's 3-bit line-rate field cannot carry; allowed: ports at 25, 40, 50, 100, 200, 400 Gb/s",
        ),
        ("switch.int=2", "switch.int"),
        (
            "flows[0].pattern={hpcc={u_target=1.5}}",
            "flows[0].pattern.hpcc.u_target: 1.5 is out of range; allowed: 0 < u_target <= 1",
        ),
        (
            "flows[0].pattern={hpcc={mi_thresh=-1}}",
            "flows[0].pattern.hpcc.mi_thresh",
        ),
        (
            "flows[0].pattern={hpcc={base_rtt_us=0}}",
            "flows[0].pattern.hpcc.base_rtt_us: 0 is out of range; allowed: 1..=100000",
        ),
        (
            "flows[0].pattern={hpcc={rate_ai_mbps=200000}}",
            "flows[0].pattern.hpcc.rate_ai_mbps: 200000 is out of range; allowed: 1..=100000",
        ),
        (
            "flows[0].pattern={hpcc={gamma=0.5}}",
            "flows[0].pattern.hpcc.gamma: not used by hpcc; remove the key",
        ),
        (
            "flows[0].pattern={powertcp={gamma=0}}",
            "flows[0].pattern.powertcp.gamma: 0 is out of range; allowed: 0 < gamma <= 1",
        ),
        (
            "flows[0].pattern={theta_powertcp={u_target=0.9}}",
            "flows[0].pattern.theta_powertcp.u_target: not used by theta_powertcp",
        ),
        (
            "flows[0].pattern={powertcp={min_rate_mbps=0}}",
            "flows[0].pattern.powertcp.min_rate_mbps: 0 is out of range; allowed: 1..=100000",
        ),
        ("flows[0].rate_gbps=10", "flows[0].rate_gbps: not used by pattern Hpcc"),
    ] {
        refused(&[set], want);
    }
}
