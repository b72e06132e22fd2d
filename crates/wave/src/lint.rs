//! A strict checker for VCD text.
//!
//! The `vcd` crate writes whatever it is told, and viewers differ in how
//! forgiving they are, so a bug in our writer could produce a file that
//! opens in one tool and is silently misread by another. This lint checks
//! the rules we rely on, stricter than the standard where the standard is
//! loose (e.g. it requires vector values to be exactly as wide as declared,
//! and identifier codes to be declared once):
//!
//! - the header has a `$timescale` of 1, 10 or 100 s/ms/us/ns/ps/fs, and ends
//!   with `$enddefinitions`; `$scope`/`$upscope` are balanced, and every
//!   `$var` is inside a scope, has a width of at least 1, and a unique id;
//! - in the body, timestamps strictly increase; every value change comes after
//!   a timestamp and names a declared id; scalar changes (`0!`) only go to
//!   1-bit variables; vector changes (`b0101 !`) have only `0`/`1`/`x`/`z`
//!   digits, exactly as many as the variable's width; anything else (a stray
//!   token, an unknown keyword, an unclosed `$dumpvars`) is an error.

use std::collections::HashMap;

/// Summary of a VCD that passed the lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LintReport {
    /// Number of `$var` declarations.
    pub signals: usize,
    /// Number of `#time` lines.
    pub timestamps: usize,
    /// Number of value changes, including those under `$dumpvars`.
    pub changes: usize,
}

/// The first problem found, with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("VCD line {line}: {message}")]
pub struct LintError {
    /// 1-based line of the offending token (the last line for a problem
    /// only noticed at the end of the text).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Variable types allowed in `$var` (IEEE 1364 plus the common SystemVerilog
/// ones that viewers accept).
const VAR_TYPES: &[&str] = &[
    "event",
    "integer",
    "parameter",
    "real",
    "realtime",
    "reg",
    "supply0",
    "supply1",
    "time",
    "tri",
    "triand",
    "trior",
    "trireg",
    "tri0",
    "tri1",
    "wand",
    "wire",
    "wor",
    "string",
    "logic",
    "bit",
    "int",
    "shortint",
    "longint",
    "byte",
    "enum",
    "shortreal",
];

/// Scope types allowed in `$scope`.
const SCOPE_TYPES: &[&str] = &[
    "module",
    "task",
    "function",
    "begin",
    "fork",
    "interface",
    "package",
    "program",
    "class",
    "struct",
    "union",
];

/// Keywords that cannot appear inside another command. Other tokens starting
/// with `$` can be legal identifier codes (`$var wire 1 $ x $end`).
const KEYWORDS: &[&str] = &[
    "$comment",
    "$date",
    "$enddefinitions",
    "$scope",
    "$timescale",
    "$upscope",
    "$var",
    "$version",
    "$dumpall",
    "$dumpoff",
    "$dumpon",
    "$dumpvars",
];

const UNITS: &[&str] = &["s", "ms", "us", "ns", "ps", "fs"];

/// Checks `text` as a VCD file; see the [module docs](self) for the rules.
pub fn lint_vcd(text: &str) -> Result<LintReport, LintError> {
    let mut toks = Tokens::new(text);
    let mut report = LintReport::default();
    let widths = header(&mut toks, &mut report)?;
    body(&mut toks, &widths, &mut report)?;
    Ok(report)
}

/// Whitespace-separated tokens with their line numbers.
struct Tokens<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    current: Option<(usize, std::str::SplitAsciiWhitespace<'a>)>,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            lines: text.lines().enumerate(),
            current: None,
            last_line: 1,
        }
    }

    fn next(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some((line, words)) = &mut self.current {
                if let Some(w) = words.next() {
                    return Some((*line, w));
                }
            }
            let (i, l) = self.lines.next()?;
            self.last_line = i + 1;
            self.current = Some((i + 1, l.split_ascii_whitespace()));
        }
    }

    /// Collects the arguments of `keyword` (found on `line`) up to its `$end`.
    fn until_end(&mut self, keyword: &str, line: usize) -> Result<Vec<&'a str>, LintError> {
        let mut args = Vec::new();
        loop {
            match self.next() {
                Some((_, "$end")) => return Ok(args),
                Some((l, t)) if KEYWORDS.contains(&t) && keyword != "$comment" => {
                    return err(
                        l,
                        format!("{t} inside {keyword} (opened on line {line}) before its $end"),
                    )
                }
                Some((_, t)) => args.push(t),
                None => {
                    return err(
                        self.last_line,
                        format!("{keyword} opened on line {line} is never closed by $end"),
                    )
                }
            }
        }
    }
}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, LintError> {
    Err(LintError {
        line,
        message: message.into(),
    })
}

