//! Cycle windows.

use std::fmt;

use crate::WaveError;

/// A window of clock cycles: `from` inclusive, `to` exclusive (`None` = until
/// the end of the run).
///
/// Dumping only a window keeps files small when the interesting behaviour is
/// known to be late in a long run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First cycle dumped.
    pub from: u64,
    /// First cycle not dumped; `None` = no end.
    pub to: Option<u64>,
}

impl Default for Window {
    fn default() -> Self {
        Self::all()
    }
}

impl Window {
    /// Every cycle.
    pub fn all() -> Self {
        Self { from: 0, to: None }
    }

    /// Parses `"FROM:TO"`, where either side may be empty: `"1000:"` (from
    /// cycle 1000 on), `":5000"` (cycles 0..5000), `":"` (all). Underscores
    /// are allowed as digit separators (`"1_000_000:"`). An empty window
    /// (`TO <= FROM`) is an error, because it would silently dump nothing.
    pub fn parse(s: &str) -> Result<Self, WaveError> {
        let bad = |reason: &str| WaveError::BadWindow {
            input: s.to_owned(),
            reason: reason.to_owned(),
        };
        let (from, to) = s
            .split_once(':')
            .ok_or_else(|| bad("expected FROM:TO, e.g. \"1000:5000\", \"1000:\" or \":5000\""))?;
        let number = |side: &str, what: &str| -> Result<Option<u64>, WaveError> {
            let side = side.trim();
            if side.is_empty() {
                return Ok(None);
            }
            let digits: String = side.chars().filter(|&c| c != '_').collect();
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&format!(
                    "{what} {side:?} is not a non-negative cycle number"
                )));
            }
            digits
                .parse::<u64>()
                .map(Some)
                .map_err(|_| bad(&format!("{what} {side:?} does not fit in 64 bits")))
        };
        let from = number(from, "FROM")?.unwrap_or(0);
        let to = number(to, "TO")?;
        if let Some(to) = to {
            if to <= from {
                return Err(bad(&format!(
                    "window is empty: TO ({to}) must be greater than FROM ({from})"
                )));
            }
        }
        Ok(Self { from, to })
    }

    /// Checks that the window lies inside a run of `cycles` cycles (`0..cycles`): a window
    /// that starts at or after the end, or ends after it, is an error naming the run length.
    pub fn check_within(&self, cycles: u64) -> Result<(), WaveError> {
        if self.from >= cycles || self.to.is_some_and(|to| to > cycles) {
            return Err(WaveError::WindowOutsideRun {
                window: self.to_string(),
                cycles,
            });
        }
        Ok(())
    }

    /// True if `cycle` is inside the window.
    pub fn contains(&self, cycle: u64) -> bool {
        cycle >= self.from
            && match self.to {
                None => true,
                Some(to) => cycle < to,
            }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to {
            Some(to) => write!(f, "{}:{}", self.from, to),
            None => write!(f, "{}:", self.from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_open_and_closed() {
        assert_eq!(
            Window::parse("1000:5000").unwrap(),
            Window {
                from: 1000,
                to: Some(5000)
            }
        );
        assert_eq!(
            Window::parse("1000:").unwrap(),
            Window {
                from: 1000,
                to: None
            }
        );
        assert_eq!(
            Window::parse(":5000").unwrap(),
            Window {
                from: 0,
                to: Some(5000)
            }
        );
        assert_eq!(Window::parse(":").unwrap(), Window::all());
        assert_eq!(
            Window::parse(" 1_000 : 2_000 ").unwrap(),
            Window {
                from: 1000,
                to: Some(2000)
            }
        );
    }

    #[test]
    fn contains_is_half_open() {
        let w = Window::parse("10:20").unwrap();
        assert!(!w.contains(9));
        assert!(w.contains(10));
        assert!(w.contains(19));
        assert!(!w.contains(20));
        assert!(Window::all().contains(u64::MAX));
        assert!(Window::parse("5:").unwrap().contains(u64::MAX));
    }

    #[test]
    fn errors_name_the_input() {
        for bad in [
            "1000",
            "a:5",
            "5:b",
            "-1:5",
            "10:10",
            "20:10",
            "1:99999999999999999999999",
        ] {
            let err = Window::parse(bad).unwrap_err();
            assert!(
                matches!(&err, WaveError::BadWindow { input, .. } if input == bad),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains(bad), "{err}");
        }
    }

    #[test]
    fn windows_outside_the_run_are_refused_naming_its_length() {
        for ok in ["0:", ":1000", "999:", "10:20"] {
            Window::parse(ok).unwrap().check_within(1000).unwrap();
        }
        for bad in ["1000:", "2000:3000", "0:1001", "999:1001"] {
            let err = Window::parse(bad).unwrap().check_within(1000).unwrap_err();
            assert!(
                matches!(&err, WaveError::WindowOutsideRun { cycles: 1000, .. }),
                "{bad}: {err:?}"
            );
            assert!(err.to_string().contains("run of 1000 cycles"), "{err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["0:", "3:7", "1000:"] {
            assert_eq!(Window::parse(s).unwrap().to_string(), s);
        }
    }
}
