//! Traces for offline analysis (pandas, awk), one CSV line per event.
//!
//! Cell trace (`--trace-cells`): `cycle,event,flow,seq,src_port,dst_port,prio,cell` where
//! `event` is `inject`, `admit`, `drop` or `depart` and `cell` is the cell's index within
//! its packet. ECM frames (`--trace-ecm`, [`EcmTrace`]) and rate-limiter events
//! (`--trace-rp`, [`RpTrace`]) have their own files.

use crate::monitor::CellTxn;
use std::io::{self, BufWriter, Write};

pub const HEADER: &str = "cycle,event,flow,seq,src_port,dst_port,prio,cell";

/// A buffered CSV writer of cell transactions.
pub struct CellTrace<W: Write> {
    out: BufWriter<W>,
}

impl<W: Write> CellTrace<W> {
    /// Writes the header line.
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "{HEADER}")?;
        Ok(Self { out })
    }

    pub fn record(&mut self, t: &CellTxn) -> io::Result<()> {
        let h = t.beat.hdr;
        writeln!(
            self.out,
            "{},{},{},{},{},{},{},{}",
            t.cycle,
            t.kind.name(),
            h.flow,
            h.seq,
            h.src,
            h.dst,
            h.prio,
            t.beat.idx
        )
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// Header of the ECM frame trace (`--trace-ecm`).
pub const ECM_HEADER: &str = "cycle,cpid,src_port,flow,kind,qoff,qdelta,q_bit";

/// One CSV line per ECM frame the congestion points send: the cycle it left, its CPID,
/// the port it leaves on (the sampled frame's ingress port, toward its source), the
/// sampled frame's flow, the message kind (`regular`, `max`, `zero`), `Qoff` and `Qdelta`
/// as the frame carries them (64-byte pages times `Qscale`) and the Q bit.
pub struct EcmTrace<W: Write> {
    out: BufWriter<W>,
}

impl<W: Write> EcmTrace<W> {
    /// Writes the header line.
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "{ECM_HEADER}")?;
        Ok(Self { out })
    }

    pub fn record(&mut self, cycle: u64, f: &hw_model::EcmFrame) -> io::Result<()> {
        writeln!(
            self.out,
            "{cycle},{},{},{},{},{},{},{}",
            f.cpid,
            f.port,
            f.sampled.flow,
            f.kind.name(),
            f.qoff,
            f.qdelta,
            f.q as u8
        )
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// Header of the reaction-point trace (`--trace-rp`).
pub const RP_HEADER: &str = "cycle,nic,limiter,flow,event,fb,rate_before_bps,rate_after_bps";

/// One CSV line per rate-limiter event (`crate::reaction_point::RpEvent`). `fb` is `Fb` in
/// 64-byte pages (it has 3 fraction bits), empty for events no ECM frame caused.
pub struct RpTrace<W: Write> {
    out: BufWriter<W>,
}

impl<W: Write> RpTrace<W> {
    /// Writes the header line.
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "{RP_HEADER}")?;
        Ok(Self { out })
    }

    pub fn record(&mut self, e: &crate::reaction_point::RpEvent) -> io::Result<()> {
        let fb = e
            .fb_q3
            .map_or(String::new(), |f| (f as f64 / 8.0).to_string());
        writeln!(
            self.out,
            "{},{},{},{},{},{fb},{},{}",
            e.cycle,
            e.nic,
            e.limiter,
            e.flow,
            e.kind.name(),
            e.rate_before_bps,
            e.rate_after_bps
        )
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}
