//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Cursor;

use wave::{SignalFilter, SignalSpec, VcdWriter, Window};

/// Writes a VCD for `signals` sampled at `cycles`, values from `model(index, cycle)`.
pub fn write_vcd(
    signals: &[SignalSpec],
    clock_hz: u64,
    filter: &SignalFilter,
    window: Window,
    cycles: impl IntoIterator<Item = u64>,
    model: impl Fn(usize, u64) -> u64,
) -> String {
    let mut w = VcdWriter::new(Vec::new(), signals, clock_hz, filter, window).unwrap();
    for c in cycles {
        w.sample(c, |i| model(i, c)).unwrap();
    }
    String::from_utf8(w.finish().unwrap()).unwrap()
}

pub fn mask(width: u32) -> u64 {
    if width == 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// A VCD read back with `wellen`, an independent parser.
pub struct ReadBack {
    wave: wellen::simple::Waveform,
}

impl ReadBack {
    pub fn new(text: &str) -> Self {
        let wave = wellen::simple::read_from_reader(Cursor::new(text.as_bytes().to_vec()))
            .expect("wellen parses our VCD");
        Self { wave }
    }

    pub fn has(&self, path: &str) -> bool {
        self.var(path).is_some()
    }

    fn var(&self, path: &str) -> Option<wellen::VarRef> {
        let mut parts: Vec<&str> = path.split('.').collect();
        let leaf = parts.pop().unwrap();
        self.wave.hierarchy().lookup_var(&parts, leaf)
    }

    pub fn width(&self, path: &str) -> u32 {
        let h = self.wave.hierarchy();
        h[self.var(path).unwrap()].length(h).unwrap()
    }

    pub fn times(&self) -> Vec<u64> {
        self.wave.time_table().to_vec()
    }

    /// Value of `path` at VCD time `time` (the last change at or before it),
    /// `None` before its first change.
    pub fn value_at(&mut self, path: &str, time: u64) -> Option<u64> {
        let var = self
            .var(path)
            .unwrap_or_else(|| panic!("{path} not in VCD"));
        let sig_ref = self.wave.hierarchy()[var].signal_ref();
        self.wave.load_signals(&[sig_ref]);
        let tt = self.wave.time_table();
        let n = tt.partition_point(|&t| t <= time);
        if n == 0 {
            return None;
        }
        let signal = self.wave.get_signal(sig_ref).unwrap();
        let offset = signal.get_offset((n - 1) as u32)?;
        let bits = signal.get_value_at(&offset, 0).to_bit_string().unwrap();
        Some(u64::from_str_radix(&bits, 2).unwrap_or_else(|_| panic!("{path}: {bits}")))
    }
}

/// One value change as it appears in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub time: u64,
    pub in_dumpvars: bool,
    pub id: String,
    pub bits: String,
}

/// Minimal parser of the body our writer produces, to check the text itself
/// (what wellen hides: repeated values, empty timestamps).
pub fn body(text: &str) -> (HashMap<String, String>, Vec<u64>, Vec<Change>) {
    let (head, body) = text.split_once("$enddefinitions $end\n").unwrap();
    let mut ids = HashMap::new();
    for line in head.lines().filter(|l| l.starts_with("$var")) {
        let t: Vec<&str> = line.split_whitespace().collect();
        ids.insert(t[3].to_owned(), t[4].to_owned());
    }
    let mut times = Vec::new();
    let mut changes = Vec::new();
    let mut in_dumpvars = false;
    for line in body.lines() {
        if let Some(t) = line.strip_prefix('#') {
            times.push(t.parse().unwrap());
        } else if line == "$dumpvars" {
            in_dumpvars = true;
        } else if line == "$end" {
            in_dumpvars = false;
        } else if let Some(rest) = line.strip_prefix('b') {
            let (bits, id) = rest.split_once(' ').unwrap();
            changes.push(Change {
                time: *times.last().unwrap(),
                in_dumpvars,
                id: id.to_owned(),
                bits: bits.to_owned(),
            });
        } else {
            let (bit, id) = line.split_at(1);
            changes.push(Change {
                time: *times.last().unwrap(),
                in_dumpvars,
                id: id.to_owned(),
                bits: bit.to_owned(),
            });
        }
    }
    (ids, times, changes)
}
