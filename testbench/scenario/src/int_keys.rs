//! The integer keys of a scenario, their types and their documented ranges
//! (docs/config.md, docs/ecm.md, docs/ecn.md).
//!
//! A TOML integer is a signed 64-bit number, and serde reports one that its field's type
//! cannot hold (a negative size, a priority of 300) as "invalid value: integer `-1`,
//! expected u32": no key, no range. So before a table is deserialized, [`check`] compares
//! every integer in it with the type of its key, and reports one that does not fit with the
//! key's dotted path and its range as documented. A value that fits the type is checked by
//! the table's own validation (`Scenario::plan`, `SwitchConfig::build`), which states the
//! same range.

use crate::ScenarioError;

/// The Rust type of an integer key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntType {
    U8,
    U16,
    U32,
    U64,
    Usize,
    I32,
}

impl IntType {
    /// The values the type holds.
    pub fn bounds(self) -> (i128, i128) {
        match self {
            Self::U8 => (0, u8::MAX as i128),
            Self::U16 => (0, u16::MAX as i128),
            Self::U32 => (0, u32::MAX as i128),
            Self::U64 => (0, u64::MAX as i128),
            Self::Usize => (0, usize::MAX as i128),
            Self::I32 => (i32::MIN as i128, i32::MAX as i128),
        }
    }
}

use IntType::*;

