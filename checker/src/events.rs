//! The co-simulation event stream (docs/cosim.md): JSON Lines, one event per line, in cycle
//! order. The same schema as `cosim/tb/events.py`, which writes the RTL's stream; this
//! module reads any stream and writes the model's own (`mmu-sim run --trace-events`).
//!
//! Every event has `cycle` (core cycles, 0-based) and `event` (its kind). A `depart` is
//! stamped in the cycle its cell is READ from the buffer, which frees the cell: decisions
//! of the next cycle see it gone. A `pfc` with `dir = "sent"` is stamped in the first
//! cycle the ingress queue's QOFF (or the port's POFF) register holds the new state, i.e.
//! one cycle after the decision that changed it.

use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Read, Write};
use thiserror::Error;

/// The schema string of the first (`meta`) line. Version 2: `depart` at the read of the
/// cell (version 1 stamped it one cycle later, when the cell was on the output).
pub const SCHEMA: &str = "mmu-cosim-events/2";

/// Cells of an admitted packet per segment, in the order its cells fill them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Segments {
    pub private: u32,
    pub shared: u32,
    pub headroom: u32,
}

/// The IP 5-tuple of a packet (HCF's hash input), optional on `arrive`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuple {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub proto: u8,
}

/// The first line: what wrote the stream and from which configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub cycle: u64,
    pub schema: String,
    pub seed: u64,
    pub bug: Option<String>,
    pub config: String,
    pub params: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// A cell on ingress port `port`. Without `cell` (or with `cell = 0`) it is the start of
/// packet; a stream that gives `cell` lists every cell, one that does not has the other
/// cells on the next `ncells - 1` cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arrive {
    pub cycle: u64,
    pub port: u8,
    pub prio: u8,
    pub flow: u32,
    pub seq: u32,
    pub bytes: u32,
    pub dst: u8,
    pub ncells: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuple: Option<Tuple>,
    /// The CRC-32 of the packet's payload as the monitor saw it driven, on the start of
    /// packet only ([`crate::payload`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crc: Option<u32>,
}

/// The decision for the packet that started on `port` in the same cycle: admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Admit {
    pub cycle: u64,
    pub port: u8,
    pub flow: u32,
    pub seq: u32,
    pub segments: Segments,
}

/// The decision for the packet that started on `port` in the same cycle: dropped whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drop {
    pub cycle: u64,
    pub port: u8,
    pub flow: u32,
    pub seq: u32,
    /// A `hw_model::DropReason` name.
    pub reason: String,
}

/// A cell of a packet READ on egress port `port` from queue `queue`. Without `cell` (or
/// with `cell = 0`) the packet's first cell; a stream that gives `cell` lists every cell,
/// one that does not reads the others on the next `ncells - 1` cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Depart {
    pub cycle: u64,
    pub port: u8,
    pub queue: u8,
    pub flow: u32,
    pub seq: u32,
    pub src: u8,
    pub ncells: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u16>,
    /// The CRC-32 of the packet's payload as the monitor saw it leave, on the first cell
    /// only ([`crate::payload`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crc: Option<u32>,
}

/// Sent: the QOFF of ingress queue (`port`, `class`) changed (or, with `port_level`, the
/// port's POFF). Received: the pause of egress queue (`port`, `class`) (or the whole port)
/// changed; it acts from the next cycle, for `quanta` pause quanta if given (IEEE 802.1Qbb
/// timer), else until the RESUME.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pfc {
    pub cycle: u64,
    pub port: u8,
    pub class: u8,
    pub pause: bool,
    pub dir: Dir,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quanta: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_level: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    Sent,
    Received,
}

/// The DUT's registers at the start of `cycle` (the values that cycle's decisions read):
/// `t` and `total` (cells charged and not released) always; `free` (free-list count) and
/// the rest if the DUT has them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub cycle: u64,
    pub t: u32,
    pub total: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<u32>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// One line of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    Meta(Meta),
    Arrive(Arrive),
    Admit(Admit),
    Drop(Drop),
    Depart(Depart),
    Pfc(Pfc),
    Counters(Counters),
}

