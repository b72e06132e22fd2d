//! Traces for offline analysis (pandas, awk), one CSV line per event, written through
//! [`crate::csv_file`].
//!
//! Cell trace (`--trace-cells`): `cycle,event,flow,seq,src_port,dst_port,prio,cell` where
//! `event` is `inject`, `admit`, `drop` or `depart` and `cell` is the cell's index within
//! its packet. ECM frames (`--trace-ecm`, [`EcmTrace`]) and rate-limiter events
//! (`--trace-rp`, [`RpTrace`]) have their own files.

use crate::csv_file::{CsvWriter, Plain};
use crate::monitor::CellTxn;
use serde::Serialize;
use std::io::{self, Write};

/// The header [`CellRow`] gives, as docs and tests expect it.
pub const HEADER: &str = "cycle,event,flow,seq,src_port,dst_port,prio,cell";

/// One line of the cell trace.
#[derive(Debug, Default, Serialize)]
pub struct CellRow {
    pub cycle: u64,
    pub event: &'static str,
    pub flow: u32,
    pub seq: u32,
    pub src_port: u8,
    pub dst_port: u8,
    pub prio: u8,
    pub cell: u16,
}

/// A buffered CSV writer of cell transactions.
pub struct CellTrace<W: Write> {
    out: CsvWriter<W, CellRow>,
}

impl<W: Write> CellTrace<W> {
    /// Writes the header line.
    pub fn new(out: W) -> io::Result<Self> {
        Ok(Self {
            out: CsvWriter::new(out)?,
        })
    }

    pub fn record(&mut self, t: &CellTxn) -> io::Result<()> {
        let h = t.beat.hdr;
        self.out.record(&CellRow {
            cycle: t.cycle,
            event: t.kind.name(),
            flow: h.flow,
            seq: h.seq,
            src_port: h.src,
            dst_port: h.dst,
            prio: h.prio,
            cell: t.beat.idx,
        })
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.finish()
    }
}

/// The header [`EcmRow`] gives (`--trace-ecm`).
pub const ECM_HEADER: &str = "cycle,cpid,src_port,flow,kind,qoff,qdelta,q_bit";

/// One ECM frame the congestion points send: the cycle it left, its CPID, the port it
/// leaves on (the sampled frame's ingress port, toward its source), the sampled frame's
/// flow, the message kind (`regular`, `max`, `zero`), `Qoff` and `Qdelta` as the frame
/// carries them (64-byte pages times `Qscale`) and the Q bit.
#[derive(Debug, Default, Serialize)]
pub struct EcmRow {
    pub cycle: u64,
    pub cpid: u16,
    pub src_port: u8,
    pub flow: u32,
    pub kind: &'static str,
    pub qoff: i32,
    pub qdelta: i32,
    pub q_bit: u8,
}

/// One CSV line per ECM frame ([`EcmRow`]).
pub struct EcmTrace<W: Write> {
    out: CsvWriter<W, EcmRow>,
}

impl<W: Write> EcmTrace<W> {
    /// Writes the header line.
    pub fn new(out: W) -> io::Result<Self> {
        Ok(Self {
            out: CsvWriter::new(out)?,
        })
    }

    pub fn record(&mut self, cycle: u64, f: &hw_model::EcmFrame) -> io::Result<()> {
        self.out.record(&EcmRow {
            cycle,
            cpid: f.cpid,
            src_port: f.port,
            flow: f.sampled.flow,
            kind: f.kind.name(),
            qoff: f.qoff,
            qdelta: f.qdelta,
            q_bit: f.q as u8,
        })
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.finish()
    }
}

/// The header [`RpRow`] gives (`--trace-rp`).
pub const RP_HEADER: &str = "cycle,nic,limiter,flow,event,fb,rate_before_bps,rate_after_bps";

/// One rate-limiter event (`stimulus::reaction_point::RpEvent`). `fb` is `Fb` in 64-byte
/// pages (it has 3 fraction bits), empty for events no ECM frame caused.
#[derive(Debug, Default, Serialize)]
pub struct RpRow {
    pub cycle: u64,
    pub nic: u8,
    pub limiter: u8,
    pub flow: u32,
    pub event: &'static str,
    pub fb: Option<Plain>,
    pub rate_before_bps: u64,
    pub rate_after_bps: u64,
}

/// One CSV line per rate-limiter event ([`RpRow`]).
pub struct RpTrace<W: Write> {
    out: CsvWriter<W, RpRow>,
}

impl<W: Write> RpTrace<W> {
    /// Writes the header line.
    pub fn new(out: W) -> io::Result<Self> {
        Ok(Self {
            out: CsvWriter::new(out)?,
        })
    }

    pub fn record(&mut self, e: &stimulus::reaction_point::RpEvent) -> io::Result<()> {
        self.out.record(&RpRow {
            cycle: e.cycle,
            nic: e.nic,
            limiter: e.limiter,
            flow: e.flow,
            event: e.kind.name(),
            fb: e.fb_q3.map(|f| Plain(f as f64 / 8.0)),
            rate_before_bps: e.rate_before_bps,
            rate_after_bps: e.rate_after_bps,
        })
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv_file::header;

    #[test]
    fn derived_headers_are_the_documented_ones() {
        assert_eq!(header::<CellRow>(), HEADER);
        assert_eq!(header::<EcmRow>(), ECM_HEADER);
        assert_eq!(header::<RpRow>(), RP_HEADER);
    }
}
