//! FST output: read back with `wellen` (which reads FST through `fst-reader`, not the
//! writer's code), it must hold the same signals, widths and value changes as the VCD of
//! the same input, be byte-identical for identical input, and survive several compressed
//! blocks.

use std::collections::BTreeMap;
use std::io::Cursor;

use wave::{AnyWriter, Format, FstWriter, SignalFilter, SignalSpec, VcdWriter, WaveError, Window};

use crate::common::mask;

const HZ: u64 = 800_000_000; // 10 ps, 125 ticks per cycle

/// Every variable of a dump: width, and its changes as (time, bit string) in time order;
/// and the time table.
type Changes = BTreeMap<String, (u32, Vec<(u64, String)>)>;

fn read(bytes: Vec<u8>) -> (Vec<u64>, Changes) {
    let mut wave = wellen::simple::read_from_reader(Cursor::new(bytes)).expect("wellen reads it");
    let h = wave.hierarchy();
    let vars: Vec<(String, u32, wellen::SignalRef)> = h
        .all_vars()
        .map(|v| {
            (
                h[v].full_name(h),
                h[v].length(h).unwrap_or(0),
                h[v].signal_ref(),
            )
        })
        .collect();
    let refs: Vec<_> = vars.iter().map(|v| v.2).collect();
    wave.load_signals(&refs);
    let times = wave.time_table().to_vec();
    let mut out = Changes::new();
    for (path, width, r) in vars {
        let signal = wave.get_signal(r).unwrap();
        let changes = signal
            .iter_changes()
            .map(|(ti, v)| (times[ti as usize], v.to_bit_string().unwrap()))
            .collect();
        out.insert(path, (width, changes));
    }
    (times, out)
}

fn signals() -> Vec<SignalSpec> {
    vec![
        SignalSpec::new("top.mmu.a.valid", 1),
        SignalSpec::new("top.mmu.b.wide", 64),
        SignalSpec::new("top.mmu.a.count", 20),
        SignalSpec::new("top.other.konst", 7),
        SignalSpec::new("top.x", 3),
    ]
}

fn model(i: usize, c: u64) -> u64 {
    match i {
        0 => (c / 3) % 2,
        1 => u64::MAX - c / 7,
        2 => (c / 5) * 123_457,
        3 => 5 | (c << 7),
        _ => c % 5,
    }
}

