//! The waveform tours and quoted summaries of the docs cannot drift from the model.
//!
//! A tour in a doc is the text after a `<!-- tour -->` line, up to a fenced block whose
//! info string is `tour`. The block names the run and states every cycle and value the text
//! cites, one check a line:
//!
//! ```text
//! run dsh-port-level [--policy P] [--cycles N] [--seed S]    (or `run toml:NAME`)
//! at 30279 top.mmu.ingress.p00.qoff = 4          value after cycle 30279
//! edge 30279 top.mmu.ingress.p00.qoff 0 -> 4     0 after cycle 30278, 4 after 30279
//! changes top.mmu.ingress.p00.poff = 66          value changes after the first sample
//! max top.mmu.ingress.*.insurance_cells = 24     over the run (a glob: over every match)
//! min PATH 300000..400000 = 192                  over cycles 300000..400000 (also max)
//! mean PATH 300000..400000 = 226                 time-weighted, rounded down
//! note 7 111: N_q and eta are configuration      numbers the text cites that are not waves
//! ```
//!
//! `toml:NAME` is a scenario a doc defines in a fenced `toml` block right after a
//! `<!-- scenario: NAME -->` line (any doc may use it).
//!
//! The test runs the scenario, dumps the named signals, reads the dump back with `wellen`
//! and checks every line; and every number in the tour's text must appear in its block (as
//! a cycle, a value or a note), so editing the text alone fails too. On a mismatch it
//! prints the block with the values of the current model, ready to paste.
//!
//! A quoted summary is a fenced block right after a `<!-- summary: ARGS -->` line (`ARGS`
//! as for `run`): every summary row it quotes from its `scenario` line on (but `speed`)
//! must be a row of the summary of that run, in the same order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::wave_changes;
use scenario::{builtin, Overrides};
use switch_run::Sim;
use wave::{Format, SignalFilter, Timescale, Window};

/// The docs with tours, quoted summaries or scenarios, from the repository root.
const DOCS: [&str; 7] = [
    "README.md",
    "docs/architecture.md",
    "docs/dsh.md",
    "docs/hcf.md",
    "docs/ecm.md",
    "docs/l2bm.md",
    "docs/signals.md",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `NAME [--policy P] [--cycles N] [--seed S] [--fifo]` as a ready simulator: a built-in,
/// or `toml:NAME` for one of the docs' `scenarios`.
fn sim(args: &str, scenarios: &BTreeMap<String, String>) -> Sim {
    let mut words = args.split_whitespace();
    let name = words.next().expect("a scenario name");
    let mut ov = Overrides::default();
    while let Some(flag) = words.next() {
        let mut value = || {
            words
                .next()
                .unwrap_or_else(|| panic!("{flag} needs a value"))
        };
        match flag {
            "--policy" => ov.policy = Some(hw_model::Policy::parse(value()).unwrap()),
            "--cycles" => ov.cycles = Some(value().parse().unwrap()),
            "--seed" => ov.seed = Some(value().parse().unwrap()),
            "--fifo" => ov.fifo = true,
            other => panic!("unknown option {other} in {args:?}"),
        }
    }
    let scenario = match name.strip_prefix("toml:") {
        Some(n) => {
            let text = scenarios
                .get(n)
                .unwrap_or_else(|| panic!("no <!-- scenario: {n} --> in the docs"));
            scenario::Scenario::parse(text, n).unwrap()
        }
        None => builtin::load(name).unwrap(),
    };
    Sim::new(&scenario, ov).unwrap()
}

#[derive(Debug, Clone)]
enum Check {
    At(u64, String, u64),
    Edge(u64, String, u64, u64),
    Changes(String, u64),
    Max(String, Option<(u64, u64)>, u64),
    Min(String, Option<(u64, u64)>, u64),
    Mean(String, (u64, u64), u64),
}

impl Check {
    fn path(&self) -> &str {
        match self {
            Check::At(_, p, _)
            | Check::Edge(_, p, _, _)
            | Check::Changes(p, _)
            | Check::Max(p, _, _)
            | Check::Min(p, _, _)
            | Check::Mean(p, _, _) => p,
        }
    }
}

fn parse_range(s: &str) -> (u64, u64) {
    let (a, b) = s.split_once("..").unwrap_or_else(|| panic!("range {s}"));
    (a.parse().unwrap(), b.parse().unwrap())
}

/// One check line (`note` lines and blank lines give `None`).
fn parse_check(line: &str) -> Option<Check> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let num = |s: &str| -> u64 { s.parse().unwrap_or_else(|_| panic!("{s:?} in {line:?}")) };
    Some(match w.as_slice() {
        [] | ["note", ..] => return None,
        ["at", c, p, "=", v] => Check::At(num(c), p.to_string(), num(v)),
        ["edge", c, p, a, "->", b] => Check::Edge(num(c), p.to_string(), num(a), num(b)),
        ["changes", p, "=", n] => Check::Changes(p.to_string(), num(n)),
        ["max", p, "=", v] => Check::Max(p.to_string(), None, num(v)),
        ["max", p, r, "=", v] => Check::Max(p.to_string(), Some(parse_range(r)), num(v)),
        ["min", p, "=", v] => Check::Min(p.to_string(), None, num(v)),
        ["min", p, r, "=", v] => Check::Min(p.to_string(), Some(parse_range(r)), num(v)),
        ["mean", p, r, "=", v] => Check::Mean(p.to_string(), parse_range(r), num(v)),
        _ => panic!("cannot read the tour check {line:?}"),
    })
}

