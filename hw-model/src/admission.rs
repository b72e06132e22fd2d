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
//! the egress pool's DT (dual admission of L2BM Fig. 5). Which rules apply is the buffer
//! policy's: the shared ones in `policy/decision.rs`, each policy's in its file.
//!
//! All ports decide in the same cycle from the same registered counters and `T`; a running
//! sum of the shared cells granted earlier in the cycle keeps the segment from being
//! over-committed (the bypass adder of an admission pipeline). Ports are decided in index
//! order, so a lower port index wins when the segment is nearly full. In the same chain,
//! a packet the policy admits for an HCF egress queue is classified into HP or LP, or
//! dropped (`sched/hcf.rs`: an HCF drop adds nothing to the sums); the classification is a
//! value, which HCF's registers take only once the decision source has answered
//! ([`Classifier`]). L2BM adds the packet to its egress-grant bypass. The admission block
//! charges the counters (they change at the edge), requests QOFF/POFF from PFC
//! generation, and hands each beat to its ingress port with its fate.

use crate::accounting::{Accounting, Update};
use crate::config::Derived;
use crate::decision_source::{DecisionSource, OwnDecisions};
use crate::dirty::Dirty;
use crate::dt_threshold::DtThreshold;
use crate::ingress::{segments, Ingress};
use crate::packet_queue::{Desc, NULL};
use crate::pfc::state::PauseState;
use crate::policy::{BufferPolicy, Plan, PoolParams, Pools, QueueView, Request};
use crate::ports::FlowRequests;
use crate::sched::hcf::{Classification, Hcf, Verdict};
use crate::stats::Stats;
use crate::wires::{Beat, CellEvent, DropReason, FiveTuple};
use rtl::{Block, BlockError, Clocked};

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
    pub pause: &'a PauseState,
    pub policy: &'a mut P,
    /// Registered counters, and the charge port.
    pub acct: &'a mut Accounting,
    /// HCF classification (part of this block's chain: a later port reads the credits
    /// and list lengths an earlier one took, and HCF's boundaries in phase 3 read the
    /// lengths with the cycle's arrivals). Each packet's classification is a value taken
    /// only after the decision source answered ([`HcfArrival`]); the registers it changes
    /// stay behind this handle, because a value form that replays the earlier ones costs
    /// more instructions (docs/architecture.md, "Blocks", `AdmissionIn::hcf`).
    pub hcf: &'a mut Hcf,
    /// Beat intake and cell FIFOs.
    pub ingress: &'a mut Ingress,
    pub d: &'a Derived,
}

/// The registered state a decision reads besides the counters.
#[derive(Clone, Copy)]
pub struct Registered<'a> {
    /// Registered `T` of both pools.
    pub dt: &'a DtThreshold,
    pub dt_lossy: &'a DtThreshold,
    /// PFC state (DSH reads POFF).
    pub pause: &'a PauseState,
}

/// A packet admission admitted: its segments, its physical list in an HCF queue (0 in a
/// FIFO queue) and the policy's estimate of its departure (L2BM's `due`, else 0).
#[derive(Debug, Clone, Copy)]
pub struct Admitted {
    pub plan: Plan,
    pub sub: u8,
    pub due: u64,
}

/// The egress classification of a packet the policy admits: its physical list in its
/// egress queue, or why the queue cannot take it. Admission classifies before it asks its
/// decision source, and the classifier's registers change only in [`Classifier::commit`],
/// with what the switch did, so a packet the source refuses leaves them as they were.
/// Its cost: docs/architecture.md, "Blocks", `AdmissionIn::hcf`.
pub trait Classifier {
    /// The packet's list, or why it is dropped; changes no register.
    fn classify(&mut self) -> Result<u8, DropReason>;
    /// The switch acted on the packet last classified: `admitted`, or dropped.
    fn commit(&mut self, admitted: bool);
}

/// Every packet to its queue's one list: the classification of a follower, which takes
/// the DUT's datapath as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct OneList;

impl Classifier for OneList {
    #[inline(always)]
    fn classify(&mut self) -> Result<u8, DropReason> {
        Ok(0)
    }

    #[inline(always)]
    fn commit(&mut self, _: bool) {}
}

/// HCF's classification of one start of packet for queue `q` of egress port `port`
/// (`sched/hcf.rs`): the value of [`Hcf::classify`], which HCF takes when the switch
/// admits the packet, or drops it on HCF's own verdict (`hcf_full`).
pub struct HcfArrival<'a> {
    hcf: &'a mut Hcf,
    port: usize,
    q: usize,
    tuple: &'a FiveTuple,
    ncells: u16,
    /// The classification made (`None`: not asked, or a FIFO queue).
    class: Option<(u16, Classification)>,
}

impl<'a> HcfArrival<'a> {
    pub fn new(hcf: &'a mut Hcf, port: usize, q: usize, tuple: &'a FiveTuple, ncells: u16) -> Self {
        Self {
            hcf,
            port,
            q,
            tuple,
            ncells,
            class: None,
        }
    }
}

