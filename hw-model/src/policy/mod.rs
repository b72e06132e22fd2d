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
//! What the policies share (private buffer first, the lossy pool, the running shared-grant
//! sums, the charges) is in `admission.rs`.

pub mod dsh;
pub mod l2bm;
pub mod sih;

use crate::accounting::Accounting;
use crate::admission::{Plan, Pools, QueueView, Request};
use crate::config::{Derived, Policy};
use crate::mmu::Fault;
use crate::pfc::fsm::PfcFsm;
use crate::ports::FlowRequests;
use crate::probes::Dirty;
use crate::wires::DropReason;
use rtl::{BlockError, Visit};

pub use dsh::Dsh;
pub use l2bm::L2bm;
pub use sih::Sih;

/// One buffer policy's blocks and rules.
pub trait BufferPolicy {
    /// L2BM: the transmitters report the read of each packet's first cell (its dequeue
    /// from the recorder). The other policies do not look, and it costs them nothing.
    const RECORDS_DEQUEUES: bool = false;

    /// Phase 1: the policy's threshold units from the registered `T` of the lossless pool
    /// and the registered counters.
    fn thresholds(&mut self, t: u32, acct: &Accounting, dirty: &mut Dirty);

    /// Phase 2, before the first port: a new cycle's admission (L2BM: its egress-grant
    /// bypass starts empty).
    fn start_admission(&mut self) {}

    /// Phase 2: the threshold of the packet's ingress queue, given `t`, the registered
    /// threshold of its pool: `T` itself (SIH, DSH), or `T_i` (L2BM, Eq. 3).
    fn queue_threshold(&mut self, _r: &Request, t: u32) -> u32 {
        t
    }

    /// Phase 2: where the packet's cells go, or why it is dropped.
    fn decide(
        &mut self,
        r: &Request,
        v: QueueView,
        pools: &Pools,
        acct: &Accounting,
        fsm: &PfcFsm,
    ) -> Result<Plan, DropReason>;

    /// Phase 2: the flow-control requests that follow a lossless packet's outcome (its plan,
    /// or `None` if it was dropped); `shared` is its queue's registered shared count.
    fn flow_control(
        &self,
        r: &Request,
        outcome: Option<&Plan>,
        shared: u32,
        acct: &Accounting,
        req: &mut FlowRequests,
    );

    /// Phase 2: an admitted packet toward egress queue `r.eq`; returns its due cycle (L2BM's
    /// sojourn estimate, 0 for the others).
    fn admitted(&mut self, _r: &Request, _acct: &Accounting, _now: u64) -> u64 {
        0
    }

    /// Phase 3: QON (and DSH PON) for the OFF queues and ports that may resume.
    fn resume(&mut self, fsm: &mut PfcFsm, acct: &Accounting, t: u32, dirty: &mut Dirty);

    /// Phase 4: the first cell of a packet of `ncells` cells of ingress queue `qi` with due
    /// cycle `due` was read in `now` from egress queue `eq` (only if
    /// [`Self::RECORDS_DEQUEUES`]).
    fn dequeued(&mut self, _qi: usize, _eq: usize, _ncells: u32, _due: u64, _now: u64) {}

    /// The edge.
    fn commit(&mut self, _cycle: u64) -> Result<(), BlockError> {
        Ok(())
    }

    /// Whether the lossless headroom is one `eta` per port (DSH's insurance, Eq. 4) rather
    /// than one per queue.
    fn headroom_per_port(&self) -> bool {
        false
    }

    /// The policy's PFC threshold units (`top.mmu.pfc.*` or `top.mmu.dsh.*`), probed before
    /// the buffer totals.
    fn probe_pfc_thresholds<V: Visit>(&self, _v: &mut V) {}

    /// The policy's pool units (`top.mmu.l2bm.*`), probed after the buffer totals.
    fn probe_pool_units<V: Visit>(&self, _v: &mut V) {}

    /// Its wires of ingress port `p`, after `beat_valid` and `qoff`.
    fn probe_port<V: Visit>(&self, _p: usize, _fsm: &PfcFsm, _acct: &Accounting, _v: &mut V) {}

    /// Its wires of egress queue `(p, q)`, after the queue's units.
    fn probe_egress_queue<V: Visit>(&self, _p: usize, _q: usize, _v: &mut V) {}

    /// Its wires of ingress queue `(p, pg)`, after the queue's counters.
    fn probe_group<V: Visit>(&self, _p: usize, _pg: usize, _v: &mut V) {}

    /// Whether the next cycle has work for the policy with idle inputs and no counter
    /// moving (L2BM's QON scan), given the registered lossless `T`.
    fn busy(&self, _fsm: &PfcFsm, _t: u32) -> bool {
        false
    }

    /// Whether its threshold units would show other values if evaluated now from `t`.
    fn settled(&self, _t: u32, _acct: &Accounting) -> bool {
        true
    }

    /// Check the policy's registers against the packets the switch holds, each as
    /// (ingress queue, due cycle) (L2BM's recorders).
    fn check_registers(&self, _packets: impl Iterator<Item = (usize, u64)>) -> Result<(), String> {
        Ok(())
    }

    /// Apply a deliberate corruption that concerns this policy.
    fn inject(&mut self, _f: Fault) {}
}

/// The policy of a switch, chosen once from its configuration.
#[derive(Debug, Clone)]
pub enum Policies {
    Sih(Sih),
    Dsh(Dsh),
    L2bm(Box<L2bm>),
}

impl Policies {
    /// The blocks of `d.cfg.policy`; `t` is the reset value of the lossless `T`.
    pub fn new(d: &Derived, t: u32) -> Self {
        match d.cfg.policy {
            Policy::Sih => Self::Sih(Sih::new(d, t)),
            Policy::Dsh => Self::Dsh(Dsh::new(d)),
            Policy::L2bm => Self::L2bm(Box::new(L2bm::new(d))),
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
