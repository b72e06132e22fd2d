//! What a buffer policy decides, phase by phase ([`BufferPolicy`]); `mod.rs` lists the
//! policies and chooses one. A policy reads registered state and returns what it wants (a
//! threshold, a plan, the requests and resumes of flow control); the blocks apply it.

use super::decision::{Plan, Pools, QueueView, Request};
use crate::accounting::Accounting;
use crate::dirty::Dirty;
use crate::fault::Fault;
use crate::pfc::state::PauseState;
use crate::ports::FlowRequests;
use crate::wires::DropReason;
use rtl::{BlockError, Visit};

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

    /// Phase 2: where the packet's cells go, or why it is dropped (`pause`: the QOFF and
    /// POFF registers; DSH reads POFF).
    fn decide(
        &mut self,
        r: &Request,
        v: QueueView,
        pools: &Pools,
        acct: &Accounting,
        pause: &PauseState,
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

    /// Phase 3: of the OFF queues `off` of ingress port `port` that may resume (not
    /// charged in this cycle), those that turn ON (QON), given the registered lossless `T`.
    /// `dirty` is for the policy's own units that move while checking.
    fn resume_queues(
        &mut self,
        port: usize,
        off: u8,
        acct: &Accounting,
        t: u32,
        dirty: &mut Dirty,
    ) -> u8;

    /// Phase 3, after the queues: of the POFF ports `poff` that may resume, those that turn
    /// PON (DSH).
    fn resume_ports(&self, _poff: u64, _acct: &Accounting) -> u64 {
        0
    }

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
    fn probe_port<V: Visit>(&self, _p: usize, _pause: &PauseState, _acct: &Accounting, _v: &mut V) {
    }

    /// Its wires of egress queue `(p, q)`, after the queue's units.
    fn probe_egress_queue<V: Visit>(&self, _p: usize, _q: usize, _v: &mut V) {}

    /// Its wires of ingress queue `(p, pg)`, after the queue's counters.
    fn probe_group<V: Visit>(&self, _p: usize, _pg: usize, _v: &mut V) {}

    /// Whether the next cycle has work for the policy with idle inputs and no counter
    /// moving (L2BM's QON scan), given the registered lossless `T`.
    fn busy(&self, _pause: &PauseState, _t: u32) -> bool {
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
