//! The project's RTL (cosim/rtl) with BUG=3 (payloads of back-to-back packets swapped),
//! recorded with its monitors' payload CRCs over a whole run (`cosim/tb/run.py --bug 3
//! --no-stop --cycles 2000 --events bug3.jsonl`, in testbench/mmu-sim/tests/fixtures/cosim):
//! caught by the payload check and by nothing else, since with the CRCs stripped the
//! stream is consistent. (The clean RTL's CRCs compare equal in `make cosim-check`.)

use checker::events::{parse_line, Event};
use checker::{check, Decisions, LineRate, Mode, Options, Report};
use hw_model::Derived;
use scenario::{Overrides, Scenario};
use std::path::PathBuf;

const RTL: Options = Options {
    mode: Mode::Follow,
    line_rate: LineRate::CellPerCycle,
    pfc_tolerance: 2,
    decisions: Decisions::Reported,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn dut() -> Derived {
    let text = std::fs::read_to_string(root().join("cosim/dut.toml")).unwrap();
    let s = Scenario::parse(&text, "cosim-dut").unwrap();
    s.plan(&Overrides::default()).unwrap().derived
}

fn fixture(name: &str) -> String {
    let path = root().join(format!(
        "testbench/mmu-sim/tests/fixtures/cosim/{name}.jsonl"
    ));
    std::fs::read_to_string(path).unwrap()
}

/// The stream with every `crc` removed.
fn stripped(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut ev = parse_line(line).unwrap();
        match &mut ev {
            Event::Arrive(a) => a.crc = None,
            Event::Depart(d) => d.crc = None,
            _ => {}
        }
        out += &ev.to_line();
        out.push('\n');
    }
    out
}

fn run(text: &str) -> Report {
    check(dut(), text.as_bytes(), RTL, true).unwrap()
}

#[test]
fn a_payload_swap_is_caught_by_the_payload_check_and_by_nothing_else() {
    let bug3 = fixture("bug3");
    let r = run(&bug3);
    let swapped = r.divergences.len() as u64;
    assert!(swapped > 100, "{swapped}");
    // The packets of no back-to-back pair compare equal.
    assert!(r.payload.checked > swapped, "{:?}", r.payload);
    assert_eq!(r.payload.unchecked, 0);
    for d in &r.divergences {
        assert_eq!(d.check, "payload", "{d}");
        assert!(d.expected.contains(" left with payload CRC-32 0x"), "{d}");
        assert!(d.expected.contains("; it arrived with 0x"), "{d}");
    }
    let first = &r.divergences[0];
    let Ok(Event::Depart(dep)) = parse_line(&first.event) else {
        panic!("a departure: {first}")
    };
    assert!(
        first
            .expected
            .starts_with(&format!("flow {} seq {} ", dep.flow, dep.seq)),
        "{first}"
    );
    let r = run(&stripped(&bug3));
    assert_eq!(r.divergences, vec![], "the swap without the CRCs");
    assert_eq!(r.payload.checked, 0);
    assert!(r.payload.unchecked > swapped, "{:?}", r.payload);
}
