//! Waveform output for cycle-level models.
//!
//! This crate knows nothing about the model it serves: it takes a flat list of
//! [`SignalSpec`]s (dot-separated hierarchical paths with a bit width), and
//! writes a Value Change Dump (IEEE 1364 VCD) or an FST that GTKWave, Surfer and
//! other viewers open directly.
//!
//! The pieces:
//! - [`SignalFilter`] and [`Window`] pick *which* signals and *which* cycles are
//!   dumped, because a full dump of a large model over millions of cycles is
//!   both slow to write and useless to look at.
//! - [`Timescale`] turns a clock frequency into the VCD `$timescale` so that
//!   the viewer's time axis is in real time units while every cycle edge falls
//!   on an integer tick.
//! - [`WaveWriter`] samples the selected signals once per cycle and hands only
//!   what changed to its [`Encoder`]: [`VcdWriter`] writes VCD text,
//!   [`FstWriter`] writes FST (with the `fst-writer` crate), and [`AnyWriter`]
//!   either, as a [`Format`] chosen at run time says. Output is byte-identical
//!   for identical input (no wall-clock date), so dumps can be diffed and checked
//!   into regression baselines.
//! - [`write_gtkw`] writes a GTKWave save file that opens the dump with
//!   signals already grouped.
//! - [`lint`] is a strict checker for VCD text, used to test that what we
//!   write is well formed (the `vcd` crate does not check what it writes).

mod filter;
mod format;
mod fst;
mod gtkw;
pub mod lint;
mod timescale;
mod vcd;
mod window;
mod writer;

pub use filter::SignalFilter;
pub use format::{AnyEncoder, AnyWriter, Format};
pub use fst::{FstEncoder, FstWriter};
pub use gtkw::{filter_path, write_gtkw, GtkwGroup, GtkwTrace, GtkwView, Translate};
pub use timescale::Timescale;
pub use vcd::{VcdEncoder, VcdWriter};
pub use window::Window;
pub use writer::{Declaration, Encoder, Header, NewEncoder, WaveWriter};

/// One probed signal.
///
/// `path` is dot-separated and hierarchical, e.g.
/// `"top.mmu.ingress.p03.pg5.shared_cells"`: every component but the last
/// becomes a nested `$scope module`, the last one is the variable name.
/// `width` is the bit width, `1..=64`; values are unsigned and only the low
/// `width` bits are used.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SignalSpec {
    /// Dot-separated hierarchical path; at least one scope and a leaf name.
    pub path: String,
    /// Bit width, `1..=64`.
    pub width: u32,
}

impl SignalSpec {
    /// Convenience constructor.
    pub fn new(path: impl Into<String>, width: u32) -> Self {
        Self {
            path: path.into(),
            width,
        }
    }

    /// The name GTKWave gives this signal in save files and its signal list:
    /// the plain path for a 1-bit signal, `path[W-1:0]` for a vector (GTKWave
    /// appends the bit range itself when a `$var` declares none).
    pub fn gtkwave_name(&self) -> String {
        if self.width == 1 {
            self.path.clone()
        } else {
            format!("{}[{}:0]", self.path, self.width.saturating_sub(1))
        }
    }
}

/// Everything that can go wrong while configuring or writing waveforms.
///
/// Messages name the offending input so that a user who mistyped a command
/// line option sees exactly which part was wrong.
#[derive(Debug, thiserror::Error)]
pub enum WaveError {
    /// A glob in a signal filter did not parse.
    #[error("bad signal filter glob {glob:?}: {source}")]
    BadGlob {
        /// The offending glob, as given.
        glob: String,
        /// What globset objected to.
        #[source]
        source: globset::Error,
    },
    /// A glob of a signal filter matches no signal: most likely a typo, which would
    /// otherwise give a dump without the signals the user asked for.
    #[error("signal filter glob {glob:?} matches no signal; the closest paths are: {}", closest.join(", "))]
    NoMatch {
        /// The glob, as given.
        glob: String,
        /// The signal paths closest to it, closest first (at most five).
        closest: Vec<String>,
    },
    /// A `FROM:TO` cycle window did not parse or is empty.
    #[error("bad cycle window {input:?}: {reason}")]
    BadWindow {
        /// The offending window text, as given.
        input: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A cycle window reaches outside the run, so part or all of it would silently be
    /// missing from the dump.
    #[error("cycle window {window} reaches outside the run of {cycles} cycles: FROM must be below {cycles} and TO at most {cycles}")]
    WindowOutsideRun {
        /// The window, as `FROM:TO`.
        window: String,
        /// The run length in cycles.
        cycles: u64,
    },
    /// The clock frequency cannot be represented as a VCD timescale.
    #[error("bad clock frequency {hz} Hz: {reason}")]
    BadClock {
        /// The offending frequency.
        hz: u64,
        /// Why it was rejected.
        reason: String,
    },
    /// A signal's path or width cannot be written to a VCD.
    #[error("bad signal {path:?}: {reason}")]
    BadSignal {
        /// The offending signal path.
        path: String,
        /// Why it was rejected.
        reason: String,
    },
    /// `sample` was called with a cycle not after the previous one.
    #[error("cycle {got} sampled after cycle {previous}: cycles must strictly increase")]
    CycleNotIncreasing {
        /// The previously sampled cycle.
        previous: u64,
        /// The cycle that was passed now.
        got: u64,
    },
    /// `cycle * ticks_per_cycle` does not fit the 64-bit VCD time.
    #[error("cycle {cycle} overflows the 64-bit VCD time at {ticks_per_cycle} ticks per cycle")]
    TimeOverflow {
        /// The cycle that overflowed.
        cycle: u64,
        /// The timescale's ticks per cycle.
        ticks_per_cycle: u64,
    },
    /// A file path cannot be written into a GTKWave save file.
    #[error("bad path {path:?}: {reason}")]
    BadPath {
        /// The offending path, lossily converted for display.
        path: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The FST writer refused a value or a name.
    #[error("FST writer: {0}")]
    Fst(String),
    /// Writing the output failed.
    #[error("waveform I/O error: {0}")]
    Io(#[from] std::io::Error),
}
