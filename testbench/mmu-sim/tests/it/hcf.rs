//! HCF egress queues (`[[switch.hcf]]`, `hw-model/src/hcf.rs`) through the whole testbench.
//!
//! 1. **Property** ([`hcf_keeps_order_credits_and_periods`]): for any drawn stimulus (lossy
//!    flows from several ingress ports, several per port, random sizes 64..=1500 B, constant,
//!    on/off, burst, Poisson or TCP patterns, so the HCF queue fills and drains in arbitrary
//!    interleavings of arrivals and departures) into one or two HCF queues of one egress port
//!    of the `small` profile, and any drawn HCF configuration (K = 1..=64 bins, c0 = 1..=255
//!    with small values favoured, buffer and HP/LP split, packet or cell unit, dynamic or
//!    fixed period, 1..=4 hashes), every run keeps:
//!    - per-flow order: the scoreboard counts zero reordered (and misrouted) cells, every
//!      cycle (HCF Theorem 1);
//!    - `Mmu::check_invariants` every [`INVARIANT_EVERY`] cycles and at the end (it recounts
//!      the HCF length registers from the lists and checks the credit ranges);
//!    - every credit register within `0..=c0`, read through `Mmu::hcf` every cycle;
//!    - a new period stamp whenever `periods` increments (one period start per cycle at most,
//!      stamped with that cycle);
//!    - conservation and `Mmu::step`'s own checks, every cycle.
//!
//!    A draw that does not exercise HCF (no packet sent to LP, or fewer than
//!    [`MIN_PERIODS`] periods) is rejected, and the test fails if more than a quarter of the
//!    draws are.
//! 2. **Companion** ([`no_swap_is_caught_reordering`]): the same property with
//!    `Fault::HcfNoSwap` injected (HP and LP no longer swap at a period start, the reordering
//!    of HCF III-D) must fail with a reordered cell; the shrunk input is printed, and kept as
//!    the regression [`regression_no_swap_reorders_shrunk_case`], which also checks that the
//!    same stimulus with the swap on reorders nothing.
//! 3. **Companions** of `check_invariants`: `Fault::HcfCreditAboveC0` with c0 = 2 (a 2-bit
//!    register forced to 3) and `Fault::HcfSkewLength`.
//! 4. **Validation**: `[[switch.hcf]]` on a lossless priority, `bins = 0`, `c0 = 300`,
//!    `hashes = 5` or a port that does not exist are refused, naming the field, by the
//!    scenario loader and by `mmu-sim validate` (exit code 2).
//!
//! Run length: each property case runs `SOAK_CYCLES` cycles (default [`DEFAULT_CYCLES`]) and
//! `PROPTEST_CASES` sets the number of cases (default [`DEFAULT_CASES`]), as in
//! `properties.rs`; with `SOAK_CYCLES` set the property prints what it checked (see it with
//! `--nocapture`).

use crate::common;

