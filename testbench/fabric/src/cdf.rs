//! Flow size distributions: the piecewise-linear CDF files of the data-centre simulators.
//!
//! A file has one point a line, `size cumulative`: a flow size in bytes and the probability
//! that a flow is at most that size, either as a fraction (ns3-datacenter,
//! `examples/PowerTCP/websearch.txt`, last point 1) or in percent (HPCC,
//! `traffic_gen/WebSearch_distribution.txt`, last point 100); the last point tells which.
//! Sizes and probabilities never decrease.
//!
//! Drawing and the mean are those of ns3-datacenter's `examples/PowerTCP/cdf.c`, which the
//! load of [`crate::workload`] is defined with: `gen_random_cdf` takes a uniform `u` in
//! [0, 1], finds the first point whose probability is at least `u` and interpolates linearly
//! from the point before it (from size 0 at probability 0 for the first point); `avg_cdf` is
//! the mean of that distribution. Sizes are truncated to whole bytes, and a draw of 0 bytes
//! is drawn again (`powertcp-evaluation-workload.cc` lines 489-491).
//!
//! The distributions the papers use are built in ([`Builtin`]), from the files under
//! `testbench/fabric/data/` (their sources in `data/README.md`).

use crate::input::{field_error, numbered_lines, read_bounded, FieldError, InputError};
use std::path::Path;

/// The largest CDF file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A flow size distribution: points `(size in bytes, probability 0..=1)`.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeCdf {
    points: Vec<(f64, f64)>,
}

/// The distributions under `data/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// Web search (DCTCP, SIGCOMM 2010), ns3-datacenter's `examples/PowerTCP/websearch.txt`.
    WebSearch,
    /// Web search as HPCC has it, `traffic_gen/WebSearch_distribution.txt`.
    WebSearchHpcc,
    /// Data mining (VL2, SIGCOMM 2009), ns3-datacenter's `examples/ABM/datamining.csv`.
    DataMining,
    /// Hadoop (Facebook, Roy et al., SIGCOMM 2015), ns3-datacenter's `examples/ABM/hadoop.csv`.
    Hadoop,
    /// Facebook Hadoop as HPCC has it, `traffic_gen/FbHdp_distribution.txt`.
    FbHadoop,
    /// Facebook cache follower (Roy et al., SIGCOMM 2015), HPCC's format as
    /// HKUST-SING/srnic-simulation-public ships it, `traffic_gen/CacheFollower_distribution.txt`.
    Cache,
}

impl Builtin {
    pub const ALL: [Builtin; 6] = [
        Builtin::WebSearch,
        Builtin::WebSearchHpcc,
        Builtin::DataMining,
        Builtin::Hadoop,
        Builtin::FbHadoop,
        Builtin::Cache,
    ];

    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::WebSearch => "websearch",
            Builtin::WebSearchHpcc => "websearch-hpcc",
            Builtin::DataMining => "datamining",
            Builtin::Hadoop => "hadoop",
            Builtin::FbHadoop => "fb-hadoop",
            Builtin::Cache => "cache",
        }
    }

    /// The file's text.
    pub fn text(self) -> &'static str {
        match self {
            Builtin::WebSearch => include_str!("../data/websearch.txt"),
            Builtin::WebSearchHpcc => include_str!("../data/WebSearch_distribution.txt"),
            Builtin::DataMining => include_str!("../data/datamining.csv"),
            Builtin::Hadoop => include_str!("../data/hadoop.csv"),
            Builtin::FbHadoop => include_str!("../data/FbHdp_distribution.txt"),
            Builtin::Cache => include_str!("../data/CacheFollower_distribution.txt"),
        }
    }

    /// The distribution called `name`, or the error listing the names.
    pub fn by_name(name: &str) -> Result<Builtin, String> {
        Builtin::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Builtin::ALL.iter().map(|b| b.name()).collect();
                format!("`{name}`; allowed: {}", names.join(", "))
            })
    }

    pub fn cdf(self) -> SizeCdf {
        SizeCdf::parse(self.text())
            .unwrap_or_else(|err| panic!("data file of {}: {err}", self.name()))
    }
}

impl SizeCdf {
    /// Reads a CDF file of at most [`MAX_FILE_BYTES`].
    pub fn read(path: &Path) -> Result<SizeCdf, InputError> {
        Ok(SizeCdf::parse(&read_bounded(path, MAX_FILE_BYTES)?)?)
    }

