//! The golden-model checker: a DUT's event stream (docs/cosim.md) replayed against the
//! hw-model MMU configured as the DUT.
//!
//! - [`Mode::Follow`] ([`follow`]): the DUT's arrivals, decisions and departures drive the
//!   model's counters, thresholds and PFC state; each DUT decision, departure and PFC
//!   change is checked against the rules.
//! - [`Mode::Lockstep`] ([`lockstep`]): the model is stepped with the DUT's inputs and
//!   every event is compared.
//!
//! [`Checker`] takes events one at a time (as a live testbench's monitors see them) and
//! returns divergences at once; [`check`] reads a whole stream.

pub mod events;
pub mod follow;
pub mod lockstep;
pub mod payload;
pub mod record;
pub mod verdict;

use events::{Event, InputError, Reader};
use follow::Follower;
use hw_model::config::QUEUES;
use hw_model::policy::{BufferPolicy, Policies, WithPolicy};
use hw_model::{Derived, DropReason};
use lockstep::Lockstep;
use payload::{Payload, PayloadCounts};
use std::fmt;
use std::io::BufRead;
use verdict::Tally;

/// How the checker replays the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Follow,
    Lockstep,
}

/// How fast an egress port may send (follow mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRate {
    /// One cell per cycle per port: a packet starts after the last cell of the one before.
    CellPerCycle,
    /// The scenario's port rate: a packet starts no sooner than the wire time of the one
    /// before (its bytes plus the wire overhead), less one cycle.
    Scenario,
}

/// Where the admission decisions come from (follow mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decisions {
    /// The stream has an `admit` or `drop` for every start of packet, checked against the
    /// model's.
    Reported,
    /// The stream has `arrive` and `depart` only (a DUT that exports no decision): the
    /// model decides each arrival itself. A packet it admits that never departs is a
    /// loss; one it drops that departs is an `admission` divergence.
    Inferred,
}

#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub mode: Mode,
    pub line_rate: LineRate,
    /// Cycles a sent PAUSE/RESUME may come before or after the model's, and a start of
    /// packet may follow a received PAUSE (follow mode).
    pub pfc_tolerance: u64,
    pub decisions: Decisions,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            mode: Mode::Follow,
            line_rate: LineRate::Scenario,
            pfc_tolerance: 2,
            decisions: Decisions::Reported,
        }
    }
}

/// A DUT event the model disagrees with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub cycle: u64,
    /// Line of the stream (0: none, e.g. a PAUSE the DUT never sent).
    pub line: usize,
    /// The check that failed, e.g. "admission", "flow order", "PFC missing".
    pub check: &'static str,
    /// The DUT's event (its line) or what the check looked at.
    pub event: String,
    /// What the model expected, and why (the counters and threshold involved).
    pub expected: String,
    /// The last events of the flow and of the port.
    pub history: Vec<String>,
    /// The egress queue (port, queue) the divergence concerns, if one: the packet's, for
    /// a decision or a departure.
    pub queue: Option<(u8, u8)>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cycle {}: {}", self.cycle, self.check)?;
        if self.line > 0 {
            write!(f, " (line {})", self.line)?;
        }
        write!(f, "\n  DUT:   {}\n  model: {}", self.event, self.expected)?;
        if !self.history.is_empty() {
            write!(f, "\n  last events:")?;
            for h in &self.history {
                write!(f, "\n    {h}")?;
            }
        }
        Ok(())
    }
}

/// What both modes do with the events of a stream, in order.
pub trait Replay {
    /// The next event, from line `line`.
    fn feed(&mut self, line: usize, ev: Event);
    /// The end of the stream: its last checks.
    fn finish(&mut self);
    /// The divergences found since the last call.
    fn take(&mut self) -> Vec<Divergence>;
    /// Divergences waiting to be taken.
    fn count(&self) -> usize;
}

/// A follower of whichever policy the model's factory ([`Policies::new`]) builds.
struct MakeFollower {
    d: Derived,
    opts: Options,
}

impl WithPolicy for MakeFollower {
    type Output = Box<dyn Replay>;

    fn run<P: BufferPolicy + 'static>(self, policy: P) -> Box<dyn Replay> {
        Box::new(Follower::new(self.d, policy, self.opts))
    }
}