/// Every signal of a dump, read back with `wellen`: its changes as (time, value).
struct Dump {
    signals: BTreeMap<String, Vec<(u64, u64)>>,
    tpc: u64,
    /// The end of the run: a signal holds its last value until then.
    end: u64,
}

impl Dump {
    /// The dump at `path` of a run of `cycles` cycles of `tpc` ticks.
    fn new(path: &Path, tpc: u64, cycles: u64) -> Self {
        let signals = wave_changes(path)
            .into_iter()
            .map(|(name, (_, changes))| {
                let values = changes
                    .into_iter()
                    .map(|(t, bits)| (t, u64::from_str_radix(&bits, 2).unwrap()))
                    .collect();
                (name, values)
            })
            .collect();
        Self {
            signals,
            tpc,
            end: cycles * tpc,
        }
    }

    /// The signals a check's path (or glob) names.
    fn matching(&self, path: &str) -> Vec<&Vec<(u64, u64)>> {
        let f = SignalFilter::parse(path).unwrap();
        let m: Vec<_> = self
            .signals
            .iter()
            .filter(|(p, _)| f.matches(p))
            .map(|(_, c)| c)
            .collect();
        assert!(!m.is_empty(), "{path} is not in the dump");
        m
    }

    fn value_at(changes: &[(u64, u64)], time: u64) -> u64 {
        let n = changes.partition_point(|&(t, _)| t <= time);
        changes[n.checked_sub(1).expect("no value yet")].1
    }

    /// The values a signal holds during cycles `range` (or the whole run), with the cycles
    /// each holds.
    fn spans(&self, changes: &[(u64, u64)], range: Option<(u64, u64)>) -> Vec<(u64, u64)> {
        let (from, to) = range.map_or((0, self.end), |(a, b)| (a * self.tpc, b * self.tpc));
        assert!(
            from < to && to <= self.end,
            "the range {range:?} is not within the run of {} cycles",
            self.end / self.tpc
        );
        let mut out = Vec::new();
        for (i, &(t, v)) in changes.iter().enumerate() {
            let next = changes.get(i + 1).map_or(self.end, |c| c.0);
            let (s, e) = (t.max(from), next.min(to));
            if e > s {
                out.push((v, e - s));
            }
        }
        out
    }

