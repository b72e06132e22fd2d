//! Verdicts for people and for CI: the divergences counted by check and by egress queue
//! ([`Tally`]), a JSON report ([`JsonReport`]) and a JUnit XML file ([`Junit`]). Each takes
//! the divergences one at a time as the checker finds them, so memory grows with the kinds
//! of check and the queues, not with the number of divergences.

use crate::payload::PayloadCounts;
use crate::Divergence;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};

/// Every check the checker makes, by the name its divergences carry: the test cases of the
/// JUnit file (a check that found nothing passes).
pub const CHECKS: &[&str] = &[
    "admission",
    "decision missing",
    "decision without arrival",
    "duplicated arrival",
    "lossless drop",
    "ingress framing",
    "egress framing",
    "flow order",
    "descriptor",
    "payload",
    "lost packet",
    "departure of a lost packet",
    "departure of a dropped packet",
    "departure of a packet that never arrived",
    "duplicated departure",
    "departure from a paused queue",
    "faster than line rate",
    "PFC",
    "PFC missing",
    "PFC spurious",
    "threshold",
    "accounting",
    "leaked cells",
    "cells left in the buffer",
    "model error",
    "lockstep",
];

/// Failure texts the JUnit file keeps per check; the others are counted.
pub const FAILURES_KEPT: usize = 20;

/// Divergences counted by check and by egress queue (port, queue), and the departed
/// packets whose payload was compared (a CRC on both sides) or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub total: u64,
    pub by_check: BTreeMap<&'static str, u64>,
    pub by_queue: BTreeMap<(u8, u8), u64>,
    pub payload: PayloadCounts,
}

impl Tally {
    pub fn add(&mut self, d: &Divergence) {
        self.total += 1;
        *self.by_check.entry(d.check).or_default() += 1;
        if let Some(q) = d.queue {
            *self.by_queue.entry(q).or_default() += 1;
        }
    }

    fn json(&self) -> serde_json::Value {
        let queues: Vec<_> = self
            .by_queue
            .iter()
            .map(|(&(port, queue), n)| json!({"port": port, "queue": queue, "divergences": n}))
            .collect();
        let p = self.payload;
        json!({
            "divergences": self.total,
            "by_check": self.by_check,
            "by_egress_queue": queues,
            "payload": {"checked": p.checked, "unchecked": p.unchecked},
        })
    }
}

impl fmt::Display for Tally {
    /// `by check: admission 3, lost packet 1` and, if any, `by egress queue: port 1 queue
    /// 3: 1, ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let checks: Vec<_> = self
            .by_check
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        write!(f, "by check: {}", checks.join(", "))?;
        if !self.by_queue.is_empty() {
            let queues: Vec<_> = self
                .by_queue
                .iter()
                .map(|((p, q), n)| format!("port {p} queue {q}: {n}"))
                .collect();
            write!(f, "\nby egress queue: {}", queues.join(", "))?;
        }
        let p = self.payload;
        if p.checked + p.unchecked > 0 {
            write!(
                f,
                "\npayload: {} packets' CRCs compared, {} without a CRC on both sides",
                p.checked, p.unchecked
            )?;
        }
        Ok(())
    }
}

/// A divergence as a JSON object (its fields and its text).
pub fn divergence_json(d: &Divergence) -> serde_json::Value {
    json!({
        "cycle": d.cycle,
        "line": d.line,
        "check": d.check,
        "event": d.event,
        "expected": d.expected,
        "history": d.history,
        "egress_queue": d.queue.map(|(port, queue)| json!({"port": port, "queue": queue})),
        "text": d.to_string(),
    })
}