/// Every integer key: its path (`[]` is any index of an array, `[0]` only the first), its
/// type and its allowed values in the words of the docs.
pub const KEYS: &[(&str, IntType, &str)] = &[
    ("run.cycles", U64, "1..=2^40"),
    (
        "run.seed",
        U64,
        "0..=18446744073709551615 (from 2^63 on, write it as a string: seed = \"18446744073709551615\" or \"0xFFFFFFFFFFFFFFFF\")",
    ),
    ("links[].port", Usize, "an existing port (0..=switch.ports - 1), once"),
    (
        "links[].propagation_ns",
        U32,
        "0..=1000000; with lossless traffic into the port, Eq. 1 of the link must fit the headroom",
    ),
    (
        "links[].processing_ns",
        U32,
        "0..=1000000; with lossless traffic into the port, Eq. 1 of the link must fit the headroom",
    ),
    ("flows[].src", Usize, "an existing port, 0..=switch.ports - 1"),
    ("flows[].dst", Usize, "an existing port, 0..=switch.ports - 1"),
    ("flows[].prio", U8, "0..=7"),
    ("flows[].size_bytes", U32, "64..=switch.mtu_bytes"),
    ("flows[].size_cdf[][0]", U32, "sizes 64..=switch.mtu_bytes"),
    ("flows[].on_cycles", U64, "at least 1"),
    ("flows[].off_cycles", U64, "at least 1"),
    ("flows[].burst_bytes", U64, "1..=2^40"),
    ("flows[].message_cdf[][0]", U64, "sizes 1..=2^32"),
    ("flows[].start_cycle", U64, "any cycle, 0 or later"),
    ("flows[].stop_cycle", U64, "after start_cycle"),
    ("flows[].connection_of", Usize, "another flow's index"),
    ("flows[].pattern.tcp.base_rtt_us", U64, "1..=1000000"),
    ("flows[].pattern.tcp.min_rto_us", U64, "1..=10000000"),
    ("flows[].pattern.tcp.max_rto_us", U64, "min_rto_us..=100000000"),
    ("flows[].pattern.tcp.init_cwnd", U32, "1..=1024"),
    ("flows[].pattern.tcp.flow_bytes", U64, "1..=2^40"),
    ("flows[].pattern.tcp.dctcp_shift_g", U32, "0..=16"),
    ("flows[].pattern.tcp.window_", U32, "1..=1048576"),
    ("flows[].pattern.tcp.windowInit_", U32, "1..=window_"),
    ("flows[].pattern.dcqcn.k_us", U64, "1..=1000000"),
    ("flows[].pattern.dcqcn.t_us", U64, "1..=1000000"),
    ("flows[].pattern.dcqcn.b_bytes", U64, "1..=2^40"),
    ("flows[].pattern.dcqcn.f", U32, "0..=1000"),
    ("flows[].pattern.dcqcn.r_ai_mbps", U64, "1..=line rate (Mb/s)"),
    ("flows[].pattern.dcqcn.r_hai_mbps", U64, "1..=line rate (Mb/s)"),
    ("flows[].pattern.dcqcn.n_us", U64, "0..=1000000"),
    ("flows[].pattern.dcqcn.min_rate_mbps", U64, "1..=line rate (Mb/s)"),
    ("flows[].pattern.dcqcn.cnp_delay_us", U64, "0..=1000000"),
    ("flows[].pattern.dcqcn.decrease_us", U64, "1..=1000000"),
    ("flows[].pattern.dcqcn.nack_us", U64, "0..=1000000"),
    ("flows[].pattern.hpcc.base_rtt_us", U64, "1..=100000"),
    ("flows[].pattern.hpcc.rate_ai_mbps", U64, "1..=the line rate in Mb/s"),
    ("flows[].pattern.hpcc.min_rate_mbps", U64, "1..=the line rate in Mb/s"),
    ("flows[].pattern.powertcp.base_rtt_us", U64, "1..=100000"),
    ("flows[].pattern.powertcp.rate_ai_mbps", U64, "1..=the line rate in Mb/s"),
    ("flows[].pattern.powertcp.min_rate_mbps", U64, "1..=the line rate in Mb/s"),
    ("flows[].pattern.theta_powertcp.base_rtt_us", U64, "1..=100000"),
    ("flows[].pattern.theta_powertcp.rate_ai_mbps", U64, "1..=the line rate in Mb/s"),
    ("flows[].pattern.theta_powertcp.min_rate_mbps", U64, "1..=the line rate in Mb/s"),
    ("flows[].pattern.hpcc.mi_thresh", U32, "0..=1000"),
    ("pfc_script[].cycle", U64, "any cycle, 0 or later"),
    ("pfc_script[].port", Usize, "an existing port, 0..=switch.ports - 1"),
    ("pfc_script[].classes[]", U8, "0..=7"),
    ("pfc_script[].quanta", U16, "0..=65535"),
    ("ecm_rp.fine_limiters", U32, "1..=64"),
    ("ecm_rp.flowid_bits", U32, "1..=32"),
    ("ecm_rp.ru_mbps", U64, "1..=100"),
    ("ecm_rp.rd_mbps", U64, "1..=100"),
    ("ecm_rp.td_us", U64, "1..=10000"),
    ("ecm_rp.rmin_mbps", U64, "1..=1000"),
    ("ecm_rp.tmax_us", U64, "1..=1000000"),
    ("ecm_rp.wrtt", U32, "0..=15"),
    ("ecm_rp.unit", U32, "0..=15"),
    ("switch.ports", Usize, "1..=64"),
    ("switch.core_clock_mhz", U32, "1..=10000"),
    ("switch.cell_bytes", U32, "32..=4096"),
    ("switch.packet_overhead_bytes", U32, "0..=256"),
    ("switch.wire_overhead_bytes", U32, "0..=64"),
    ("switch.buffer_bytes", U64, "up to 2^20 cells"),
    (
        "switch.sram_write_cells_per_cycle",
        U32,
        "1..=ports, at least the aggregate line rate in cells",
    ),
    (
        "switch.sram_read_cells_per_cycle",
        U32,
        "1..=ports, at least the aggregate line rate in cells",
    ),
    ("switch.sram_read_latency", U32, "1..=8"),
    ("switch.lossless_priorities[]", U8, "priorities 0..=7"),
    ("switch.control_queue", U8, "0..=7"),
    ("switch.alpha_log2", I32, "-7..=3"),
    ("switch.lossy_alpha_log2", I32, "-7..=3"),
    ("switch.egress_alpha_log2", I32, "-7..=3"),
    (
        "switch.private_bytes",
        U32,
        "0 or more, with private + headroom inside the lossless pool",
    ),
    ("switch.mtu_bytes", U32, "64..=9216"),
    ("switch.link_delay_ns", U32, "0..=1000000"),
    ("switch.eta_bytes", U32, "at least one MTU packet in cells"),
    ("switch.headroom_min_packet_bytes", U32, "64..=mtu_bytes"),
    ("switch.delta_bytes", U32, "below the largest X_off"),
    ("switch.delta_port_bytes", U32, "below the largest X_poff"),
    (
        "switch.lossy_pool_bytes",
        U64,
        "up to buffer_bytes, and more than the lossy private buffers",
    ),
    (
        "switch.lossy_private_bytes",
        U32,
        "0 or more, with the lossy private buffers inside the lossy pool",
    ),
    ("switch.dwrr_quantum_bytes", U32, "64..=65535"),
    (
        "switch.pfc_pause_quanta",
        U16,
        "at least 4 * (mtu_bytes + wire_overhead_bytes + 84) * 8 / 512 (101 for MTU 1500), at most 65535",
    ),
    ("switch.hcf[].ports[]", Usize, "existing ports, 0..=switch.ports - 1"),
    ("switch.hcf[].queue", U8, "0..=7, a lossy priority"),
    ("switch.hcf[].bins", U32, "1..=64"),
    ("switch.hcf[].c0", U32, "1..=255"),
    (
        "switch.hcf[].buffer",
        U32,
        "2 * least..=2^20 (least: 1 packet, or the MTU in cells)",
    ),
    ("switch.hcf[].hp_limit", U32, "least..=buffer - least"),
    ("switch.hcf[].period_cycles", U64, "1..=4294967295"),
    ("switch.hcf[].hashes", U32, "1..=4, at most bins"),
    ("switch.ecm.priorities[]", U8, "values 0..=7"),
    ("switch.ecm.qeq_bytes", U32, "64..=16777216"),
    ("switch.ecm.qmc_bytes", U32, "qeq_bytes..=16777216"),
    ("switch.ecm.qsc_bytes", U32, "qmc_bytes..=16777216"),
    ("switch.ecm.sf_bytes", U32, "0..=262144"),
    (
        "switch.ecm.sr_bytes",
        U32,
        "0..=65536, and at most sf_bytes with sr_centered",
    ),
    ("switch.ecm.sscale_log2", U32, "0..=7"),
    ("switch.ecm.qscale_log2", U32, "0..=7"),
    ("switch.ecm.switch_id", U16, "0..=127"),
    ("switch.ecm.lfsr_seed", U32, "0..=4294967295"),
    ("switch.ecn.priorities[]", U8, "values 0..=7"),
    ("switch.ecn.kmin", U32, "0..=134217727"),
    ("switch.ecn.kmax", U32, "kmin..=134217727"),
    ("switch.ecn.lfsr_seed", U32, "0..=4294967295"),
];

