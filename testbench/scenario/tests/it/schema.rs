//! Scenario files: every error names the offending field; every built-in validates.

use scenario::builtin;
use scenario::{Overrides, Scenario, ScenarioError};

const BASE: &str = r#"
[switch]
profile = "small"

[run]
cycles = 1000

[[flows]]
src = 0
dst = 1
prio = 3
size_bytes = 1500
pattern = "constant"
"#;

/// Parse and plan `text`, returning the error.
fn error_of(text: &str) -> ScenarioError {
    Scenario::parse(text, "t")
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .expect_err("scenario should be rejected")
}

#[test]
fn base_scenario_is_valid() {
    let s = Scenario::parse(BASE, "t").unwrap();
    let plan = s.plan(&Overrides::default()).unwrap();
    assert_eq!(plan.derived.ports, 8);
    assert_eq!(plan.flows.len(), 1);
    assert_eq!(plan.name, "t");
}

#[test]
fn nonexistent_port_is_named_with_the_range() {
    let e = error_of(&BASE.replace("dst = 1", "dst = 40"));
    assert_eq!(e.field, "flows[0].dst");
    assert_eq!(
        e.to_string(),
        "flows[0].dst: port 40 does not exist (ports 0..=7)"
    );
}

#[test]
fn priority_above_seven_is_refused() {
    let e = error_of(&BASE.replace("prio = 3", "prio = 9"));
    assert_eq!(e.field, "flows[0].prio");
}

#[test]
fn zero_cycles_is_refused() {
    let e = error_of(&BASE.replace("cycles = 1000", "cycles = 0"));
    assert_eq!(e.field, "run.cycles");
}

#[test]
fn unknown_keys_are_named_in_every_section() {
    assert_eq!(
        error_of(&BASE.replace("profile = \"small\"", "profile = \"small\"\nbogus = 1")).field,
        "switch.bogus"
    );
    assert_eq!(
        error_of(&BASE.replace("cycles = 1000", "cycles = 1000\nspeed = 2")).field,
        "run.speed"
    );
    assert_eq!(
        error_of(&BASE.replace("prio = 3", "prio = 3\ncolour = \"red\"")).field,
        "flows[0].colour"
    );
    assert_eq!(error_of(&format!("extra = 1\n{BASE}")).field, "extra");
    // Inside the switch's nested tables, the error names the table and the entry.
    let nested = |tables: &str| error_of(&BASE.replace("[run]", &format!("{tables}\n[run]"))).field;
    assert_eq!(
        nested("[switch.ecm]\npriorities = [3]\nqeq = 1\n"),
        "switch.ecm.qeq"
    );
    assert_eq!(
        nested("[[switch.hcf]]\nports = [1]\nqueue = 1\n[[switch.hcf]]\nports = [2]\nqueue = 1\nkk = 3\n"),
        "switch.hcf[1].kk"
    );
    // A key that is valid elsewhere is blamed on the table that does not accept it.
    let both = BASE
        .replace(
            "profile = \"small\"",
            "profile = \"small\"\nalpha_log2 = -1",
        )
        .replace(
            "[run]",
            "[switch.ecm]\npriorities = [3]\nalpha_log2 = -2\n[run]",
        );
    assert_eq!(error_of(&both).field, "switch.ecm.alpha_log2");
    assert_eq!(
        nested("[switch.ecm]\npriorities = [3]\n[[switch.hcf]]\nports = [1]\nqueue = 1\npriorities = [3]\n"),
        "switch.hcf[0].priorities"
    );
}

#[test]
fn wrong_types_and_missing_fields_are_named() {
    assert_eq!(
        error_of(&BASE.replace("dst = 1", "dst = \"one\"")).field,
        "flows[0].dst"
    );
    assert_eq!(
        error_of(&BASE.replace("dst = 1\n", "")).field,
        "flows[0].dst"
    );
    assert_eq!(
        error_of(&BASE.replace(
            "profile = \"small\"",
            "profile = \"small\"\nports = \"many\""
        ))
        .field,
        "switch.ports"
    );
    assert_eq!(
        error_of(&BASE.replace("pattern = \"constant\"", "pattern = \"zigzag\"")).field,
        "flows[0].pattern"
    );
}

#[test]
fn switch_errors_come_from_the_model_config() {
    let e = error_of(&BASE.replace("profile = \"small\"", "profile = \"small\"\nalpha_log2 = 9"));
    assert_eq!(e.field, "switch.alpha_log2");
    let e = error_of(&BASE.replace("profile = \"small\"", "profile = \"huge\""));
    assert_eq!(e.field, "switch.profile");
}

