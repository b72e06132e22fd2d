//! The clocked interface of every block of a cycle model.
//!
//! A cycle has two steps. In the first, each block is *evaluated* once, in the phase the
//! model's phase table gives it: `eval` reads the block's registered state and its input
//! bundle (registered outputs of other blocks, or combinational outputs of an earlier
//! phase), drives its output bundle and computes its next state. The second step is the
//! clock *edge*, `commit`, where every block latches its next state. A block never reads
//! the next state of another block of its own phase, so the blocks of one phase may be
//! evaluated in any order; the model's phase table says which phase reads what from which
//! earlier phase.

use std::fmt;

/// A model bug found while evaluating a block or at its edge: a counter that would wrap,
/// read data that was not on the bus, a register that disagrees with a recount. Reported,
/// never hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockError(pub String);

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BlockError {}

impl From<String> for BlockError {
    fn from(what: String) -> Self {
        Self(what)
    }
}

/// Something with state that changes at the clock edge: registers, memories, counters,
/// and every block with logic.
pub trait Clocked {
    /// The clock edge that ends cycle `cycle`: latch the next state.
    fn commit(&mut self, cycle: u64) -> Result<(), BlockError>;
}

/// A block with combinational logic, evaluated once per cycle in its phase, from the input
/// bundle `In` to the output bundle `Out`.
pub trait Block<In, Out>: Clocked {
    /// Evaluate cycle `cycle`.
    fn eval(&mut self, cycle: u64, input: In, out: Out) -> Result<(), BlockError>;
}