/// Parses the header; returns the declared width of each id.
fn header<'a>(
    toks: &mut Tokens<'a>,
    report: &mut LintReport,
) -> Result<HashMap<&'a str, u32>, LintError> {
    let mut widths = HashMap::new();
    let mut timescale_seen = false;
    let mut depth = 0usize;
    loop {
        let Some((line, tok)) = toks.next() else {
            return err(toks.last_line, "no $enddefinitions: the header never ends");
        };
        match tok {
            "$date" | "$version" | "$comment" => {
                toks.until_end(tok, line)?;
            }
            "$timescale" => {
                let args = toks.until_end(tok, line)?;
                if timescale_seen {
                    return err(line, "second $timescale");
                }
                timescale_seen = true;
                check_timescale(line, &args.concat())?;
            }
            "$scope" => {
                let args = toks.until_end(tok, line)?;
                let [kind, _name] = args[..] else {
                    return err(
                        line,
                        format!("$scope needs a type and a name, got {args:?}"),
                    );
                };
                if !SCOPE_TYPES.contains(&kind) {
                    return err(line, format!("unknown scope type {kind:?}"));
                }
                depth += 1;
            }
            "$upscope" => {
                let args = toks.until_end(tok, line)?;
                if !args.is_empty() {
                    return err(line, format!("$upscope takes no arguments, got {args:?}"));
                }
                if depth == 0 {
                    return err(line, "$upscope without an open $scope");
                }
                depth -= 1;
            }
            "$var" => {
                let args = toks.until_end(tok, line)?;
                let (kind, size, id) = match args[..] {
                    [kind, size, id, _name] | [kind, size, id, _name, _] => (kind, size, id),
                    _ => {
                        return err(
                            line,
                            format!("$var needs: type width id name [range], got {args:?}"),
                        )
                    }
                };
                if depth == 0 {
                    return err(line, format!("$var {id} is outside any $scope"));
                }
                if !VAR_TYPES.contains(&kind) {
                    return err(line, format!("unknown var type {kind:?}"));
                }
                let width = match size.parse::<u32>() {
                    Ok(w) if w >= 1 => w,
                    _ => {
                        return err(
                            line,
                            format!("var width {size:?} is not a positive integer"),
                        )
                    }
                };
                if !id.bytes().all(|b| b.is_ascii_graphic()) {
                    return err(line, format!("id code {id:?} is not printable ASCII"));
                }
                if widths.insert(id, width).is_some() {
                    return err(line, format!("id code {id:?} declared twice"));
                }
                report.signals += 1;
            }
            "$enddefinitions" => {
                toks.until_end(tok, line)?;
                if depth != 0 {
                    return err(
                        line,
                        format!("$enddefinitions with {depth} $scope(s) still open"),
                    );
                }
                if !timescale_seen {
                    return err(line, "no $timescale in the header");
                }
                return Ok(widths);
            }
            t if t.starts_with('$') => {
                return err(line, format!("unknown header keyword {t:?}"));
            }
            t => return err(line, format!("unexpected {t:?} in the header")),
        }
    }
}

fn check_timescale(line: usize, ts: &str) -> Result<(), LintError> {
    let split = ts.find(|c: char| !c.is_ascii_digit()).unwrap_or(ts.len());
    let (magnitude, unit) = ts.split_at(split);
    if !matches!(magnitude, "1" | "10" | "100") {
        return err(
            line,
            format!("$timescale {ts:?}: magnitude must be 1, 10 or 100"),
        );
    }
    if !UNITS.contains(&unit) {
        return err(
            line,
            format!("$timescale {ts:?}: unit must be one of s, ms, us, ns, ps, fs"),
        );
    }
    Ok(())
}