impl Classifier for HcfArrival<'_> {
    #[inline(always)]
    fn classify(&mut self) -> Result<u8, DropReason> {
        self.class = self
            .hcf
            .classify(self.port, self.q, self.tuple, self.ncells);
        match self.class {
            None => Ok(0),
            Some((_, c)) if c.verdict == Verdict::Drop => Err(DropReason::HcfFull),
            Some((_, c)) => Ok(c.list),
        }
    }

    #[inline(always)]
    fn commit(&mut self, admitted: bool) {
        if let Some((slot, c)) = self.class {
            // A source that admitted what HCF has no room for would leave the packet in a
            // list HCF does not count (no source does: the follower classifies with
            // `OneList`).
            debug_assert!(
                !(admitted && c.verdict == Verdict::Drop),
                "a decision source admitted a packet HCF dropped (hcf_full)"
            );
            if admitted != (c.verdict == Verdict::Drop) {
                self.hcf.take(slot, &c);
            }
        }
    }
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

    /// Admission of the start of packet `r`: the policy's decision from the registered
    /// state and this cycle's earlier grants, the egress classification of a packet the
    /// policy admits (its physical list, or why it is dropped: a value until `class`
    /// commits it), the decision `source`'s verdict on the two, and what follows it: the
    /// classifier commits what the switch did, an admitted packet is charged, a lossless
    /// one requests its flow control and the policy records it; a dropped lossless packet
    /// stops its queue. The source sees the inputs the decision read.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn admit<P: BufferPolicy, S: DecisionSource>(
        &mut self,
        r: &Request,
        reg: Registered<'_>,
        acct: &mut Accounting,
        policy: &mut P,
        source: &mut S,
        class: &mut impl Classifier,
        requests: &mut FlowRequests,
        now: u64,
    ) -> Result<Admitted, S::Reason> {
        let v = self.view(r, acct, reg.dt, reg.dt_lossy, policy);
        let mut sub = 0;
        let model = policy
            .decide(r, v, &self.pools, acct, reg.pause)
            .and_then(|plan| {
                sub = class.classify()?;
                Ok(plan)
            });
        let decided = source.admission(r, &v, model);
        class.commit(decided.is_ok());
        let plan = match decided {
            Ok(plan) => plan,
            Err(reason) => {
                // A lossless queue that overflows its headroom must stop its upstream too
                // (case 4 implies case 3's condition), whatever its eta.
                if r.lossless {
                    policy.flow_control(r, None, v.shared, acct, requests);
                }
                return Err(reason);
            }
        };
        self.charge(r, &plan, acct);
        if r.lossless {
            policy.flow_control(r, Some(&plan), v.shared, acct, requests);
        }
        let due = policy.admitted(r, acct, now);
        Ok(Admitted { plan, sub, due })
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
        let a = self.admit(
            &r,
            Registered {
                dt: input.dt,
                dt_lossy: input.dt_lossy,
                pause: input.pause,
            },
            input.acct,
            input.policy,
            &mut OwnDecisions,
            &mut HcfArrival::new(input.hcf, dst, pg, &b.hdr.tuple, b.ncells),
            out.requests,
            now,
        );
        // An admitted packet, or an HCF drop, changed the egress queue's registers.
        if matches!(a, Ok(_) | Err(DropReason::HcfFull)) {
            out.dirty.egress(dst);
        }
        let a = a?;
        *out.admitted |= 1 << p;
        let desc = Desc {
            hdr: b.hdr,
            ncells: b.ncells,
            head: NULL,
            sub: a.sub,
            due: a.due,
        };
        Ok((a.plan, desc))
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
    use crate::config::SwitchConfig;
    use crate::dt_threshold::pool_units;
    use crate::policy::Sih;

    /// A decision source that refuses every packet, whatever the model decided.
    struct Refuse;

    impl DecisionSource for Refuse {
        type Reason = &'static str;

        fn admission(
            &mut self,
            _: &Request,
            _: &QueueView,
            _: Result<Plan, DropReason>,
        ) -> Result<Plan, &'static str> {
            Err("refused by the source")
        }
    }

    /// Admission acts on its source's decision: a packet the policy admits and the source
    /// refuses charges nothing; with the model's own decisions the same packet is charged.
    #[test]
    fn admission_acts_on_its_decision_source() {
        let d = SwitchConfig::small().build().unwrap();
        let (dt, dt_lossy) = pool_units(&d);
        let pause = PauseState::new(d.ports);
        let mut policy = Sih::new(&d, dt.t());
        let mut acct = Accounting::new(d.ports);
        let mut requests = FlowRequests::new(d.ports);
        let mut adm = Admission::new(&d);
        let r = Request::new(0, 0, 1, 1, d.is_lossless(0));
        let reg = Registered {
            dt: &dt,
            dt_lossy: &dt_lossy,
            pause: &pause,
        };
        let refused = adm.admit(
            &r,
            reg,
            &mut acct,
            &mut policy,
            &mut Refuse,
            &mut OneList,
            &mut requests,
            0,
        );
        assert_eq!(refused.map(|a| a.plan), Err("refused by the source"));
        assert!(!acct.has_updates(), "a refused packet is not charged");
        let own = adm.admit(
            &r,
            reg,
            &mut acct,
            &mut policy,
            &mut OwnDecisions,
            &mut OneList,
            &mut requests,
            0,
        );
        assert_eq!(
            own.map(|a| a.plan.seg0),
            Ok(1),
            "the model admits it to private"
        );
        assert!(acct.has_updates());
    }
}
