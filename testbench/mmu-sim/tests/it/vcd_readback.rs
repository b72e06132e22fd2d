//! VCD correctness, end to end: the `vcd` crate checks nothing it writes and GTKWave's own
//! converters accept broken files silently, so the project checks its own output.
//!
//! Every dump here is (1) passed through the strict lint `wave::lint::lint_vcd` (every id
//! declared, values exactly as wide as declared, timestamps strictly increasing, timescale
//! 1/10/100 of a unit) and (2) read back with `wellen`, the parser under the Surfer viewer,
//! and compared with the model's own signal values recorded during the same run.
//!
//! Time convention: the simulator samples the model after stepping cycle `c` (0-based,
//! `Sim::now()` before the step) and the writer stamps that sample `c * ticks_per_cycle`;
//! the closing timestamp is one cycle after the last dumped cycle.

use crate::common::wave_changes;
use scenario::{builtin, Overrides};
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;
use switch_run::Sim;
use wave::lint::lint_vcd;
use wave::{SignalFilter, Timescale, Window};

fn tmp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vcd-readback-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sim(name: &str, cycles: u64, seed: Option<u64>) -> Sim {
    let s = builtin::load(name).unwrap();
    let ov = Overrides {
        cycles: Some(cycles),
        seed,
        ..Overrides::default()
    };
    Sim::new(&s, ov).unwrap()
}

/// A VCD read back with `wellen`, every signal loaded once.
struct ReadBack {
    wave: wellen::simple::Waveform,
}

impl ReadBack {
    fn new(text: &str) -> Self {
        let mut wave = wellen::simple::read_from_reader(Cursor::new(text.as_bytes().to_vec()))
            .expect("wellen parses our VCD");
        let h = wave.hierarchy();
        let all: Vec<wellen::SignalRef> = h.all_vars().map(|v| h[v].signal_ref()).collect();
        wave.load_signals(&all);
        Self { wave }
    }

    /// Full dotted paths and widths of every declared variable.
    fn vars(&self) -> BTreeMap<String, u32> {
        let h = self.wave.hierarchy();
        h.all_vars()
            .map(|v| (h[v].full_name(h), h[v].length(h).unwrap_or(0)))
            .collect()
    }

    fn times(&self) -> &[u64] {
        self.wave.time_table()
    }

    /// Value of `path` at VCD time `time` (the last change at or before it).
    fn value_at(&self, path: &str, time: u64) -> Option<u64> {
        let mut parts: Vec<&str> = path.split('.').collect();
        let leaf = parts.pop()?;
        let h = self.wave.hierarchy();
        let var = h.lookup_var(&parts, leaf)?;
        let signal = self.wave.get_signal(h[var].signal_ref())?;
        let n = self.times().partition_point(|&t| t <= time);
        let offset = signal.get_offset(n.checked_sub(1)? as u32)?;
        let bits = signal.get_value_at(&offset, 0).to_bit_string()?;
        u64::from_str_radix(&bits, 2).ok()
    }
}

