//! Ingress-side PFC generation: a QON/QOFF state machine per lossless ingress queue (DSH
//! Fig. 3), DSH's PON/POFF per ingress port (Fig. 8), and the per-port frame generator that
//! turns state changes into PAUSE / RESUME frames.
//!
//! The thresholds belong to the buffer policy (`policy/`): SIH compares the queue's
//! *shared* occupancy (DSH II-C, footnote 1) with `X_off = T` and `X_on = T - delta`; DSH
//! with `X_qoff`/`X_qon` and `X_poff`/`X_pon`; L2BM with `T_i - delta`. This block holds
//! the state (its QOFF/POFF registers are `state.rs`, which the policy reads). In the
//! flow-control phase it applies the requests admission made in the same cycle (a queue
//! charged to headroom, a DSH port charged to insurance or above `X_poff`, a lossless
//! drop), then turns ON the OFF queues (and PON the ports) the policy returns of those it
//! may resume, never one that was charged in this cycle (its new cells are not in the
//! registered counters the check reads), then raises the refresh frames that are due.
//!
//! QOFF -> QON needs the queue's headroom empty as well as its shared occupancy below
//! `X_on`. The headroom condition matters when a packet goes to headroom because the shared
//! *segment* is full (other ports took the last cells in the same cycle) while the queue
//! itself is below `X_on`: resuming at once would cancel the PAUSE before it is sent and
//! let headroom fill with the upstream never stopped. Headroom drains first
//! (`accounting.rs`), so in the ordinary case it is empty long before shared falls below
//! `X_on` and the condition changes nothing.
//!
//! A frame waits for the packet in flight on the port (delay 1 of Eq. 1): the egress
//! transmitter takes it at its next packet boundary, in the same cycle if the port is idle
//! (the chain "pending PFC frame -> transmitter" of the phase table). The transmitter reads
//! the pending frames and drives what it took as a value ([`PfcTakes`]); they leave the
//! pending registers at the edge ([`PfcFsm::taken`]). While any class of a
//! port is OFF, or the port is POFF, the PAUSE is re-sent every half pause time `R`, so an
//! upstream pause timer never runs out: the first refresh comes `R - 1` cycles after the
//! cycle the port's first queue turned OFF, then every `R` cycles, each an absolute
//! deadline (nothing counts down while nothing is due).

use crate::accounting::Accounting;
use crate::config::{Derived, PFC_QUANTUM_BITS};
use crate::dirty::Dirty;
use crate::pfc::state::PauseState;
use crate::policy::BufferPolicy;
use crate::ports::{each_port, FlowRequests, PfcTakes};
use crate::wires::PfcFrame;
use rtl::{Block, BlockError, Clocked, Visit};

#[derive(Debug, Clone)]
pub struct PfcFsm {
    /// The QOFF and POFF registers, which the policy reads.
    state: PauseState,
    /// During the flow-control phase: ports charged in this cycle.
    charged_ports: u64,
    /// Port-level frames still to be sent.
    pending_port_pause: u64,
    pending_port_resume: u64,
    /// Classes whose change is still to be sent, per port.
    pending_pause: Vec<u8>,
    pending_resume: Vec<u8>,
    /// Ports with a pending frame.
    pending_ports: u64,
    /// Per port, the cycle of the next refresh PAUSE (meaningful while some class is OFF
    /// or the port is POFF), the refresh period `R`, and the earliest deadline of all.
    refresh_at: Vec<u64>,
    refresh_cycles: Vec<u64>,
    next_refresh: u64,
    quanta: u16,
}

/// What PFC generation reads in the flow-control phase.
pub struct FsmIn<'a, P> {
    /// Admission's requests of this cycle; taken (cleared) here.
    pub requests: &'a mut FlowRequests,
    /// Whether the QON/PON checks may give another answer than in the last cycle: the
    /// last edge moved a counter or `T` or charged a queue (which is resumable now), or
    /// the policy scans. Otherwise their inputs are those of the last check, which turned
    /// ON everything it could, and they are not evaluated.
    pub recheck: bool,
    pub policy: &'a mut P,
    /// Registered counters.
    pub acct: &'a Accounting,
    /// Registered `T` of the lossless pool.
    pub t: u32,
}

impl PfcFsm {
    pub fn new(d: &Derived) -> Self {
        let quanta = d.cfg.pfc_pause_quanta;
        let refresh_cycles = (0..d.ports)
            .map(|p| {
                let pause_cycles = (quanta as u64 * PFC_QUANTUM_BITS * d.clock_hz) / d.rate_bps[p];
                (pause_cycles / 2).max(1)
            })
            .collect();
        Self {
            state: PauseState::new(d.ports),
            charged_ports: 0,
            pending_port_pause: 0,
            pending_port_resume: 0,
            pending_pause: vec![0; d.ports],
            pending_resume: vec![0; d.ports],
            pending_ports: 0,
            refresh_at: vec![u64::MAX; d.ports],
            refresh_cycles,
            next_refresh: u64::MAX,
            quanta,
        }
    }

