//! Payload integrity: the stream carries no payload, so a DUT that sends the right cells on
//! the right port with another packet's data would pass every other check. Its monitors
//! may add `crc` (the CRC-32 of the packet's payload, docs/cosim.md) to an `arrive` (the
//! payload driven in) and a `depart` (the payload seen leaving): the two are compared per
//! packet (flow, seq). A packet without a CRC on either side is counted, not checked.
//!
//! Both modes run it beside their own checks ([`crate::Checker`]); it needs nothing of the
//! model, since the model keeps no payload.

use crate::events::{Arrive, Depart, Event};
use crate::Divergence;
use std::collections::{HashMap, VecDeque};

/// The name of the divergences found here.
pub const CHECK: &str = "payload";

/// Departed packets (their first cell read) by whether their payload was compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PayloadCounts {
    /// A CRC on the arrival and on the departure: compared.
    pub checked: u64,
    /// A CRC missing on either side: not compared.
    pub unchecked: u64,
}

/// The arrival's CRC, cycle and line of a packet not yet departed.
#[derive(Debug, Clone, Copy)]
struct Arrived {
    crc: Option<u32>,
    cycle: u64,
    line: usize,
}

/// The CRCs of the packets in the buffer, compared at their departure.
#[derive(Debug)]
pub struct Payload {
    /// Packets that arrived and have not departed or been dropped, at most `limit`: a
    /// packet the model dropped (decisions inferred) or the DUT lost never departs, and
    /// the oldest go first.
    arrived: HashMap<(u32, u32), Arrived>,
    /// Their keys in arrival order (and some of packets gone since, compacted away).
    order: VecDeque<(u32, u32)>,
    limit: usize,
    pub counts: PayloadCounts,
}

impl Payload {
    /// A payload check remembering up to `limit` packets (more than the buffer can hold).
    pub fn new(limit: usize) -> Self {
        Self {
            arrived: HashMap::new(),
            order: VecDeque::new(),
            limit: limit.max(1),
            counts: PayloadCounts::default(),
        }
    }

    /// The next event of the stream (line `line`): a divergence if it is a departure whose
    /// CRC differs from its arrival's.
    pub fn feed(&mut self, line: usize, ev: &Event) -> Option<Divergence> {
        match ev {
            Event::Arrive(a) if a.cell.unwrap_or(0) == 0 => {
                self.arrive(line, a);
                None
            }
            Event::Drop(x) => {
                self.arrived.remove(&(x.flow, x.seq));
                None
            }
            Event::Depart(d) if d.cell.unwrap_or(0) == 0 => self.depart(line, d),
            _ => None,
        }
    }

    fn arrive(&mut self, line: usize, a: &Arrive) {
        let at = Arrived {
            crc: a.crc,
            cycle: a.cycle,
            line,
        };
        self.arrived.insert((a.flow, a.seq), at);
        self.order.push_back((a.flow, a.seq));
        while self.arrived.len() > self.limit {
            if let Some(oldest) = self.order.pop_front() {
                self.arrived.remove(&oldest);
            }
        }
        if self.order.len() > 2 * self.limit {
            let arrived = &self.arrived;
            self.order.retain(|k| arrived.contains_key(k));
        }
    }

