//! End-to-end tests of `VcdWriter`: lint, read back with wellen, change-only
//! output, window, filter, determinism and errors.

use std::collections::{HashMap, HashSet};

use crate::common::{body, mask, write_vcd, ReadBack};
use proptest::prelude::*;
use wave::lint::lint_vcd;
use wave::{SignalFilter, SignalSpec, VcdWriter, WaveError, Window};

/// Deliberately interleaved so that scopes `a` and `b` are not contiguous.
fn signals() -> Vec<SignalSpec> {
    vec![
        SignalSpec::new("top.mmu.a.valid", 1),
        SignalSpec::new("top.mmu.b.wide", 64),
        SignalSpec::new("top.mmu.a.count", 20),
        SignalSpec::new("top.mmu.b.nib", 4),
        SignalSpec::new("top.other.konst", 7),
    ]
}

/// Values change at different rates, several cycles change nothing at all,
/// and some values have garbage above their width (must be masked).
fn model(i: usize, c: u64) -> u64 {
    match i {
        0 => (c / 3) % 2,
        1 => {
            if c < 12 {
                0x8000_0000_0000_0001
            } else {
                u64::MAX - c / 7
            }
        }
        2 => (c / 5) * 123_457,
        3 => 0xABC0 | (c / 4),
        // Bits above the 7-bit width change every cycle; the value does not.
        4 => 5 | (c << 7),
        _ => unreachable!(),
    }
}

const HZ: u64 = 800_000_000; // 10 ps timescale, 125 ticks per cycle
const TPC: u64 = 125;