    /// The check's actual value.
    fn actual(&self, check: &Check) -> u64 {
        let sigs = self.matching(check.path());
        let one = || {
            assert_eq!(sigs.len(), 1, "{} names several signals", check.path());
            sigs[0]
        };
        match check {
            Check::At(c, ..) => Self::value_at(one(), c * self.tpc),
            Check::Edge(c, ..) => Self::value_at(one(), c * self.tpc),
            Check::Changes(..) => one().len() as u64 - 1,
            Check::Max(_, r, _) => sigs
                .iter()
                .flat_map(|c| self.spans(c, *r))
                .map(|s| s.0)
                .max()
                .unwrap(),
            Check::Min(_, r, _) => sigs
                .iter()
                .flat_map(|c| self.spans(c, *r))
                .map(|s| s.0)
                .min()
                .unwrap(),
            Check::Mean(_, r, _) => {
                let spans = self.spans(one(), Some(*r));
                let total: u64 = spans.iter().map(|s| s.1).sum();
                let sum: u128 = spans
                    .iter()
                    .map(|s| u128::from(s.0) * u128::from(s.1))
                    .sum();
                (sum / u128::from(total)) as u64
            }
        }
    }

    /// The check line with the current model's values.
    fn rewrite(&self, check: &Check) -> String {
        let v = self.actual(check);
        match check {
            Check::At(c, p, _) => format!("at {c} {p} = {v}"),
            Check::Edge(c, p, ..) => {
                let before = Self::value_at(self.matching(p)[0], (c - 1) * self.tpc);
                format!("edge {c} {p} {before} -> {v}")
            }
            Check::Changes(p, _) => format!("changes {p} = {v}"),
            Check::Max(p, r, _) => format!("max {p}{} = {v}", range_text(r)),
            Check::Min(p, r, _) => format!("min {p}{} = {v}", range_text(r)),
            Check::Mean(p, r, _) => format!("mean {p}{} = {v}", range_text(&Some(*r))),
        }
    }

    fn holds(&self, check: &Check) -> bool {
        let v = self.actual(check);
        match check {
            Check::At(_, _, want) | Check::Changes(_, want) | Check::Max(_, _, want) => v == *want,
            Check::Min(_, _, want) | Check::Mean(_, _, want) => v == *want,
            Check::Edge(c, p, a, b) => {
                v == *b && Self::value_at(self.matching(p)[0], (c - 1) * self.tpc) == *a
            }
        }
    }
}

fn range_text(r: &Option<(u64, u64)>) -> String {
    r.map_or(String::new(), |(a, b)| format!(" {a}..{b}"))
}

/// The integers a text cites: digit groups may be split by single spaces (`100 000`);
/// digits that are part of a name (`p00`, `pg2`, `b14`, `0x23b`, `64-byte`), list
/// numbers (`1.`), equation and section numbers (`Eq. 5`) are not citations.
fn cited_numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            let mut digits = String::new();
            while i < b.len() {
                if b[i].is_ascii_digit() {
                    digits.push(b[i] as char);
                    i += 1;
                } else if b[i] == b' '
                    && i + 3 < b.len()
                    && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
                    && b.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
                {
                    i += 1;
                } else {
                    break;
                }
            }
            let before = start.checked_sub(1).map(|k| b[k]);
            let after = b.get(i).copied();
            let in_name = before
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
                || after.is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b'-');
            let list_number = start == 0 && after == Some(b'.');
            let equation = line[..start].ends_with("Eq. ") || line[..start].ends_with("Theorem ");
            let decimal = after == Some(b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if decimal {
                // `12.5`: the whole decimal is the citation.
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if !in_name {
                    out.push(line[start..j].replace(' ', ""));
                }
                i = j;
                continue;
            }
            if !(in_name || list_number || equation) {
                out.push(digits);
            }
        }
    }
    out
}

/// A tour: its doc, its runs (one or more `run` lines in the block, each with the checks
/// that follow it), the tokens of its block and its text.
struct Tour {
    doc: &'static str,
    runs: Vec<(String, Vec<Check>)>,
    /// Every token of the block, for the cited-number check.
    tokens: Vec<String>,
    text: String,
}

struct Quoted {
    doc: &'static str,
    run: String,
    rows: Vec<String>,
}