impl Event {
    pub fn cycle(&self) -> u64 {
        match self {
            Event::Meta(e) => e.cycle,
            Event::Arrive(e) => e.cycle,
            Event::Admit(e) => e.cycle,
            Event::Drop(e) => e.cycle,
            Event::Depart(e) => e.cycle,
            Event::Pfc(e) => e.cycle,
            Event::Counters(e) => e.cycle,
        }
    }

    /// Order within a cycle: by kind (meta, received PFC, arrive, admit, drop, depart, sent
    /// PFC, counters), then port, then class or cell (`events.py`'s `KINDS`); the sort
    /// must be stable.
    pub fn rank(&self) -> (u8, u8, u16) {
        match self {
            Event::Meta(_) => (0, 0, 0),
            Event::Pfc(e) if e.dir == Dir::Received => (1, e.port, e.class as u16),
            Event::Arrive(e) => (2, e.port, e.cell.unwrap_or(0)),
            Event::Admit(e) => (3, e.port, 0),
            Event::Drop(e) => (4, e.port, 0),
            // A port may read the last cell of one packet and the first of the next in
            // one cycle: in the order read (a stable sort keeps it).
            Event::Depart(e) => (5, e.port, 0),
            Event::Pfc(e) => (6, e.port, e.class as u16),
            Event::Counters(_) => (7, 0, 0),
        }
    }

    /// The line, without its newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("events serialize")
    }
}

/// A stream that cannot be read: the line and what is wrong with it (exit code 2).
#[derive(Debug, Error)]
pub enum InputError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl InputError {
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        InputError::Line {
            line,
            message: message.into(),
        }
    }
}

/// The longest line read, bytes: far above any event's (a `counters` snapshot of a 64-port
/// switch is a few kB), so that a stream with no newline cannot take the memory.
pub const MAX_LINE: usize = 1 << 20;

/// Reads a stream line by line: each event parsed and checked against the schema, the
/// first a `meta` of [`SCHEMA`], cycles not decreasing. Holds one line at a time.
pub struct Reader<R> {
    input: R,
    line: usize,
    last_cycle: u64,
    /// A line with an event was read.
    read_any: bool,
    buf: String,
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Self {
        Self {
            input,
            line: 0,
            last_cycle: 0,
            read_any: false,
            buf: String::new(),
        }
    }

    /// The next event and its line number; `None` at the end.
    pub fn next_event(&mut self) -> Result<Option<(usize, Event)>, InputError> {
        loop {
            self.buf.clear();
            let at = self.line + 1;
            let limit = (MAX_LINE + 1) as u64;
            let n = (&mut self.input)
                .take(limit)
                .read_line(&mut self.buf)
                .map_err(|e| match e.kind() {
                    io::ErrorKind::InvalidData => {
                        InputError::at(at, "not UTF-8 text (a JSON Lines stream is)")
                    }
                    _ => InputError::Io(e),
                })?;
            if n == 0 {
                return match self.line {
                    0 => Err(InputError::at(1, "empty stream: no meta line")),
                    _ if !self.read_any => Err(InputError::at(
                        self.line,
                        format!("{} blank lines and no meta line", self.line),
                    )),
                    _ => Ok(None),
                };
            }
            self.line += 1;
            if n > MAX_LINE {
                return Err(InputError::at(
                    self.line,
                    format!(
                        "longer than {MAX_LINE} bytes; allowed: up to {MAX_LINE} bytes per line"
                    ),
                ));
            }
            if !self.buf.trim().is_empty() {
                break;
            }
        }
        self.read_any = true;
        let line = self.line;
        let ev = parse_line(&self.buf).map_err(|m| InputError::at(line, m))?;
        if line == 1 {
            match &ev {
                Event::Meta(m) if m.schema == SCHEMA => {}
                Event::Meta(m) => {
                    return Err(InputError::at(
                        line,
                        format!("meta.schema: {:?}; allowed: {SCHEMA:?}", m.schema),
                    ))
                }
                _ => return Err(InputError::at(line, "event: the first line must be meta")),
            }
        } else if matches!(ev, Event::Meta(_)) {
            return Err(InputError::at(line, "event: meta only on the first line"));
        }
        if ev.cycle() < self.last_cycle {
            return Err(InputError::at(
                line,
                format!("cycle: {} after {}", ev.cycle(), self.last_cycle),
            ));
        }
        self.last_cycle = ev.cycle();
        Ok(Some((line, ev)))
    }
}

