//! Admission at start of packet, for the whole packet (DSH II-C, SIH): the admission block
//! of the phase table, and the decisions it is made of.
//!
//! For a lossless ingress queue with counters `(private, shared, headroom)` and a packet of
//! `n` cells, the four cases of DSH II-C become, cell for cell:
//! 1. private buffer while `private < phi` (the packet may straddle into case 2 or 3);
//! 2. shared buffer if `omega_s < T` (Eq. 2) and the shared segment `B_s` has room;
//! 3. headroom if `headroom + m <= eta` (Eq. 1); the queue turns QOFF and PAUSE is sent;
//! 4. otherwise the packet is dropped (`HeadroomFull`).
//!
//! Lossy queues use the same private / DT-shared split on their own pool and drop instead
//! of pausing.
//!
//! Under L2BM the same SIH cases apply with the queue's own threshold `T_i` (L2BM Eq. 3,
//! `l2bm.rs`) in place of `T`, for lossless and lossy queues; a lossy packet must also pass
//! the egress pool's DT (`l2bm_lossy`, dual admission of L2BM Fig. 5). Which rules apply is
//! the buffer policy's (`policy/`).
//!
//! All ports decide in the same cycle from the same registered counters and `T`; a running
//! sum of the shared cells granted earlier in the cycle keeps the segment from being
//! over-committed (the bypass adder of an admission pipeline). Ports are decided in index
//! order, so a lower port index wins when the segment is nearly full. In the same chain,
//! an admitted packet for an HCF egress queue is classified into HP or LP, or dropped
//! (`sched/hcf.rs`: an HCF drop adds nothing to the sums), and L2BM adds the packet to its
//! egress-grant bypass. The admission block charges the counters (they change at the edge),
//! requests QOFF/POFF from PFC generation, and hands each beat to its ingress port with
//! its fate.

use crate::accounting::{Accounting, Update};
use crate::config::{Derived, QUEUES};
use crate::dt_threshold::DtThreshold;
use crate::ingress::{segments, Ingress};
use crate::packet_queue::{Desc, NULL};
use crate::pfc::fsm::PfcFsm;
use crate::policy::BufferPolicy;
use crate::ports::FlowRequests;
use crate::probes::Dirty;
use crate::sched::hcf::{Arrival, Hcf};
use crate::stats::Stats;
use crate::wires::{Beat, CellEvent, DropReason};
use rtl::{Block, BlockError, Clocked};

/// Where the cells of an admitted packet go: `seg0` first cells to the private segment,
/// then `seg1` to the shared segment, the rest to headroom (lossless only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub seg0: u16,
    pub seg1: u16,
    pub headroom: u16,
}

/// The static parameters of one pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolParams {
    /// `phi`, cells per ingress queue.
    pub private: u32,
    /// Shared segment size, cells.
    pub shared_segment: u32,
}

/// The two pools.
#[derive(Debug, Clone, Copy)]
pub struct Pools {
    pub lossless: PoolParams,
    pub lossy: PoolParams,
}

/// A packet announced by a start-of-packet beat, as admission sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Ingress port, priority group and ingress queue `port * 8 + pg`.
    pub port: usize,
    pub pg: usize,
    pub qi: usize,
    /// Egress port and egress queue `dst * 8 + pg`.
    pub dst: usize,
    pub eq: usize,
    /// Cells.
    pub n: u32,
    pub lossless: bool,
}

impl Request {
    /// The packet of `n` cells from ingress port `port`, priority `pg`, to egress port `dst`.
    pub fn new(port: usize, pg: usize, dst: usize, n: u32, lossless: bool) -> Self {
        Self {
            port,
            pg,
            qi: port * QUEUES + pg,
            dst,
            eq: dst * QUEUES + pg,
            n,
            lossless,
        }
    }
}