/// The tours, the quoted summaries, and the scenarios (name to TOML) of the docs.
fn read_docs() -> (Vec<Tour>, Vec<Quoted>, BTreeMap<String, String>) {
    let mut tours = Vec::new();
    let mut quoted = Vec::new();
    let mut scenarios = BTreeMap::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut tour_start = None;
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i].trim();
            let comment = |kind: &str| {
                let arg = line.strip_prefix(kind)?.strip_suffix("-->")?.trim();
                let open = lines.get(i + 1).copied().unwrap_or_default();
                assert!(
                    open.starts_with("```"),
                    "{doc}:{}: a block must follow",
                    i + 1
                );
                Some((arg.to_string(), open))
            };
            if line == "<!-- tour -->" {
                tour_start = Some(i + 1);
            } else if let Some((name, open)) = comment("<!-- scenario:") {
                assert_eq!(open, "```toml", "{doc}:{}", i + 1);
                let (body, end) = fenced(&lines, i + 1);
                scenarios.insert(name, body.join("\n"));
                i = end;
            } else if let Some((run, _)) = comment("<!-- summary:") {
                let (body, end) = fenced(&lines, i + 1);
                // The rows from the `scenario` line on (a command and build output may come
                // first).
                let rows = body
                    .iter()
                    .skip_while(|l| !l.starts_with("scenario "))
                    .filter(|l| !l.starts_with('$') && !l.trim().is_empty())
                    .filter(|l| !l.trim_start().starts_with("speed"))
                    .map(|l| l.to_string())
                    .collect();
                quoted.push(Quoted { doc, run, rows });
                i = end;
            } else if line == "```tour" {
                let start = tour_start
                    .take()
                    .unwrap_or_else(|| panic!("{doc}:{}: no <!-- tour --> before", i + 1));
                let (block, end) = fenced(&lines, i);
                let mut runs: Vec<(String, Vec<Check>)> = Vec::new();
                for l in &block {
                    match l.strip_prefix("run ") {
                        Some(run) => runs.push((run.trim().to_string(), Vec::new())),
                        None => {
                            let (_, checks) = runs.last_mut().expect("the block starts with `run`");
                            checks.extend(parse_check(l));
                        }
                    }
                }
                tours.push(Tour {
                    doc,
                    runs,
                    tokens: block
                        .iter()
                        .flat_map(|l| l.split(|c: char| c.is_whitespace() || c == ':' || c == ','))
                        .flat_map(|w| w.split(".."))
                        .map(str::to_string)
                        .collect(),
                    text: lines[start..i].join("\n"),
                });
                i = end;
            }
            i += 1;
        }
    }
    (tours, quoted, scenarios)
}

/// The lines inside the fenced block that opens at line `open`, and the index of its
/// closing line.
fn fenced<'a>(lines: &[&'a str], open: usize) -> (Vec<&'a str>, usize) {
    let len = lines[open + 1..]
        .iter()
        .position(|l| l.starts_with("```"))
        .unwrap_or_else(|| panic!("line {}: unclosed block", open + 1));
    (lines[open + 1..open + 1 + len].to_vec(), open + 1 + len)
}

