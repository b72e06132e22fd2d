//! Egress schedulers: SP + DWRR per port (`dwrr.rs`), and the HCF discipline of an egress
//! queue (`hcf.rs`). The transmitters (`egress_port.rs`) ask the port's scheduler which
//! queue sends next; a driver that decides departures itself (an RTL's event stream) would
//! replace that choice, not the blocks around it.

pub mod dwrr;
pub mod hcf;