/// The integer fields of the events and their largest values (the smallest is 0).
const INTEGERS: &[(&str, u64)] = &[
    ("cycle", u64::MAX),
    ("seed", u64::MAX),
    ("port", u8::MAX as u64),
    ("prio", u8::MAX as u64),
    ("dst", u8::MAX as u64),
    ("src", u8::MAX as u64),
    ("queue", u8::MAX as u64),
    ("class", u8::MAX as u64),
    ("ncells", u16::MAX as u64),
    ("cell", u16::MAX as u64),
    ("quanta", u16::MAX as u64),
    ("flow", u32::MAX as u64),
    ("seq", u32::MAX as u64),
    ("bytes", u32::MAX as u64),
    ("t", u32::MAX as u64),
    ("total", u32::MAX as u64),
    ("free", u32::MAX as u64),
    ("private", u32::MAX as u64),
    ("shared", u32::MAX as u64),
    ("headroom", u32::MAX as u64),
    ("crc", u32::MAX as u64),
];

/// For a line serde refused with a bare type message ("invalid value: integer `-1`,
/// expected u8"): the integer field at fault, its value and its range, e.g.
/// `arrive.port: -1; allowed: 0..=255 (an integer)`.
fn integer_field_error(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let kind = v.get("event").and_then(|k| k.as_str()).unwrap_or("event");
    let mut fields: Vec<(String, &serde_json::Value)> = Vec::new();
    for (k, x) in v.as_object()? {
        match (k.as_str(), x.as_object()) {
            ("segments", Some(o)) => {
                fields.extend(o.iter().map(|(k2, x2)| (format!("segments.{k2}"), x2)))
            }
            _ => fields.push((k.clone(), x)),
        }
    }
    fields.into_iter().find_map(|(name, x)| {
        let leaf = name.rsplit('.').next().unwrap_or(&name);
        let &(_, max) = INTEGERS.iter().find(|(n, _)| *n == leaf)?;
        if kind == "counters" && !["cycle", "t", "total", "free"].contains(&leaf) {
            return None;
        }
        match x.as_u64() {
            Some(n) if n <= max => None,
            _ => Some(format!(
                "{kind}.{name}: {x}; allowed: 0..={max} (an integer)"
            )),
        }
    })
}

/// One line as an event; the message names the field.
pub fn parse_line(text: &str) -> Result<Event, String> {
    let ev: Event = serde_json::from_str(text).map_err(|e| {
        if let Some(m) = integer_field_error(text) {
            return m;
        }
        // serde_json appends " at line 1 column N", meaningless for one line.
        let m = e.to_string();
        match m.find(" at line ") {
            Some(i) => m[..i].to_string(),
            None => m,
        }
    })?;
    match &ev {
        Event::Admit(Admit { segments: s, .. })
            if s.private as u64 + s.shared as u64 + s.headroom as u64 == 0 =>
        {
            Err("admit.segments: no cells".into())
        }
        Event::Arrive(a) if a.ncells == 0 => Err("arrive.ncells: 0; allowed: 1 or more".into()),
        Event::Arrive(a) if a.cell.is_some_and(|c| c >= a.ncells) => Err(format!(
            "arrive.cell: {}; allowed: 0..{}",
            a.cell.unwrap_or(0),
            a.ncells
        )),
        Event::Arrive(a) if a.crc.is_some() && a.cell.unwrap_or(0) != 0 => Err(format!(
            "arrive.crc: on cell {}; allowed: on the start of packet only (no cell, or cell 0)",
            a.cell.unwrap_or(0)
        )),
        Event::Depart(d) if d.ncells == 0 => Err("depart.ncells: 0; allowed: 1 or more".into()),
        Event::Depart(d) if d.crc.is_some() && d.cell.unwrap_or(0) != 0 => Err(format!(
            "depart.crc: on cell {}; allowed: on the first cell only (no cell, or cell 0)",
            d.cell.unwrap_or(0)
        )),
        Event::Depart(d) if d.cell.is_some_and(|c| c >= d.ncells) => Err(format!(
            "depart.cell: {}; allowed: 0..{}",
            d.cell.unwrap_or(0),
            d.ncells
        )),
        _ => Ok(ev),
    }
}