    /// The QOFF and POFF registers.
    #[inline]
    pub fn state(&self) -> &PauseState {
        &self.state
    }

    /// The refresh deadline of a port entering the set of ports with OFF queues or in
    /// POFF in cycle `now`.
    fn start_refresh(&mut self, port: usize, now: u64) {
        let at = now + self.refresh_cycles[port] - 1;
        self.refresh_at[port] = at;
        self.next_refresh = self.next_refresh.min(at);
    }

    /// DSH: port occupancy above `X_poff` (or insurance in use); PON -> POFF with a
    /// port-level PAUSE.
    pub fn to_poff(&mut self, port: usize, now: u64) {
        let bit = 1u64 << port;
        if self.state.poff & bit == 0 {
            if (self.state.off_ports | self.state.poff) & bit == 0 {
                self.start_refresh(port, now);
            }
            self.state.poff |= bit;
            self.pending_port_pause |= bit;
            self.pending_port_resume &= !bit;
            self.pending_ports |= bit;
        }
    }

    /// DSH: port occupancy below `X_pon`; POFF -> PON with a port-level RESUME.
    pub fn to_pon(&mut self, port: usize) {
        let bit = 1u64 << port;
        if self.state.poff & bit != 0 {
            self.state.poff &= !bit;
            self.pending_port_resume |= bit;
            self.pending_port_pause &= !bit;
            self.pending_ports |= bit;
        }
    }

    /// Case 3 of DSH II-C (or its DSH and L2BM forms): an ON queue turns OFF.
    #[inline]
    pub fn to_off(&mut self, port: usize, pg: usize, now: u64) {
        if self.state.off[port] & (1 << pg) == 0 {
            self.state.off[port] |= 1 << pg;
            self.pending_pause[port] |= 1 << pg;
            self.pending_resume[port] &= !(1 << pg);
            if self.state.off_ports & (1 << port) == 0 {
                self.start_refresh(port, now);
            }
            self.state.off_ports |= 1 << port;
            self.pending_ports |= 1 << port;
        }
    }

    /// Shared occupancy fell below `X_on`: an OFF queue turns ON.
    #[inline]
    pub fn to_on(&mut self, port: usize, pg: usize) {
        if self.state.off[port] & (1 << pg) != 0 {
            self.state.off[port] &= !(1 << pg);
            self.pending_resume[port] |= 1 << pg;
            self.pending_pause[port] &= !(1 << pg);
            if self.state.off[port] == 0 {
                self.state.off_ports &= !(1 << port);
            }
            self.pending_ports |= 1 << port;
        }
    }

    /// Raise the refresh PAUSE of every port with OFF queues or in POFF whose deadline is
    /// `now`.
    #[inline(always)]
    pub fn refresh(&mut self, now: u64) {
        if now >= self.next_refresh {
            self.refresh_due(now);
        }
    }

    /// The refreshes due in cycle `now`, and the next one.
    fn refresh_due(&mut self, now: u64) {
        let mut next = u64::MAX;
        for p in each_port(self.state.off_ports | self.state.poff) {
            if self.refresh_at[p] == now {
                self.pending_pause[p] |= self.state.off[p];
                self.pending_port_pause |= self.state.poff & (1 << p);
                self.pending_ports |= 1 << p;
                self.refresh_at[p] = now + self.refresh_cycles[p];
            }
            next = next.min(self.refresh_at[p]);
        }
        self.next_refresh = next;
    }

    /// The first cycle at or after `now` with a refresh due (`u64::MAX`: none).
    pub fn next_refresh(&self) -> u64 {
        self.next_refresh
    }

    #[inline]
    pub fn has_pending(&self, port: usize) -> bool {
        self.pending_ports & (1 << port) != 0
    }

    #[inline]
    pub fn pending_ports(&self) -> u64 {
        self.pending_ports
    }

    /// The frame the egress transmitter of `port` sends next, given what it took earlier
    /// in the cycle (`takes`, to which this take is added): a port-level one first if both
    /// kinds are pending (the queue-level one follows at the next boundary); `None` when
    /// nothing is left. The registers change at the edge ([`PfcFsm::taken`]).
    #[inline]
    pub fn next_frame(&self, port: usize, takes: &mut PfcTakes) -> Option<PfcFrame> {
        let bit = 1u64 << port;
        if self.pending_ports & bit == 0 {
            return None;
        }
        self.take_pending(port, takes)
    }