use hw_model::Fault;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{
    Config as ProptestConfig, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use scenario::{Overrides, Scenario};
use std::fmt::Write as _;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use switch_run::Sim;

/// Cycles per case unless `SOAK_CYCLES` says otherwise.
const DEFAULT_CYCLES: u64 = 20_000;
/// Cases of the property unless `PROPTEST_CASES` says otherwise.
const DEFAULT_CASES: u32 = 32;
/// Cycles between two `check_invariants` calls.
const INVARIANT_EVERY: u64 = 250;
/// Periods (the one at reset included) a run must start to count as exercising HCF.
const MIN_PERIODS: u32 = 4;
/// Ports of the `small` profile.
const PORTS: usize = 8;
/// Cells of a 1500 B packet on the `small` profile (208 B cells, no packet overhead): the
/// least a sub-queue counted in cells must hold.
const MTU_CELLS: u32 = 8;

fn soak_cycles() -> u64 {
    common::soak_cycles(DEFAULT_CYCLES)
}

use crate::common::soak_mode;

// ---------------------------------------------------------------------------------------
// What the property draws.
// ---------------------------------------------------------------------------------------

/// One `[[switch.hcf]]` entry, as raw draws.
#[derive(Debug, Clone)]
struct HcfDraw {
    bins: u32,
    c0: u32,
    /// Buffer in packets (cell unit: times [`MTU_CELLS`], plus `cell_extra`).
    buffer_packets: u32,
    cell_extra: u32,
    /// HP share of what is left once both sub-queues hold one MTU packet, per mille; `None`
    /// leaves `hp_limit` unset (`buffer / 2`).
    hp_permille: Option<u32>,
    cell_unit: bool,
    /// `None`: dynamic period.
    period_cycles: Option<u64>,
    hashes: u32,
}

#[derive(Debug, Clone)]
enum PatDraw {
    Constant { pct: u32 },
    OnOff { pct: u32, on: u64, off: u64 },
    Burst { bytes: u64 },
    Poisson { pct: u32 },
    Tcp { rtt_us: u64 },
}

#[derive(Debug, Clone)]
struct FlowDraw {
    /// Ingress port, counted from the egress port + 1 (so never the egress port).
    src: usize,
    /// Which HCF queue (modulo their number).
    queue: usize,
    sizes: Vec<u32>,
    pattern: PatDraw,
    /// Start and optional stop, percent of the run.
    start_pct: u32,
    stop_pct: Option<u32>,
}

#[derive(Debug, Clone)]
struct Case {
    egress: usize,
    /// Egress queue of the first HCF queue and its configuration.
    queue: u8,
    hcf: HcfDraw,
    /// A second HCF queue on the same port: queue `(queue + 1 + k) % 8`, and its
    /// configuration.
    second: Option<(u8, HcfDraw)>,
    /// Drawn lossless set; the HCF queues' priorities are cleared from it.
    lossless_mask: u8,
    lossy_pool_cells: u32,
    lossy_alpha_log2: i32,
    flows: Vec<FlowDraw>,
    seed: u64,
}

fn hcf_draw() -> impl Strategy<Value = HcfDraw> {
    (
        1u32..=64,
        prop_oneof![6 => 1u32..=3, 3 => 4u32..=15, 1 => 16u32..=255],
        2u32..=40,
        0u32..MTU_CELLS,
        prop::option::weighted(0.7, 0u32..=1000),
        any::<bool>(),
        prop::option::weighted(0.35, 20u64..=5_000),
        1u32..=4,
    )
        .prop_map(
            |(bins, c0, buffer_packets, cell_extra, hp_permille, cell_unit, period, hashes)| {
                HcfDraw {
                    bins,
                    c0,
                    buffer_packets,
                    cell_extra,
                    hp_permille,
                    cell_unit,
                    period_cycles: period,
                    hashes,
                }
            },
        )
}

fn pattern_draw() -> impl Strategy<Value = PatDraw> {
    prop_oneof![
        3 => (20u32..=100).prop_map(|pct| PatDraw::Constant { pct }),
        3 => (30u32..=100, 100u64..=3_000, 100u64..=3_000)
            .prop_map(|(pct, on, off)| PatDraw::OnOff { pct, on, off }),
        2 => (3_000u64..=60_000).prop_map(|bytes| PatDraw::Burst { bytes }),
        1 => (10u32..=80).prop_map(|pct| PatDraw::Poisson { pct }),
        1 => (1u64..=4).prop_map(|rtt_us| PatDraw::Tcp { rtt_us }),
    ]
}

fn flow_draw() -> impl Strategy<Value = FlowDraw> {
    (
        0usize..PORTS - 1,
        0usize..2,
        vec(64u32..=1500, 1..=3),
        pattern_draw(),
        0u32..=40,
        prop::option::weighted(0.3, 50u32..=100),
    )
        .prop_map(
            |(src, queue, sizes, pattern, start_pct, stop_pct)| FlowDraw {
                src,
                queue,
                sizes,
                pattern,
                start_pct,
                stop_pct,
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (
        0usize..PORTS,
        0u8..8,
        hcf_draw(),
        prop::option::weighted(0.3, (0u8..7, hcf_draw())),
        any::<u8>(),
        (200u32..=3_000, -1i32..=3),
        vec(flow_draw(), 2..=8),
        // TOML integers are 64-bit signed.
        0..=i64::MAX as u64,
    )
        .prop_map(
            |(egress, queue, hcf, second, lossless_mask, (pool, alpha), flows, seed)| Case {
                egress,
                queue,
                hcf,
                second,
                lossless_mask,
                lossy_pool_cells: pool,
                lossy_alpha_log2: alpha,
                flows,
                seed,
            },
        )
}

// ---------------------------------------------------------------------------------------
// From draws to a scenario file.
// ---------------------------------------------------------------------------------------

impl HcfDraw {
    /// The `[[switch.hcf]]` table for queue `queue` of port `port`.
    fn toml(&self, port: usize, queue: u8) -> String {
        let (least, buffer) = if self.cell_unit {
            (MTU_CELLS, self.buffer_packets * MTU_CELLS + self.cell_extra)
        } else {
            (1, self.buffer_packets)
        };
        let mut s = format!(
            "\n[[switch.hcf]]\nports = [{port}]\nqueue = {queue}\nbins = {}\nc0 = {}\nbuffer = {buffer}\nunit = \"{}\"\nhashes = {}\n",
            self.bins,
            self.c0,
            if self.cell_unit { "cell" } else { "packet" },
            self.hashes.min(self.bins),
        );
        if let Some(pm) = self.hp_permille {
            let hp = least + (buffer - 2 * least) * pm / 1000;
            let _ = writeln!(s, "hp_limit = {hp}");
        }
        if let Some(t) = self.period_cycles {
            let _ = writeln!(s, "period_cycles = {t}");
        }
        s
    }
}

impl Case {
    /// The HCF queues (egress queue numbers) of this case, with their configurations.
    fn hcf_queues(&self) -> Vec<(u8, &HcfDraw)> {
        let mut q = vec![(self.queue, &self.hcf)];
        if let Some((k, h)) = &self.second {
            q.push(((self.queue + 1 + k) % 8, h));
        }
        q
    }

    /// The scenario as TOML, run for `cycles` cycles.
    fn toml(&self, cycles: u64) -> String {
        let hcf = self.hcf_queues();
        let queues: Vec<u8> = hcf.iter().map(|&(q, _)| q).collect();
        let hcf_bits: u8 = queues.iter().map(|&q| 1u8 << q).sum();
        let lossless: Vec<String> = (0..8u8)
            .filter(|&b| self.lossless_mask & !hcf_bits & (1 << b) != 0)
            .map(|b| b.to_string())
            .collect();
        let mut s = format!(
            "name = \"hcf-property\"\n\n[switch]\nprofile = \"small\"\nlossless_priorities = [{}]\nlossy_pool_bytes = {}\nlossy_alpha_log2 = {}\n",
            lossless.join(", "),
            self.lossy_pool_cells as u64 * 208,
            self.lossy_alpha_log2,
        );
        for (q, h) in hcf {
            s += &h.toml(self.egress, q);
        }
        let _ = write!(
            s,
            "\n[run]\ncycles = {cycles}\nseed = {}\nexpect_lossless = true\n",
            self.seed
        );
        let at = |pct: u32| cycles * pct as u64 / 100;
        for f in &self.flows {
            let src = (self.egress + 1 + f.src) % PORTS;
            let prio = queues[f.queue % queues.len()];
            let mut sizes = f.sizes.clone();
            sizes.sort_unstable();
            sizes.dedup();
            let _ = write!(
                s,
                "\n[[flows]]\nsrc = {src}\ndst = {}\nprio = {prio}\n",
                self.egress
            );
            let one_size = matches!(f.pattern, PatDraw::Poisson { .. } | PatDraw::Tcp { .. });
            if one_size || sizes.len() == 1 {
                let _ = writeln!(s, "size_bytes = {}", sizes[sizes.len() - 1]);
            } else {
                let n = sizes.len();
                let points: Vec<String> = sizes
                    .iter()
                    .enumerate()
                    .map(|(i, b)| {
                        if i + 1 == n {
                            format!("[{b}, 1.0]")
                        } else {
                            format!("[{b}, {}]", (i + 1) as f64 / n as f64)
                        }
                    })
                    .collect();
                let _ = writeln!(s, "size_cdf = [{}]", points.join(", "));
            }
            let rate = |pct: u32| {
                if pct < 100 {
                    format!("rate_gbps = {}\n", pct)
                } else {
                    String::new()
                }
            };
            let mut stops = true;
            match f.pattern {
                PatDraw::Constant { pct } => {
                    s += "pattern = \"constant\"\n";
                    s += &rate(pct);
                }
                PatDraw::OnOff { pct, on, off } => {
                    s += "pattern = \"on_off\"\n";
                    s += &rate(pct);
                    let _ = writeln!(s, "on_cycles = {on}\noff_cycles = {off}");
                }
                PatDraw::Burst { bytes } => {
                    let _ = writeln!(s, "pattern = \"burst\"\nburst_bytes = {bytes}");
                    stops = false;
                }
                PatDraw::Poisson { pct } => {
                    s += "pattern = \"poisson\"\n";
                    s += &rate(pct.min(99));
                    s += "message_cdf = [[64, 0.3], [4_000, 0.8], [30_000, 1.0]]\n";
                }
                PatDraw::Tcp { rtt_us } => {
                    let _ = writeln!(
                        s,
                        "pattern = {{ tcp = {{ base_rtt_us = {rtt_us}, min_rto_us = 20 }} }}"
                    );
                    stops = false;
                }
            }
            let start = at(f.start_pct);
            let _ = writeln!(s, "start_cycle = {start}");
            if let (true, Some(p)) = (stops, f.stop_pct) {
                let _ = writeln!(s, "stop_cycle = {}", at(p).max(start + 1));
            }
        }
        s
    }
}

// ---------------------------------------------------------------------------------------
// The checking harness.
// ---------------------------------------------------------------------------------------

/// A property that failed, with the cycle and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Violation {
    /// `Mmu::step` refused the cycle.
    Step(String),
    /// A cell departed out of its flow's order, or on the wrong port.
    Order(String),
    /// Cells appeared or vanished.
    Conservation(String),
    /// `Mmu::check_invariants` failed.
    Invariant(String),
    /// A credit register read through `Mmu::hcf` is above `c0`.
    Credit(String),
    /// `periods` moved without a new stamp, or by more than one in a cycle.
    Period(String),
}

impl From<common::CycleFault> for Violation {
    fn from(f: common::CycleFault) -> Self {
        match f {
            common::CycleFault::Order(m) => Self::Order(m),
            common::CycleFault::Conservation(m) => Self::Conservation(m),
        }
    }
}

/// What a run that kept every property did.
#[derive(Debug, Clone, Copy, Default)]
struct Outcome {
    injected: u64,
    departed: u64,
    dropped_hcf: u64,
    to_hp: u64,
    to_lp: u64,
    /// Most periods started by one HCF queue (the one at reset included).
    periods: u32,
    invariant_calls: u64,
}

impl Outcome {
    /// The run put packets into LP and started several periods.
    fn exercised(&self) -> bool {
        self.to_lp > 0 && self.periods >= MIN_PERIODS
    }
}

/// How [`run_checked`] runs.
#[derive(Clone, Copy)]
struct Checks {
    cycles: u64,
    /// Injected right after the `Sim` is built.
    fault: Option<Fault>,
    /// Read every credit register every cycle.
    credits_every_cycle: bool,
    invariant_every: u64,
}

impl Checks {
    fn all(cycles: u64) -> Self {
        Self {
            cycles,
            fault: None,
            credits_every_cycle: true,
            invariant_every: INVARIANT_EVERY,
        }
    }
}

fn parse(toml: &str) -> Scenario {
    Scenario::parse(toml, "hcf-property")
        .unwrap_or_else(|e| panic!("the generator made an invalid scenario: {e}\n{toml}"))
}

/// Run `scenario` with every check of the module doc; the first violation ends the run.
fn run_checked(scenario: &Scenario, checks: Checks) -> Result<Outcome, Violation> {
    let mut sim = Sim::new(scenario, Overrides::default())
        .unwrap_or_else(|e| panic!("the generator made an invalid scenario: {e}"));
    if let Some(f) = checks.fault {
        sim.mmu_mut().inject_fault(f);
    }
    let queues: Vec<(usize, usize)> = sim
        .plan()
        .derived
        .hcf
        .iter()
        .map(|h| (h.port as usize, h.queue as usize))
        .collect();
    assert!(!queues.is_empty(), "the scenario has no HCF queue");
    // (periods, stamp) of each HCF queue after the last cycle.
    let mut last: Vec<(u32, u32)> = queues
        .iter()
        .map(|&(p, q)| {
            let (h, _) = sim.mmu().hcf(p, q).expect("an HCF queue");
            (h.periods, h.stamp)
        })
        .collect();
    let mut out = Outcome::default();
    for c in 0..checks.cycles {
        sim.step().map_err(|e| Violation::Step(e.to_string()))?;
        common::order_and_conservation(&sim, c)?;
        for (i, &(p, q)) in queues.iter().enumerate() {
            let (h, _hp) = sim.mmu().hcf(p, q).expect("an HCF queue");
            if checks.credits_every_cycle {
                if let Some(k) = (0..h.p.bins).find(|&k| h.credit(k) > h.p.c0) {
                    return Err(Violation::Credit(format!(
                        "cycle {c}: p{p} q{q} bin {k} holds {}, above c0 = {}",
                        h.credit(k),
                        h.p.c0
                    )));
                }
            }
            let (periods, stamp) = last[i];
            if h.periods != periods {
                if h.periods != periods.wrapping_add(1) {
                    return Err(Violation::Period(format!(
                        "cycle {c}: p{p} q{q} periods went from {periods} to {} in one cycle",
                        h.periods
                    )));
                }
                if h.stamp == stamp || h.stamp != c as u32 {
                    return Err(Violation::Period(format!(
                        "cycle {c}: p{p} q{q} period {} started with stamp {} (previous {stamp})",
                        h.periods, h.stamp
                    )));
                }
            } else if h.stamp != stamp {
                return Err(Violation::Period(format!(
                    "cycle {c}: p{p} q{q} stamp changed from {stamp} to {} within period {periods}",
                    h.stamp
                )));
            }
            last[i] = (h.periods, h.stamp);
        }
        if (c + 1) % checks.invariant_every == 0 {
            sim.mmu()
                .check_invariants()
                .map_err(|e| Violation::Invariant(e.to_string()))?;
            out.invariant_calls += 1;
        }
    }
    sim.mmu()
        .check_invariants()
        .map_err(|e| Violation::Invariant(format!("at the end: {e}")))?;
    out.invariant_calls += 1;
    let sb = sim.scoreboard();
    out.injected = sb.injected;
    out.departed = sb.departed;
    out.dropped_hcf = sb.dropped_for(hw_model::DropReason::HcfFull);
    for &(p, q) in &queues {
        let (h, _) = sim.mmu().hcf(p, q).expect("an HCF queue");
        out.to_hp += h.to_hp;
        out.to_lp += h.to_lp;
        out.periods = out.periods.max(h.periods);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// The property.
// ---------------------------------------------------------------------------------------

/// What the property saw over all its cases.
#[derive(Default)]
struct Tally {
    cases: AtomicU64,
    rejected: AtomicU64,
    cycles: AtomicU64,
    invariant_calls: AtomicU64,
    injected: AtomicU64,
    departed: AtomicU64,
    dropped_hcf: AtomicU64,
    to_hp: AtomicU64,
    to_lp: AtomicU64,
    periods: AtomicU64,
    /// Accepted cases with two HCF queues, a fixed period, credits in cells, and more than
    /// one hash on some queue.
    two_queues: AtomicU64,
    fixed_period: AtomicU64,
    cell_unit: AtomicU64,
    bloom: AtomicU64,
}

impl Tally {
    fn add(a: &AtomicU64, n: u64) {
        a.fetch_add(n, Ordering::Relaxed);
    }

    fn print(&self, cycles: u64) {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        println!(
            "[hcf] {} cases of {cycles} cycles accepted, {} draws rejected (HCF not exercised); \
             order, conservation, credit range and period stamp checked over {} cycles; \
             check_invariants {} calls; {} cells injected, {} departed, {} dropped hcf_full; \
             {} packets to HP, {} to LP; {} periods (most per case, summed); \
             cases with two HCF queues {}, a fixed period {}, credits in cells {}, \
             several hashes {}",
            g(&self.cases),
            g(&self.rejected),
            g(&self.cycles),
            g(&self.invariant_calls),
            g(&self.injected),
            g(&self.departed),
            g(&self.dropped_hcf),
            g(&self.to_hp),
            g(&self.to_lp),
            g(&self.periods),
            g(&self.two_queues),
            g(&self.fixed_period),
            g(&self.cell_unit),
            g(&self.bloom),
        );
    }
}

fn property_config(cases: u32) -> ProptestConfig {
    // `Config::default()` reads PROPTEST_CASES (and the other PROPTEST_* variables).
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    c.source_file = Some(file!());
    c
}

/// HCF Theorem 1 and the HCF registers' invariants over random stimuli and configurations
/// (module doc, item 1).
#[test]
fn hcf_keeps_order_credits_and_periods() {
    let cycles = soak_cycles();
    let tally = Tally::default();
    let mut runner = TestRunner::new(property_config(DEFAULT_CASES));
    let result = runner.run(&case(), |c| {
        let toml = c.toml(cycles);
        let scenario = parse(&toml);
        match run_checked(&scenario, Checks::all(cycles)) {
            Ok(o) => {
                if !o.exercised() {
                    Tally::add(&tally.rejected, 1);
                    return Err(TestCaseError::reject(format!("HCF not exercised: {o:?}")));
                }
                Tally::add(&tally.cases, 1);
                Tally::add(&tally.cycles, cycles);
                Tally::add(&tally.invariant_calls, o.invariant_calls);
                Tally::add(&tally.injected, o.injected);
                Tally::add(&tally.departed, o.departed);
                Tally::add(&tally.dropped_hcf, o.dropped_hcf);
                Tally::add(&tally.to_hp, o.to_hp);
                Tally::add(&tally.to_lp, o.to_lp);
                Tally::add(&tally.periods, o.periods as u64);
                let hcf = c.hcf_queues();
                let any = |f: &dyn Fn(&HcfDraw) -> bool| u64::from(hcf.iter().any(|(_, h)| f(h)));
                Tally::add(&tally.two_queues, u64::from(hcf.len() == 2));
                Tally::add(&tally.fixed_period, any(&|h| h.period_cycles.is_some()));
                Tally::add(&tally.cell_unit, any(&|h| h.cell_unit));
                Tally::add(&tally.bloom, any(&|h| h.hashes.min(h.bins) > 1));
                Ok(())
            }
            Err(v) => Err(TestCaseError::fail(format!("{v:?}\n{toml}"))),
        }
    });
    if soak_mode() {
        tally.print(cycles);
    }
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, case)) => panic!("{why}\nminimal case: {case:#?}"),
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
    let accepted = tally.cases.load(Ordering::Relaxed);
    let rejected = tally.rejected.load(Ordering::Relaxed);
    assert!(
        rejected * 3 <= accepted,
        "{rejected} draws did not exercise HCF against {accepted} that did: the generator \
         must put packets into LP and start periods"
    );
}

// ---------------------------------------------------------------------------------------
// Companion: no swap at a period start must reorder, and the property must see it.
// ---------------------------------------------------------------------------------------

/// Cycles of a no-swap case: a reorder shows within a few periods.
const NO_SWAP_CYCLES: u64 = 10_000;

/// The property, on cases whose scenario file `edit` changes, under `fault`, fails with a
/// reordered cell. The runner is seeded so the search is reproducible; the shrunk case is
/// printed (`--nocapture`).
fn caught_reordering(what: &str, fault: Option<Fault>, edit: impl Fn(String) -> String) {
    let config = ProptestConfig {
        cases: 64,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..ProptestConfig::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let checks = Checks {
        fault,
        ..Checks::all(NO_SWAP_CYCLES)
    };
    let result = runner.run(&case(), |c| {
        match run_checked(&parse(&edit(c.toml(NO_SWAP_CYCLES))), checks) {
            Ok(_) => Ok(()),
            Err(v) => Err(TestCaseError::fail(format!("{v:?}"))),
        }
    });
    match result {
        Err(TestError::Fail(why, case)) => {
            let why = why.to_string();
            println!(
                "{what} counterexample ({why}):\n{case:#?}\n--- as a scenario file ---\n{}",
                edit(case.toml(NO_SWAP_CYCLES))
            );
            assert!(
                why.contains("Order("),
                "caught, but not as a reorder: {why}"
            );
            assert!(why.contains("reordered"), "{why}");
        }
        other => panic!("{what} was not caught reordering: {other:?}"),
    }
}

/// The property with `Fault::HcfNoSwap` injected fails with a reordered cell; the shrunk
/// case is the stimulus of [`regression_no_swap_reorders_shrunk_case`].
#[test]
fn no_swap_is_caught_reordering() {
    caught_reordering("HCF without the HP/LP swap", Some(Fault::HcfNoSwap), |t| t);
}

/// HCF's conference version (`zero_on_lp_join = false`: a packet that joins LP leaves its
/// bins' credits) is not Theorem 1's HCF: the same property finds a later packet that
/// overtook an earlier one of its flow through HP.
#[test]
fn conference_version_is_caught_reordering() {
    caught_reordering("HCF without footnote 1's zeroing", None, |t| {
        t.replace("\nhashes = ", "\nzero_on_lp_join = false\nhashes = ")
    });
}

/// The shrunk counterexample of [`no_swap_is_caught_reordering`], as the scenario file its
/// `Case::toml` printed.
const NO_SWAP_CASE: &str = r#"
name = "hcf-property"

[switch]
profile = "small"
lossless_priorities = []
lossy_pool_bytes = 41600
lossy_alpha_log2 = 0

[[switch.hcf]]
ports = [0]
queue = 0
bins = 1
c0 = 1
buffer = 2
unit = "packet"
hashes = 1

[run]
cycles = 10000
seed = 0
expect_lossless = true

[[flows]]
src = 1
dst = 0
prio = 0
size_bytes = 64
pattern = "constant"
rate_gbps = 31
start_cycle = 0

[[flows]]
src = 1
dst = 0
prio = 0
size_bytes = 142
pattern = "on_off"
rate_gbps = 72
on_cycles = 829
off_cycles = 100
start_cycle = 0
"#;

/// Regression from [`no_swap_is_caught_reordering`]: with `Fault::HcfNoSwap` the shrunk
/// stimulus reorders and the harness reports it; the same stimulus with the swap on (the
/// model as built) reorders nothing and keeps every other check.
#[test]
fn regression_no_swap_reorders_shrunk_case() {
    let s = parse(NO_SWAP_CASE);
    let faulty = Checks {
        fault: Some(Fault::HcfNoSwap),
        ..Checks::all(NO_SWAP_CYCLES)
    };
    match run_checked(&s, faulty) {
        Err(Violation::Order(why)) => assert!(why.contains("reordered"), "{why}"),
        other => panic!("no swap, no reorder: {other:?}"),
    }
    let o = run_checked(&s, Checks::all(NO_SWAP_CYCLES))
        .unwrap_or_else(|v| panic!("with the swap: {v:?}"));
    assert!(o.exercised(), "{o:?}");
    assert!(o.departed > 0, "{o:?}");
}

// ---------------------------------------------------------------------------------------
// Companions of check_invariants.
// ---------------------------------------------------------------------------------------

/// Three lossy flows at 60 Gb/s into HCF queue 1 of port 7 (c0 = `c0`), 1500 B packets.
fn overloaded_hcf(c0: u32) -> Scenario {
    let mut s = format!(
        r#"
[switch]
profile = "small"
lossless_priorities = [3]

[[switch.hcf]]
ports = [7]
queue = 1
bins = 8
c0 = {c0}
buffer = 12

[run]
cycles = 20_000
"#
    );
    for src in 0..3 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = 7\nprio = 1\nsize_bytes = 1500\npattern = \"constant\"\nrate_gbps = 60\n"
        );
    }
    parse(&s)
}

/// `sim` after `cycles` cycles, with HP and LP both in use.
fn stepped(s: &Scenario, cycles: u64) -> Sim {
    let mut sim = Sim::new(s, Overrides::default()).unwrap();
    for _ in 0..cycles {
        sim.step().unwrap();
    }
    let (h, _) = sim.mmu().hcf(7, 1).unwrap();
    assert!(h.to_lp > 0 && h.periods > MIN_PERIODS, "exercised");
    sim
}

/// `Fault::HcfCreditAboveC0` with c0 = 2: bin 0's 2-bit register is forced to 3. The
/// credit check of `check_invariants` reports it, as does the harness's every-cycle read;
/// without the fault both pass.
#[test]
fn credit_above_c0_is_caught_by_check_invariants() {
    let s = overloaded_hcf(2);
    let mut sim = stepped(&s, 5_000);
    let (h, _) = sim.mmu().hcf(7, 1).unwrap();
    assert_eq!(h.p.credit_bits, 2, "c0 = 2 needs 2 bits");
    sim.mmu().check_invariants().expect("control: no fault");
    sim.mmu_mut().inject_fault(Fault::HcfCreditAboveC0);
    assert_eq!(sim.mmu().hcf(7, 1).unwrap().0.credit(0), 3);
    let e = sim.mmu().check_invariants().expect_err("credit 3 > c0 = 2");
    assert!(
        e.what.contains("p7 q1") && e.what.contains("bin 0 holds 3, above c0 = 2"),
        "{e}"
    );

    run_checked(&s, Checks::all(5_000)).unwrap_or_else(|v| panic!("control: {v:?}"));
    let faulty = Checks {
        fault: Some(Fault::HcfCreditAboveC0),
        ..Checks::all(5_000)
    };
    match run_checked(&s, faulty) {
        Err(Violation::Credit(why)) => assert!(why.contains("bin 0 holds 3"), "{why}"),
        other => panic!("the every-cycle credit read missed the fault: {other:?}"),
    }
}

/// `Fault::HcfSkewLength`: list 0's length register one above its packets. The recount of
/// `check_invariants` reports it, at once and at the harness's next periodic check.
#[test]
fn skewed_length_is_caught_by_check_invariants() {
    let s = overloaded_hcf(1);
    let mut sim = stepped(&s, 5_000);
    sim.mmu().check_invariants().expect("control: no fault");
    sim.mmu_mut().inject_fault(Fault::HcfSkewLength);
    let e = sim.mmu().check_invariants().expect_err("skewed length");
    assert!(
        e.what.contains("p7 q1") && e.what.contains("HCF length registers"),
        "{e}"
    );

    let faulty = Checks {
        fault: Some(Fault::HcfSkewLength),
        ..Checks::all(5_000)
    };
    match run_checked(&s, faulty) {
        Err(Violation::Invariant(why)) => {
            assert!(why.contains("HCF length registers"), "{why}");
            assert!(
                why.contains(&format!("cycle {INVARIANT_EVERY}:")),
                "caught at the first periodic check: {why}"
            );
        }
        other => panic!("the skewed length went unnoticed: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Validation of [[switch.hcf]].
// ---------------------------------------------------------------------------------------

/// A valid scenario with one HCF entry; `{hcf}` is replaced by extra keys of the entry.
const HCF_BASE: &str = r#"
[switch]
profile = "small"
lossless_priorities = [3]

[[switch.hcf]]
ports = [7]
queue = 1
{hcf}

[run]
cycles = 1000

[[flows]]
src = 0
dst = 7
prio = 1
size_bytes = 1500
pattern = "constant"
"#;

/// Invalid entries and the field each error must name.
fn invalid_entries() -> Vec<(String, &'static str)> {
    let with = |old: &str, new: &str| HCF_BASE.replace(old, new).replace("{hcf}", "");
    let extra = |keys: &str| HCF_BASE.replace("{hcf}", keys);
    vec![
        (with("queue = 1", "queue = 3"), "switch.hcf[0].queue"),
        (extra("bins = 0"), "switch.hcf[0].bins"),
        (extra("c0 = 300"), "switch.hcf[0].c0"),
        (extra("hashes = 5"), "switch.hcf[0].hashes"),
        (
            extra("zero_on_lp_join = 3"),
            "switch.hcf[0].zero_on_lp_join",
        ),
        (with("ports = [7]", "ports = [8]"), "switch.hcf[0].ports"),
    ]
}

#[test]
fn invalid_hcf_entries_are_refused_naming_the_field() {
    let ok = HCF_BASE.replace("{hcf}", "");
    Scenario::parse(&ok, "t")
        .unwrap()
        .plan(&Overrides::default())
        .expect("the base is valid");
    for (text, field) in invalid_entries() {
        let e = Scenario::parse(&text, "t")
            .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
            .expect_err(field);
        assert_eq!(e.field, field, "{e}");
    }
    // The lossless priority is named in the message, with what is allowed.
    let (text, _) = &invalid_entries()[0];
    let e = Scenario::parse(text, "t")
        .unwrap()
        .plan(&Overrides::default())
        .unwrap_err();
    assert!(e.message.contains("priority 3 is lossless"), "{e}");
}

#[test]
fn mmu_sim_validate_refuses_invalid_hcf_entries() {
    let dir = std::env::temp_dir().join(format!("mmu-sim-hcf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |text: &str, name: &str| {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
            .args(["validate", f.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let o = run(&HCF_BASE.replace("{hcf}", ""), "ok.toml");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (i, (text, field)) in invalid_entries().iter().enumerate() {
        let o = run(text, &format!("bad{i}.toml"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{field}: {err}");
        assert!(err.contains(&format!("{field}: ")), "{field}: {err}");
    }
}
