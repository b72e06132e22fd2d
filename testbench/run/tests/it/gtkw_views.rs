//! The committed GTKWave views must name signals that exist, with their widths, in the
//! dump they are meant for; otherwise GTKWave silently opens an empty view.

use scenario::{builtin, Overrides};
use std::path::Path;
use switch_run::Sim;

/// (path, width) of every trace line of a .gtkw file (`+{alias} path` or `path`);
/// `name[hi:0]` gives `hi + 1` bits.
fn traces(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter_map(|l| match l.strip_prefix('+') {
            Some(aliased) => aliased.split_once("} ").map(|(_, path)| path),
            None => l.starts_with("top.").then_some(l),
        })
        .map(|l| match l.split_once('[') {
            Some((path, range)) => {
                let hi: u32 = range.trim_end_matches(":0]").parse().expect("bit range");
                (path.to_string(), hi + 1)
            }
            None => (l.to_string(), 1),
        })
        .collect()
}

/// Check the committed view `view` against the signals of the built-in `scenario`, whose
/// dump it opens as `dumpfile`; returns its trace lines.
///
/// The view names its dump and itself by absolute paths in a directory `/mmu-sim/waveforms`
/// that does not exist: GTKWave then finds the dump by the same relative path beside the
/// save file wherever the two are (its `find_dumpfile`), so `gtkwave
/// waveforms/dsh-view.gtkw` works from any directory. Every trace is shown under a distinct
/// alias without dots, and the window is sized.
fn check_view(view: &str, dumpfile: &str, scenario: &str) -> Vec<(String, u32)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../waveforms")
        .join(view);
    let text = std::fs::read_to_string(&path).expect("committed view");
    for line in [
        format!("[dumpfile] \"/mmu-sim/waveforms/{dumpfile}\""),
        format!("[savefile] \"/mmu-sim/waveforms/{view}\""),
        "[size] 1600 1000".to_string(),
    ] {
        assert!(text.lines().any(|l| l == line), "{view}: {line}");
    }
    let aliases: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("+{")?.split_once('}').map(|(a, _)| a))
        .collect();
    let unique: std::collections::HashSet<_> = aliases.iter().collect();
    assert_eq!(
        unique.len(),
        aliases.len(),
        "{view}: repeated alias in {aliases:?}"
    );
    assert!(
        aliases.iter().all(|a| !a.contains('.')),
        "{view}: {aliases:?}"
    );
    let built = builtin::load(scenario).unwrap();
    let sim = Sim::new(&built, Overrides::default()).unwrap();
    let signals = sim.wave_signals();
    let signals = signals.specs();
    let want = traces(&text);
    assert_eq!(
        want.len(),
        aliases.len(),
        "{view}: a trace without an alias"
    );
    for (path, width) in &want {
        let s = signals
            .iter()
            .find(|s| &s.path == path)
            .unwrap_or_else(|| panic!("{path} is not a signal of {scenario}"));
        assert_eq!(s.width, *width, "{path}");
    }
    want
}

#[test]
fn dsh_view_names_signals_of_the_dsh_port_level_dump() {
    let want = check_view("dsh-view.gtkw", "dsh.vcd", "dsh-port-level");
    for p in [
        "top.mmu.dt.t",
        "top.mmu.dsh.mul_xpoff.y",
        "top.mmu.ingress.p00.poff",
        "top.mmu.egress.p06.rx_poff",
    ] {
        assert!(want.iter().any(|(w, _)| w == p), "the view shows {p}");
    }
}

#[test]
fn hcf_view_names_signals_of_the_hcf_tcp_dump() {
    let want = check_view("hcf-view.gtkw", "hcf.vcd", "hcf-tcp");
    let hcf = "top.mmu.egress.p07.q1.hcf.";
    for leaf in [
        "hp_sel",
        "hp_len",
        "lp_len",
        "period_start",
        "periods",
        "last_bin",
        "last_verdict",
    ] {
        assert!(
            want.iter().any(|(p, _)| *p == format!("{hcf}{leaf}")),
            "the view shows {leaf}"
        );
    }
    let bins = want
        .iter()
        .filter(|(p, _)| p.starts_with(&format!("{hcf}credit.b")))
        .count();
    assert_eq!(bins, 20, "every credit bin of K = 20");
    for egress in ["top.mmu.egress.p07.q1.cells", "top.mmu.egress.p07.tx_state"] {
        assert!(want.iter().any(|(p, _)| p == egress), "{egress}");
    }
}

#[test]
fn ecm_view_names_signals_of_the_ecm_fanin_dump() {
    let want = check_view("ecm-view.gtkw", "ecm.vcd", "ecm-fanin");
    for leaf in ["qlen", "qold", "samp_byte_acc"] {
        let p = format!("top.mmu.egress.p07.q3.ecm.{leaf}");
        assert!(want.iter().any(|(w, _)| *w == p), "the view shows {p}");
    }
    for nic in 0..3 {
        for leaf in ["state", "rate_bps", "cpid", "fifo_len"] {
            let p = format!("top.nic.p{nic:02}.rp.f00.{leaf}");
            assert!(want.iter().any(|(w, _)| *w == p), "the view shows {p}");
        }
    }
}

