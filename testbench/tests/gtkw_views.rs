//! The committed GTKWave views must name signals that exist, with their widths, in the
//! dump they are meant for; otherwise GTKWave silently opens an empty view.

use std::path::Path;
use testbench::{builtin, Overrides, Sim};

/// (path, width) of every trace line of a .gtkw file; `name[hi:0]` gives `hi + 1` bits.
fn traces(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter(|l| l.starts_with("top."))
        .map(|l| match l.split_once('[') {
            Some((path, range)) => {
                let hi: u32 = range.trim_end_matches(":0]").parse().expect("bit range");
                (path.to_string(), hi + 1)
            }
            None => (l.to_string(), 1),
        })
        .collect()
}

#[test]
fn dsh_view_names_signals_of_the_dsh_port_level_dump() {
    let view = Path::new(env!("CARGO_MANIFEST_DIR")).join("../waveforms/dsh-view.gtkw");
    let text = std::fs::read_to_string(&view).expect("committed view");
    assert!(text.contains("[dumpfile] \"dsh.vcd\""));
    let scenario = builtin::load("dsh-port-level").unwrap();
    let sim = Sim::new(&scenario, Overrides::default()).unwrap();
    let signals = sim.mmu().signals();
    let want = traces(&text);
    assert!(want.len() > 30, "the view lists the DSH units: {want:?}");
    for (path, width) in want {
        let s = signals
            .iter()
            .find(|s| s.path == path)
            .unwrap_or_else(|| panic!("{path} is not a signal of dsh-port-level"));
        assert_eq!(s.width, width, "{path}");
    }
}