#[test]
fn lint_passes_and_wellen_reads_back_written_values() {
    let sigs = signals();
    let text = write_vcd(&sigs, HZ, &SignalFilter::all(), Window::all(), 0..40, model);
    let report = lint_vcd(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(report.signals, 5);

    assert!(text.contains("$timescale 10 ps $end"), "{text}");
    assert!(text.contains("$version\n    mmu-sim\n$end"), "{text}");
    // Each scope is declared once even though its signals are interleaved.
    assert_eq!(text.matches("$scope module a $end").count(), 1);
    assert_eq!(text.matches("$scope module top $end").count(), 1);

    let mut rb = ReadBack::new(&text);
    for (i, s) in sigs.iter().enumerate() {
        assert_eq!(rb.width(&s.path), s.width, "{}", s.path);
        for c in [0, 1, 2, 3, 11, 12, 13, 20, 39] {
            // Query mid-cycle as well as on the edge.
            for t in [c * TPC, c * TPC + TPC / 2] {
                assert_eq!(
                    rb.value_at(&s.path, t),
                    Some(model(i, c) & mask(s.width)),
                    "{} at cycle {c} (time {t})",
                    s.path
                );
            }
        }
    }
    // Closing timestamp one cycle after the last sample.
    assert_eq!(rb.times().last(), Some(&(40 * TPC)));
}

#[test]
fn only_changes_are_written() {
    let sigs = signals();
    let text = write_vcd(&sigs, HZ, &SignalFilter::all(), Window::all(), 0..40, model);
    let (ids, times, changes) = body(&text);
    assert_eq!(ids.len(), 5);

    // $dumpvars at the first cycle has every signal, at full declared width.
    let dump: Vec<_> = changes.iter().filter(|c| c.in_dumpvars).collect();
    assert_eq!(dump.len(), 5);
    assert!(dump.iter().all(|c| c.time == 0));
    let widths: HashMap<&str, u32> = sigs
        .iter()
        .map(|s| (s.path.rsplit('.').next().unwrap(), s.width))
        .collect();
    for c in &changes {
        assert_eq!(c.bits.len() as u32, widths[ids[&c.id].as_str()], "{c:?}");
    }

    // No change repeats the previous value of its signal.
    let mut last: HashMap<&str, &str> = HashMap::new();
    for c in &changes {
        if let Some(prev) = last.insert(&c.id, &c.bits) {
            assert_ne!(prev, c.bits, "repeated value {c:?}");
        }
    }

    // A timestamp is written exactly for cycles where something changed
    // (plus cycle 0 and the closing one).
    let expected_times: Vec<u64> = (0..40u64)
        .filter(|&c| {
            c == 0
                || sigs
                    .iter()
                    .enumerate()
                    .any(|(i, s)| (model(i, c) ^ model(i, c - 1)) & mask(s.width) != 0)
        })
        .map(|c| c * TPC)
        .chain([40 * TPC])
        .collect();
    assert_eq!(times, expected_times);
    assert!(times.len() < 30, "the model has cycles without changes");
    // The constant signal appears once, in $dumpvars.
    assert_eq!(changes.iter().filter(|c| ids[&c.id] == "konst").count(), 1);
}

#[test]
fn window_is_honoured() {
    let sigs = signals();
    let window = Window::parse("10:30").unwrap();
    let text = write_vcd(&sigs, HZ, &SignalFilter::all(), window, 0..40, model);
    lint_vcd(&text).unwrap();
    let (_, times, changes) = body(&text);
    assert_eq!(times.first(), Some(&(10 * TPC)));
    assert_eq!(
        times.last(),
        Some(&(30 * TPC)),
        "closing time after cycle 29"
    );
    for c in &changes {
        assert!(
            (10 * TPC..30 * TPC).contains(&c.time),
            "change outside window: {c:?}"
        );
    }
    assert!(changes
        .iter()
        .filter(|c| c.in_dumpvars)
        .all(|c| c.time == 10 * TPC));

    let mut rb = ReadBack::new(&text);
    for (i, s) in sigs.iter().enumerate() {
        assert_eq!(
            rb.value_at(&s.path, 9 * TPC),
            None,
            "{}: nothing before the window",
            s.path
        );
        for c in [10, 17, 29] {
            assert_eq!(
                rb.value_at(&s.path, c * TPC),
                Some(model(i, c) & mask(s.width))
            );
        }
    }
}

#[test]
fn window_skips_callbacks_outside() {
    let sigs = signals();
    let mut w = VcdWriter::new(
        Vec::new(),
        &sigs,
        HZ,
        &SignalFilter::all(),
        Window::parse("5:7").unwrap(),
    )
    .unwrap();
    let mut asked = Vec::new();
    for c in 0..10 {
        w.sample(c, |i| {
            asked.push(c);
            model(i, c)
        })
        .unwrap();
    }
    asked.dedup();
    assert_eq!(asked, [5, 6]);
    lint_vcd(std::str::from_utf8(&w.finish().unwrap()).unwrap()).unwrap();
}

#[test]
fn filter_is_honoured() {
    let sigs = signals();
    let filter = SignalFilter::parse("*.a.*, top.other.konst").unwrap();
    let mut w = VcdWriter::new(Vec::new(), &sigs, HZ, &filter, Window::all()).unwrap();
    assert_eq!(w.selected(), [0, 2, 4]);
    for c in 0..20 {
        w.sample(c, |i| {
            assert!([0, 2, 4].contains(&i), "asked for unselected signal {i}");
            model(i, c)
        })
        .unwrap();
    }
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(lint_vcd(&text).unwrap().signals, 3);
    assert!(!text.contains("$scope module b $end"), "{text}");
    let mut rb = ReadBack::new(&text);
    assert!(rb.has("top.mmu.a.valid") && rb.has("top.mmu.a.count") && rb.has("top.other.konst"));
    assert!(!rb.has("top.mmu.b.wide") && !rb.has("top.mmu.b.nib"));
    assert_eq!(rb.value_at("top.mmu.a.count", 19 * TPC), Some(model(2, 19)));
}

#[test]
fn output_is_byte_identical_across_runs() {
    let sigs = signals();
    let run = || {
        write_vcd(
            &sigs,
            HZ,
            &SignalFilter::all(),
            Window::all(),
            0..200,
            model,
        )
    };
    let a = run();
    assert_eq!(a, run());
    assert!(!a.contains("$date"));
}

#[test]
fn exact_output_for_a_tiny_dump() {
    let sigs = [SignalSpec::new("t.u.v", 1), SignalSpec::new("t.n", 3)];
    let vals = [[1u64, 5], [1, 5], [0, 5], [0, 2]];
    let text = write_vcd(
        &sigs,
        1_000_000_000,
        &SignalFilter::all(),
        Window::all(),
        0..4,
        |i, c| vals[c as usize][i],
    );
    let expected = "\
$version
    mmu-sim
$end
$comment
    clock 1000000000 Hz, 1 ticks of 1ns per cycle; time = cycle * 1
$end
$timescale 1 ns $end
$scope module t $end
$scope module u $end
$var wire 1 ! v $end
$upscope $end
$var wire 3 \" n $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
1!
b101 \"
$end
#2
0!
#3
b010 \"
#4
";
    assert_eq!(text, expected);
}

#[test]
fn cycles_must_strictly_increase() {
    let sigs = signals();
    let mut w = VcdWriter::new(
        Vec::new(),
        &sigs,
        HZ,
        &SignalFilter::all(),
        Window::parse("100:").unwrap(),
    )
    .unwrap();
    w.sample(5, |_| 0).unwrap();
    // Also outside the window.
    let e = w.sample(5, |_| 0).unwrap_err();
    assert!(
        matches!(
            e,
            WaveError::CycleNotIncreasing {
                previous: 5,
                got: 5
            }
        ),
        "{e:?}"
    );
    w.sample(100, |_| 0).unwrap();
    let e = w.sample(99, |_| 0).unwrap_err();
    assert!(
        matches!(
            e,
            WaveError::CycleNotIncreasing {
                previous: 100,
                got: 99
            }
        ),
        "{e:?}"
    );
    // The failed call wrote nothing; the file is still good.
    w.sample(101, |_| 1).unwrap();
    lint_vcd(std::str::from_utf8(&w.finish().unwrap()).unwrap()).unwrap();
}

#[test]
fn bad_signals_are_rejected_with_their_path() {
    let cases: &[(&[SignalSpec], &str)] = &[
        (
            &[SignalSpec {
                path: "t.zero".into(),
                width: 0,
            }],
            "t.zero",
        ),
        (
            &[SignalSpec {
                path: "t.wide".into(),
                width: 65,
            }],
            "t.wide",
        ),
        (
            &[SignalSpec {
                path: "noscope".into(),
                width: 1,
            }],
            "noscope",
        ),
        (
            &[SignalSpec {
                path: "t..x".into(),
                width: 1,
            }],
            "t..x",
        ),
        (
            &[SignalSpec {
                path: "t.has space".into(),
                width: 1,
            }],
            "t.has space",
        ),
        (
            &[SignalSpec {
                path: "t.bit[3]".into(),
                width: 1,
            }],
            "t.bit[3]",
        ),
        (
            &[SignalSpec {
                path: "t.$end".into(),
                width: 1,
            }],
            "t.$end",
        ),
        (
            &[
                SignalSpec {
                    path: "t.dup".into(),
                    width: 1,
                },
                SignalSpec {
                    path: "t.dup".into(),
                    width: 2,
                },
            ],
            "t.dup",
        ),
        (
            &[
                SignalSpec {
                    path: "t.a".into(),
                    width: 1,
                },
                SignalSpec {
                    path: "t.a.b".into(),
                    width: 2,
                },
            ],
            "t.a.b",
        ),
        (
            &[
                SignalSpec {
                    path: "t.a.b".into(),
                    width: 1,
                },
                SignalSpec {
                    path: "t.a".into(),
                    width: 2,
                },
            ],
            "t.a",
        ),
    ];
    for (sigs, bad) in cases {
        let e =
            VcdWriter::new(Vec::new(), sigs, HZ, &SignalFilter::all(), Window::all()).unwrap_err();
        assert!(
            matches!(&e, WaveError::BadSignal { path, .. } if path == bad),
            "{bad}: {e:?}"
        );
        assert!(e.to_string().contains(bad), "{e}");
    }
    // A scope/signal clash is fine if the filter removes one side.
    let sigs = [SignalSpec::new("t.a", 1), SignalSpec::new("t.a.b", 2)];
    VcdWriter::new(
        Vec::new(),
        &sigs,
        HZ,
        &SignalFilter::parse("t.a").unwrap(),
        Window::all(),
    )
    .unwrap();
}

#[test]
fn bad_clock_is_rejected() {
    let e = VcdWriter::new(
        Vec::new(),
        &signals(),
        3_000_000_000,
        &SignalFilter::all(),
        Window::all(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            WaveError::BadClock {
                hz: 3_000_000_000,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn time_overflow_is_an_error_not_a_panic() {
    let mut w = VcdWriter::new(
        Vec::new(),
        &signals(),
        HZ,
        &SignalFilter::all(),
        Window::all(),
    )
    .unwrap();
    w.sample(1, |_| 0).unwrap();
    let e = w.sample(u64::MAX / 100, |_| 0).unwrap_err();
    assert!(
        matches!(
            e,
            WaveError::TimeOverflow {
                ticks_per_cycle: 125,
                ..
            }
        ),
        "{e:?}"
    );
    let e = w.sample(u64::MAX, |_| 0).unwrap_err();
    assert!(matches!(e, WaveError::TimeOverflow { .. }), "{e:?}");
    lint_vcd(std::str::from_utf8(&w.finish().unwrap()).unwrap()).unwrap();
}

#[test]
fn empty_window_run_has_header_only() {
    let text = write_vcd(
        &signals(),
        HZ,
        &SignalFilter::all(),
        Window::parse("100:").unwrap(),
        0..10,
        model,
    );
    let r = lint_vcd(&text).unwrap();
    assert_eq!((r.signals, r.timestamps, r.changes), (5, 0, 0));
}

#[test]
fn many_signals_get_unique_short_ids() {
    let sigs: Vec<SignalSpec> = (0..10_000)
        .map(|i| {
            SignalSpec::new(
                format!("top.g{}.s{}", i / 100, i % 100),
                1 + (i % 64) as u32,
            )
        })
        .collect();
    let text = write_vcd(
        &sigs,
        HZ,
        &SignalFilter::all(),
        Window::all(),
        0..3,
        |i, c| (i as u64) * c,
    );
    let r = lint_vcd(&text).unwrap();
    assert_eq!(r.signals, 10_000);
    let (ids, _, _) = body(&text);
    assert_eq!(ids.len(), 10_000);
    assert!(ids.keys().all(|id| id.len() <= 3));
    assert!(
        ids.keys().all(|id| !id.starts_with('$')),
        "no keyword-like ids"
    );
    let unique: HashSet<_> = ids.keys().collect();
    assert_eq!(unique.len(), 10_000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random widths, values and sample cycles: the lint passes and wellen
    /// reads back exactly the masked values at every sampled cycle.
    #[test]
    fn random_dumps_read_back(
        widths in prop::collection::vec(1u32..=64, 1..8),
        steps in prop::collection::vec((1u64..5, prop::collection::vec(any::<u64>(), 8)), 1..30),
        sticky in any::<u8>(),
    ) {
        let sigs: Vec<SignalSpec> = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| SignalSpec::new(format!("top.s{}.v{i}", i % 3), w))
            .collect();
        // Cycles with gaps; some signals keep their value (sticky bit set)
        // so that unchanged samples are exercised.
        let mut cycle = 0;
        let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
        for (gap, vals) in &steps {
            cycle += gap;
            let row = vals
                .iter()
                .enumerate()
                .map(|(i, &v)| match rows.last() {
                    Some((_, prev)) if sticky & (1 << i) != 0 => prev[i],
                    _ => v,
                })
                .collect();
            rows.push((cycle, row));
        }
        let mut w = VcdWriter::new(Vec::new(), &sigs, HZ, &SignalFilter::all(), Window::all()).unwrap();
        for (c, row) in &rows {
            w.sample(*c, |i| row[i]).unwrap();
        }
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        prop_assert!(lint_vcd(&text).is_ok(), "{:?}", lint_vcd(&text));
        let mut rb = ReadBack::new(&text);
        for (c, row) in &rows {
            for (i, s) in sigs.iter().enumerate() {
                prop_assert_eq!(rb.value_at(&s.path, c * TPC), Some(row[i] & mask(s.width)));
            }
        }
    }
}
