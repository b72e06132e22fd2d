//! Buffer policies behind one interface: SIH, the baseline of the DSH paper (`sih.rs`), DSH
//! (`dsh.rs`) and L2BM (`l2bm.rs`).
//!
//! The policy is chosen in one place, [`Policies::new`], and the cycle loop is compiled
//! once per policy (`Core::step` is generic over [`BufferPolicy`]), so no cycle pays for a
//! policy it does not run. What a policy decides:
//! - phase 1 (thresholds): its threshold units, from the registered `T`;
//! - phase 2 (admission): the threshold of an ingress queue, the decision for a packet,
//!   the flow-control requests that follow, and what an admitted packet records;
//! - phase 3 (flow control): which OFF queues (and DSH POFF ports) resume;
//! - the edge: its own registers (L2BM's recorders);
//! - its probes, its invariants and its faults.
//!
//! The interface is in `rules.rs`; what the policies' decisions share (private buffer
//! first, the lossy pool) in `decision.rs`; each policy's own rules in its file. The
//! running shared-grant sums and the charges are the admission block's (`admission.rs`).

pub mod decision;
pub mod dsh;
pub mod l2bm;
pub mod rules;
pub mod sih;

use crate::config::{Derived, Policy};
use crate::dt_threshold::pool_units;

pub use decision::{Plan, PoolParams, Pools, QueueView, Request};
pub use dsh::Dsh;
pub use l2bm::L2bm;
pub use rules::BufferPolicy;
pub use sih::Sih;

/// The policy of a switch, chosen once from its configuration.
#[derive(Debug, Clone)]
pub enum Policies {
    Sih(Sih),
    Dsh(Dsh),
    L2bm(Box<L2bm>),
}

/// Something to run with a policy's concrete blocks, whichever `d.cfg.policy` chose: how a
/// user outside the model (the checker's follower) gets a policy without choosing one.
pub trait WithPolicy {
    type Output;

    fn run<P: BufferPolicy + 'static>(self, policy: P) -> Self::Output;
}

impl Policies {
    /// The blocks of `d.cfg.policy` at reset (the units show the reset lossless `T`).
    pub fn new(d: &Derived) -> Self {
        match d.cfg.policy {
            Policy::Sih => Self::Sih(Sih::new(d, pool_units(d).0.t())),
            Policy::Dsh => Self::Dsh(Dsh::new(d)),
            Policy::L2bm => Self::L2bm(Box::new(L2bm::new(d))),
        }
    }

    /// Run `w` with the concrete blocks.
    pub fn with<W: WithPolicy>(self, w: W) -> W::Output {
        match self {
            Self::Sih(p) => w.run(p),
            Self::Dsh(p) => w.run(p),
            Self::L2bm(p) => w.run(*p),
        }
    }
}

/// Run `$body` with `$p` bound to the policy's concrete blocks (`&` or `&mut`, as `$e` is):
/// the one place the policy is dispatched.
macro_rules! with_policy {
    ($e:expr, $p:ident => $body:expr) => {
        match $e {
            $crate::policy::Policies::Sih($p) => $body,
            $crate::policy::Policies::Dsh($p) => $body,
            $crate::policy::Policies::L2bm($p) => {
                let $p = &mut **$p;
                $body
            }
        }
    };
}

/// [`with_policy!`] for a shared reference.
macro_rules! with_policy_ref {
    ($e:expr, $p:ident => $body:expr) => {
        match $e {
            $crate::policy::Policies::Sih($p) => $body,
            $crate::policy::Policies::Dsh($p) => $body,
            $crate::policy::Policies::L2bm($p) => {
                let $p = &**$p;
                $body
            }
        }
    };
}

pub(crate) use {with_policy, with_policy_ref};