fn tmp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tours-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_cited_number_of_a_tour_is_in_its_checks() {
    let (tours, _, _) = read_docs();
    let mut failures = Vec::new();
    for t in &tours {
        for n in cited_numbers(&t.text) {
            if !t.tokens.contains(&n) {
                failures.push(format!(
                    "{}: the tour of `{}` cites {n}, which its block does not check",
                    t.doc, t.runs[0].0
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_tour_matches_the_dump_of_its_run() {
    let (tours, _, scenarios) = read_docs();
    let docs: std::collections::BTreeSet<_> = tours.iter().map(|t| t.doc).collect();
    assert!(docs.len() >= 7, "tours found in {docs:?}");
    let dir = tmp_dir();
    let mut failures = Vec::new();
    let runs = tours
        .iter()
        .flat_map(|t| t.runs.iter().map(move |r| (t.doc, r)));
    for (k, (doc, (run, checks))) in runs.enumerate() {
        let mut s = sim(run, &scenarios);
        let tpc = Timescale::for_clock_hz(s.plan().derived.clock_hz)
            .unwrap()
            .ticks_per_cycle();
        let globs: Vec<&str> = checks.iter().map(Check::path).collect();
        let filter = SignalFilter::parse(&globs.join(",")).unwrap();
        let path = dir.join(format!("tour{k}.fst"));
        let f = std::fs::File::create(&path).unwrap();
        s.attach_waves(f, &path, Format::Fst, &filter, Window::all())
            .unwrap();
        let summary = s.run(|_| {}).unwrap();
        assert!(summary.ok(), "{summary}");
        let dump = Dump::new(&path, tpc, summary.cycles);
        let wrong: Vec<&Check> = checks.iter().filter(|c| !dump.holds(c)).collect();
        if !wrong.is_empty() {
            let block: Vec<String> = checks.iter().map(|c| dump.rewrite(c)).collect();
            failures.push(format!(
                "{doc}: {} of {} checks of `run {run}` fail: {wrong:?}\nthe current model gives:\nrun {run}\n{}",
                wrong.len(),
                checks.len(),
                block.join("\n")
            ));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_quoted_summary_matches_its_run() {
    let (_, quoted, scenarios) = read_docs();
    assert!(quoted.len() >= 3, "{} quoted summaries", quoted.len());
    let mut failures = Vec::new();
    for q in &quoted {
        let summary = sim(&q.run, &scenarios).run(|_| {}).unwrap().to_string();
        let actual: Vec<&str> = summary.lines().collect();
        let mut next = 0;
        for row in &q.rows {
            match actual[next..].iter().position(|a| a == row) {
                Some(k) => next += k + 1,
                None => failures.push(format!(
                    "{}: `{}` quotes {row:?}, not in its summary (in this order)",
                    q.doc, q.run
                )),
            }
        }
        if failures.iter().any(|f| f.contains(&q.run)) {
            failures.push(format!("the summary of `{}` is:\n{summary}", q.run));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checks can fail: a value, an edge one cycle late and an uncited number are caught.
#[test]
fn a_wrong_check_or_an_unchecked_number_is_caught() {
    let dir = tmp_dir();
    let path = dir.join("bite.fst");
    let mut s = sim("dsh-port-level --cycles 33000", &BTreeMap::new());
    let f = std::fs::File::create(&path).unwrap();
    let filter = SignalFilter::parse("top.mmu.dt.t, top.mmu.ingress.p00.qoff").unwrap();
    s.attach_waves(f, &path, Format::Fst, &filter, Window::all())
        .unwrap();
    s.run(|_| {}).unwrap();
    let dump = Dump::new(&path, 1, 33000);
    let t0 = parse_check("at 0 top.mmu.dt.t = 30892").unwrap();
    assert!(dump.holds(&t0));
    assert!(!dump.holds(&parse_check("at 0 top.mmu.dt.t = 30893").unwrap()));
    let first = dump.signals["top.mmu.ingress.p00.qoff"][1];
    let edge = |c: u64| {
        parse_check(&format!(
            "edge {c} top.mmu.ingress.p00.qoff 0 -> {}",
            first.1
        ))
        .unwrap()
    };
    assert!(dump.holds(&edge(first.0)));
    assert!(!dump.holds(&edge(first.0 + 1)), "one cycle late");
    // A value holds until the end of the run, not one cycle after its last change: `qoff`
    // of port 0 is 2 from 32956, 0 from 32994 to the end (33000).
    for (check, want) in [
        ("max top.mmu.ingress.p00.qoff 32995..33000 = 0", 0),
        ("mean top.mmu.ingress.p00.qoff 32990..33000 = 0", 0),
    ] {
        assert_eq!(dump.actual(&parse_check(check).unwrap()), want, "{check}");
    }
    assert_eq!(
        dump.rewrite(&parse_check("at 0 top.mmu.dt.t = 1").unwrap()),
        "at 0 top.mmu.dt.t = 30892"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    assert_eq!(
        cited_numbers(
            "1. At cycle 31 981, `p00 qoff` is 4 (Eq. 5, pg2, 0x23b, 64-byte), 12.5 Gb/s"
        ),
        ["31981", "4", "12.5"]
    );
}
