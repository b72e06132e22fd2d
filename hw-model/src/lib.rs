//! Cycle-level, bit-accurate model of a shared-memory switch traffic manager (MMU).
//!
//! The top level is [`Mmu`]: call [`Mmu::step`] once per core clock cycle with the cell
//! beats arriving on each ingress port and the PFC frames received from downstream; it
//! returns the cells departing, the PFC frames it sends upstream and the fate of each
//! arriving cell. `docs/architecture.md` maps each block to the paper equation it implements.

pub mod accounting;
pub mod admission;
pub mod config;
pub mod dsh_thresholds;
pub mod dt_threshold;
pub mod dwrr;
pub mod ecm_cp;
pub mod egress_port;
pub mod free_list;
pub mod hcf;
pub mod ingress;
pub mod l2bm;
pub mod packet_queue;
pub mod pfc_fsm;
pub mod pfc_rx;
pub mod stats;
pub mod wires;

mod mmu;

pub use config::{
    ConfigError, Derived, EcmConfig, EtaSizing, HcfConfig, HcfUnit, HeadroomMode, PacketCost,
    PfcRxMode, Policy, SwitchConfig,
};
pub use mmu::{Fault, InvariantError, Mmu, SignalDesc};
pub use stats::Stats;
pub use wires::{
    Beat, CellEvent, CellFate, CmTag, Departure, DropReason, EcmFrame, EcmKind, FiveTuple, Inputs,
    Outputs, PacketHdr, PfcFrame, Segment,
};