/// Inputs of one decision: the ingress queue's registered counters and the pool state.
#[derive(Debug, Clone, Copy)]
pub struct QueueView {
    pub private: u32,
    pub shared: u32,
    pub headroom: u32,
    /// DT threshold `T` of the pool (registered).
    pub t: u32,
    /// Pool's shared occupancy at the start of the cycle plus grants earlier this cycle.
    pub shared_in_use: u32,
}

/// Where the cells left after the private buffer go.
enum Place {
    Shared,
    Headroom,
}

/// Case 1 for every pool: fill the queue's private buffer first; `place` decides where the
/// remaining `m` cells go (or refuses the packet).
fn decide(
    n: u32,
    v: &QueueView,
    pool: PoolParams,
    place: impl FnOnce(u32) -> Result<Place, DropReason>,
) -> Result<Plan, DropReason> {
    let to_private = n.min(pool.private.saturating_sub(v.private));
    let m = n - to_private;
    let (seg1, headroom) = match m {
        0 => (0, 0),
        _ => match place(m)? {
            Place::Shared => (m, 0),
            Place::Headroom => (0, m),
        },
    };
    Ok(Plan {
        seg0: to_private as u16,
        seg1: seg1 as u16,
        headroom: headroom as u16,
    })
}

/// Lossless decision under SIH with headroom `eta` cells.
pub fn lossless(n: u32, v: QueueView, pool: PoolParams, eta: u32) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if v.shared < v.t && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else if v.headroom + m <= eta {
            Ok(Place::Headroom)
        } else {
            Err(DropReason::HeadroomFull)
        }
    })
}

/// The ingress port's DSH state for one decision.
#[derive(Debug, Clone, Copy)]
pub struct PortView {
    /// The port is in POFF (Fig. 8).
    pub poff: bool,
    /// Insurance headroom cells the port holds.
    pub insurance: u32,
    /// The port's insurance headroom, `eta` cells (Eq. 4 reserves one per port).
    pub eta: u32,
}

/// Lossless decision under DSH (section IV-B, Fig. 8). Private while `q < phi`, as in SIH;
/// then, while the port is PON, the shared segment, which holds footroom and shared
/// headroom alike (no per-queue cap: queue-level PFC at `X_qoff = T - eta` does the
/// limiting, and a congested queue may use headroom left by the other queues of its port);
/// while the port is POFF, or if the segment is full, the port's insurance headroom;
/// otherwise the packet is dropped.
pub fn dsh(n: u32, v: QueueView, pool: PoolParams, port: PortView) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if !port.poff && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else if port.insurance + m <= port.eta {
            Ok(Place::Headroom)
        } else {
            Err(DropReason::HeadroomFull)
        }
    })
}

/// L2BM dual admission of a lossy packet (Fig. 5): the ingress decision ([`lossy`] with the
/// queue's L2BM threshold `T_i` in `v.t`), then the egress pool: the packet's egress queue,
/// `eg_cells` cells counting this cycle's earlier grants, must be below the lossy egress
/// pool's DT threshold `t_egress`, or the packet is dropped (`EgressThreshold`). Lossless
/// packets get no egress check (a lossless class must not drop; `l2bm.rs`).
pub fn l2bm_lossy(
    n: u32,
    v: QueueView,
    pool: PoolParams,
    eg_cells: u32,
    t_egress: u32,
) -> Result<Plan, DropReason> {
    let plan = lossy(n, v, pool)?;
    if eg_cells < t_egress {
        Ok(plan)
    } else {
        Err(DropReason::EgressThreshold)
    }
}

/// Lossy decision: private, then DT-shared, else drop.
pub fn lossy(n: u32, v: QueueView, pool: PoolParams) -> Result<Plan, DropReason> {
    decide(n, &v, pool, |m| {
        if v.shared < v.t && v.shared_in_use + m <= pool.shared_segment {
            Ok(Place::Shared)
        } else {
            Err(DropReason::LossyThreshold)
        }
    })
}

