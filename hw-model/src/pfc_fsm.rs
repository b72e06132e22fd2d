//! Ingress-side PFC: a QON/QOFF state machine per lossless ingress queue (DSH Fig. 3) and
//! the per-port frame generator that turns state changes into PAUSE / RESUME frames.
//!
//! SIH thresholds (DSH II-C, footnote 1: compared with the queue's *shared* occupancy):
//! `X_off = T` and `X_on = T - delta`, the latter from one saturating subtractor since `T`
//! is global. QON -> QOFF when a packet of the queue is put into headroom (case 3);
//! QOFF -> QON when the queue holds no headroom cells and its shared occupancy is below
//! `X_on` (checked every cycle for OFF queues only, because a paused queue receives
//! nothing that would trigger it), and never in the cycle the queue turned OFF.
//!
//! The headroom condition matters when a packet goes to headroom because the shared
//! *segment* is full (other ports took the last cells in the same cycle) while the queue
//! itself is below `X_on`: resuming at once would cancel the PAUSE before it is sent and
//! let headroom fill with the upstream never stopped. Headroom drains first
//! (`accounting.rs`), so in the ordinary case it is empty long before shared falls below
//! `X_on` and the condition changes nothing.
//!
//! A frame waits for the packet in flight on the port (delay 1 of Eq. 1): the egress
//! transmitter takes it at its next packet boundary. While any class of a port is OFF the
//! PAUSE is re-sent every half pause time, so an upstream pause timer never runs out.

use crate::config::{Derived, CNT_BITS, PFC_QUANTUM_BITS};
use crate::wires::PfcFrame;
use rtl::SatSub;