/// One step of a path into a TOML document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Whether `path` is an instance of `pattern` (a [`KEYS`] path).
fn matches(pattern: &str, path: &[Step]) -> bool {
    let mut rest = pattern;
    for step in path {
        match *step {
            Step::Key(k) => {
                rest = rest.strip_prefix('.').unwrap_or(rest);
                match rest.strip_prefix(k) {
                    Some(r) if r.is_empty() || r.starts_with(['.', '[']) => rest = r,
                    _ => return false,
                }
            }
            Step::Index(i) => {
                let Some((inner, r)) = rest.strip_prefix('[').and_then(|r| r.split_once(']'))
                else {
                    return false;
                };
                if !(inner.is_empty() || inner.parse() == Ok(i)) {
                    return false;
                }
                rest = r;
            }
        }
    }
    rest.is_empty()
}

/// The key of [`KEYS`] at `path`.
fn key(path: &[Step]) -> Option<&'static (&'static str, IntType, &'static str)> {
    KEYS.iter().find(|(pattern, _, _)| matches(pattern, path))
}

/// The steps of a dotted path (`flows[3].size_cdf[2][0]`).
fn steps(dotted: &str) -> Vec<Step<'_>> {
    let mut path = Vec::new();
    for part in dotted.split('.') {
        let (name, indices) = part.split_once('[').unwrap_or((part, ""));
        path.push(Step::Key(name));
        for i in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            path.push(Step::Index(i.parse().unwrap_or(0)));
        }
    }
    path
}

/// The documented range of the integer key at the dotted path `at`.
pub fn allowed(at: &str) -> Option<&'static str> {
    key(&steps(at)).map(|(_, _, allowed)| *allowed)
}

/// Check every integer in `table`, found at `at` (`"flows[3]"`, `"switch"`, `"run"`):
/// one its key's type cannot hold is an error naming the key and its documented range.
pub fn check(table: &toml::Table, at: &str) -> Result<(), ScenarioError> {
    let mut path = steps(at);
    for (k, v) in table {
        path.push(Step::Key(k));
        walk(v, &mut path)?;
        path.pop();
    }
    Ok(())
}