fn body(
    toks: &mut Tokens<'_>,
    widths: &HashMap<&str, u32>,
    report: &mut LintReport,
) -> Result<(), LintError> {
    let mut last_time: Option<u64> = None;
    // Open `$dumpvars`/`$dumpall`/... section and its line.
    let mut section: Option<(&str, usize)> = None;
    let declared = |line: usize, id: &str| -> Result<u32, LintError> {
        match widths.get(id) {
            Some(&w) => Ok(w),
            None => err(line, format!("value change for undeclared id code {id:?}")),
        }
    };
    let timed = |line: usize, last_time: Option<u64>| -> Result<(), LintError> {
        match last_time {
            Some(_) => Ok(()),
            None => err(line, "value change before the first #timestamp"),
        }
    };
    while let Some((line, tok)) = toks.next() {
        let first = tok.as_bytes()[0];
        match first {
            b'#' => {
                if let Some((s, l)) = section {
                    return err(line, format!("timestamp inside {s} opened on line {l}"));
                }
                let Ok(t) = tok[1..].parse::<u64>() else {
                    return err(line, format!("bad timestamp {tok:?}"));
                };
                if let Some(prev) = last_time {
                    if t <= prev {
                        return err(line, format!("timestamp #{t} is not after #{prev}"));
                    }
                }
                last_time = Some(t);
                report.timestamps += 1;
            }
            b'$' => match tok {
                "$dumpvars" | "$dumpall" | "$dumpon" | "$dumpoff" => {
                    if let Some((s, l)) = section {
                        return err(line, format!("{tok} inside {s} opened on line {l}"));
                    }
                    section = Some((tok, line));
                }
                "$end" => {
                    if section.take().is_none() {
                        return err(
                            line,
                            "$end without an open $dumpvars/$dumpall/$dumpon/$dumpoff",
                        );
                    }
                }
                "$comment" => {
                    toks.until_end(tok, line)?;
                }
                _ => {
                    return err(
                        line,
                        format!("unexpected keyword {tok:?} after $enddefinitions"),
                    )
                }
            },
            b'0' | b'1' | b'x' | b'X' | b'z' | b'Z' => {
                let id = &tok[1..];
                if id.is_empty() {
                    return err(line, format!("scalar value {tok:?} has no id code"));
                }
                timed(line, last_time)?;
                let w = declared(line, id)?;
                if w != 1 {
                    return err(
                        line,
                        format!("scalar value {tok:?} for id code {id:?}, which is {w} bits wide"),
                    );
                }
                report.changes += 1;
            }
            b'b' | b'B' => {
                let digits = &tok[1..];
                if digits.is_empty() || !digits.bytes().all(|b| b"01xzXZ".contains(&b)) {
                    return err(
                        line,
                        format!("vector value {tok:?} must be b followed by 0/1/x/z digits"),
                    );
                }
                let Some((_, id)) = toks.next() else {
                    return err(line, format!("vector value {tok:?} has no id code"));
                };
                timed(line, last_time)?;
                let w = declared(line, id)?;
                if digits.len() != w as usize {
                    return err(
                        line,
                        format!(
                            "vector value {tok:?} has {} digits, but id code {id:?} is {w} bits wide",
                            digits.len()
                        ),
                    );
                }
                report.changes += 1;
            }
            b'r' | b'R' => {
                if tok[1..].parse::<f64>().is_err() {
                    return err(line, format!("bad real value {tok:?}"));
                }
                let Some((_, id)) = toks.next() else {
                    return err(line, format!("real value {tok:?} has no id code"));
                };
                timed(line, last_time)?;
                declared(line, id)?;
                report.changes += 1;
            }
            _ => {
                return err(
                    line,
                    format!("unexpected {tok:?}: not a #timestamp or a value change"),
                )
            }
        }
    }
    if let Some((s, l)) = section {
        return err(
            toks.last_line,
            format!("{s} opened on line {l} is never closed by $end"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "$version x $end\n$timescale 10 ps $end\n$scope module top $end\n\
        $var wire 1 ! a $end\n$var wire 4 \" b $end\n$upscope $end\n$enddefinitions $end\n\
        #0\n$dumpvars\n0!\nb0000 \"\n$end\n#5\n1!\n#7\nb1x0z \"\n";

    #[test]
    fn good_file_passes() {
        let r = lint_vcd(GOOD).unwrap();
        assert_eq!(
            r,
            LintReport {
                signals: 2,
                timestamps: 3,
                changes: 4
            }
        );
    }

    fn line_of(text: &str) -> LintError {
        lint_vcd(text).unwrap_err()
    }

    #[test]
    fn timescale_forms() {
        for ok in ["1ns", "10 ps", "100fs", "1 s"] {
            let t = GOOD.replace("10 ps", ok);
            lint_vcd(&t).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for bad in ["2 ns", "1000 ps", "1 ks", "ns", "10"] {
            let e = line_of(&GOOD.replace("10 ps", bad));
            assert_eq!(e.line, 2, "{bad}: {e}");
        }
    }

    #[test]
    fn misc_errors() {
        let e = line_of(&GOOD.replace("#7\n", "#7\ngarbage\n"));
        assert_eq!(e.line, 16);
        assert!(e.message.contains("garbage"), "{e}");
        let e = line_of(&GOOD.replace("$var wire 4 \" b", "$var wire 4 ! b"));
        assert!(e.message.contains("declared twice"), "{e}");
        let e = line_of(&GOOD.replace("1!\n", "1\"\n"));
        assert!(e.message.contains("4 bits wide"), "{e}");
        let e = line_of(&GOOD.replace("#0\n", ""));
        assert!(e.message.contains("before the first"), "{e}");
        let e = line_of(&GOOD.replace("$enddefinitions $end\n", ""));
        assert!(
            e.message.contains("$enddefinitions") || e.message.contains("header"),
            "{e}"
        );
        let e = line_of(&GOOD.replace("b0000 \"\n$end\n", "b0000 \"\n"));
        assert!(e.message.contains("$dumpvars"), "{e}");
        let e = line_of(&GOOD.replace("$timescale 10 ps $end\n", ""));
        assert!(e.message.contains("$timescale"), "{e}");
    }
}
