//! ns-3's rate and time strings, read exactly (no floating point): a link's `rate` and
//! `delay` fields and a flow's `start_time`.
//!
//! The simulators hand these fields to ns-3 unchanged (`qbb.SetDeviceAttribute("DataRate",
//! StringValue(data_rate))`, `qbb.SetChannelAttribute("Delay", StringValue(link_delay))`,
//! HPCC `simulation/scratch/third.cc` lines 762-763), so the forms accepted are ns-3's
//! `DataRate` and `Time` strings that the real files use: a bare number of bits per second
//! (`25000000000.0`, ns3-datacenter) or a number with a unit (`100Gbps`, HPCC), and a
//! number with a time unit (`1us`, `0.001ms`, `1000ns`).

use std::fmt;

/// Bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

/// A duration in picoseconds (ns-3's finest common resolution; `u64` spans 213 days).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Picos(pub u64);

/// The rate units accepted, with their multiplier in bits per second.
pub const RATE_UNITS: [(&str, u64); 6] = [
    ("bps", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
];

/// The time units accepted, with their length in picoseconds.
pub const TIME_UNITS: [(&str, u64); 5] = [
    ("s", 1_000_000_000_000),
    ("ms", 1_000_000_000),
    ("us", 1_000_000),
    ("ns", 1_000),
    ("ps", 1),
];

/// The allowed forms of a rate, for error messages.
pub const RATE_FORMS: &str =
    "a number of bits per second (25000000000.0) or a number with bps, kbps, Kbps, Mbps, Gbps or Tbps (100Gbps), at most 2^64-1 bit/s";

/// The allowed forms of a delay, for error messages.
pub const TIME_FORMS: &str =
    "a number with s, ms, us, ns or ps (1us, 0.001ms), a whole number of picoseconds";

/// `digits[.digits]` times `scale`, exactly; `None` if it is not a whole number or overflows.
fn scaled_decimal(text: &str, scale: u64) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let mut value: u128 = 0;
    for b in whole.bytes() {
        value = value.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
    }
    let mut value = value.checked_mul(u128::from(scale))?;
    let mut unit = u128::from(scale);
    for b in fraction.bytes() {
        let digit = u128::from(b - b'0');
        if unit % 10 != 0 {
            // Below the resolution: only trailing zeros are allowed.
            if digit != 0 {
                return None;
            }
            continue;
        }
        unit /= 10;
        value = value.checked_add(digit * unit)?;
    }
    u64::try_from(value).ok()
}

/// A number followed by one of `units` (the longest unit that matches), or a bare number in
/// `bare` units.
fn with_unit(text: &str, units: &[(&str, u64)], bare: Option<u64>) -> Option<u64> {
    let unit = units
        .iter()
        .filter(|(name, _)| text.ends_with(name))
        .max_by_key(|(name, _)| name.len());
    match unit {
        Some((name, scale)) => scaled_decimal(&text[..text.len() - name.len()], *scale),
        None => scaled_decimal(text, bare?),
    }
}

impl BitRate {
    /// Reads `25000000000.0` or `100Gbps`; `None` if the string is neither (see [`RATE_FORMS`]).
    pub fn parse(text: &str) -> Option<BitRate> {
        with_unit(text, &RATE_UNITS, Some(1))
            .filter(|&bps| bps > 0)
            .map(BitRate)
    }

    /// A rate of `gbps` gigabits per second.
    pub const fn gbps(gbps: u64) -> BitRate {
        BitRate(gbps * 1_000_000_000)
    }
}

/// ns3-datacenter's form: bits per second with one decimal (`25000000000.0`).
impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.0", self.0)
    }
}

impl Picos {
    /// Reads a delay such as `1us` or `0.001ms`; `None` if it is not one (see [`TIME_FORMS`]).
    /// A unit is required: ns-3 reads a bare number as seconds, which no topology file uses.
    pub fn parse_delay(text: &str) -> Option<Picos> {
        with_unit(text, &TIME_UNITS, None).map(Picos)
    }

    /// Reads a flow's start time: a decimal number of seconds (`2.000000100`).
    pub fn parse_seconds(text: &str) -> Option<Picos> {
        scaled_decimal(text, TIME_UNITS[0].1).map(Picos)
    }

    /// `us` microseconds.
    pub const fn micros(us: u64) -> Picos {
        Picos(us * 1_000_000)
    }

    /// The time in seconds with nanosecond digits (`2.000000100`, the form HPCC's
    /// `traffic_gen.py` writes), or picosecond digits if it is not a whole number of ns.
    pub fn seconds_text(self) -> String {
        let second = TIME_UNITS[0].1;
        let (whole, rest) = (self.0 / second, self.0 % second);
        if rest % 1_000 == 0 {
            format!("{whole}.{:09}", rest / 1_000)
        } else {
            format!("{whole}.{rest:012}")
        }
    }

    /// The duration in seconds, for rates.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / TIME_UNITS[0].1 as f64
    }
}

/// The largest unit that divides the delay (`1us`, `5us`, `1500ns`).
impl fmt::Display for Picos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, scale) = TIME_UNITS
            .iter()
            .find(|(_, scale)| self.0.is_multiple_of(*scale) && self.0 != 0)
            .unwrap_or(&TIME_UNITS[4]);
        write!(f, "{}{name}", self.0 / scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_the_forms_the_real_files_use() {
        assert_eq!(BitRate::parse("25000000000.0"), Some(BitRate::gbps(25)));
        assert_eq!(BitRate::parse("100Gbps"), Some(BitRate::gbps(100)));
        assert_eq!(BitRate::parse("2.5Gbps"), Some(BitRate(2_500_000_000)));
        assert_eq!(BitRate::parse("10Mbps"), Some(BitRate(10_000_000)));
        assert_eq!(BitRate::parse("400bps"), Some(BitRate(400)));
        for bad in [
            "",
            "Gbps",
            "1e9",
            "-1Gbps",
            "0",
            "0.5",
            "1.5.0Gbps",
            "10GBps",
            "99999999999Tbps",
        ] {
            assert_eq!(BitRate::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn delays_in_the_forms_the_real_files_use() {
        assert_eq!(Picos::parse_delay("1us"), Some(Picos::micros(1)));
        assert_eq!(Picos::parse_delay("0.001ms"), Some(Picos::micros(1)));
        assert_eq!(Picos::parse_delay("1000ns"), Some(Picos::micros(1)));
        assert_eq!(Picos::parse_delay("5us"), Some(Picos::micros(5)));
        assert_eq!(Picos::parse_delay("0.5ps"), None, "below a picosecond");
        for bad in ["1", "us", "1 us", "1uss", "1.2.3us", "-1us"] {
            assert_eq!(Picos::parse_delay(bad), None, "{bad}");
        }
    }

    #[test]
    fn written_forms_read_back() {
        for text in ["1us", "5us", "1500ns", "2ms", "3s", "7ps", "0ps"] {
            assert_eq!(Picos::parse_delay(text).unwrap().to_string(), text);
        }
        assert_eq!(BitRate::gbps(25).to_string(), "25000000000.0");
        let start = Picos::parse_seconds("2.000000100").unwrap();
        assert_eq!(start, Picos(2_000_000_100_000));
        assert_eq!(start.seconds_text(), "2.000000100");
        assert_eq!(Picos(1).seconds_text(), "0.000000000001");
        assert_eq!(Picos::parse_seconds("0.13"), Some(Picos(130_000_000_000)));
        assert_eq!(Picos::parse_seconds("1e-3"), None);
    }
}
