//! Cycle-level, bit-accurate model of a shared-memory switch traffic manager (MMU).
//!
//! The top level is [`Mmu`]: call [`Mmu::step`] once per core clock cycle with the cell
//! beats arriving on each ingress port and the PFC frames received from downstream; it
//! returns the cells departing, the PFC frames it sends upstream and the fate of each
//! arriving cell. Each block lives in its own module; `mmu.rs` wires them and holds the
//! phase table, the order of work inside a cycle. `docs/architecture.md` maps each block
//! to the paper equation it implements.

pub mod accounting;
pub mod admission;
mod check;
pub mod config;
pub mod decision_source;
pub mod dirty;
pub mod dt_threshold;
pub mod ecm_cp;
pub mod ecn_marker;
pub mod egress_port;
pub mod fault;
pub mod free_list;
pub mod ingress;
pub mod int_stamp;
pub mod packet_queue;
pub mod pfc;
pub mod policy;
pub mod ports;
pub mod probes;
pub mod queue_len;
pub mod sched;
pub mod stats;
pub mod wires;

mod mmu;

pub use config::{
    ConfigError, Derived, EcmConfig, EcnConfig, EcnCurveConfig, EcnUnit, EtaSizing, HcfConfig,
    HcfUnit, HeadroomMode, L2bmMu, MarkOn, PacketCost, PfcRxMode, Policy, SwitchConfig,
};
pub use dirty::DirtyWords;
pub use fault::Fault;
pub use mmu::{InvariantError, Mmu, Unit, PHASES};
/// L2BM's units and constants, at the path the tests use.
pub use policy::l2bm;
pub use probes::SignalDesc;
pub use stats::Stats;
pub use wires::{
    Beat, CellEvent, CellFate, CmTag, Departure, DropReason, EcmFrame, EcmKind, Ecn, FiveTuple,
    Inputs, Outputs, PacketHdr, PfcFrame, Segment,
};
