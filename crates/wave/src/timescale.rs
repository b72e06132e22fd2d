//! VCD timescale derived from the clock frequency.

use std::fmt;

use crate::WaveError;

/// Femtoseconds per second: the finest VCD unit.
const FS_PER_S: u64 = 1_000_000_000_000_000;

/// Units from coarsest to finest, with their size in femtoseconds.
/// The last field is the unit's power of ten in seconds, as FST stores the timescale.
const UNITS: [(vcd::TimescaleUnit, &str, u64, i8); 6] = [
    (vcd::TimescaleUnit::S, "s", FS_PER_S, 0),
    (vcd::TimescaleUnit::MS, "ms", FS_PER_S / 1_000, -3),
    (vcd::TimescaleUnit::US, "us", FS_PER_S / 1_000_000, -6),
    (vcd::TimescaleUnit::NS, "ns", FS_PER_S / 1_000_000_000, -9),
    (vcd::TimescaleUnit::PS, "ps", 1_000, -12),
    (vcd::TimescaleUnit::FS, "fs", 1, -15),
];

/// The VCD `$timescale` for a given clock, and how many timescale ticks one
/// clock cycle spans.
///
/// VCD times are integers, so the tick must divide the clock period exactly;
/// we pick the *largest* such tick (of the VCD-legal forms 1, 10 or 100 times
/// s/ms/us/ns/ps/fs) to keep the time numbers in the file small and the
/// viewer's axis in natural units. Examples: 1 GHz gives `1 ns` and 1 tick
/// per cycle; 800 MHz (1.25 ns) gives `10 ps` and 125 ticks; 156.25 MHz
/// (6.4 ns) gives `100 ps` and 64 ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timescale {
    magnitude: u32,
    unit_index: usize,
    ticks_per_cycle: u64,
}

impl Timescale {
    /// Chooses the timescale for a clock of `hz` Hertz.
    ///
    /// Fails if `hz` is 0 or if the period is not a whole number of
    /// femtoseconds (e.g. 3 GHz = 333333.33 fs), because then cycle edges
    /// could not be placed exactly on the VCD time axis.
    pub fn for_clock_hz(hz: u64) -> Result<Self, WaveError> {
        let bad = |reason: String| WaveError::BadClock { hz, reason };
        if hz == 0 {
            return Err(bad("the clock frequency must be positive".to_owned()));
        }
        // (Plain `%` rather than `is_multiple_of`: the workspace MSRV is 1.80.)
        let remainder_fs = FS_PER_S % hz;
        if remainder_fs != 0 {
            return Err(bad(format!(
                "the clock period 1e15/{hz} fs is not a whole number of femtoseconds, \
                 so cycles cannot be placed exactly on a VCD time axis"
            )));
        }
        let period_fs = FS_PER_S / hz;
        for (unit_index, &(_, _, unit_fs, _)) in UNITS.iter().enumerate() {
            for magnitude in [100u32, 10, 1] {
                let tick_fs = unit_fs * u64::from(magnitude);
                let remainder = period_fs % tick_fs;
                if remainder == 0 {
                    return Ok(Self {
                        magnitude,
                        unit_index,
                        ticks_per_cycle: period_fs / tick_fs,
                    });
                }
            }
        }
        // Not reached: 1 fs divides every whole-femtosecond period, so the
        // loop returns at the latest on its last candidate. Kept total anyway.
        Ok(Self {
            magnitude: 1,
            unit_index: UNITS.len() - 1,
            ticks_per_cycle: period_fs,
        })
    }

    /// Number of timescale ticks in one clock cycle.
    pub fn ticks_per_cycle(&self) -> u64 {
        self.ticks_per_cycle
    }

    /// The magnitude: 1, 10 or 100.
    pub fn magnitude(&self) -> u32 {
        self.magnitude
    }

    /// The unit as written in VCD: `"s"`, `"ms"`, `"us"`, `"ns"`, `"ps"` or `"fs"`.
    pub fn unit(&self) -> &'static str {
        UNITS[self.unit_index].1
    }

    /// The tick as a power of ten in seconds (FST's timescale): `10ps` is -11.
    pub fn exponent(&self) -> i8 {
        // magnitude is 1, 10 or 100.
        UNITS[self.unit_index].3 + (self.magnitude.ilog10() as i8)
    }

    /// The unit as the `vcd` crate's type.
    pub fn vcd_unit(&self) -> vcd::TimescaleUnit {
        UNITS[self.unit_index].0
    }
}

impl fmt::Display for Timescale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.magnitude, self.unit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(hz: u64) -> (String, u64) {
        let t = Timescale::for_clock_hz(hz).unwrap();
        (t.to_string(), t.ticks_per_cycle())
    }

    #[test]
    fn documented_cases() {
        assert_eq!(ts(1_000_000_000), ("1ns".to_owned(), 1));
        assert_eq!(ts(800_000_000), ("10ps".to_owned(), 125));
        assert_eq!(ts(156_250_000), ("100ps".to_owned(), 64));
    }

    #[test]
    fn other_cases() {
        assert_eq!(ts(1), ("1s".to_owned(), 1));
        assert_eq!(ts(100_000_000), ("10ns".to_owned(), 1));
        assert_eq!(ts(10_000_000), ("100ns".to_owned(), 1));
        assert_eq!(ts(1_250_000_000), ("100ps".to_owned(), 8));
        assert_eq!(ts(2_000_000_000), ("100ps".to_owned(), 5));
        assert_eq!(ts(FS_PER_S), ("1fs".to_owned(), 1));
        // 1e15 = 2^15 * 5^15; 2^15 Hz has period 5^15 fs, odd, not a multiple of 10.
        assert_eq!(ts(1 << 15), ("1fs".to_owned(), 30_517_578_125));
    }

    #[test]
    fn exponents() {
        let e = |hz| Timescale::for_clock_hz(hz).unwrap().exponent();
        assert_eq!(e(1_000_000_000), -9);
        assert_eq!(e(800_000_000), -11);
        assert_eq!(e(156_250_000), -10);
        assert_eq!(e(1), 0);
        assert_eq!(e(FS_PER_S), -15);
    }

    #[test]
    fn non_integer_period_is_an_error() {
        for hz in [3_000_000_000, 7, FS_PER_S + 1, 0] {
            let err = Timescale::for_clock_hz(hz).unwrap_err();
            assert!(
                matches!(err, WaveError::BadClock { hz: h, .. } if h == hz),
                "{err:?}"
            );
            assert!(err.to_string().contains(&hz.to_string()), "{err}");
        }
    }
}