/// The admission block: the running shared-grant sums of the cycle.
#[derive(Debug, Clone)]
pub struct Admission {
    pools: Pools,
    /// Shared cells granted earlier in this cycle, lossless and lossy.
    shared_granted: u32,
    lossy_granted: u32,
}

/// What admission reads and the ports it drives.
pub struct AdmissionIn<'a, P> {
    /// The beat of each ingress port in this cycle.
    pub beats: &'a [Option<Beat>],
    /// Registered `T` of both pools.
    pub dt: &'a DtThreshold,
    pub dt_lossy: &'a DtThreshold,
    /// PFC state (DSH reads POFF).
    pub fsm: &'a PfcFsm,
    pub policy: &'a mut P,
    /// Registered counters, and the charge port.
    pub acct: &'a mut Accounting,
    /// HCF classification (part of this block's chain).
    pub hcf: &'a mut Hcf,
    /// Beat intake and cell FIFOs.
    pub ingress: &'a mut Ingress,
    pub d: &'a Derived,
}

/// What admission produces in a cycle.
pub struct AdmissionOut<'a> {
    /// The fate of every beat, in port order.
    pub events: &'a mut Vec<CellEvent>,
    pub requests: &'a mut FlowRequests,
    /// Ports that admitted a packet (its descriptor is the port's newest pending one).
    pub admitted: &'a mut u64,
    pub stats: &'a mut Stats,
    pub dirty: &'a mut Dirty,
}

impl Admission {
    pub fn new(d: &Derived) -> Self {
        Self {
            pools: Pools {
                lossless: PoolParams {
                    private: d.private_cells,
                    shared_segment: d.shared_cells,
                },
                lossy: PoolParams {
                    private: d.lossy_private_cells,
                    shared_segment: d.lossy_shared_cells,
                },
            },
            shared_granted: 0,
            lossy_granted: 0,
        }
    }

    /// The running shared-grant sums restart (the first port of a cycle).
    pub fn start_cycle(&mut self) {
        self.shared_granted = 0;
        self.lossy_granted = 0;
    }

    /// The start of the admission phase, before the first beat: the running sums and the
    /// policy's bypass restart, no port has admitted anything yet.
    #[inline(always)]
    pub fn start<P: BufferPolicy>(&mut self, policy: &mut P, admitted: &mut u64) {
        self.start_cycle();
        *admitted = 0;
        policy.start_admission();
    }

    /// The end of the admission phase: `beats` (the ports with a beat) become
    /// `beat_valid`, and the ports where it may have changed are marked.
    #[inline(always)]
    pub fn finish(beats: u64, ingress: &mut Ingress, dirty: &mut Dirty) {
        let changed = ingress.set_beats(beats);
        dirty.ingress_ports(changed);
    }

    /// The pools' static parameters.
    pub fn pools(&self) -> &Pools {
        &self.pools
    }

    /// The inputs of the decision for `r`: its ingress queue's registered counters, the
    /// registered `T` of its pool (or the policy's queue threshold `T_i`, L2BM Eq. 3) and
    /// the pool's shared occupancy plus the grants made earlier in this cycle.
    pub fn view<P: BufferPolicy>(
        &self,
        r: &Request,
        acct: &Accounting,
        dt: &DtThreshold,
        dt_lossy: &DtThreshold,
        policy: &mut P,
    ) -> QueueView {
        let [private, shared, headroom] = acct.group(r.port, r.pg);
        let (t, shared_in_use) = if r.lossless {
            (dt.t(), acct.shared_total.get() + self.shared_granted)
        } else {
            (
                dt_lossy.t(),
                acct.lossy_shared_total.get() + self.lossy_granted,
            )
        };
        QueueView {
            private,
            shared,
            headroom,
            t: policy.queue_threshold(r, t),
            shared_in_use,
        }
    }

