//! The waveform format chosen at run time, from a file name.

use std::fmt;
use std::io::{Seek, Write};
use std::path::Path;

use crate::writer::{Encoder, Header, NewEncoder};
use crate::{FstEncoder, SignalFilter, SignalSpec, VcdEncoder, WaveError, WaveWriter, Window};

/// A waveform file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// IEEE 1364 Value Change Dump: text, read by every viewer and easy to diff or grep.
    Vcd,
    /// GTKWave's compressed Fast Signal Trace: 10x to 1000x smaller than VCD, loads fastest.
    Fst,
}

impl Format {
    /// Every format, in the order errors list them.
    pub const ALL: [Format; 2] = [Format::Vcd, Format::Fst];

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Vcd => "vcd",
            Format::Fst => "fst",
        }
    }

    /// The format named by `path`'s extension (`.vcd` or `.fst`, in any case); any other
    /// extension, or none, is an error naming the allowed ones.
    pub fn from_path(path: &Path) -> Result<Self, WaveError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        Self::ALL
            .into_iter()
            .find(|f| ext.eq_ignore_ascii_case(f.extension()))
            .ok_or_else(|| WaveError::BadPath {
                path: path.to_string_lossy().into_owned(),
                reason: format!(
                    "the extension must be {} (it chooses the waveform format)",
                    Self::ALL
                        .map(|f| format!(".{}", f.extension()))
                        .join(" or ")
                ),
            })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Vcd => "VCD",
            Format::Fst => "FST",
        })
    }
}

/// A VCD or an FST encoder, chosen at run time (see [`AnyWriter`]).
#[derive(Debug)]
pub enum AnyEncoder<W: Write + Seek> {
    /// VCD text.
    Vcd(VcdEncoder<W>),
    /// FST (boxed: its buffers make it much larger than the VCD encoder).
    Fst(Box<FstEncoder<W>>),
}

/// A [`WaveWriter`] whose format is chosen at run time.
pub type AnyWriter<W> = WaveWriter<AnyEncoder<W>>;

impl<W: Write + Seek> AnyWriter<W> {
    /// Like [`WaveWriter::new`] for a [`VcdEncoder`] or an [`FstEncoder`], as `format`
    /// says.
    pub fn with_format(
        out: W,
        format: Format,
        signals: &[SignalSpec],
        clock_hz: u64,
        filter: &SignalFilter,
        window: Window,
    ) -> Result<Self, WaveError> {
        WaveWriter::with_encoder(signals, clock_hz, filter, window, |h: &Header<'_>| {
            Ok(match format {
                Format::Vcd => AnyEncoder::Vcd(VcdEncoder::new(out, h)?),
                Format::Fst => AnyEncoder::Fst(Box::new(FstEncoder::new(out, h)?)),
            })
        })
    }
}

impl<W: Write + Seek> Encoder for AnyEncoder<W> {
    type Output = W;

    fn time(&mut self, time: u64) -> Result<(), WaveError> {
        match self {
            AnyEncoder::Vcd(e) => e.time(time),
            AnyEncoder::Fst(e) => e.time(time),
        }
    }

    fn initial(&mut self, values: &[u64]) -> Result<(), WaveError> {
        match self {
            AnyEncoder::Vcd(e) => e.initial(values),
            AnyEncoder::Fst(e) => e.initial(values),
        }
    }

    #[inline]
    fn change(&mut self, slot: usize, value: u64) -> Result<(), WaveError> {
        match self {
            AnyEncoder::Vcd(e) => e.change(slot, value),
            AnyEncoder::Fst(e) => e.change(slot, value),
        }
    }

    fn finish(self, end: Option<u64>) -> Result<W, WaveError> {
        match self {
            AnyEncoder::Vcd(e) => e.finish(end),
            AnyEncoder::Fst(e) => (*e).finish(end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_chooses_the_format() {
        assert_eq!(
            Format::from_path(Path::new("a/b.vcd")).unwrap(),
            Format::Vcd
        );
        assert_eq!(Format::from_path(Path::new("b.FST")).unwrap(), Format::Fst);
        for bad in ["b.gtkw", "b", "b.vcd.gz"] {
            let e = Format::from_path(Path::new(bad)).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(bad) && msg.contains(".vcd or .fst"), "{msg}");
        }
    }
}