fn dump(
    format: Format,
    sigs: &[SignalSpec],
    filter: &SignalFilter,
    window: Window,
    cycles: u64,
) -> Vec<u8> {
    let mut w =
        AnyWriter::with_format(Cursor::new(Vec::new()), format, sigs, HZ, filter, window).unwrap();
    for c in 0..cycles {
        w.sample(c, |i| model(i, c)).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn fst_holds_the_same_changes_as_the_vcd() {
    for (filter, window) in [
        (SignalFilter::all(), Window::all()),
        (
            SignalFilter::parse("top.mmu.*").unwrap(),
            Window::parse("10:30").unwrap(),
        ),
    ] {
        let sigs = signals();
        let vcd = dump(Format::Vcd, &sigs, &filter, window, 40);
        let fst = dump(Format::Fst, &sigs, &filter, window, 40);
        assert_ne!(&fst[..8], &vcd[..8], "two formats");
        let (vcd_times, vcd_changes) = read(vcd);
        let (fst_times, mut fst_changes) = read(fst);
        // Before a window that starts later, the FST's first block holds every signal as
        // `x` (unknown) at time 0, where the VCD has no value at all.
        if window.from > 0 {
            for (_, changes) in fst_changes.values_mut() {
                let (t, bits) = changes.remove(0);
                assert!(t == 0 && bits.bytes().all(|b| b == b'x'), "{t} {bits}");
            }
        }
        let n = fst_changes.len();
        assert_eq!(n, if filter.is_all() { 5 } else { 3 });
        assert_eq!(fst_changes, vcd_changes, "window {window}");
        // The FST time table may start with the block's start (time 0) before the window;
        // from the first dumped time on, it is the VCD's.
        let first = vcd_times[0];
        let fst_times: Vec<u64> = fst_times.into_iter().filter(|&t| t >= first).collect();
        assert_eq!(fst_times, vcd_times);
        // And the values are the model's.
        let (_, changes) = &fst_changes["top.mmu.b.wide"];
        let first_cycle = window.from;
        assert_eq!(changes[0].0, first_cycle * 125);
        assert_eq!(
            u64::from_str_radix(&changes[0].1, 2).unwrap(),
            model(1, first_cycle) & mask(64)
        );
    }
}

#[test]
fn fst_is_deterministic_and_smaller() {
    let sigs = signals();
    let a = dump(
        Format::Fst,
        &sigs,
        &SignalFilter::all(),
        Window::all(),
        5000,
    );
    let b = dump(
        Format::Fst,
        &sigs,
        &SignalFilter::all(),
        Window::all(),
        5000,
    );
    assert!(a == b, "identical input, different FST bytes");
    let c = dump(
        Format::Fst,
        &sigs,
        &SignalFilter::all(),
        Window::all(),
        4999,
    );
    assert!(a != c, "the comparison can fail");
    let vcd = dump(
        Format::Vcd,
        &sigs,
        &SignalFilter::all(),
        Window::all(),
        5000,
    );
    assert!(
        a.len() * 3 < vcd.len(),
        "FST {} bytes, VCD {}",
        a.len(),
        vcd.len()
    );
}

/// Enough changes (64 signals x 64 bits, every cycle) to exceed the writer's in-memory
/// limit several times, so the file has several compressed blocks; every change must
/// still read back.
#[test]
fn fst_with_several_blocks_reads_back() {
    let sigs: Vec<SignalSpec> = (0..64)
        .map(|i| SignalSpec::new(format!("top.s{i:02}"), 64))
        .collect();
    let cycles = 60_000u64;
    let value = |i: usize, c: u64| c.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64) << 32;
    let mut w = FstWriter::new(
        Cursor::new(Vec::new()),
        &sigs,
        HZ,
        &SignalFilter::all(),
        Window::all(),
    )
    .unwrap();
    for c in 0..cycles {
        w.sample(c, |i| value(i, c)).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let (times, changes) = read(bytes);
    assert_eq!(
        times.len() as u64,
        cycles + 1,
        "every cycle and the closing time"
    );
    for i in [0, 37, 63] {
        let (width, ch) = &changes[&format!("top.s{i:02}")];
        assert_eq!(*width, 64);
        assert_eq!(ch.len() as u64, cycles);
        for c in [0, 1, 20_000, 41_234, cycles - 1] {
            assert_eq!(ch[c as usize].0, c * 125);
            assert_eq!(
                u64::from_str_radix(&ch[c as usize].1, 2).unwrap(),
                value(i, c),
                "s{i} at {c}"
            );
        }
    }
}

#[test]
fn the_format_is_chosen_by_the_extension() {
    assert_eq!(
        Format::from_path("x/run.fst".as_ref()).unwrap(),
        Format::Fst
    );
    assert_eq!(Format::from_path("run.vcd".as_ref()).unwrap(), Format::Vcd);
    let e = Format::from_path("run.txt".as_ref()).unwrap_err();
    assert!(matches!(e, WaveError::BadPath { .. }), "{e:?}");
    // The VCD writer behind AnyWriter writes exactly what VcdWriter writes.
    let sigs = signals();
    let mut w = VcdWriter::new(Vec::new(), &sigs, HZ, &SignalFilter::all(), Window::all()).unwrap();
    for c in 0..40 {
        w.sample(c, |i| model(i, c)).unwrap();
    }
    let plain = w.finish().unwrap();
    assert_eq!(
        dump(Format::Vcd, &sigs, &SignalFilter::all(), Window::all(), 40),
        plain
    );
}

#[test]
fn a_glob_that_matches_nothing_is_refused_by_both_writers() {
    let filter = SignalFilter::parse("top.mmu.*, nomatch.*").unwrap();
    for format in Format::ALL {
        let e = AnyWriter::with_format(
            Cursor::new(Vec::new()),
            format,
            &signals(),
            HZ,
            &filter,
            Window::all(),
        )
        .unwrap_err();
        match e {
            WaveError::NoMatch { glob, closest } => {
                assert_eq!(glob, "nomatch.*");
                assert_eq!(closest.len(), 5);
            }
            other => panic!("{other:?}"),
        }
    }
}