    /// Charge the cells of an admitted packet to its segments (they land at the edge) and
    /// add its shared cells to the running sum of its pool.
    #[inline(always)]
    pub fn charge(&mut self, r: &Request, plan: &Plan, acct: &mut Accounting) {
        let [private, shared, headroom] = segments(r.lossless);
        let mut push = |seg, n: u16| {
            if n > 0 {
                acct.push(Update::Charge {
                    port: r.port as u8,
                    pg: r.pg as u8,
                    seg,
                    dport: r.dst as u8,
                    n: n as u32,
                });
            }
        };
        push(private, plan.seg0);
        push(shared, plan.seg1);
        push(headroom, plan.headroom);
        if r.lossless {
            self.shared_granted += plan.seg1 as u32;
        } else {
            self.lossy_granted += plan.seg1 as u32;
        }
    }

    /// One beat of port `p`.
    fn beat<P: BufferPolicy>(
        &mut self,
        now: u64,
        p: usize,
        b: &Beat,
        input: &mut AdmissionIn<'_, P>,
        out: &mut AdmissionOut<'_>,
    ) -> Result<(), String> {
        input.ingress.check_beat(p, b, input.d)?;
        out.stats.cells_in += 1;
        let lossless = input.d.is_lossless(b.hdr.prio);
        if b.sop() {
            let fate = self.packet(now, p, b, lossless, input, out);
            input.ingress.start_packet(p, fate)?;
        }
        let fate = input.ingress.take_cell(p, b, lossless, out.stats)?;
        out.events.push(CellEvent { beat: *b, fate });
        Ok(())
    }

    /// The decision for the packet a start-of-packet beat announces, and what follows it.
    fn packet<P: BufferPolicy>(
        &mut self,
        now: u64,
        p: usize,
        b: &Beat,
        lossless: bool,
        input: &mut AdmissionIn<'_, P>,
        out: &mut AdmissionOut<'_>,
    ) -> Result<(Plan, Desc), DropReason> {
        let pg = b.hdr.prio as usize;
        let dst = b.hdr.dst as usize;
        let r = Request::new(p, pg, dst, b.ncells as u32, lossless);
        let acct = &mut *input.acct;
        let shared = acct.group(p, pg)[1];
        let v = self.view(&r, acct, input.dt, input.dt_lossy, input.policy);
        let decision = input
            .policy
            .decide(&r, v, &self.pools, acct, input.fsm)
            .and_then(
                |plan| match input.hcf.arrive(dst, pg, &b.hdr.tuple, b.ncells) {
                    Arrival::Fifo => Ok((plan, 0)),
                    Arrival::List(sub) => {
                        out.dirty.egress(dst);
                        Ok((plan, sub))
                    }
                    Arrival::Drop => {
                        out.dirty.egress(dst);
                        Err(DropReason::HcfFull)
                    }
                },
            );
        let (plan, sub) = match decision {
            Ok(admitted) => admitted,
            Err(reason) => {
                // A lossless queue that overflows its headroom must stop its upstream too
                // (case 4 implies case 3's condition), whatever its eta.
                if lossless {
                    input
                        .policy
                        .flow_control(&r, None, shared, acct, out.requests);
                }
                return Err(reason);
            }
        };
        out.dirty.egress(dst);
        self.charge(&r, &plan, acct);
        if lossless {
            input
                .policy
                .flow_control(&r, Some(&plan), shared, acct, out.requests);
        }
        let due = input.policy.admitted(&r, acct, now);
        *out.admitted |= 1 << p;
        let desc = Desc {
            hdr: b.hdr,
            ncells: b.ncells,
            head: NULL,
            sub,
            due,
        };
        Ok((plan, desc))
    }
}

impl<'a, P: BufferPolicy> Block<AdmissionIn<'a, P>, AdmissionOut<'a>> for Admission {
    /// Every beat of the cycle, ingress ports in index order. Inlined into the phase, so
    /// its bundles are never built in memory.
    #[inline(always)]
    fn eval(
        &mut self,
        now: u64,
        mut input: AdmissionIn<'a, P>,
        mut out: AdmissionOut<'a>,
    ) -> Result<(), BlockError> {
        self.start(input.policy, out.admitted);
        // One pass over the bus in port order, collecting `beat_valid` as it goes.
        let mut beats = 0u64;
        for (p, b) in input.beats.iter().enumerate() {
            if let Some(b) = b {
                beats |= 1 << p;
                self.beat(now, p, b, &mut input, &mut out)?;
            }
        }
        Self::finish(beats, input.ingress, out.dirty);
        Ok(())
    }
}

