//! Clocked primitives for cycle-level hardware models.
//!
//! Every block follows the same two-step discipline ([`Block`], [`Clocked`]):
//! *evaluate* reads register outputs and input wires and computes next values; *commit* is
//! the clock edge that makes them current. Evaluation inside a cycle runs in phases, and
//! the model's phase table is the specification of their order: a later phase may read
//! what an earlier one drove in the same cycle (a combinational chain, named as such),
//! while the blocks of one phase read nothing of each other's, so their order cannot change
//! the result. Probes are declared once per block ([`Probed`]).
//!
//! The arithmetic units are the ones the DSH paper's implementation section (IV-D) names:
//! saturating subtractors, a shifter for `alpha = 2^k`, a comparator, a multiplier for
//! non-power-of-two queue counts and an OR-reduce, plus the reciprocal-ROM divider L2BM's
//! Eq. 2 and Eq. 3 need. Each one keeps the wires of its last evaluation so a waveform can
//! show inputs, borrow and output side by side.

pub mod arith;
pub mod block;
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
pub use block::{Block, BlockError, Clocked};
pub use counter::{Counter, CounterError};
pub use lfsr::Lfsr32;
pub use phase::PhaseAccumulator;
pub use probe::{interleave, probes_of, Declare, Name, Probed, Read, Visit};
pub use reg::Reg;
pub use sram::Sram;