/// An incremental checker: feed events in stream order, read divergences as they come.
pub struct Checker {
    d: Derived,
    inner: Box<dyn Replay>,
    payload: Payload,
    /// Payload divergences of the cycle the mode has not settled yet (held so that both
    /// come out in cycle order), and those of the cycles it has.
    held: Vec<Divergence>,
    settled: Vec<Divergence>,
    line: usize,
    last_cycle: u64,
    /// Where the stream's `meta` and the scenario disagree.
    pub warnings: Vec<String>,
}

impl Checker {
    /// A checker of the switch `d` (the scenario's `[switch]`).
    pub fn new(d: Derived, opts: Options) -> Self {
        let inner: Box<dyn Replay> = match opts.mode {
            Mode::Lockstep => Box::new(Lockstep::new(d.clone(), opts.decisions)),
            Mode::Follow => Policies::new(&d).with(MakeFollower { d: d.clone(), opts }),
        };
        Self {
            // A buffer holds at most one packet per cell.
            payload: Payload::new(2 * d.total_cells as usize),
            d,
            inner,
            held: Vec::new(),
            settled: Vec::new(),
            line: 0,
            last_cycle: 0,
            warnings: Vec::new(),
        }
    }

    /// The next event (line `line` of the stream); an event outside the switch's ranges
    /// is refused with the field and its allowed range.
    pub fn feed(&mut self, line: usize, ev: Event) -> Result<(), InputError> {
        self.check_ranges(&ev)
            .map_err(|m| InputError::at(line, m))?;
        if ev.cycle() < self.last_cycle {
            return Err(InputError::at(
                line,
                format!("cycle: {} after {}", ev.cycle(), self.last_cycle),
            ));
        }
        self.last_cycle = ev.cycle();
        self.line = line;
        if let Event::Meta(m) = &ev {
            self.warnings.extend(meta_warnings(&self.d, m));
        }
        let found = self.payload.feed(line, &ev);
        // The mode settles the earlier cycles as it takes the first event of a later one.
        let c = ev.cycle();
        self.inner.feed(line, ev);
        let (done, open): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|d| d.cycle < c);
        self.held = open;
        self.settled.extend(done);
        self.held.extend(found);
        Ok(())
    }

    /// Parse and feed one line of the stream (numbered from 1 by the caller).
    pub fn feed_line(&mut self, line: usize, text: &str) -> Result<(), InputError> {
        let ev = events::parse_line(text).map_err(|m| InputError::at(line, m))?;
        self.feed(line, ev)
    }

    /// The end of the stream: its last checks (cells left, PFC levels still apart).
    pub fn finish(&mut self) {
        self.inner.finish();
        self.settled.append(&mut self.held);
    }

    /// The divergences found since the last call.
    pub fn take(&mut self) -> Vec<Divergence> {
        let mut out = self.inner.take();
        out.append(&mut self.settled);
        out
    }

    /// Divergences waiting to be taken.
    pub fn pending(&self) -> usize {
        self.inner.count() + self.settled.len()
    }

    /// Departed packets whose payload CRCs were compared, and those without one.
    pub fn payload_counts(&self) -> PayloadCounts {
        self.payload.counts
    }

    fn check_ranges(&self, ev: &Event) -> Result<(), String> {
        let ports = self.d.ports as u64;
        let port = |kind: &str, name: &str, v: u8| {
            if (v as u64) < ports {
                Ok(())
            } else {
                Err(format!("{kind}.{name}: {v}; allowed: 0..{ports}"))
            }
        };
        let prio = |kind: &str, name: &str, v: u8| {
            if (v as usize) < QUEUES {
                Ok(())
            } else {
                Err(format!("{kind}.{name}: {v}; allowed: 0..{QUEUES}"))
            }
        };
        match ev {
            Event::Arrive(a) => {
                port("arrive", "port", a.port)?;
                port("arrive", "dst", a.dst)?;
                prio("arrive", "prio", a.prio)?;
                let mtu = self.d.cfg.mtu_bytes;
                if a.bytes > mtu {
                    return Err(format!(
                        "arrive.bytes: {}; allowed: up to {mtu} (the scenario's switch.mtu_bytes)",
                        a.bytes
                    ));
                }
                let want = self.d.cells_for(a.bytes);
                if a.ncells as u32 != want {
                    return Err(format!(
                        "arrive.ncells: {}; {} bytes are {want} cells in this configuration",
                        a.ncells, a.bytes
                    ));
                }
            }
            Event::Admit(a) => {
                port("admit", "port", a.port)?;
                let s = &a.segments;
                for (name, v) in [
                    ("private", s.private),
                    ("shared", s.shared),
                    ("headroom", s.headroom),
                ] {
                    if v > u16::MAX as u32 {
                        return Err(format!(
                            "admit.segments.{name}: {v}; allowed: 0..={}",
                            u16::MAX
                        ));
                    }
                }
            }
            Event::Drop(x) => {
                port("drop", "port", x.port)?;
                if !DropReason::ALL.iter().any(|r| r.name() == x.reason) {
                    let names: Vec<_> = DropReason::ALL.iter().map(|r| r.name()).collect();
                    return Err(format!(
                        "drop.reason: {:?}; allowed: {}",
                        x.reason,
                        names.join(", ")
                    ));
                }
            }
            Event::Depart(x) => {
                port("depart", "port", x.port)?;
                port("depart", "src", x.src)?;
                prio("depart", "queue", x.queue)?;
            }
            Event::Pfc(p) => {
                port("pfc", "port", p.port)?;
                prio("pfc", "class", p.class)?;
            }
            Event::Meta(_) | Event::Counters(_) => {}
        }
        Ok(())
    }
}