#[test]
fn profile_overrides_apply_on_top_of_the_profile() {
    let s = Scenario::parse(
        &BASE.replace("profile = \"small\"", "profile = \"small\"\nports = 4"),
        "t",
    )
    .unwrap();
    assert_eq!(s.switch.ports, 4);
    assert_eq!(
        s.switch.buffer_bytes,
        hw_model::SwitchConfig::small().buffer_bytes,
        "the rest comes from the profile"
    );
}

#[test]
fn pattern_parameters_are_checked() {
    let e = error_of(&BASE.replace("pattern = \"constant\"", "pattern = \"on_off\""));
    assert_eq!(e.field, "flows[0].on_cycles");
    let e = error_of(&BASE.replace(
        "pattern = \"constant\"",
        "pattern = \"constant\"\nburst_bytes = 10",
    ));
    assert_eq!(e.field, "flows[0].burst_bytes");
    let e = error_of(&BASE.replace(
        "pattern = \"constant\"",
        "pattern = \"constant\"\nrate_gbps = 400",
    ));
    assert_eq!(e.field, "flows[0].rate_gbps");
    let e = error_of(&BASE.replace("size_bytes = 1500", "size_bytes = 20"));
    assert_eq!(e.field, "flows[0].size_bytes");
    let e = error_of(&BASE.replace("size_bytes = 1500", "size_cdf = [[64, 0.5], [1500, 0.9]]"));
    assert_eq!(e.field, "flows[0].size_cdf");
    let e = error_of(&BASE.replace(
        "pattern = \"constant\"",
        "pattern = \"constant\"\nstart_cycle = 10\nstop_cycle = 5",
    ));
    assert_eq!(e.field, "flows[0].stop_cycle");
}

#[test]
fn links_and_pfc_script_are_checked() {
    let e = error_of(&format!("{BASE}\n[[links]]\nport = 8\n"));
    assert_eq!(e.field, "links[0].port");
    let e = error_of(&format!(
        "{BASE}\n[[links]]\nport = 1\n[[links]]\nport = 1\n"
    ));
    assert_eq!(e.field, "links[1].port");
    let e = error_of(&format!(
        "{BASE}\n[[pfc_script]]\ncycle = 5\nport = 2\nclasses = [8]\nquanta = 10\n"
    ));
    assert_eq!(e.field, "pfc_script[0].classes");
}

#[test]
fn toml_syntax_errors_are_reported_not_panicked() {
    let e = error_of("[run\ncycles = 1");
    assert!(e.message.contains("line 1"), "{e}");
}

#[test]
fn cli_overrides_are_validated_too() {
    let s = Scenario::parse(BASE, "t").unwrap();
    let e = s
        .plan(&Overrides {
            cycles: Some(0),
            ..Overrides::default()
        })
        .unwrap_err();
    assert_eq!(e.field, "--cycles");
}

#[test]
fn link_defaults_follow_eq1() {
    let plan = Scenario::parse(BASE, "t")
        .unwrap()
        .plan(&Overrides::default())
        .unwrap();
    // small: 100G at 1 GHz, link 200 ns; processing = (3840 - 84 - 2 * 20) B at 100 bits/cycle.
    assert_eq!(plan.links[0].prop_cycles, 200);
    assert_eq!(plan.links[0].proc_cycles, 3716 * 8 / 100);
    let text = format!("{BASE}\n[[links]]\nport = 0\npropagation_ns = 50\nprocessing_ns = 7\narbitration = \"strict\"\n");
    let plan = Scenario::parse(&text, "t")
        .unwrap()
        .plan(&Overrides::default())
        .unwrap();
    assert_eq!(
        (plan.links[0].prop_cycles, plan.links[0].proc_cycles),
        (50, 7)
    );
}

#[test]
fn every_builtin_validates() {
    for b in builtin::BUILTINS {
        let s = b.load().unwrap_or_else(|e| panic!("{}: {e}", b.name));
        // A network has no single-switch plan; its keys are checked by the parse.
        if s.fabric.is_none() {
            s.plan(&Overrides::default())
                .unwrap_or_else(|e| panic!("{}: {e}", b.name));
        }
        assert_eq!(s.name, b.name);
        assert!(!b.description.is_empty());
    }
    assert!(builtin::find(builtin::DEFAULT).is_some());
}

