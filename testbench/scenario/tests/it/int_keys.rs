//! Every integer key of a scenario, given a value its type cannot hold (negative, or past
//! the type), is refused with its dotted path and its documented range; the documented
//! ranges are the ones validation applies and docs/config.md, docs/ecm.md and docs/ecn.md
//! state.

use scenario::int_keys::{IntType, KEYS};
use scenario::{Overrides, Scenario, ScenarioError};
use std::collections::BTreeSet;

/// Every integer key at least once. Only the types matter (the values are refused before
/// anything looks at what they mean), except where noted.
const EVERY_KEY: &str = r#"
[switch]
profile = "small"
ports = 8
core_clock_mhz = 1000
cell_bytes = 208
packet_overhead_bytes = 0
wire_overhead_bytes = 20
buffer_bytes = 1000000
sram_write_cells_per_cycle = 8
sram_read_cells_per_cycle = 8
sram_read_latency = 1
lossless_priorities = [3]
control_queue = 7
alpha_log2 = 0
lossy_alpha_log2 = 0
egress_alpha_log2 = 0
private_bytes = 0
mtu_bytes = 1500
link_delay_ns = 1000
eta_bytes = 50000
headroom_min_packet_bytes = 1500
delta_bytes = 3000
delta_port_bytes = 3000
lossy_pool_bytes = 100000
lossy_private_bytes = 0
dwrr_quantum_bytes = 1500
pfc_pause_quanta = 65535

[[switch.hcf]]
ports = [1]
queue = 1
bins = 20
c0 = 1
buffer = 20
hp_limit = 10
period_cycles = 1000
hashes = 1

[switch.ecm]
priorities = [3]
qeq_bytes = 16384
qmc_bytes = 32768
qsc_bytes = 98304
sf_bytes = 75000
sr_bytes = 50000
sscale_log2 = 1
qscale_log2 = 0
switch_id = 1
lfsr_seed = 1

[switch.ecn]
priorities = [1]
kmin = 5120
kmax = 204800
lfsr_seed = 1

[ecm_rp]
fine_limiters = 16
flowid_bits = 12
ru_mbps = 1
rd_mbps = 1
td_us = 1000
rmin_mbps = 100
tmax_us = 10
wrtt = 3
unit = 0

[run]
cycles = 1000
seed = 1

[[links]]
port = 0
propagation_ns = 100
processing_ns = 100

[[flows]]
src = 0
dst = 1
prio = 1
size_bytes = 1500
size_cdf = [[64, 0.5], [1500, 1.0]]
pattern = { tcp = { base_rtt_us = 10, min_rto_us = 1000, max_rto_us = 2000, init_cwnd = 10, flow_bytes = 100000, cc = "dctcp", dctcp_shift_g = 4 } }
on_cycles = 10
off_cycles = 10
burst_bytes = 1000
message_cdf = [[100, 0.5], [1000, 1.0]]
start_cycle = 0
stop_cycle = 100
connection_of = 0

[[flows]]
src = 2
dst = 1
prio = 1
size_bytes = 1500
pattern = { tcp = { flavor = "ns2", window_ = 20, windowInit_ = 2 } }

[[flows]]
src = 3
dst = 1
prio = 1
size_bytes = 1500
pattern = { hpcc = { base_rtt_us = 10, rate_ai_mbps = 50, min_rate_mbps = 100, mi_thresh = 5 } }

[[flows]]
src = 4
dst = 1
prio = 1
size_bytes = 1500
pattern = { powertcp = { base_rtt_us = 10, rate_ai_mbps = 50, min_rate_mbps = 100 } }

[[flows]]
src = 5
dst = 1
prio = 1
size_bytes = 1500
pattern = { theta_powertcp = { base_rtt_us = 10, rate_ai_mbps = 50, min_rate_mbps = 100 } }

[[flows]]
src = 6
dst = 1
prio = 1
size_bytes = 1500
pattern = { dcqcn = { k_us = 55, t_us = 55, b_bytes = 10000000, f = 5, r_ai_mbps = 40, r_hai_mbps = 100, n_us = 50, min_rate_mbps = 100, cnp_delay_us = 10 } }

