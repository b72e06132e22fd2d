//! Clocked primitives for cycle-level hardware models.
//!
//! Every block follows the same two-phase discipline (see `docs/architecture.md`):
//! *evaluate* reads only current register outputs and input wires and computes next
//! values; *commit* is the clock edge that makes the next values current. Because no
//! block reads another block's next value, the order in which blocks are evaluated
//! inside a cycle cannot change the result.
//!
//! The arithmetic units are the ones the DSH paper's implementation section (IV-D) names:
//! saturating subtractors, a shifter for `alpha = 2^k`, a comparator, a multiplier for
//! non-power-of-two queue counts and an OR-reduce, plus the reciprocal-ROM divider L2BM's
//! Eq. 2 and Eq. 3 need. Each one keeps the wires of its last evaluation so a waveform can
//! show inputs, borrow and output side by side.

pub mod arith;
pub mod counter;
pub mod lfsr;
pub mod phase;
pub mod probe;
pub mod reg;
pub mod sram;

pub use arith::{
    Comparator, Multiplier, OrReduce, RecipDivider, SatSub, Shifter, ShifterError, RECIP_F,
    RECIP_M, RECIP_ROM,
};
pub use counter::{Counter, CounterError};
pub use lfsr::Lfsr32;
pub use phase::PhaseAccumulator;
pub use probe::{Probed, Wire};
pub use reg::Reg;
pub use sram::Sram;