/// The generated views name every trace by `display_name`: no two signals of any built-in,
/// under any policy, may share a name, and no name may hold a dot (GTKWave would show only
/// what follows it).
#[test]
fn display_names_are_distinct_and_dotless_for_every_builtin_and_policy() {
    let mut checked = 0;
    for b in builtin::BUILTINS {
        for policy in ["sih", "dsh", "l2bm"] {
            let s = builtin::load(b.name).unwrap();
            let ov = Overrides {
                policy: Some(hw_model::Policy::parse(policy).unwrap()),
                ..Overrides::default()
            };
            let Ok(sim) = Sim::new(&s, ov) else { continue };
            let mut seen = std::collections::HashMap::new();
            for spec in sim.wave_signals().specs() {
                let name = switch_run::waves::display_name(&spec.path);
                assert!(!name.contains('.'), "{name}");
                if let Some(other) = seen.insert(name.clone(), spec.path.clone()) {
                    panic!(
                        "{} and {other} are both shown as {name:?} ({})",
                        spec.path, b.name
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 20_000, "{checked} signals");
    assert_eq!(
        switch_run::waves::display_name("top.mmu.ingress.p03.qoff"),
        "p03 qoff"
    );
    assert_eq!(
        switch_run::waves::display_name("top.mmu.dt.sub_free.y"),
        "DT sub_free y"
    );
}

#[test]
fn ecn_view_names_signals_of_the_ecn_dctcp_dump() {
    let want = check_view("ecn-view.gtkw", "ecn.vcd", "ecn-dctcp");
    for leaf in ["qlen", "marked", "lfsr"] {
        let p = format!("top.mmu.egress.p07.q1.ecn.{leaf}");
        assert!(want.iter().any(|(w, _)| *w == p), "the view shows {p}");
    }
}

#[test]
fn dcqcn_view_names_signals_of_the_dcqcn_fanin_dump() {
    let want = check_view("dcqcn-view.gtkw", "dcqcn.vcd", "dcqcn-fanin");
    for p in [
        "top.mmu.egress.p07.q1.ecn.qlen",
        "top.mmu.egress.p07.q1.ecn.marked",
        "top.mmu.ingress.p02.pg1.lossy_shared_cells",
        "top.nic.p00.dcqcn.f000.rc_mbps",
        "top.nic.p02.dcqcn.f002.alpha_q16",
        "top.nic.p01.dcqcn.f001.t_count",
        "top.nic.p02.dcqcn.f002.cnps",
    ] {
        assert!(want.iter().any(|(w, _)| *w == p), "the view shows {p}");
    }
}

#[test]
fn int_views_name_signals_of_the_hpcc_and_powertcp_fanin_dumps() {
    for (view, dump, scenario) in [
        ("hpcc-view.gtkw", "hpcc.vcd", "hpcc-fanin"),
        ("powertcp-view.gtkw", "powertcp.vcd", "powertcp-fanin"),
    ] {
        let want = check_view(view, dump, scenario);
        for leaf in ["qlen", "tx_bytes", "bytes", "time", "rate"] {
            let p = format!("top.mmu.egress.p07.int.{leaf}");
            assert!(want.iter().any(|(w, _)| *w == p), "{view} shows {p}");
        }
    }
}

/// The view written beside a dump of fanin-burst opens on the first PAUSE with the marker
/// there, QOFF per port first, then the occupancy of the egress queues that held cells;
/// the QOFF masks in binary, `tx_state` through a translate filter file beside the view.
#[test]
fn a_generated_view_opens_on_the_first_pause() {
    let dir = std::env::temp_dir().join(format!("tb-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fanin.vcd");
    let built = builtin::load("fanin-burst").unwrap();
    let mut sim = Sim::new(&built, Overrides::default()).unwrap();
    let f = std::fs::File::create(&path).unwrap();
    let all = wave::SignalFilter::all();
    sim.attach_waves(f, &path, wave::Format::Vcd, &all, wave::Window::all())
        .unwrap();
    let summary = sim.run(|_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("fanin.gtkw")).unwrap();
    let filter = std::fs::read_to_string(dir.join("fanin.tx_state.txt")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(summary.pfc_pause_frames > 0);
    // fanin-burst runs at 1 GHz with 1 ns ticks: times are cycles.
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)).unwrap();
    let start: u64 = field("[timestart] ").parse().unwrap();
    let marker: u64 = field("*").split(' ').nth(1).unwrap().parse().unwrap();
    assert!(
        start > 0 && start < marker && marker < summary.cycles,
        "{start} {marker}"
    );
    let groups: Vec<&str> = text
        .lines()
        .zip(text.lines().skip(1))
        .filter(|(flags, _)| *flags == "@800200")
        .map(|(_, title)| title)
        .collect();
    assert_eq!(
        groups[..2],
        ["-ingress QOFF per port", "-egress queue occupancy (cells)"]
    );
    let lines: Vec<&str> = text.lines().collect();
    let before = |trace: &str, n: usize| {
        let i = lines.iter().position(|l| l.ends_with(trace)).unwrap();
        lines[i - n]
    };
    assert_eq!(before("top.mmu.ingress.p00.qoff[7:0]", 1), "@28", "binary");
    assert_eq!(
        before("top.mmu.egress.p31.q3.cells[20:0]", 1),
        "@8024",
        "analog"
    );
    let tx = "top.mmu.egress.p00.tx_state[1:0]";
    assert!(before(tx, 1).starts_with("^1 ") && before(tx, 1).ends_with("fanin.tx_state.txt"));
    assert_eq!(before(tx, 2), "@2024", "decimal, translated");
    assert_eq!(filter, "0 idle\n1 pfc\n2 data\n");
}