/// Where a stream's `meta` parameters and the switch `d` disagree: the policy, the ports,
/// the cell size, the buffer's cells and alpha, under the model's names (`mmu-sim run
/// --trace-events`) or the project's RTL's (`cosim/`).
fn meta_warnings(d: &Derived, m: &events::Meta) -> Vec<String> {
    let param = |names: &[&'static str]| {
        names
            .iter()
            .find_map(|&n| m.params.get(n).map(|v| (n, v.clone())))
    };
    let policy = d.cfg.policy.name();
    let numbers: [(&[&'static str], &str, i64); 4] = [
        (&["ports", "P"], "switch ports", d.ports as i64),
        (
            &["cell_bytes", "CELL_BYTES"],
            "switch cell_bytes",
            d.cfg.cell_bytes as i64,
        ),
        (&["cells", "N_CELLS"], "buffer cells", d.total_cells as i64),
        (
            &["alpha_log2", "ALPHA_LOG2"],
            "switch alpha_log2",
            d.cfg.alpha_log2 as i64,
        ),
    ];
    let mut out = Vec::new();
    if let Some((name, v)) = param(&["policy"]) {
        if v.as_str() != Some(policy) {
            out.push(format!(
                "the stream's meta says {name} {v}, the scenario's switch.policy is {policy:?}"
            ));
        }
    }
    for (names, what, want) in numbers {
        if let Some((name, v)) = param(names) {
            if v.as_i64() != Some(want) {
                out.push(format!(
                    "the stream's meta says {name} {v}, the scenario's {what} is {want}"
                ));
            }
        }
    }
    out
}

/// What [`check`] found in a stream.
#[derive(Debug, Clone)]
pub struct Report {
    /// Events read, and the last cycle.
    pub events: usize,
    pub last_cycle: u64,
    /// Every divergence with `keep_going`, else the first (if any).
    pub divergences: Vec<Divergence>,
    /// Where the stream's `meta` line and the scenario disagree.
    pub warnings: Vec<String>,
    /// Departed packets whose payload CRCs were compared, and those without one.
    pub payload: PayloadCounts,
}

/// What [`check_each`] read, and the divergences it found counted.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub events: usize,
    pub last_cycle: u64,
    pub tally: Tally,
    /// Where the stream's `meta` line and the scenario disagree.
    pub warnings: Vec<String>,
}

/// Check a whole stream; stop at the first divergence unless `keep_going`.
pub fn check<R: BufRead>(
    d: Derived,
    input: R,
    opts: Options,
    keep_going: bool,
) -> Result<Report, InputError> {
    let mut divergences = Vec::new();
    let sum = check_each(d, input, opts, keep_going, |d| divergences.push(d))?;
    divergences.sort_by_key(|d| (d.cycle, d.line));
    Ok(Report {
        events: sum.events,
        last_cycle: sum.last_cycle,
        divergences,
        warnings: sum.warnings,
        payload: sum.tally.payload,
    })
}

/// Check a whole stream, handing each divergence to `found` as it is settled (those
/// settled together in cycle and line order), so that memory does not grow with their
/// number; stop at the first unless `keep_going`.
pub fn check_each<R: BufRead>(
    d: Derived,
    input: R,
    opts: Options,
    keep_going: bool,
    mut found: impl FnMut(Divergence),
) -> Result<Summary, InputError> {
    let mut reader = Reader::new(input);
    let mut ck = Checker::new(d, opts);
    let mut sum = Summary::default();
    let mut hand = |ck: &mut Checker, sum: &mut Summary| {
        let mut batch = ck.take();
        batch.sort_by_key(|d| (d.cycle, d.line));
        if !keep_going {
            batch.truncate(1);
        }
        for d in batch {
            sum.tally.add(&d);
            found(d);
        }
    };
    while let Some((line, ev)) = reader.next_event()? {
        sum.events += 1;
        sum.last_cycle = ev.cycle();
        ck.feed(line, ev)?;
        if ck.pending() > 0 {
            hand(&mut ck, &mut sum);
            if !keep_going {
                // A stream read only in part has no end to check.
                sum.tally.payload = ck.payload_counts();
                sum.warnings = ck.warnings.clone();
                return Ok(sum);
            }
        }
    }
    ck.finish();
    hand(&mut ck, &mut sum);
    sum.tally.payload = ck.payload_counts();
    sum.warnings = ck.warnings;
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_model::SwitchConfig;

    #[test]
    fn segments_beyond_a_register_are_refused_with_the_field_and_range() {
        let d = SwitchConfig::small().build().unwrap();
        let mut ck = Checker::new(d, Options::default());
        let arrive = r#"{"cycle":1,"event":"arrive","port":0,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":1,"ncells":1}"#;
        ck.feed_line(1, arrive).unwrap();
        let wrap = r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":4294967295,"shared":1,"headroom":0}}"#;
        let e = ck.feed_line(2, wrap).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: admit.segments.private: 4294967295; allowed: 0..=65535"
        );
        let ok = r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":1,"shared":0,"headroom":0}}"#;
        ck.feed_line(2, ok).unwrap();
    }

    #[test]
    fn an_arrival_over_the_mtu_is_refused_with_the_field_and_range() {
        let d = SwitchConfig::small().build().unwrap();
        let mtu = d.cfg.mtu_bytes;
        let arrive = |bytes: u32| {
            format!(
                r#"{{"cycle":1,"event":"arrive","port":0,"prio":0,"flow":1,"seq":0,"bytes":{bytes},"dst":1,"ncells":{}}}"#,
                d.cells_for(bytes)
            )
        };
        let mut ck = Checker::new(d.clone(), Options::default());
        let e = ck.feed_line(3, &arrive(64 * mtu)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "line 3: arrive.bytes: {}; allowed: up to {mtu} (the scenario's switch.mtu_bytes)",
                64 * mtu
            )
        );
        let e = ck.feed_line(3, &arrive(mtu + 1)).unwrap_err();
        assert!(e.to_string().contains("arrive.bytes"), "{e}");
        ck.feed_line(3, &arrive(mtu)).unwrap();
    }

    #[test]
    fn a_payload_divergence_waits_for_its_cycle_to_be_settled() {
        // A decision missing (line 4) and a payload mismatch (line 5) in cycle 9: the first
        // is the stream's first, though the payload check finds its own before the mode
        // settles cycle 9.
        let d = SwitchConfig::small().build().unwrap();
        let lines = [
            r#"{"cycle":0,"event":"meta","schema":"mmu-cosim-events/2","seed":1,"bug":null,"config":"x","params":{}}"#,
            r#"{"cycle":1,"event":"arrive","port":0,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":1,"ncells":1,"crc":1}"#,
            r#"{"cycle":1,"event":"admit","port":0,"flow":1,"seq":0,"segments":{"private":1,"shared":0,"headroom":0}}"#,
            r#"{"cycle":9,"event":"arrive","port":2,"prio":0,"flow":2,"seq":0,"bytes":64,"dst":1,"ncells":1}"#,
            r#"{"cycle":9,"event":"depart","port":1,"queue":0,"flow":1,"seq":0,"src":0,"ncells":1,"crc":2}"#,
            r#"{"cycle":10,"event":"counters","t":0,"total":0}"#,
        ];
        let text = lines.join("\n");
        let first = check(d.clone(), text.as_bytes(), Options::default(), false).unwrap();
        let got: Vec<_> = first
            .divergences
            .iter()
            .map(|d| (d.line, d.check))
            .collect();
        assert_eq!(got, [(4, "decision missing")]);
        let all = check(d, text.as_bytes(), Options::default(), true).unwrap();
        assert!(all
            .divergences
            .iter()
            .any(|d| (d.line, d.check) == (5, "payload")));
        assert_eq!(
            all.payload,
            PayloadCounts {
                checked: 1,
                unchecked: 0
            }
        );
    }
}