    /// Parses the text of a CDF file (see the module's doc).
    pub fn parse(text: &str) -> Result<SizeCdf, FieldError> {
        let mut points = Vec::new();
        let mut last_line = 0;
        for (line, fields) in numbered_lines(text) {
            last_line = line;
            if fields.len() != 2 {
                return Err(field_error(
                    last_line,
                    "size",
                    format!("{} fields; allowed: 2, `size cumulative`", fields.len()),
                ));
            }
            let number = |field, text: &str| {
                text.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| {
                        field_error(
                            last_line,
                            field,
                            format!("`{text}`; allowed: a number 0 or more"),
                        )
                    })
            };
            let point = (number("size", fields[0])?, number("cumulative", fields[1])?);
            if let Some(&(size, cumulative)) = points.last() {
                if point.0 < size {
                    return Err(field_error(
                        last_line,
                        "size",
                        format!("{} is below the size before it, {size}", point.0),
                    ));
                }
                if point.1 < cumulative {
                    return Err(field_error(
                        last_line,
                        "cumulative",
                        format!(
                            "{} is below the probability before it, {cumulative}",
                            point.1
                        ),
                    ));
                }
            }
            points.push(point);
        }
        let scale = match points.last() {
            None => {
                return Err(field_error(
                    1,
                    "size",
                    "no points; allowed: one or more `size cumulative` lines",
                ))
            }
            Some(&(_, last)) if last == 1.0 || last == 100.0 => last,
            Some(&(_, last)) => {
                return Err(field_error(
                    last_line,
                    "cumulative",
                    format!("the last point's is {last}; allowed: 1 (fractions) or 100 (percent)"),
                ))
            }
        };
        for point in &mut points {
            point.1 /= scale;
        }
        Ok(SizeCdf { points })
    }

    /// The mean flow size in bytes (`avg_cdf`, `cdf.c`).
    pub fn mean(&self) -> f64 {
        let mut previous = (0.0, 0.0);
        let mut mean = 0.0;
        for &(size, cumulative) in &self.points {
            mean += (size + previous.0) / 2.0 * (cumulative - previous.1);
            previous = (size, cumulative);
        }
        mean
    }

    /// The size at probability `u` in [0, 1] (`gen_random_cdf`, `cdf.c`), in whole bytes.
    pub fn size_at(&self, u: f64) -> u64 {
        let mut previous = (0.0, 0.0);
        for &(size, cumulative) in &self.points {
            if u <= cumulative {
                let span = cumulative - previous.1;
                let size = if span == 0.0 {
                    (size + previous.0) / 2.0
                } else {
                    previous.0 + (u - previous.1) * (size - previous.0) / span
                };
                return size as u64;
            }
            previous = (size, cumulative);
        }
        previous.0 as u64
    }

    /// The largest size.
    pub fn max(&self) -> u64 {
        self.points.last().map_or(0, |p| p.0 as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::assert_field_errors;

    #[test]
    fn the_builtin_distributions_parse_with_their_means() {
        // Means computed independently from the files (Python, the trapezoid sum of avg_cdf).
        let means = [
            (Builtin::WebSearch, 1_711_222.5),
            (Builtin::WebSearchHpcc, 1_711_250.0),
            (Builtin::DataMining, 5_036_535.175),
            (Builtin::Hadoop, 3_423_728.354_628_773),
            (Builtin::FbHadoop, 120_420.75),
            (Builtin::Cache, 712_569.9),
        ];
        for (builtin, mean) in means {
            let cdf = builtin.cdf();
            assert!(
                (cdf.mean() - mean).abs() < 1e-6 * mean,
                "{}: {}",
                builtin.name(),
                cdf.mean()
            );
            assert_eq!(Builtin::by_name(builtin.name()), Ok(builtin));
        }
        assert!(Builtin::by_name("memcache")
            .unwrap_err()
            .contains("allowed: websearch,"));
    }

    #[test]
    fn sizes_interpolate_between_points_in_both_scales() {
        let fraction = SizeCdf::parse("0 0\n1000 0.5\n3000 1\n").unwrap();
        let percent = SizeCdf::parse("0 0\n1000 50\n3000 100\n").unwrap();
        assert_eq!(fraction, percent);
        assert_eq!(fraction.size_at(0.25), 500);
        assert_eq!(fraction.size_at(0.5), 1000);
        assert_eq!(fraction.size_at(0.75), 2000);
        assert_eq!(fraction.size_at(1.0), 3000);
        assert_eq!(fraction.mean(), 0.5 * 500.0 + 0.5 * 2000.0);
        // Before the first point, from size 0 at probability 0 (cdf.c).
        let no_zero = SizeCdf::parse("100 0.5\n300 1\n").unwrap();
        assert_eq!(no_zero.size_at(0.25), 50);
        assert_eq!(no_zero.max(), 300);
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let cases: &[(&str, usize, &str, &str)] = &[
            ("", 1, "size", "no points"),
            ("0 0\n10 x\n", 2, "cumulative", "`x`"),
            ("0 0\n-1 1\n", 2, "size", "`-1`"),
            ("0 0\n10 0.5 3\n", 2, "size", "3 fields"),
            ("0 0\n10 0.5\n5 1\n", 3, "size", "below the size"),
            (
                "0 0\n10 0.5\n20 0.4\n30 1\n",
                3,
                "cumulative",
                "below the probability",
            ),
            (
                "0 0\n10 0.5\n\n20 0.9\n",
                4,
                "cumulative",
                "1 (fractions) or 100 (percent)",
            ),
        ];
        assert_field_errors(cases, SizeCdf::parse);
    }
}