[[flows]]
src = 7
dst = 1
prio = 1
size_bytes = 1500
pattern = { dcqcn = { decrease_us = 4, nack_us = 500 } }
rate_gbps = 1.0
message_cdf = [[100, 0.25], [1000, 1.0]]

[[pfc_script]]
cycle = 10
port = 1
classes = [3]
quanta = 100
"#;

/// `(path, value)` of every integer in `v`.
fn integers(v: &toml::Value, path: &str, out: &mut Vec<(String, i64)>) {
    match v {
        toml::Value::Integer(n) => out.push((path.to_string(), *n)),
        toml::Value::Table(t) => {
            for (k, v) in t {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                integers(v, &p, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                integers(v, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Set the integer at `path` (as [`integers`] names it) to `n`.
fn set(v: &mut toml::Value, path: &str, n: i64) {
    let mut at = v;
    for part in path.split('.') {
        let (name, idx) = part.split_once('[').unwrap_or((part, ""));
        at = at.get_mut(name).unwrap();
        for i in idx.split(['[', ']']).filter(|s| !s.is_empty()) {
            at = at.get_mut(i.parse::<usize>().unwrap()).unwrap();
        }
    }
    *at = toml::Value::Integer(n);
}

fn error_of(text: &str) -> ScenarioError {
    Scenario::parse(text, "t")
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .expect_err("refused")
}

/// The [`KEYS`] entry of a concrete path: its indices as `[]`, but a CDF point's `[0]`.
fn entry(path: &str) -> (&'static str, IntType, &'static str) {
    let mut general = String::new();
    let mut rest = path;
    while let Some((head, tail)) = rest.split_once('[') {
        general.push_str(head);
        let (_, after) = tail.split_once(']').unwrap();
        general.push_str(
            if head.is_empty() && after.is_empty() && path.contains("_cdf[") {
                "[0]"
            } else {
                "[]"
            },
        );
        rest = after;
    }
    general.push_str(rest);
    *KEYS
        .iter()
        .find(|(p, _, _)| *p == general)
        .unwrap_or_else(|| panic!("{path} ({general}) is not in int_keys::KEYS"))
}

#[test]
fn every_integer_key_out_of_its_type_names_the_key_and_its_range() {
    let doc: toml::Value = toml::from_str(EVERY_KEY).unwrap();
    let mut ints = Vec::new();
    integers(&doc, "", &mut ints);
    let mut seen = BTreeSet::new();
    for (path, _) in &ints {
        let (pattern, ty, allowed) = entry(path);
        seen.insert(pattern);
        let (lo, hi) = ty.bounds();
        let bad = [lo - 1, hi + 1]
            .into_iter()
            .filter(|&v| (i64::MIN as i128..=i64::MAX as i128).contains(&v));
        for v in bad {
            let mut d = doc.clone();
            set(&mut d, path, v as i64);
            let e = error_of(&toml::to_string(&d).unwrap());
            assert_eq!(
                e.to_string(),
                format!("{path}: {v} is out of range; allowed: {allowed}"),
            );
        }
        // Past 64 bits: the TOML parser refuses the number itself.
        if hi > i64::MAX as i128 {
            let mut d = doc.clone();
            set(&mut d, path, 1234567890123);
            let text = toml::to_string(&d)
                .unwrap()
                .replace("1234567890123", "18446744073709551616");
            assert_eq!(
                error_of(&text).to_string(),
                format!("{path}: 18446744073709551616 is past the largest TOML integer, 2^63 - 1; allowed: {allowed}"),
            );
        }
    }
    let all: BTreeSet<_> = KEYS.iter().map(|(p, _, _)| *p).collect();
    assert_eq!(seen, all, "EVERY_KEY holds every key of int_keys::KEYS");
}

/// A range written `A..=B` is the one validation applies: the first value past either
/// end, which the type can hold, is refused with the same words.
#[test]
fn numeric_ranges_are_the_ones_validation_applies() {
    let base = valid();
    assert!(error_of_plan(&toml::to_string(&base).unwrap()).is_none());
    let mut ints = Vec::new();
    integers(&base, "", &mut ints);
    let number = |s: &str| -> Option<i128> {
        match s.split_once('^') {
            Some((b, e)) => Some(b.parse::<i128>().ok()?.pow(e.parse().ok()?)),
            None => s.parse().ok(),
        }
    };
    let mut checked = 0;
    for (path, _) in &ints {
        let (_, ty, allowed) = entry(path);
        let Some(range) = allowed.split_whitespace().find(|w| w.contains("..=")) else {
            continue;
        };
        let range = range.trim_end_matches([',', ';']);
        let (a, b) = range.split_once("..=").unwrap();
        let (Some(lo), Some(hi)) = (number(a), number(b)) else {
            continue;
        };
        let (tlo, thi) = ty.bounds();
        for v in [lo - 1, hi + 1]
            .into_iter()
            .filter(|v| (tlo..=thi).contains(v))
        {
            let mut d = base.clone();
            set(&mut d, path, v as i64);
            let e = error_of_plan(&toml::to_string(&d).unwrap())
                .unwrap_or_else(|| panic!("{path} = {v} accepted"));
            // The alpha shifters state their range as alpha = 2^-7..=2^3.
            let exponent = |s: &str| match s.strip_prefix("2^") {
                Some(e) if path.ends_with("alpha_log2") => number(e),
                _ => number(s),
            };
            let said = e
                .message
                .split_whitespace()
                .find(|w| w.contains("..="))
                .and_then(|r| r.trim_end_matches([',', ';']).split_once("..="))
                .and_then(|(a, b)| Some((exponent(a)?, exponent(b)?)));
            assert!(
                path.starts_with(&e.field) && said == Some((lo, hi)),
                "{path} = {v}: {e}"
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked}");
}

fn error_of_plan(text: &str) -> Option<ScenarioError> {
    Scenario::parse(text, "t")
        .and_then(|s| s.plan(&Overrides::default()).map(|_| ()))
        .err()
}

/// [`EVERY_KEY`] made valid: one pattern per flow.
fn valid() -> toml::Value {
    let text = EVERY_KEY
        .replace("size_cdf = [[64, 0.5], [1500, 1.0]]\n", "")
        .replace("on_cycles = 10\noff_cycles = 10\nburst_bytes = 1000\n", "")
        .replace("message_cdf = [[100, 0.5], [1000, 1.0]]\n", "")
        .replace("stop_cycle = 100\nconnection_of = 0\n", "")
        .replace("period_cycles = 1000\n", "");
    toml::from_str(&text).unwrap()
}

/// Every integer key in the docs' tables has an entry, and the range an entry gives as
/// numbers is in the docs' row for the key.
#[test]
fn the_docs_list_the_same_ranges() {
    let docs = [
        include_str!("../../../../docs/config.md"),
        include_str!("../../../../docs/ecm.md"),
        include_str!("../../../../docs/ecn.md"),
        include_str!("../../../../docs/int.md"),
    ]
    .join("\n");
    let rows: Vec<&str> = docs
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("| `"))
        .collect();
    for (pattern, _, allowed) in KEYS {
        let name = pattern
            .rsplit('.')
            .next()
            .unwrap()
            .trim_end_matches("[0]")
            .trim_end_matches("[]");
        let key_rows: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.split('|')
                    .nth(1)
                    .is_some_and(|c| c.contains(&format!("`{name}`")))
            })
            .map(|r| r.replace('`', ""))
            .collect();
        assert!(!key_rows.is_empty(), "no docs row for {pattern}");
        if let Some(range) = allowed.split_whitespace().find(|w| w.contains("..=")) {
            let range = range.trim_end_matches([',', ';']);
            assert!(
                key_rows.iter().any(|r| r.contains(range)),
                "{pattern}: no row for {name} says {range}"
            );
        }
    }
}
