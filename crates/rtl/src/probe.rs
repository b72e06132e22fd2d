//! The probe interface: a block names its wires once and reports their current values on
//! demand, so a waveform writer can sample only the wires a user selected.

/// A named wire of a block, with the width it has in hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wire {
    pub name: &'static str,
    pub width: u32,
}

/// A block whose input and output wires can be observed.
pub trait Probed {
    /// The block's wires, in a fixed order.
    fn wires(&self) -> &[Wire];
    /// The value on wire `i` (index into `wires()`) after the last evaluation.
    fn wire_value(&self, i: usize) -> u64;
}