#[test]
fn unknown_builtin_name_errors() {
    let e = builtin::load("no-such-scenario").unwrap_err();
    assert_eq!(e.field, "scenario");
    assert!(e.message.contains("fanin-burst"), "{e}");
}

/// The first headroom finding of `text` with `expect_lossless` (the plan's error), and the
/// warnings of the same scenario without it (the plan goes ahead).
fn headroom_check(text: &str) -> (Option<ScenarioError>, Vec<String>) {
    let strict = text.replace("cycles = 1000", "cycles = 1000\nexpect_lossless = true");
    let refused = Scenario::parse(&strict, "t")
        .unwrap()
        .plan(&Overrides::default())
        .err();
    let plan = Scenario::parse(text, "t")
        .unwrap()
        .plan(&Overrides::default())
        .unwrap_or_else(|e| panic!("without expect_lossless the plan must go ahead: {e}"));
    let warnings: Vec<String> = plan
        .headroom_warnings
        .iter()
        .map(|w| w.to_string())
        .collect();
    if let Some(e) = &refused {
        assert!(e.message.ends_with("(run.expect_lossless = true)"), "{e}");
        assert_eq!(
            warnings.first().map(|w| w.split(": ").next().unwrap_or("")),
            Some(e.field.as_str()),
            "the warning and the error name the same field"
        );
    } else {
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    (refused, warnings)
}

fn refused_field(text: &str) -> String {
    headroom_check(text)
        .0
        .unwrap_or_else(|| panic!("should be refused with expect_lossless:\n{text}"))
        .field
}

/// A link longer than the delay the headroom was sized for (Eq. 1), or an explicit
/// `eta_bytes` below its link's Eq. 1, would lose lossless cells: refused with
/// `expect_lossless` (exit 2) and warned about otherwise, naming the field and what fits.
#[test]
fn links_longer_than_the_headroom_allows_are_refused_or_warned() {
    // One lossless class: a larger eta still fits the small buffer.
    let base = BASE.replace(
        "profile = \"small\"",
        "profile = \"small\"\nlossless_priorities = [3]",
    );
    let long = format!("{base}\n[[links]]\nport = 0\npropagation_ns = 5000\n");
    let (e, warnings) = headroom_check(&long);
    let e = e.expect("refused");
    assert_eq!(e.field, "links[0].propagation_ns", "{e}");
    assert!(
        e.message.contains("Eq. 1 of switch.link_delay_ns = 200 ns"),
        "{e}"
    );
    assert!(e.message.contains("allowed: 0..=200"), "{e}");
    assert_eq!(warnings.len(), 1);
    let slow = format!("{base}\n[[links]]\nport = 0\nprocessing_ns = 100000\n");
    assert_eq!(refused_field(&slow), "links[0].processing_ns");
    // An explicit eta: the link must fit it. 20000 B hold 2 (12.5 D + 1500) + 3840 up to
    // D = 526 ns.
    let by_hand = long.replace(
        "profile = \"small\"",
        "profile = \"small\"\neta_bytes = 20000",
    );
    let e = headroom_check(&by_hand).0.expect("refused");
    assert!(e.message.contains("allowed: 0..=526"), "{e}");
    let fits = by_hand.replace("propagation_ns = 5000", "propagation_ns = 526");
    assert_eq!(headroom_check(&fits).0, None);
    let short = base.replace(
        "profile = \"small\"",
        "profile = \"small\"\neta_bytes = 5000",
    );
    let e = headroom_check(&short).0.expect("refused");
    assert_eq!(e.field, "switch.eta_bytes");
    assert!(e.message.contains("allowed: at least 11837"), "{e}");
    // A faster link than the explicit eta was written for.
    let fast = base.replace(
        "profile = \"small\"",
        "profile = \"small\"\neta_bytes = 11840\nport_speed_gbps = 200",
    );
    assert_eq!(
        headroom_check(&fast.replace("eta_bytes = 11840\n", "")).0,
        None
    );
    assert_eq!(refused_field(&fast), "switch.eta_bytes");
    // A link into a port without lossless traffic cannot lose a lossless cell.
    let idle = format!("{base}\n[[links]]\nport = 5\npropagation_ns = 5000\n");
    assert_eq!(headroom_check(&idle).0, None);
}

/// Lossless packets denser in cells than the headroom was sized for (smaller packets,
/// short last packets of messages or TCP flows, larger cells under paper-bytes): refused
/// with `expect_lossless`, warned about otherwise, naming the key that makes the packet
/// and the value of `headroom_min_packet_bytes` that would cover it.
#[test]
fn lossless_packets_outside_the_headroom_range_are_refused_or_warned() {
    let small = BASE.replace("size_bytes = 1500", "size_bytes = 64");
    let e = headroom_check(&small).0.expect("refused");
    assert_eq!(e.field, "flows[0].size_bytes");
    assert!(
        e.message
            .contains("switch.headroom_min_packet_bytes = 64 (eta 148 cells)"),
        "{e}"
    );
    let fixed = small.replace(
        "profile = \"small\"",
        "profile = \"small\"\nheadroom_min_packet_bytes = 64",
    );
    assert_eq!(headroom_check(&fixed).0, None);
    let cdf = BASE.replace("size_bytes = 1500", "size_cdf = [[64, 0.5], [1500, 1.0]]");
    assert_eq!(refused_field(&cdf), "flows[0].size_cdf");
    let poisson = BASE.replace(
        "pattern = \"constant\"",
        "pattern = \"poisson\"\nrate_gbps = 10\nmessage_cdf = [[1000, 0.5], [1600, 1.0]]",
    );
    assert_eq!(refused_field(&poisson), "flows[0].message_cdf");
    let tcp = BASE.replace(
        "pattern = \"constant\"",
        "pattern = { tcp = { flow_bytes = 1564 } }",
    );
    assert_eq!(refused_field(&tcp), "flows[0].pattern.tcp.flow_bytes");
    // A last packet of 100 B (1 cell per 120 wire bytes) is not denser than 209 B ones,
    // and whole multiples of the packet size leave no short packet.
    assert_eq!(headroom_check(&tcp.replace("1564", "1600")).0, None);
    assert_eq!(headroom_check(&tcp.replace("1564", "3000")).0, None);
    // Lossy traffic has no headroom to outgrow.
    assert_eq!(
        headroom_check(&small.replace("prio = 3", "prio = 7")).0,
        None
    );
    // Smaller is not always denser: on tomahawk (sized for 1500 B packets, 8 cells per
    // 1520 wire bytes) 1400 B packets take 7 cells per 1420.
    let tomahawk = BASE.replace("profile = \"small\"", "profile = \"tomahawk\"");
    let under = tomahawk.replace("size_bytes = 1500", "size_bytes = 1400");
    assert_eq!(headroom_check(&under).0, None);
    let (e, w) = headroom_check(&tomahawk.replace("size_bytes = 1500", "size_bytes = 1457"));
    assert_eq!(
        e.expect("1457 B: 8 cells per 1477").field,
        "flows[0].size_bytes"
    );
    assert_eq!(w.len(), 1);
}

/// `headroom = "paper-bytes"` holds only packets that take no more buffer than wire bytes:
/// whole-cell packets pass, 1500 B in 208 B cells (1664 B for 1520) and the same packets in
/// larger cells do not.
#[test]
fn paper_bytes_headroom_refuses_packets_larger_in_cells_than_on_the_wire() {
    let paper = BASE.replace(
        "profile = \"small\"",
        "profile = \"small\"\nheadroom = \"paper-bytes\"",
    );
    let e = headroom_check(&paper).0.expect("1500 B take 1664 B");
    assert_eq!(e.field, "flows[0].size_bytes");
    assert!(
        e.message
            .contains("1664 B of buffer for 1520 B on the wire"),
        "{e}"
    );
    assert_eq!(
        headroom_check(&paper.replace("size_bytes = 1500", "size_bytes = 1456")).0,
        None
    );
    let big_cells = paper
        .replace("size_bytes = 1500", "size_bytes = 1456")
        .replace("headroom = ", "cell_bytes = 256\nheadroom = ");
    assert_eq!(refused_field(&big_cells), "flows[0].size_bytes");
    assert_eq!(
        headroom_check(&big_cells.replace("headroom = \"paper-bytes\"", "")).0,
        None,
        "cells mode sizes eta for the larger cells"
    );
}

/// Flows with the same too-dense packet share one warning, named after the first of them.
#[test]
fn alike_headroom_warnings_are_grouped() {
    let mut text = BASE.replace("size_bytes = 1500", "size_bytes = 64");
    for src in 1..4 {
        text += &format!(
            "\n[[flows]]\nsrc = {src}\ndst = 5\nprio = 3\nsize_bytes = 64\npattern = \"constant\"\n"
        );
    }
    let (_, warnings) = headroom_check(&text);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].ends_with("the same for flows 1-3"),
        "{warnings:?}"
    );
}