/// The value of every signal of `Sim::wave_signals` (the model's, then the reaction
/// points') after each cycle `record` picks, recorded while running `sim` to its end with a
/// VCD attached at `path`.
fn run_recording(
    mut sim: Sim,
    path: &Path,
    filter: &SignalFilter,
    window: Window,
    mut record: impl FnMut(u64, &Sim) -> bool,
) -> BTreeMap<u64, Vec<u64>> {
    let f = std::fs::File::create(path).unwrap();
    sim.attach_waves(f, path, wave::Format::Vcd, filter, window)
        .unwrap();
    let mut seen = BTreeMap::new();
    let cycles = sim.plan().cycles;
    let signals = sim.wave_signals();
    while sim.now() < cycles {
        sim.step().unwrap();
        let c = sim.now() - 1;
        if record(c, &sim) {
            let values = (0..signals.specs().len())
                .map(|i| signals.value(i, sim.mmu(), sim.partners(), sim.dcqcn()))
                .collect();
            seen.insert(c, values);
        }
    }
    let summary = sim.run(|_| {}).unwrap(); // closes the VCD and writes the .gtkw
    assert!(summary.ok(), "{summary}");
    seen
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// `small-smoke` with `alpha = 1/32` and its second flow at 100G instead of 60G (so the
/// 150G into port 4 reaches the DT threshold within the run and QOFF, headroom and PFC
/// come into play; the built-in as it is does not pause in its first 20000 cycles), for
/// 6000 cycles with every signal dumped. The model's value of every signal is
/// recorded after every 97th cycle, after the first cycle any ingress queue is QOFF and
/// after the last cycle; the lint must pass, `wellen` must see every signal at its declared
/// width, and its value at `cycle * ticks_per_cycle` (and half a cycle later) must be the
/// recorded one, for every signal at every recorded cycle.
#[test]
fn wellen_reads_back_the_models_values_at_every_sampled_cycle() {
    let dir = tmp_dir("values");
    let path = dir.join("smoke.vcd");
    let cycles = 6_000;
    let text = builtin::find("small-smoke")
        .unwrap()
        .toml()
        .replace(
            "profile = \"small\"",
            "profile = \"small\"\nalpha_log2 = -5",
        )
        .replace("rate_gbps = 60", "rate_gbps = 100");
    let scenario = scenario::Scenario::parse(&text, "small-smoke-low-alpha").unwrap();
    assert_eq!(scenario.switch.alpha_log2, -5);
    let ov = Overrides {
        cycles: Some(cycles),
        ..Overrides::default()
    };
    let s = Sim::new(&scenario, ov).unwrap();
    let signals = s.mmu().signals().to_vec();
    let tpc = Timescale::for_clock_hz(s.plan().derived.clock_hz)
        .unwrap()
        .ticks_per_cycle();
    let qoff: Vec<usize> = (0..signals.len())
        .filter(|&i| signals[i].path.ends_with(".qoff"))
        .collect();
    let mut first_qoff = None;
    let seen = run_recording(s, &path, &SignalFilter::all(), Window::all(), |c, sim| {
        let any_off = qoff.iter().any(|&i| sim.mmu().signal_value(i) != 0);
        let first = any_off && first_qoff.is_none();
        if first {
            first_qoff = Some(c);
        }
        first || c % 97 == 0 || c == cycles - 1
    });
    assert!(
        first_qoff.is_some(),
        "the scenario never paused: a weak test"
    );

    let text = std::fs::read_to_string(&path).unwrap();
    let report = lint_vcd(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.signals, signals.len());
    assert!(path.with_extension("gtkw").exists());

    let rb = ReadBack::new(&text);
    let vars = rb.vars();
    assert_eq!(vars.len(), signals.len());
    for s in &signals {
        assert_eq!(vars.get(&s.path), Some(&s.width), "{}", s.path);
    }
    assert_eq!(rb.times().first(), Some(&0));
    assert_eq!(
        rb.times().last(),
        Some(&(cycles * tpc)),
        "closing timestamp"
    );

    let mut changing = 0;
    for (i, s) in signals.iter().enumerate() {
        let values: Vec<u64> = seen.values().map(|v| v[i]).collect();
        changing += usize::from(values.iter().any(|&v| v != values[0]));
        for (&c, v) in &seen {
            for t in [c * tpc, c * tpc + tpc / 2] {
                assert_eq!(
                    rb.value_at(&s.path, t),
                    Some(v[i] & mask(s.width)),
                    "{} after cycle {c} (VCD time {t})",
                    s.path
                );
            }
        }
    }
    let must_change = [
        "top.mmu.buffer.total_cells",
        "top.mmu.buffer.free_cells",
        "top.mmu.dt.t",
        "top.mmu.egress.p04.q1.cells",
        "top.mmu.ingress.p01.pg1.headroom_cells",
        "top.mmu.ingress.p01.qoff",
    ];
    for p in must_change {
        let i = signals.iter().position(|s| s.path == p).expect(p);
        let first = seen.values().next().unwrap()[i];
        assert!(
            seen.values().any(|v| v[i] != first),
            "{p} never changed at the sampled cycles: a weak test"
        );
    }
    assert!(changing > 20, "only {changing} signals changed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Record `s` with `globs` dumped, every `every`-th cycle, and check that `wellen` reads
/// back the recorded value of every dumped signal and that each of `must_change` changed
/// at the recorded cycles; returns the number of dumped signals.
fn read_back_selection(test: &str, s: Sim, globs: &str, every: u64, must_change: &[&str]) -> usize {
    let dir = tmp_dir(test);
    let path = dir.join("rp.vcd");
    let cycles = s.plan().cycles;
    let specs = s.wave_signals().specs().to_vec();
    let tpc = Timescale::for_clock_hz(s.plan().derived.clock_hz)
        .unwrap()
        .ticks_per_cycle();
    let filter = SignalFilter::parse(globs).unwrap();
    let chosen: Vec<usize> = (0..specs.len())
        .filter(|&i| filter.matches(&specs[i].path))
        .collect();
    let seen = run_recording(s, &path, &filter, Window::all(), |c, _| {
        c % every == 0 || c == cycles - 1
    });
    let text = std::fs::read_to_string(&path).unwrap();
    lint_vcd(&text).unwrap_or_else(|e| panic!("{e}"));
    let rb = ReadBack::new(&text);
    assert_eq!(rb.vars().len(), chosen.len());
    for &i in &chosen {
        let s = &specs[i];
        for (&c, v) in &seen {
            assert_eq!(
                rb.value_at(&s.path, c * tpc),
                Some(v[i] & mask(s.width)),
                "{} after cycle {c}",
                s.path
            );
        }
    }
    for p in must_change {
        let i = specs.iter().position(|s| s.path == *p).expect(p);
        let first = seen.values().next().unwrap()[i];
        assert!(
            seen.values().any(|v| v[i] != first),
            "{p} never changed at the sampled cycles: a weak test"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    chosen.len()
}

/// With ECM on, the reaction points' registers (`top.nic.pNN.rp.*`) are in the dump:
/// `ecm-fanin` for 60 000 cycles, the RP signals and the congestion point of port 7
/// queue 3 selected, the values recorded after every 50th cycle, read back by `wellen`.
/// (The writer compares a NIC's common slots only while its RP is busy and in the cycle
/// after, and a limiter's only while it is in use and in the cycle after; the next test
/// has reclaims and coarse limiters.)
#[test]
fn reaction_point_registers_read_back_from_the_vcd() {
    let n = read_back_selection(
        "rp",
        sim("ecm-fanin", 60_000, None),
        "top.nic.*, top.mmu.egress.p07.q3.ecm.*",
        50,
        &[
            "top.nic.p00.rp.in_use",
            "top.nic.p00.rp.f00.state",
            "top.nic.p00.rp.f00.cpid",
            "top.nic.p00.rp.f00.rate_bps",
            "top.nic.p00.rp.f00.fifo_len",
            "top.mmu.egress.p07.q3.ecm.qlen",
        ],
    );
    // 8 NICs: LFSR, in_use, 4 fine limiters and the coarse one of priority 3, 10
    // registers each; and the CP's 5 registers.
    assert_eq!(n, 8 * (2 + 5 * 10) + 5);
    // Without ECM there are no reaction-point signals.
    let plain = sim("small-smoke", 10, None);
    assert_eq!(
        plain.wave_signals().specs().len(),
        plain.mmu().signals().len()
    );
}

/// The DCQCN flows' reaction points (`top.nic.pNN.dcqcn.fFFF.*`): `dcqcn-fanin` for
/// 400 us (the CNPs start at about 220 us), the DCQCN signals selected, the values
/// recorded after every 500th cycle, read back by `wellen`.
#[test]
fn dcqcn_registers_read_back_from_the_vcd() {
    let n = read_back_selection(
        "dcqcn",
        sim("dcqcn-fanin", 400_000, None),
        "top.nic.*.dcqcn.*",
        500,
        &[
            "top.nic.p00.dcqcn.f000.rc_mbps",
            "top.nic.p00.dcqcn.f000.rt_mbps",
            "top.nic.p00.dcqcn.f000.alpha_q16",
            "top.nic.p00.dcqcn.f000.t_count",
            "top.nic.p00.dcqcn.f000.cnps",
        ],
    );
    assert_eq!(n, 3 * 6, "three flows, six registers each");
}

/// A severe fan-in with one fine limiter per NIC (as in `tests/it/ecm.rs`): ECM(0,0)
/// timeouts, restarts with back-off, coarse limiters and a reclaim all show in the dump
/// as recorded. (NIC 0's fine limiter is instantiated into a timeout at cycle 890 and
/// reclaimed at 947, as the coarse limiter takes over.)
#[test]
fn reaction_point_reclaims_and_coarse_limiters_read_back_from_the_vcd() {
    let mut text = String::from(
        "[switch]\nprofile = \"small\"\n[switch.ecm]\npriorities = [3]\nqeq_bytes = 4096\nqmc_bytes = 8192\nqsc_bytes = 16384\nsf_bytes = 3000\nsr_bytes = 2000\n[run]\ncycles = 150000\n[ecm_rp]\nfine_limiters = 1\ntmax_us = 5\ntd_us = 20\nrd_mbps = 100\n",
    );
    for (src, dst, size, gbps) in [
        (0, 7, 1500, 100),
        (0, 7, 700, 100),
        (1, 7, 1500, 100),
        (2, 7, 1000, 100),
        (3, 7, 1500, 100),
        (4, 6, 400, 50),
    ] {
        text.push_str(&format!(
            "[[flows]]\nsrc = {src}\ndst = {dst}\nprio = 3\nsize_bytes = {size}\npattern = \"constant\"\nrate_gbps = {gbps}\n"
        ));
    }
    let s = Sim::new(
        &scenario::Scenario::parse(&text, "severe").unwrap(),
        Overrides::default(),
    )
    .unwrap();
    read_back_selection(
        "rp-severe",
        s,
        "top.nic.*",
        25,
        &[
            "top.nic.p00.rp.in_use",
            "top.nic.p00.rp.lfsr",
            "top.nic.p00.rp.f00.state",
            "top.nic.p00.rp.c3.state",
            "top.nic.p00.rp.c3.rate_bps",
            "top.nic.p01.rp.f00.rmin_bps",
            "top.nic.p01.rp.f00.tmax_us",
        ],
    );
}

/// `ri_fraction = 1.0` (a new limiter starts at line rate) with small packets and fast
/// sampling: limiters are instantiated and reclaimed in the same cycle (cycle 972 on NIC
/// 1), between two samples at which they are inactive. Every cycle is recorded and read
/// back, so a change the writer's gating missed would show.
#[test]
fn limiters_instantiated_and_reclaimed_in_one_cycle_read_back_from_the_vcd() {
    let text = builtin::find("ecm-fanin")
        .unwrap()
        .toml()
        .replace("fine_limiters = 4", "fine_limiters = 4\nri_fraction = 1.0")
        .replace(
            "sf_bytes = 20000\nsr_bytes = 10000",
            "sf_bytes = 2000\nsr_bytes = 1000\nqmc_bytes = 8000000\nqsc_bytes = 16000000",
        )
        + "[[flows]]\nsrc = 0\ndst = 6\nprio = 3\nsize_bytes = 1500\npattern = \"constant\"\nrate_gbps = 40\n"
        + "[[flows]]\nsrc = 5\ndst = 6\nprio = 3\nsize_bytes = 1500\npattern = \"constant\"\nrate_gbps = 70\n"
        + "[[flows]]\nsrc = 5\ndst = 7\nprio = 3\nsize_bytes = 1500\npattern = \"constant\"\nrate_gbps = 40\n";
    let text = text
        .replace(
            "size_bytes = 1500",
            "size_cdf = [[64, 0.5], [200, 0.8], [1500, 1.0]]",
        )
        .replace(
            "lossless_priorities = [3]",
            "lossless_priorities = [3]\nheadroom_min_packet_bytes = 64",
        );
    let scenario = scenario::Scenario::parse(&text, "ecm-ri-c").unwrap();
    let ov = Overrides {
        cycles: Some(3_000),
        ..Overrides::default()
    };
    read_back_selection(
        "rp-ri-c",
        Sim::new(&scenario, ov).unwrap(),
        "top.nic.*",
        1,
        &["top.nic.p01.rp.f00.flowid", "top.nic.p01.rp.f00.cpid"],
    );
}

/// The same scenario and seed twice give byte-identical VCDs (no date, no wall clock,
/// deterministic order); another seed gives a different one, so the comparison can fail.
/// `poisson-cdf` is used because its arrivals are random draws (the fixed-rate
/// `small-smoke` case is in `end_to_end.rs`).
#[test]
fn same_seed_same_vcd_bytes_other_seed_other_bytes() {
    let dir = tmp_dir("determinism");
    let dump = |i: usize, seed: Option<u64>| {
        let path = dir.join(format!("run{i}.vcd"));
        run_recording(
            sim("poisson-cdf", 5_000, seed),
            &path,
            &SignalFilter::all(),
            Window::all(),
            |_, _| false,
        );
        let bytes = std::fs::read(&path).unwrap();
        lint_vcd(std::str::from_utf8(&bytes).unwrap()).unwrap_or_else(|e| panic!("{e}"));
        bytes
    };
    let a = dump(0, None);
    let b = dump(1, None);
    let c = dump(2, Some(99));
    assert!(a.len() > 10_000, "{} bytes: nothing happened", a.len());
    assert!(a == b, "VCDs of identical runs differ");
    assert!(a != c, "another seed gave the same VCD");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `mmu-sim run small-smoke --vcd-signals ... --vcd-window 1500:4000`: the file declares
/// exactly the signals the globs select, has timestamps only inside the window (the
/// closing one at its end), and holds the same values as an in-process run of the same
/// scenario at the cycles of the window.
#[test]
fn cli_window_and_signal_filter_dump_only_the_selection() {
    let dir = tmp_dir("window");
    let path = dir.join("w.vcd");
    let (globs, from, to, cycles) = (
        "top.mmu.buffer.*, *.qoff, top.mmu.dt.t",
        1_500,
        4_000,
        5_000,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
        .args(["run", "small-smoke", "--cycles", &cycles.to_string()])
        .args(["--vcd", path.to_str().unwrap(), "--vcd-signals", globs])
        .args(["--vcd-window", &format!("{from}:{to}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    lint_vcd(&text).unwrap_or_else(|e| panic!("{e}"));

    // The selection, from the model's own signal list and an independent reading of the
    // globs (prefix `top.mmu.buffer.`, leaf `qoff`, or exactly `top.mmu.dt.t`).
    let reference = sim("small-smoke", cycles, None);
    let signals = reference.mmu().signals().to_vec();
    let tpc = Timescale::for_clock_hz(reference.plan().derived.clock_hz)
        .unwrap()
        .ticks_per_cycle();
    let selected: BTreeMap<String, u32> = signals
        .iter()
        .filter(|s| {
            s.path.starts_with("top.mmu.buffer.")
                || s.path.ends_with(".qoff")
                || s.path == "top.mmu.dt.t"
        })
        .map(|s| (s.path.clone(), s.width))
        .collect();
    let filter = SignalFilter::parse(globs).unwrap();
    assert!(signals
        .iter()
        .all(|s| filter.matches(&s.path) == selected.contains_key(&s.path)));
    assert_eq!(selected.len(), 4 + 8 + 1, "4 buffer counters, 8 qoff, T");

    let rb = ReadBack::new(&text);
    assert_eq!(rb.vars(), selected);
    let times = rb.times();
    assert_eq!(times.first(), Some(&(from * tpc)), "first dump at FROM");
    assert_eq!(times.last(), Some(&(to * tpc)), "closing timestamp at TO");
    assert!(times.iter().all(|&t| (from * tpc..=to * tpc).contains(&t)));

    let seen = run_recording(
        reference,
        &dir.join("reference.vcd"),
        &SignalFilter::all(),
        Window::all(),
        |c, _| (from..to).contains(&c) && (c % 50 == 0 || c == from || c == to - 1),
    );
    assert!(seen.len() > 40);
    for (&c, v) in &seen {
        for (i, s) in signals.iter().enumerate() {
            if selected.contains_key(&s.path) {
                assert_eq!(
                    rb.value_at(&s.path, c * tpc),
                    Some(v[i] & mask(s.width)),
                    "{} after cycle {c}",
                    s.path
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `mmu-sim run ecm-fanin --wave x.fst` and `--wave x.vcd` (model and reaction-point
/// signals, 20 000 cycles): `wellen` reads the same signals, widths and value changes from
/// both; the FST is byte-identical when run again, and much smaller.
#[test]
fn fst_of_a_run_holds_the_same_changes_as_its_vcd() {
    let dir = tmp_dir("fst");
    let run = |name: &str| {
        let p = dir.join(name);
        let o = Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
            .args([
                "run",
                "ecm-fanin",
                "--cycles",
                "20000",
                "--wave",
                p.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        p
    };
    let (vcd, fst, fst2) = (run("a.vcd"), run("a.fst"), run("b.fst"));
    let from_vcd = wave_changes(&vcd);
    let from_fst = wave_changes(&fst);
    assert!(from_vcd.len() > 800, "{} signals", from_vcd.len());
    assert!(from_vcd
        .keys()
        .any(|k| k.starts_with("top.nic.p01.rp.f00.")));
    let changes: usize = from_vcd.values().map(|(_, c)| c.len()).sum();
    assert!(changes > 10_000, "{changes} changes: a weak test");
    assert!(from_fst == from_vcd, "FST and VCD differ");
    let bytes = std::fs::read(&fst).unwrap();
    assert!(
        bytes == std::fs::read(&fst2).unwrap(),
        "FST not deterministic"
    );
    let vcd_len = std::fs::metadata(&vcd).unwrap().len();
    assert!(
        (bytes.len() as u64) * 5 < vcd_len,
        "FST {} B, VCD {vcd_len} B",
        bytes.len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
