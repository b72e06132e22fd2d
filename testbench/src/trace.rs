//! Cell trace: one CSV line per cell transaction, for offline analysis (pandas, awk).
//!
//! Columns: `cycle,event,flow,seq,src_port,dst_port,prio,cell` where `event` is `inject`,
//! `admit`, `drop` or `depart` and `cell` is the cell's index within its packet.

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
