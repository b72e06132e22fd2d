//! The FST encoder, on the `fst-writer` crate (by the author of `wellen`).

use std::io::{Seek, Write};

use fst_writer::{
    FstBodyWriter, FstFileType, FstHeaderWriter, FstInfo, FstScopeType, FstSignalId, FstSignalType,
    FstVarDirection, FstVarType, FstWriteError,
};

use crate::vcd::push_binary;
use crate::writer::{Declaration, Encoder, Header, NewEncoder};
use crate::{WaveError, WaveWriter};

/// The value changes buffered in memory are compressed into a block of the file once they
/// take this much, which bounds the writer's memory whatever the run length.
const FLUSH_AT: usize = 16 << 20;

/// A [`WaveWriter`] that writes FST, the compressed format of GTKWave's `fstapi` (what
/// Verilator's `--trace-fst` writes, and what GTKWave and Surfer load fastest).
pub type FstWriter<W> = WaveWriter<FstEncoder<W>>;

/// Hands the changes to `fst-writer`, which keeps one list per signal and compresses a
/// block at a time (LZ4 per signal, zlib for the time table).
pub struct FstEncoder<W: Write + Seek> {
    body: FstBodyWriter<W>,
    ids: Vec<FstSignalId>,
    widths: Vec<u32>,
    /// A value as `fst-writer` takes it: one ASCII `0`/`1` per bit, MSB first.
    bits: Vec<u8>,
    /// A time was written: flushing a block is allowed only before a new time.
    timed: bool,
}

impl<W: Write + Seek> std::fmt::Debug for FstEncoder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FstEncoder")
            .field("signals", &self.ids.len())
            .finish_non_exhaustive()
    }
}

fn fst_error(e: FstWriteError) -> WaveError {
    match e {
        FstWriteError::Io(e) => WaveError::Io(e),
        other => WaveError::Fst(other.to_string()),
    }
}

impl<W: Write + Seek> NewEncoder for FstEncoder<W> {
    /// Writes the header and the hierarchy into `out`, which must be empty: the header is
    /// completed at the end by seeking back. The date is left empty and the version fixed,
    /// so identical runs give identical files.
    fn new(out: W, header: &Header<'_>) -> Result<Self, WaveError> {
        let info = FstInfo {
            start_time: 0,
            timescale_exponent: header.timescale().exponent(),
            version: "mmu-sim".to_owned(),
            date: String::new(),
            file_type: FstFileType::Verilog,
        };
        let mut hw = FstHeaderWriter::new(out, &info).map_err(fst_error)?;
        let mut ids = vec![None; header.slots()];
        header.walk(|d| {
            match d {
                Declaration::Scope(name) => hw.scope(name, "", FstScopeType::Module),
                Declaration::Upscope => hw.up_scope(),
                Declaration::Var { slot, name, width } => hw
                    .var(
                        name,
                        FstSignalType::bit_vec(width),
                        FstVarType::Wire,
                        FstVarDirection::Implicit,
                        None,
                    )
                    .map(|id| ids[slot] = Some(id)),
            }
            .map_err(fst_error)
        })?;
        let ids: Vec<FstSignalId> = ids.into_iter().flatten().collect();
        debug_assert_eq!(ids.len(), header.slots(), "the walk declares every slot");
        Ok(Self {
            body: hw.finish().map_err(fst_error)?,
            widths: (0..header.slots())
                .map(|s| header.signal(s).width)
                .collect(),
            ids,
            bits: Vec::with_capacity(64),
            timed: false,
        })
    }
}

impl<W: Write + Seek> Encoder for FstEncoder<W> {
    type Output = W;

    fn time(&mut self, time: u64) -> Result<(), WaveError> {
        if self.timed && self.body.size() >= FLUSH_AT {
            self.body.flush().map_err(fst_error)?;
        }
        self.timed = true;
        self.body.time_change(time).map_err(fst_error)
    }

    fn initial(&mut self, values: &[u64]) -> Result<(), WaveError> {
        for (slot, &v) in values.iter().enumerate() {
            self.change(slot, v)?;
        }
        Ok(())
    }

    fn change(&mut self, slot: usize, value: u64) -> Result<(), WaveError> {
        self.bits.clear();
        push_binary(&mut self.bits, value, self.widths[slot]);
        self.body
            .signal_change(self.ids[slot], &self.bits)
            .map_err(fst_error)
    }

    fn finish(mut self, end: Option<u64>) -> Result<W, WaveError> {
        if let Some(end) = end {
            self.body.time_change(end).map_err(fst_error)?;
        }
        let mut out = self.body.finish().map_err(fst_error)?;
        out.flush()?;
        Ok(out)
    }
}