#[derive(Debug, Clone)]
pub struct PfcFsm {
    /// Subtractor: `X_on = T - delta`.
    pub sub_xon: SatSub,
    delta: u32,
    /// Bit `pg` of `off[port]`: the ingress queue is in QOFF.
    off: Vec<u8>,
    /// Queues that turned OFF this cycle (not eligible for QON until the next).
    just_off: Vec<u8>,
    /// Ports with a bit set in `just_off`.
    just_off_ports: u64,
    /// Ports with at least one OFF queue.
    off_ports: u64,
    /// DSH port-level state: bit `p` set = port `p` in POFF (Fig. 8).
    poff: u64,
    /// Ports that turned POFF this cycle (not eligible for PON until the next).
    just_poff: u64,
    /// Port-level frames still to be sent.
    pending_port_pause: u64,
    pending_port_resume: u64,
    /// Classes whose change is still to be sent, per port.
    pending_pause: Vec<u8>,
    pending_resume: Vec<u8>,
    /// Ports with a pending frame or a due refresh.
    pending_ports: u64,
    /// Cycles until the next refresh PAUSE, per port (meaningful while some class is OFF).
    refresh_in: Vec<u64>,
    refresh_cycles: Vec<u64>,
    quanta: u16,
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
            sub_xon: SatSub::new(CNT_BITS),
            delta: d.delta_cells,
            off: vec![0; d.ports],
            just_off: vec![0; d.ports],
            just_off_ports: 0,
            off_ports: 0,
            poff: 0,
            just_poff: 0,
            pending_port_pause: 0,
            pending_port_resume: 0,
            pending_pause: vec![0; d.ports],
            pending_resume: vec![0; d.ports],
            pending_ports: 0,
            refresh_in: vec![0; d.ports],
            refresh_cycles,
            quanta,
        }
    }

    #[inline]
    pub fn off(&self, port: usize) -> u8 {
        self.off[port]
    }

    #[inline]
    pub fn off_ports(&self) -> u64 {
        self.off_ports
    }

    /// OFF queues of `port` that may be checked for QON this cycle.
    #[inline]
    pub fn resumable(&self, port: usize) -> u8 {
        self.off[port] & !self.just_off[port]
    }

    /// DSH: ports in POFF.
    #[inline]
    pub fn poff(&self) -> u64 {
        self.poff
    }

    /// DSH: POFF ports that may be checked for PON this cycle.
    #[inline]
    pub fn resumable_ports(&self) -> u64 {
        self.poff & !self.just_poff
    }

    /// DSH: port occupancy above `X_poff` (or insurance in use); PON -> POFF with a
    /// port-level PAUSE.
    pub fn to_poff(&mut self, port: usize) {
        let bit = 1u64 << port;
        // Not resumable in a cycle that charged it, even if it was POFF already: the
        // insurance charged now is not in the registered counters the PON check reads.
        self.just_poff |= bit;
        if self.poff & bit == 0 {
            if (self.off_ports | self.poff) & bit == 0 {
                self.refresh_in[port] = self.refresh_cycles[port];
            }
            self.poff |= bit;
            self.pending_port_pause |= bit;
            self.pending_port_resume &= !bit;
            self.pending_ports |= bit;
        }
    }

    /// DSH: port occupancy below `X_pon`; POFF -> PON with a port-level RESUME.
    pub fn to_pon(&mut self, port: usize) {
        let bit = 1u64 << port;
        if self.poff & bit != 0 {
            self.poff &= !bit;
            self.pending_port_resume |= bit;
            self.pending_port_pause &= !bit;
            self.pending_ports |= bit;
        }
    }

    /// End of cycle: queues that turned OFF in it become eligible for QON.
    pub fn end_cycle(&mut self) {
        self.just_poff = 0;
        let mut ports = std::mem::take(&mut self.just_off_ports);
        while ports != 0 {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            self.just_off[p] = 0;
        }
    }

    /// `X_on` for this cycle from the registered `T`.
    #[inline]
    pub fn eval_xon(&mut self, t: u32) -> u32 {
        self.sub_xon.eval(t as u64, self.delta as u64) as u32
    }

    /// Case 3 of DSH II-C: a packet went to headroom; an ON queue turns OFF.
    #[inline]
    pub fn to_off(&mut self, port: usize, pg: usize) {
        // Not resumable in a cycle that charged it headroom, even if it was OFF already:
        // the cells charged now are not in the registered counters the QON check reads.
        self.just_off[port] |= 1 << pg;
        self.just_off_ports |= 1 << port;
        if self.off[port] & (1 << pg) == 0 {
            self.off[port] |= 1 << pg;
            self.pending_pause[port] |= 1 << pg;
            self.pending_resume[port] &= !(1 << pg);
            if self.off_ports & (1 << port) == 0 {
                self.refresh_in[port] = self.refresh_cycles[port];
            }
            self.off_ports |= 1 << port;
            self.pending_ports |= 1 << port;
        }
    }

    /// Shared occupancy fell below `X_on`: an OFF queue turns ON.
    #[inline]
    pub fn to_on(&mut self, port: usize, pg: usize) {
        if self.off[port] & (1 << pg) != 0 {
            self.off[port] &= !(1 << pg);
            self.pending_resume[port] |= 1 << pg;
            self.pending_pause[port] &= !(1 << pg);
            if self.off[port] == 0 {
                self.off_ports &= !(1 << port);
            }
            self.pending_ports |= 1 << port;
        }
    }

    /// Count down the refresh timers of ports with OFF queues or in POFF.
    pub fn tick_refresh(&mut self) {
        let mut ports = self.off_ports | self.poff;
        while ports != 0 {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            self.refresh_in[p] -= 1;
            if self.refresh_in[p] == 0 {
                self.pending_pause[p] |= self.off[p];
                self.pending_port_pause |= self.poff & (1 << p);
                self.pending_ports |= 1 << p;
                self.refresh_in[p] = self.refresh_cycles[p];
            }
        }
    }

    #[inline]
    pub fn has_pending(&self, port: usize) -> bool {
        self.pending_ports & (1 << port) != 0
    }

    #[inline]
    pub fn pending_ports(&self) -> u64 {
        self.pending_ports
    }

    /// The egress transmitter of `port` takes the pending frame: a port-level one first
    /// if both kinds are pending (the queue-level one follows at the next boundary).
    pub fn take_frame(&mut self, port: usize) -> PfcFrame {
        let bit = 1u64 << port;
        if (self.pending_port_pause | self.pending_port_resume) & bit != 0 {
            let pause = self.pending_port_pause & bit != 0;
            self.pending_port_pause &= !bit;
            self.pending_port_resume &= !bit;
            if self.pending_pause[port] | self.pending_resume[port] == 0 {
                self.pending_ports &= !bit;
            }
            return PfcFrame {
                class_enable: 0xFF,
                quanta: [if pause { self.quanta } else { 0 }; 8],
                port_level: true,
            };
        }
        let pause = self.pending_pause[port];
        let resume = self.pending_resume[port];
        self.pending_pause[port] = 0;
        self.pending_resume[port] = 0;
        self.pending_ports &= !(1 << port);
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
        f
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
        f.to_off(3, 2);
        f.to_off(3, 2);
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
        f.to_off(0, 1);
        f.take_frame(0);
        let mut refreshes = 0;
        for _ in 0..(f.refresh_cycles[0] * 2) {
            f.tick_refresh();
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
        f.to_off(1, 3);
        f.to_poff(1);
        let first = f.take_frame(1);
        assert!(first.port_level && first.paused() == 0xFF);
        assert!(f.has_pending(1), "the queue-level PAUSE is still to go");
        let second = f.take_frame(1);
        assert!(!second.port_level && second.paused() == 1 << 3);
        f.to_pon(1);
        let resume = f.take_frame(1);
        assert!(resume.port_level && resume.resumed() == 0xFF);
        assert_eq!(f.off(1), 1 << 3, "a port RESUME leaves the queue OFF");
    }

    proptest::proptest! {
        /// The SIH resume threshold `X_on = max(0, T - delta)` for every `T` a 21-bit
        /// register holds, including zero and the largest count.
        #[test]
        fn xon_equals_t_minus_delta(t in proptest::prop_oneof![proptest::strategy::Just(0u32), proptest::strategy::Just((1u32 << 21) - 1), 0u32..(1 << 21)]) {
            let d = SwitchConfig::small().build().unwrap();
            let mut f = PfcFsm::new(&d);
            let xon = f.eval_xon(t);
            proptest::prop_assert_eq!(xon as i64, (t as i64 - d.delta_cells as i64).max(0));
            proptest::prop_assert_eq!(f.sub_xon.borrow(), t < d.delta_cells);
        }
    }

    #[test]
    fn xon_saturates_at_zero() {
        let d = SwitchConfig::small().build().unwrap();
        let mut f = PfcFsm::new(&d);
        assert_eq!(f.eval_xon(d.delta_cells + 5), 5);
        assert_eq!(f.eval_xon(1), 0);
        assert!(f.sub_xon.borrow());
    }
}