/// `connection_of = N`: the flow's packets carry flow N's 5-tuple; a bad N is named.
#[test]
fn connection_of_shares_the_five_tuple_and_bad_values_are_named() {
    let second =
        "\n[[flows]]\nsrc = 2\ndst = 3\nprio = 3\nsize_bytes = 1500\npattern = \"constant\"\n";
    let plan = |extra: &str| {
        Scenario::parse(&format!("{BASE}{second}{extra}"), "t")
            .and_then(|s| s.plan(&Overrides::default()))
    };
    let own = plan("").unwrap();
    assert_ne!(own.flows[0].five_tuple(6), own.flows[1].five_tuple(6));
    let shared = plan("connection_of = 0\n").unwrap();
    assert_eq!(shared.flows[1].tuple, Some(shared.flows[0].five_tuple(17)));
    assert_eq!(shared.flows[0].tuple, None);
    for (extra, why) in [
        ("connection_of = 1\n", "out of range"),
        ("connection_of = 5\n", "out of range"),
    ] {
        let e = plan(extra).unwrap_err();
        assert_eq!(e.field, "flows[1].connection_of");
        assert!(e.message.contains(why), "{e}");
    }
    let chained = format!("{BASE}{second}connection_of = 0\n{second}connection_of = 1\n");
    let e = error_of(&chained);
    assert_eq!(e.field, "flows[2].connection_of");
    assert!(e.message.contains("itself a re-route"), "{e}");
    let tcp = format!(
        "{BASE}{}connection_of = 0\n",
        second.replace("pattern = \"constant\"", "pattern = { tcp = {} }")
    );
    assert!(error_of(&tcp).message.contains("both be tcp"));
}