/// `--report-json`: `{"divergences": [...], "counts": {...}, "events": N, "last_cycle": C,
/// "verdict": "consistent" | "diverged"}`, the divergences written as they come.
pub struct JsonReport<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> JsonReport<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(b"{\"divergences\":[")?;
        Ok(Self { out, first: true })
    }

    pub fn add(&mut self, d: &Divergence) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        self.out.write_all(b"\n")?;
        serde_json::to_writer(&mut self.out, &divergence_json(d))?;
        Ok(())
    }

    /// The counts and the verdict; the writer back.
    pub fn finish(mut self, tally: &Tally, events: usize, last_cycle: u64) -> io::Result<W> {
        let verdict = if tally.total == 0 {
            "consistent"
        } else {
            "diverged"
        };
        write!(
            self.out,
            "\n],\"counts\":{},\"events\":{events},\"last_cycle\":{last_cycle},\"verdict\":\"{verdict}\"}}\n",
            tally.json()
        )?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// `--junit`: one test case per check ([`CHECKS`], and any other that diverged), failed
/// with its divergences' texts (the first [`FAILURES_KEPT`], then how many more).
#[derive(Debug, Default)]
pub struct Junit {
    failures: BTreeMap<&'static str, (u64, Vec<String>)>,
}

impl Junit {
    pub fn add(&mut self, d: &Divergence) {
        let (n, texts) = self.failures.entry(d.check).or_default();
        *n += 1;
        if texts.len() < FAILURES_KEPT {
            texts.push(d.to_string());
        }
    }

    /// The XML document of suite `suite` (e.g. the stream's path).
    pub fn write<W: Write>(&self, mut out: W, suite: &str) -> io::Result<()> {
        let mut names: Vec<&str> = CHECKS.to_vec();
        names.extend(self.failures.keys().filter(|k| !CHECKS.contains(k)));
        let failed = names
            .iter()
            .filter(|n| self.failures.contains_key(*n))
            .count();
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            r#"<testsuites name="mmu-sim check" tests="{}" failures="{failed}">"#,
            names.len()
        )?;
        writeln!(
            out,
            r#"  <testsuite name="{}" tests="{}" failures="{failed}">"#,
            escape(suite),
            names.len()
        )?;
        for name in names {
            let case = format!(
                r#"    <testcase classname="mmu-sim check" name="{}""#,
                escape(name)
            );
            let Some((n, texts)) = self.failures.get(name) else {
                writeln!(out, "{case}/>")?;
                continue;
            };
            writeln!(out, "{case}>")?;
            let mut body = texts.join("\n\n");
            if *n > texts.len() as u64 {
                body += &format!("\n\n... and {} more", n - texts.len() as u64);
            }
            writeln!(
                out,
                r#"      <failure message="{n} divergence(s)" type="{}">{}</failure>"#,
                escape(name),
                escape(&body)
            )?;
            writeln!(out, "    </testcase>")?;
        }
        writeln!(out, "  </testsuite>\n</testsuites>")?;
        out.flush()
    }
}

/// Text as XML character data or an attribute value: the five special characters as
/// entities, and the control characters XML 1.0 cannot carry as `?`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn div(check: &'static str, event: &str, queue: Option<(u8, u8)>) -> Divergence {
        Divergence {
            cycle: 7,
            line: 3,
            check,
            event: event.into(),
            expected: "x < y & \"z\"".into(),
            history: vec![],
            queue,
        }
    }

    #[test]
    fn xml_escaping_covers_the_special_and_control_characters() {
        assert_eq!(
            escape(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1}b\nc"), "a?b\nc");
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn junit_has_a_case_per_check_and_fails_those_that_diverged() {
        let mut j = Junit::default();
        j.add(&div("admission", r#"{"event":"admit"}"#, Some((1, 3))));
        j.add(&div("admission", "b", None));
        let mut out = Vec::new();
        j.write(&mut out, "s<1>.jsonl").unwrap();
        let xml = String::from_utf8(out).unwrap();
        assert_eq!(xml.matches("<testcase ").count(), CHECKS.len(), "{xml}");
        assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
        assert!(xml.contains(r#"failures="1""#), "{xml}");
        assert!(xml.contains(r#"name="s&lt;1&gt;.jsonl""#), "{xml}");
        assert!(
            xml.contains(r#"message="2 divergence(s)" type="admission">cycle 7: admission"#),
            "{xml}"
        );
        assert!(
            xml.contains("{&quot;event&quot;:&quot;admit&quot;}"),
            "{xml}"
        );
        assert!(!xml.contains(r#""admit""#), "unescaped quotes: {xml}");
        // Nothing diverged: every case passes.
        let mut out = Vec::new();
        Junit::default().write(&mut out, "s").unwrap();
        let xml = String::from_utf8(out).unwrap();
        assert!(xml.contains(r#"failures="0""#) && !xml.contains("<failure"));
    }

    #[test]
    fn the_json_report_lists_every_divergence_and_the_counts() {
        let mut t = Tally::default();
        let mut r = JsonReport::new(Vec::new()).unwrap();
        for d in [
            div("lost packet", "a", Some((1, 3))),
            div("lost packet", "b", Some((1, 3))),
            div("threshold", "c", None),
        ] {
            t.add(&d);
            r.add(&d).unwrap();
        }
        let out = r.finish(&t, 10, 99).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["divergences"].as_array().unwrap().len(), 3);
        assert_eq!(
            v["divergences"][0]["egress_queue"],
            json!({"port": 1, "queue": 3})
        );
        assert_eq!(v["counts"]["by_check"]["lost packet"], 2);
        assert_eq!(
            v["counts"]["by_egress_queue"],
            json!([{"port": 1, "queue": 3, "divergences": 2}])
        );
        assert_eq!(v["verdict"], "diverged");
        assert_eq!(
            t.to_string(),
            "by check: lost packet 2, threshold 1\nby egress queue: port 1 queue 3: 2"
        );
        assert_eq!(
            v["counts"]["payload"],
            json!({"checked": 0, "unchecked": 0})
        );
        t.payload = PayloadCounts {
            checked: 5,
            unchecked: 1,
        };
        assert!(
            t.to_string()
                .ends_with("\npayload: 5 packets' CRCs compared, 1 without a CRC on both sides"),
            "{t}"
        );
        let empty = JsonReport::new(Vec::new())
            .unwrap()
            .finish(&Tally::default(), 0, 0)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(
            (
                v["verdict"].as_str(),
                v["divergences"].as_array().map(Vec::len)
            ),
            (Some("consistent"), Some(0))
        );
    }
}
