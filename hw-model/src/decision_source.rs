//! The decision source: where the model takes a decision that the device under test also
//! takes. The model's blocks compute their own decision and hand it to the source, which
//! returns the one the switch acts on. A run of the model ([`crate::Mmu`]) uses
//! [`OwnDecisions`], which returns the model's own (and compiles away); the checker's follow
//! mode (`checker/src/follow.rs`) runs the same admission with a source that returns the
//! DUT's decision and keeps the model's for the comparison, so the model's state follows
//! what the DUT did.
//!
//! Consulted now: admission's accept or drop and its segments ([`crate::admission`]). Not
//! yet: the departures (which packet leaves which port when); docs/architecture.md,
//! "Follow mode and the decision source", says what the follower still implements itself
//! and what the departures need.

use crate::policy::{Plan, QueueView, Request};
use crate::wires::DropReason;

/// The source of the decisions the model shares with a DUT.
pub trait DecisionSource {
    /// Why a packet was dropped, as the source names it (the DUT's reason may be a name
    /// the model does not know).
    type Reason;

    /// The decision for the start of packet `r`: `model` is the model's own (the buffer
    /// policy's decision, then the egress classification of an admitted packet), made
    /// from the inputs `v`. Admission charges and flow-controls what this returns.
    fn admission(
        &mut self,
        r: &Request,
        v: &QueueView,
        model: Result<Plan, DropReason>,
    ) -> Result<Plan, Self::Reason>;
}

/// The model's own decisions.
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnDecisions;

impl DecisionSource for OwnDecisions {
    type Reason = DropReason;

    #[inline(always)]
    fn admission(
        &mut self,
        _: &Request,
        _: &QueueView,
        model: Result<Plan, DropReason>,
    ) -> Result<Plan, DropReason> {
        model
    }
}