const NETWORK: &str = r#"
[switch]
profile = "small"

[run]
cycles = 1000

[fabric]
topology = "topology.txt"
flow_file = "flow.txt"
failed_links = [[4, 5]]
"#;

/// A `[fabric]` table parses into the scenario (its files are the network run's to read),
/// and the single-switch plan refuses it rather than run one switch without the network.
#[test]
fn a_fabric_table_is_a_network_scenario_without_a_single_switch_plan() {
    let s = Scenario::parse(NETWORK, "t").unwrap();
    let f = s.fabric.as_ref().unwrap();
    assert_eq!(f.topology.as_deref(), Some("topology.txt"));
    assert_eq!((f.failed_links.clone(), f.ecmp_seed), (vec![[4, 5]], 1));
    assert_eq!(error_of(NETWORK).field, "fabric");
}

/// `fabric.ecm_pg` unset leaves the serialized scenario, and so its hash (sweep results,
/// summaries), as it was before the key; set, it changes the hash.
#[test]
fn an_unset_ecm_pg_leaves_the_scenario_hash_alone() {
    let s = Scenario::parse(NETWORK, "t").unwrap();
    let json = serde_json::to_string(s.fabric.as_ref().unwrap()).unwrap();
    assert!(!json.contains("ecm_pg"), "{json}");
    let set = Scenario::parse(
        &NETWORK.replace("[fabric]\n", "[fabric]\necm_pg = 2\n"),
        "t",
    )
    .unwrap();
    assert_eq!(set.fabric.as_ref().unwrap().ecm_pg, Some(2));
    let ov = Overrides::default();
    assert_ne!(s.hash(&ov), set.hash(&ov));
}

/// One topology source, known keys, and no `[[flows]]` beside the flow file.
#[test]
fn fabric_errors_name_the_field() {
    let both = NETWORK.replace(
        "flow_file",
        "leaf_spine = { leaves = 2, spines = 1, hosts_per_leaf = 1, host_link_gbps = 100, host_link_delay_ns = 1000, fabric_link_gbps = 100, fabric_link_delay_ns = 1000 }\nflow_file",
    );
    let neither = NETWORK.replace("topology = \"topology.txt\"\n", "");
    let flows = format!("{NETWORK}\n[[flows]]\nsrc = 0\ndst = 1\nprio = 3\nsize_bytes = 1500\npattern = \"constant\"\n");
    let unknown = NETWORK.replace("flow_file", "flows_file");
    for (text, field) in [
        (both, "fabric.topology"),
        (neither, "fabric.topology"),
        (flows, "flows"),
        (unknown, "fabric.flows_file"),
    ] {
        let e = Scenario::parse(&text, "t").unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
}