impl Clocked for Admission {
    /// The sums restart with every cycle's evaluation; charges land in the counters.
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POOL: PoolParams = PoolParams {
        private: 15,
        shared_segment: 1000,
    };

    fn view(private: u32, shared: u32, headroom: u32, t: u32) -> QueueView {
        QueueView {
            private,
            shared,
            headroom,
            t,
            shared_in_use: shared,
        }
    }

    #[test]
    fn the_four_cases() {
        // 1: private.
        assert_eq!(
            lossless(8, view(0, 0, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 8,
                seg1: 0,
                headroom: 0
            })
        );
        // 1 -> 2: straddles private and shared.
        assert_eq!(
            lossless(8, view(10, 0, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 5,
                seg1: 3,
                headroom: 0
            })
        );
        // 2: shared below T.
        assert_eq!(
            lossless(8, view(15, 49, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 8,
                headroom: 0
            })
        );
        // 3: at T, into headroom.
        assert_eq!(
            lossless(8, view(15, 50, 0, 50), POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        // 4: headroom would overflow.
        assert_eq!(
            lossless(8, view(15, 50, 93, 50), POOL, 100),
            Err(DropReason::HeadroomFull)
        );
    }

    #[test]
    fn dsh_uses_shared_until_poff_then_insurance() {
        let port = |poff, insurance| PortView {
            poff,
            insurance,
            eta: 20,
        };
        // Above T the queue still goes to shared: DSH has no per-queue cap.
        assert_eq!(
            dsh(8, view(15, 500, 0, 50), POOL, port(false, 0)),
            Ok(Plan {
                seg0: 0,
                seg1: 8,
                headroom: 0
            })
        );
        assert_eq!(
            dsh(8, view(15, 0, 0, 50), POOL, port(true, 0)),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        assert_eq!(
            dsh(8, view(15, 0, 0, 50), POOL, port(true, 13)),
            Err(DropReason::HeadroomFull)
        );
        // Private first even in POFF: it is reserved per queue.
        assert_eq!(
            dsh(8, view(10, 0, 0, 50), POOL, port(true, 0)),
            Ok(Plan {
                seg0: 5,
                seg1: 0,
                headroom: 3
            })
        );
    }

    #[test]
    fn l2bm_lossy_needs_both_pools() {
        let v = view(0, 40, 0, 50);
        let plan = Plan {
            seg0: 8,
            seg1: 0,
            headroom: 0,
        };
        let lossy_pool = PoolParams {
            private: 8,
            shared_segment: 1000,
        };
        assert_eq!(l2bm_lossy(8, v, lossy_pool, 99, 100), Ok(plan));
        assert_eq!(
            l2bm_lossy(8, v, lossy_pool, 100, 100),
            Err(DropReason::EgressThreshold),
            "egress queue at its threshold"
        );
        // The ingress refusal comes first.
        assert_eq!(
            l2bm_lossy(8, view(8, 50, 0, 50), lossy_pool, 0, 100),
            Err(DropReason::LossyThreshold)
        );
    }

    #[test]
    fn shared_segment_is_never_overcommitted() {
        let v = QueueView {
            private: 15,
            shared: 0,
            headroom: 0,
            t: 50,
            shared_in_use: 995,
        };
        assert_eq!(
            lossless(8, v, POOL, 100),
            Ok(Plan {
                seg0: 0,
                seg1: 0,
                headroom: 8
            })
        );
        assert_eq!(lossy(8, v, POOL), Err(DropReason::LossyThreshold));
    }
}