    /// [`PfcFsm::next_frame`] of a port with a frame pending at the start of the cycle.
    fn take_pending(&self, port: usize, takes: &mut PfcTakes) -> Option<PfcFrame> {
        let bit = 1u64 << port;
        let port_level = (self.pending_port_pause | self.pending_port_resume) & !takes.port_level;
        if port_level & bit != 0 {
            takes.port_level |= bit;
            let pause = self.pending_port_pause & bit != 0;
            return Some(PfcFrame {
                class_enable: 0xFF,
                quanta: [if pause { self.quanta } else { 0 }; 8],
                port_level: true,
            });
        }
        let (pause, resume) = (self.pending_pause[port], self.pending_resume[port]);
        if takes.queue_level & bit != 0 || pause | resume == 0 {
            return None;
        }
        takes.queue_level |= bit;
        let mut f = PfcFrame {
            class_enable: pause | resume,
            quanta: [0; 8],
            port_level: false,
        };
        for c in 0..8 {
            if pause & (1 << c) != 0 {
                f.quanta[c] = self.quanta;
            }
        }
        Some(f)
    }

    /// The edge: the frames the transmitters took in the cycle leave the pending registers.
    /// A port stays pending while a frame of either kind is left. In today's phase order
    /// no port-level frame is left on a port that took one (PFC generation raises frames
    /// before the transmitters take them, and a pending port-level frame goes first), but
    /// the edge does not rely on that order: a frame raised after the take is kept
    /// (`pfc_generation::the_edge_keeps_a_frame_raised_after_the_take`), not left pending
    /// on a port no transmitter would visit for it.
    pub fn taken(&mut self, takes: &PfcTakes) {
        self.pending_port_pause &= !takes.port_level;
        self.pending_port_resume &= !takes.port_level;
        for p in each_port(takes.queue_level) {
            self.pending_pause[p] = 0;
            self.pending_resume[p] = 0;
        }
        for p in each_port(takes.port_level | takes.queue_level) {
            let port_level = (self.pending_port_pause | self.pending_port_resume) >> p & 1;
            if port_level == 0 && self.pending_pause[p] | self.pending_resume[p] == 0 {
                self.pending_ports &= !(1 << p);
            }
        }
    }

    /// [`PfcFsm::next_frame`] and [`PfcFsm::taken`] at once, for a driver without a
    /// transmitter: the frame `port` sends next, gone from the pending registers (an empty
    /// queue-level frame when nothing is pending).
    pub fn take_frame(&mut self, port: usize) -> PfcFrame {
        let mut takes = PfcTakes::default();
        let f = self.next_frame(port, &mut takes).unwrap_or_default();
        self.taken(&takes);
        f
    }

    /// `ingress.pNN.qoff`.
    pub fn probe_port<V: Visit>(&self, port: usize, v: &mut V) {
        v.wire("qoff", 8, self.state.off[port] as u64);
    }
}

impl PfcFsm {
    /// The policy's QON checks on the OFF queues not charged now, port by port, then its
    /// PON checks on the POFF ports not charged now; what it returns turns ON.
    #[inline(always)]
    fn resume<P: BufferPolicy>(
        &mut self,
        policy: &mut P,
        acct: &Accounting,
        t: u32,
        dirty: &mut Dirty,
    ) {
        for p in each_port(self.state.off_ports) {
            let off = self.state.resumable(p);
            if off == 0 {
                continue;
            }
            let on = policy.resume_queues(p, off, acct, t, dirty);
            for pg in each_port(on as u64) {
                self.to_on(p, pg);
            }
            if on != 0 {
                dirty.ingress(p);
            }
        }
        for p in each_port(policy.resume_ports(self.state.resumable_ports(), acct)) {
            self.to_pon(p);
            dirty.ingress(p);
        }
    }
}

impl<'a, P: BufferPolicy> Block<FsmIn<'a, P>, &'a mut Dirty> for PfcFsm {
    /// The flow-control phase: admission's requests (per port, QOFF before POFF), the
    /// policy's QON/PON checks on the queues and ports not charged now, the refreshes due.
    /// Inlined into the phase, so its bundle is never built in memory.
    #[inline(always)]
    fn eval(
        &mut self,
        now: u64,
        input: FsmIn<'a, P>,
        dirty: &'a mut Dirty,
    ) -> Result<(), BlockError> {
        let req = input.requests;
        for p in each_port(req.ports()) {
            let off = req.off_of(p);
            for pg in each_port(off as u64) {
                self.to_off(p, pg, now);
            }
            if req.poff_ports() & (1 << p) != 0 {
                self.to_poff(p, now);
            }
            self.state.charged[p] = off;
        }
        self.charged_ports = req.ports();
        self.state.charged_poff = req.poff_ports();
        if input.recheck {
            self.resume(input.policy, input.acct, input.t, dirty);
        }
        self.refresh(now);
        for p in each_port(std::mem::take(&mut self.charged_ports)) {
            self.state.charged[p] = 0;
        }
        self.state.charged_poff = 0;
        req.clear();
        Ok(())
    }
}