/// Writes events as lines.
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }

    pub fn write(&mut self, ev: &Event) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, ev)?;
        self.out.write_all(b"\n")
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"cycle":0,"event":"meta","schema":"mmu-cosim-events/2","seed":1,"bug":null,"config":"x","params":{}}"#;

    fn read_all(text: &str) -> Result<Vec<Event>, InputError> {
        let mut r = Reader::new(text.as_bytes());
        let mut out = vec![];
        while let Some((_, ev)) = r.next_event()? {
            out.push(ev);
        }
        Ok(out)
    }

    #[test]
    fn round_trip() {
        let ev = Event::Depart(Depart {
            cycle: 7,
            port: 1,
            queue: 2,
            flow: 3,
            seq: 4,
            src: 0,
            ncells: 2,
            cell: Some(1),
            crc: None,
        });
        assert_eq!(parse_line(&ev.to_line()).unwrap(), ev);
        let line = r#"{"cycle":3,"event":"counters","t":96,"total":0,"free":512,"drops":{}}"#;
        let Event::Counters(c) = parse_line(line).unwrap() else {
            panic!("counters")
        };
        assert_eq!((c.t, c.total, c.free), (96, 0, Some(512)));
    }

    #[test]
    fn refuses_what_it_should() {
        let bad = [
            (
                r#"{"cycle":1,"event":"arrive","port":0}"#,
                "missing field `prio`",
            ),
            (
                r#"{"cycle":1,"event":"drop","port":0,"flow":1,"seq":2,"reason":"x","extra":1}"#,
                "unknown field `extra`",
            ),
            (r#"{"cycle":1,"event":"bogus"}"#, "unknown variant `bogus`"),
            (
                r#"{"cycle":-1,"event":"pfc","port":0,"class":1,"pause":true,"dir":"sent"}"#,
                "pfc.cycle: -1; allowed: 0..=",
            ),
            (
                r#"{"cycle":1,"event":"pfc","port":0,"class":1,"pause":1,"dir":"sent"}"#,
                "invalid type",
            ),
            (
                r#"{"cycle":1,"event":"depart","port":0,"queue":0,"flow":1,"seq":2,"src":0,"ncells":2,"cell":2}"#,
                "depart.cell: 2",
            ),
            (
                r#"{"cycle":1,"event":"depart","port":0,"queue":0,"flow":1,"seq":2,"src":0,"ncells":2,"cell":1,"crc":5}"#,
                "depart.crc: on cell 1; allowed: on the first cell only",
            ),
            (
                r#"{"cycle":1,"event":"arrive","port":0,"prio":0,"flow":1,"seq":0,"bytes":128,"dst":0,"ncells":2,"cell":1,"crc":5}"#,
                "arrive.crc: on cell 1; allowed: on the start of packet only",
            ),
            (
                r#"{"cycle":1,"event":"depart","port":0,"queue":0,"flow":1,"seq":2,"src":0,"ncells":2,"crc":4294967296}"#,
                "depart.crc: 4294967296; allowed: 0..=4294967295 (an integer)",
            ),
        ];
        for (line, want) in bad {
            let e = parse_line(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
        let e = read_all(r#"{"cycle":0,"event":"counters","t":1,"total":0}"#).unwrap_err();
        assert!(e
            .to_string()
            .contains("line 1: event: the first line must be meta"));
        let e = read_all(&META.replace("/2", "/1")).unwrap_err();
        assert!(e.to_string().contains("meta.schema"), "{e}");
        let two = format!(
            "{META}\n{}\n{}\n",
            r#"{"cycle":5,"event":"counters","t":1,"total":0}"#,
            r#"{"cycle":4,"event":"counters","t":1,"total":0}"#
        );
        let e = read_all(&two).unwrap_err();
        assert_eq!(e.to_string(), "line 3: cycle: 4 after 5");
        assert_eq!(read_all(&format!("{META}\n")).unwrap().len(), 1);
    }

    #[test]
    fn blank_long_and_binary_lines_are_refused_with_their_line() {
        let e = read_all("\n\n  \n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: 3 blank lines and no meta line");
        assert_eq!(
            read_all("").unwrap_err().to_string(),
            "line 1: empty stream: no meta line"
        );
        let long = format!("{META}\n{}\n", " ".repeat(MAX_LINE + 1));
        let e = read_all(&long).unwrap_err();
        assert!(e.to_string().starts_with("line 2: longer than "), "{e}");
        // A line of exactly the cap is read (and refused for what it says, not its length).
        let at_cap = format!("{META}\n{}\n", " ".repeat(MAX_LINE - 1));
        assert_eq!(read_all(&at_cap).unwrap().len(), 1);
        let mut bin = format!("{META}\n").into_bytes();
        bin.extend([0xff, 0xfe, b'\n']);
        let mut r = Reader::new(&bin[..]);
        r.next_event().unwrap();
        let e = r.next_event().unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: not UTF-8 text (a JSON Lines stream is)"
        );
    }

    #[test]
    fn an_integer_out_of_its_range_names_the_field_and_the_range() {
        let cases = [
            (
                r#"{"cycle":1,"event":"arrive","port":-1,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":0,"ncells":1}"#,
                "arrive.port: -1; allowed: 0..=255 (an integer)",
            ),
            (
                r#"{"cycle":1,"event":"arrive","port":256,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":0,"ncells":1}"#,
                "arrive.port: 256; allowed: 0..=255 (an integer)",
            ),
            (
                r#"{"cycle":1,"event":"arrive","port":1.5,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":0,"ncells":1}"#,
                "arrive.port: 1.5; allowed: 0..=255 (an integer)",
            ),
            (
                r#"{"cycle":-5,"event":"depart","port":0,"queue":0,"flow":1,"seq":0,"src":0,"ncells":1}"#,
                "depart.cycle: -5; allowed: 0..=18446744073709551615 (an integer)",
            ),
            (
                r#"{"cycle":1,"event":"depart","port":0,"queue":0,"flow":1,"seq":4294967296,"src":0,"ncells":1}"#,
                "depart.seq: 4294967296; allowed: 0..=4294967295 (an integer)",
            ),
            (
                r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":-1,"shared":0,"headroom":0}}"#,
                "admit.segments.private: -1; allowed: 0..=4294967295 (an integer)",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse_line(line).unwrap_err(), want, "{line}");
        }
        // Other errors keep serde's message.
        let e = parse_line(r#"{"cycle":1,"event":"arrive","port":0}"#).unwrap_err();
        assert!(e.contains("missing field `prio`"), "{e}");
    }

    #[test]
    fn admit_segments_are_summed_without_wrapping() {
        let wrap = r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":4294967295,"shared":1,"headroom":0}}"#;
        assert!(parse_line(wrap).is_ok());
        let none = r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":0,"shared":0,"headroom":0}}"#;
        assert_eq!(parse_line(none).unwrap_err(), "admit.segments: no cells");
    }
}