    fn depart(&mut self, line: usize, d: &Depart) -> Option<Divergence> {
        // A departure of a packet that never arrived (or twice) is the follower's to name.
        let at = self.arrived.remove(&(d.flow, d.seq))?;
        let (Some(sent), Some(seen)) = (at.crc, d.crc) else {
            self.counts.unchecked += 1;
            return None;
        };
        self.counts.checked += 1;
        (sent != seen).then(|| Divergence {
            cycle: d.cycle,
            line,
            check: CHECK,
            event: Event::Depart(*d).to_line(),
            expected: format!(
                "flow {} seq {} left with payload CRC-32 {seen:#010x}; it arrived with {sent:#010x} (cycle {}, line {})",
                d.flow, d.seq, at.cycle, at.line
            ),
            history: Vec::new(),
            queue: Some((d.port, d.queue)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::parse_line;

    fn feed(p: &mut Payload, lines: &[&str]) -> Vec<Divergence> {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        feed_owned(p, &lines)
    }

    fn feed_owned(p: &mut Payload, lines: &[String]) -> Vec<Divergence> {
        lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| p.feed(i + 1, &parse_line(l).unwrap()))
            .collect()
    }

    const A: &str = r#"{"cycle":1,"event":"arrive","port":0,"prio":0,"flow":1,"seq":0,"bytes":64,"dst":1,"ncells":1,"crc":305419896}"#;

    #[test]
    fn a_payload_that_changed_names_the_packet_both_crcs_and_the_cycle() {
        let mut p = Payload::new(16);
        let bad = r#"{"cycle":5,"event":"depart","port":1,"queue":0,"flow":1,"seq":0,"src":0,"ncells":1,"crc":1}"#;
        let d = feed(&mut p, &[A, bad]);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].cycle, d[0].line, d[0].check), (5, 2, CHECK));
        assert_eq!(
            d[0].expected,
            "flow 1 seq 0 left with payload CRC-32 0x00000001; it arrived with 0x12345678 (cycle 1, line 1)"
        );
        assert_eq!(
            p.counts,
            PayloadCounts {
                checked: 1,
                unchecked: 0
            }
        );
        let good = bad.replace(r#""crc":1"#, r#""crc":305419896"#);
        let mut p = Payload::new(16);
        assert!(feed(&mut p, &[A, &good]).is_empty());
        assert_eq!(p.counts.checked, 1);
    }

    #[test]
    fn a_crc_missing_on_either_side_is_counted_not_checked() {
        let bare = r#"{"cycle":5,"event":"depart","port":1,"queue":0,"flow":1,"seq":0,"src":0,"ncells":1}"#;
        let mut p = Payload::new(16);
        assert!(feed(&mut p, &[A, bare]).is_empty());
        let with = bare.replace(r#""ncells":1}"#, r#""ncells":1,"crc":7}"#);
        let a_bare = A.replace(r#","crc":305419896"#, "");
        assert!(feed(&mut p, &[&a_bare, &with]).is_empty());
        assert_eq!(
            p.counts,
            PayloadCounts {
                checked: 0,
                unchecked: 2
            }
        );
        // A dropped packet is forgotten: its seq may come again.
        let drop =
            r#"{"cycle":1,"event":"drop","port":0,"flow":1,"seq":0,"reason":"lossy_threshold"}"#;
        feed(&mut p, &[A, drop]);
        assert!(p.arrived.is_empty());
    }

    #[test]
    fn packets_that_never_depart_are_forgotten_oldest_first() {
        let line = |event: &str, seq: u32, crc: u32| {
            match event {
                "arrive" => A.replace(r#""seq":0"#, &format!(r#""seq":{seq}"#)),
                _ => format!(
                    r#"{{"cycle":5,"event":"depart","port":1,"queue":0,"flow":1,"seq":{seq},"src":0,"ncells":1}}"#
                ),
            }
            .replace("305419896", &crc.to_string())
            .replace(r#""ncells":1}"#, &format!(r#""ncells":1,"crc":{crc}}}"#))
        };
        let mut p = Payload::new(2);
        let arrivals: Vec<String> = (0..50).map(|s| line("arrive", s, 1)).collect();
        assert!(feed_owned(&mut p, &arrivals).is_empty());
        assert_eq!(p.arrived.len(), 2);
        assert!(p.order.len() <= 4, "{}", p.order.len());
        // The last two are still compared; the forgotten ones are not.
        let departures: Vec<String> = (0..50).map(|s| line("depart", s, 2)).collect();
        let d = feed_owned(&mut p, &departures);
        let seqs: Vec<_> = d.iter().map(|d| d.expected.split(' ').nth(3)).collect();
        assert_eq!(seqs, [Some("48"), Some("49")]);
    }
}