impl Clocked for PfcFsm {
    /// The state changes in the block's own phase (flow control), which the transmitters
    /// read in the same cycle (the chain); what they take lands at the edge through
    /// [`PfcFsm::taken`], so no other phase writes it.
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SwitchConfig;

    #[test]
    fn off_then_on_produce_pause_then_resume() {
        let d = SwitchConfig::small().build().unwrap();
        let mut f = PfcFsm::new(&d);
        f.to_off(3, 2, 0);
        f.to_off(3, 2, 0);
        assert!(f.has_pending(3));
        let pause = f.take_frame(3);
        assert_eq!(pause.paused(), 1 << 2);
        assert!(
            !f.has_pending(3),
            "a second to_off of an OFF queue sends nothing"
        );
        f.to_on(3, 2);
        let resume = f.take_frame(3);
        assert_eq!(resume.resumed(), 1 << 2);
        assert_eq!(resume.paused(), 0);
    }

    #[test]
    fn off_queue_is_refreshed_before_upstream_timer_expires() {
        let d = SwitchConfig::small().build().unwrap();
        let mut f = PfcFsm::new(&d);
        f.to_off(0, 1, 0);
        f.take_frame(0);
        let mut refreshes = 0;
        for now in 0..(f.refresh_cycles[0] * 2) {
            f.refresh(now);
            if f.has_pending(0) {
                assert_eq!(f.take_frame(0).paused(), 0b10);
                refreshes += 1;
            }
        }
        assert_eq!(refreshes, 2);
    }

    #[test]
    fn port_level_frames_go_first_and_do_not_mix_with_queue_frames() {
        let d = SwitchConfig::small().build().unwrap();
        let mut f = PfcFsm::new(&d);
        f.to_off(1, 3, 0);
        f.to_poff(1, 0);
        let first = f.take_frame(1);
        assert!(first.port_level && first.paused() == 0xFF);
        assert!(f.has_pending(1), "the queue-level PAUSE is still to go");
        let second = f.take_frame(1);
        assert!(!second.port_level && second.paused() == 1 << 3);
        f.to_pon(1);
        let resume = f.take_frame(1);
        assert!(resume.port_level && resume.resumed() == 0xFF);
        assert_eq!(
            f.state().off(1),
            1 << 3,
            "a port RESUME leaves the queue OFF"
        );
    }

    /// A transmitter reads the pending frames: both kinds go out in one cycle, in order,
    /// and the registers change only at the edge, where both leave them.
    #[test]
    fn frames_taken_leave_the_pending_registers_at_the_edge() {
        let d = SwitchConfig::small().build().unwrap();
        let mut f = PfcFsm::new(&d);
        f.to_off(1, 3, 0);
        f.to_poff(1, 0);
        f.to_off(2, 0, 0);
        let mut takes = PfcTakes::default();
        let first = f.next_frame(1, &mut takes).unwrap();
        let second = f.next_frame(1, &mut takes).unwrap();
        assert!(first.port_level && !second.port_level && second.paused() == 1 << 3);
        assert_eq!(f.next_frame(1, &mut takes), None, "nothing left this cycle");
        assert_eq!(f.pending_ports(), 0b110, "the registers wait for the edge");
        f.taken(&takes);
        assert_eq!(f.pending_ports(), 0b100, "port 2 took nothing");
        let mut again = PfcTakes::default();
        assert_eq!(f.next_frame(1, &mut again), None);
    }

    /// Companion: a port-level take alone leaves the queue-level frame pending.
    #[test]
    fn a_port_level_take_keeps_the_queue_level_frame() {
        let d = SwitchConfig::small().build().unwrap();
        let mut f = PfcFsm::new(&d);
        f.to_off(1, 3, 0);
        f.to_poff(1, 0);
        let mut takes = PfcTakes::default();
        assert!(f.next_frame(1, &mut takes).unwrap().port_level);
        f.taken(&takes);
        assert!(f.has_pending(1));
        assert_eq!(f.take_frame(1).paused(), 1 << 3);
        assert!(!f.has_pending(1));
    }
}