fn walk<'a>(v: &'a toml::Value, path: &mut Vec<Step<'a>>) -> Result<(), ScenarioError> {
    match v {
        toml::Value::Integer(n) => {
            let Some((_, ty, allowed)) = key(path) else {
                return Ok(());
            };
            let (lo, hi) = ty.bounds();
            if !(lo..=hi).contains(&(*n as i128)) {
                return Err(ScenarioError::new(
                    dotted(path),
                    format!("{n} is out of range; allowed: {allowed}"),
                ));
            }
        }
        toml::Value::Table(t) => {
            for (k, v) in t {
                path.push(Step::Key(k));
                walk(v, path)?;
                path.pop();
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                path.push(Step::Index(i));
                walk(v, path)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// `flows[3].size_cdf[2][0]`.
fn dotted(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) if s.is_empty() => s.push_str(k),
            Step::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// `run.seed`: any u64. TOML integers stop at 2^63 - 1, so a seed is also accepted as a
/// string, decimal or `0x` hexadecimal, and written as one from 2^63 on.
pub mod seed {
    use serde::{de, Deserializer, Serializer};

    const ALLOWED: &str =
        "allowed: 0..=18446744073709551615, as an integer or as a decimal or 0x hexadecimal string";

    /// A seed from an integer or a string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        struct Seed;
        impl de::Visitor<'_> for Seed {
            type Value = u64;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "a seed; {ALLOWED}")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::custom(format!("{v} is out of range; {ALLOWED}")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<u64, E> {
                parse(s).ok_or_else(|| E::custom(format!("{s:?} is not a seed; {ALLOWED}")))
            }
        }
        d.deserialize_any(Seed)
    }

    /// An integer up to 2^63 - 1, a decimal string above.
    pub fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(*seed) {
            Ok(v) => s.serialize_i64(v),
            Err(_) => s.serialize_str(&seed.to_string()),
        }
    }

    /// `seed = ...` as a scenario file writes it.
    pub fn toml_value(seed: u64) -> String {
        match i64::try_from(seed) {
            Ok(v) => v.to_string(),
            Err(_) => format!("\"{seed}\""),
        }
    }

    /// A decimal or `0x` hexadecimal seed (`_` separators allowed, as in TOML).
    pub fn parse(s: &str) -> Option<u64> {
        let digits = s.trim().replace('_', "");
        match digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => digits.parse().ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_keys_and_indices() {
        let p = [
            Step::Key("flows"),
            Step::Index(3),
            Step::Key("size_cdf"),
            Step::Index(2),
            Step::Index(0),
        ];
        assert!(matches("flows[].size_cdf[][0]", &p));
        assert!(!matches("flows[].size_cdf[][1]", &p));
        assert!(!matches("flows[].size", &p[..3]), "a key is matched whole");
        assert_eq!(dotted(&p), "flows[3].size_cdf[2][0]");
        assert_eq!(key(&p[..1]), None);
    }

    #[test]
    fn seeds_read_as_integers_and_strings_and_write_back() {
        for (text, seed) in [
            ("7", 7),
            ("\"18446744073709551615\"", u64::MAX),
            ("\"0xFFFF_FFFF_FFFF_FFFF\"", u64::MAX),
            ("\"9223372036854775808\"", 1 << 63),
        ] {
            #[derive(serde::Deserialize, serde::Serialize)]
            struct Run {
                #[serde(with = "seed")]
                seed: u64,
            }
            let run: Run = toml::from_str(&format!("seed = {text}")).unwrap();
            assert_eq!(run.seed, seed, "{text}");
            let back: Run = toml::from_str(&toml::to_string(&run).unwrap()).unwrap();
            assert_eq!(back.seed, seed);
            let written: Run =
                toml::from_str(&format!("seed = {}", seed::toml_value(seed))).unwrap();
            assert_eq!(written.seed, seed);
        }
        for bad in ["\"-1\"", "\"0x1_0000_0000_0000_0000\"", "\"seven\"", "1.5"] {
            #[derive(Debug, serde::Deserialize)]
            #[allow(dead_code)]
            struct Run {
                #[serde(deserialize_with = "seed::deserialize")]
                seed: u64,
            }
            let e = toml::from_str::<Run>(&format!("seed = {bad}")).unwrap_err();
            assert!(
                e.message().contains("allowed: 0..=18446744073709551615"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn every_key_is_named_once() {
        for (i, (p, _, _)) in KEYS.iter().enumerate() {
            assert!(!KEYS[..i].iter().any(|(q, _, _)| q == p), "{p} twice");
        }
    }
}
