//! Received PFC: per egress (port, class) pause state.
//!
//! In `Timer` mode a frame loads `quanta * 512` bit times (converted to core cycles at the
//! port's rate) into the class's pause timer, refreshing any running timer; zero resumes.
//! In `OnOff` mode (the DSH paper's reading, its footnote 2) a non-zero time sets the
//! class OFF until a frame with time zero.
//!
//! A timer is kept as the absolute cycle of the edge at which it runs out: a frame
//! received in cycle `c` with a pause of `n` cycles pauses the class after the edges of
//! `c` to `c + n - 1` and frees it at the edge of `c + n`, exactly as a register loaded with
//! `n` at the edge of `c` and counted down at every later edge would. Nothing counts down
//! while nothing runs out.
//!
//! DSH port-level frames (Fig. 9) drive a separate per-port state with the same timer
//! rules, and a class may send only if `NOT (QOFF[class] OR POFF[port])`: the OR gate of
//! DSH IV-D, eight two-input ORs per port (one per class), probed as `rx_qoff` and
//! `rx_poff` (inputs) and `paused` (output).
//!
//! Frames received in a cycle are latched in the thresholds phase and act at its edge: the
//! transmitters use the new pause mask from the next cycle on, and the ports whose mask
//! changed at the edge are kicked then.
//!
//! The mode is the switch's for the frames of its links; [`PfcRx::latch`] takes it per
//! frame, for the checker's follow mode, whose event stream may give a PAUSE without its
//! quanta: such a frame holds its class until the RESUME (`OnOff`) whatever the switch's
//! mode.

use crate::config::{Derived, PfcRxMode, PFC_QUANTUM_BITS};
use crate::ports::each_port;
use crate::stats::Stats;
use crate::wires::PfcFrame;
use rtl::{Block, BlockError, Clocked, Visit};

#[derive(Debug, Clone)]
pub struct PfcRx {
    mode: PfcRxMode,
    rate_bps: Vec<u64>,
    clock_hz: u64,
    /// Per (port, class): the edge at which its pause ends (`u64::MAX`: OFF until a
    /// RESUME, in `OnOff` mode); paused after the edge of cycle `e` while `e` is below it.
    until: Vec<[u64; 8]>,
    /// Per port, the same for the port-level state.
    port_until: Vec<u64>,
    /// The states after the last edge: classes paused by queue-level frames, ports paused
    /// by port-level frames, and the OR gate's output.
    qoff: Vec<u8>,
    poff: u64,
    paused: Vec<u8>,
    /// Ports with a pause that runs out on its own, and the earliest such edge.
    ticking: u64,
    next_expiry: u64,
    /// Frames received in this cycle and the mode each is read in, applied at its edge.
    frames: Vec<(u8, PfcFrame, PfcRxMode)>,
    /// Ports whose pause mask changed at the last edge.
    changed: u64,
    /// Ports whose probed state (QOFF, POFF or the mask) changed at the last edge: a
    /// superset of `changed`, since a class frame under a port-level pause moves QOFF and
    /// not the OR gate's output.
    probed: u64,
}

impl PfcRx {
    pub fn new(d: &Derived) -> Self {
        Self {
            mode: d.cfg.pfc_rx_mode,
            rate_bps: d.rate_bps.clone(),
            clock_hz: d.clock_hz,
            until: vec![[0; 8]; d.ports],
            port_until: vec![0; d.ports],
            qoff: vec![0; d.ports],
            poff: 0,
            paused: vec![0; d.ports],
            ticking: 0,
            next_expiry: u64::MAX,
            frames: Vec::with_capacity(2 * d.ports),
            changed: 0,
            probed: 0,
        }
    }

    #[inline]
    pub fn paused(&self, port: usize) -> u8 {
        self.paused[port]
    }

    /// Queue-level pause state of `port` (bit per class), before the OR gate.
    pub fn qoff(&self, port: usize) -> u8 {
        self.qoff[port]
    }

    /// Port-level pause state of `port`, before the OR gate.
    pub fn poff(&self, port: usize) -> bool {
        self.poff & (1 << port) != 0
    }

    /// Ports whose pause mask changed at the last edge (their schedulers must look again).
    #[inline]
    pub fn changed(&self) -> u64 {
        self.changed
    }

    /// Ports whose probes (`rx_qoff`, `rx_poff`, `paused`) changed at the last edge.
    #[inline]
    pub fn probed(&self) -> u64 {
        self.probed
    }

    /// The first edge at which a pause runs out on its own (`u64::MAX`: none).
    pub fn next_expiry(&self) -> u64 {
        self.next_expiry
    }

    /// The edge at which the queue-level pause of `class` on `port` ends (`u64::MAX`: at
    /// a RESUME; at or below the last edge: not paused).
    pub fn until(&self, port: usize, class: usize) -> u64 {
        self.until[port][class]
    }

    /// The same for the port-level pause of `port`.
    pub fn port_until(&self, port: usize) -> u64 {
        self.port_until[port]
    }

    /// Latch frame `f` received on `port` in this cycle, its pause time read in `mode`
    /// (the block's own for the switch's links; see the module's doc); it acts at the
    /// edge. Not counted in the statistics (a run's frames come through `eval`).
    #[inline]
    pub fn latch(&mut self, port: u8, f: PfcFrame, mode: PfcRxMode) {
        self.frames.push((port, f, mode));
    }

    /// The edge at which a pause of `quanta` read in `mode`, received at the edge of
    /// `now`, ends.
    fn until_of(&self, port: usize, quanta: u16, mode: PfcRxMode, now: u64) -> u64 {
        match mode {
            PfcRxMode::Timer => {
                let bits = quanta as u64 * PFC_QUANTUM_BITS * self.clock_hz;
                now + bits.div_ceil(self.rate_bps[port])
            }
            PfcRxMode::OnOff if quanta > 0 => u64::MAX,
            PfcRxMode::OnOff => now,
        }
    }

    /// Apply a frame received on `port`, read in `mode`, at the edge of `now`.
    fn receive(&mut self, port: usize, f: &PfcFrame, mode: PfcRxMode, now: u64) {
        if f.port_level {
            let q = f.quanta.iter().copied().max().unwrap_or(0);
            self.port_until[port] = self.until_of(port, q, mode, now);
        } else {
            for c in 0..8 {
                if f.class_enable & (1 << c) != 0 {
                    self.until[port][c] = self.until_of(port, f.quanta[c], mode, now);
                }
            }
        }
        self.refresh_port(port, now);
    }

    /// The states of `port` after the edge of `now`, and when it must be looked at again.
    fn refresh_port(&mut self, p: usize, now: u64) {
        let bit = 1u64 << p;
        let mut qoff = 0u8;
        let mut next = u64::MAX;
        for (c, &until) in self.until[p].iter().enumerate() {
            if until > now {
                qoff |= 1 << c;
                if until != u64::MAX {
                    next = next.min(until);
                }
            }
        }
        let port_until = self.port_until[p];
        let poff = port_until > now;
        if poff && port_until != u64::MAX {
            next = next.min(port_until);
        }
        // The OR gate: a class is paused by its own state or by the port's.
        let m = qoff | if poff { 0xFF } else { 0 };
        if m != self.paused[p] {
            self.changed |= bit;
        }
        if m != self.paused[p] || qoff != self.qoff[p] || poff != self.poff(p) {
            self.probed |= bit;
        }
        self.qoff[p] = qoff;
        self.poff = if poff {
            self.poff | bit
        } else {
            self.poff & !bit
        };
        self.paused[p] = m;
        if next != u64::MAX {
            self.ticking |= bit;
            self.next_expiry = self.next_expiry.min(next);
        } else {
            self.ticking &= !bit;
        }
    }

    /// `egress.pNN.{rx_qoff, rx_poff, paused}`.
    pub fn probe_port<V: Visit>(&self, port: usize, v: &mut V) {
        v.wire("rx_qoff", 8, self.qoff[port] as u64);
        v.wire("rx_poff", 1, self.poff(port) as u64);
        v.wire("paused", 8, self.paused[port] as u64);
    }
}

impl<'a> Block<&'a [(u8, PfcFrame)], &'a mut Stats> for PfcRx {
    /// Latch the frames received in this cycle (ports already checked) and count them.
    #[inline]
    fn eval(
        &mut self,
        _: u64,
        frames: &'a [(u8, PfcFrame)],
        stats: &'a mut Stats,
    ) -> Result<(), BlockError> {
        for &(p, f) in frames {
            stats.pfc_frames_rx += 1;
            stats.pfc_received(p as usize, &f);
            self.latch(p, f, self.mode);
        }
        Ok(())
    }
}

impl Clocked for PfcRx {
    /// The pauses that run out at this edge, then the frames of the cycle (a frame received
    /// now overrides a pause that ends now).
    #[inline]
    fn commit(&mut self, now: u64) -> Result<(), BlockError> {
        self.changed = 0;
        self.probed = 0;
        if now >= self.next_expiry {
            self.next_expiry = u64::MAX;
            for p in each_port(self.ticking) {
                self.refresh_port(p, now);
            }
        }
        for i in 0..self.frames.len() {
            let (p, f, mode) = self.frames[i];
            self.receive(p as usize, &f, mode, now);
        }
        self.frames.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SwitchConfig;

    fn frame(class: usize, quanta: u16) -> PfcFrame {
        let mut f = PfcFrame {
            class_enable: 1 << class,
            ..Default::default()
        };
        f.quanta[class] = quanta;
        f
    }

    /// Cycle `now` with `frames` received on `port`, and its edge.
    fn cycle(rx: &mut PfcRx, now: u64, port: u8, frames: &[PfcFrame]) {
        let frames: Vec<(u8, PfcFrame)> = frames.iter().map(|&f| (port, f)).collect();
        let mut stats = Stats::new(8);
        Block::eval(rx, now, frames.as_slice(), &mut stats).unwrap();
        rx.commit(now).unwrap();
    }

    #[test]
    fn egress_pause_is_qoff_or_poff() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 2, &[frame(5, 100)]);
        let port = |q: u16| PfcFrame {
            class_enable: 0xFF,
            quanta: [q; 8],
            port_level: true,
        };
        cycle(&mut rx, 1, 2, &[port(100)]);
        assert_eq!(rx.paused(2), 0xFF, "POFF pauses every class");
        assert!(
            rx.poff(2),
            "the port-level state before the OR gate (probe rx_poff)"
        );
        assert!(!rx.poff(1) && !rx.poff(3), "and port 2's alone");
        cycle(&mut rx, 2, 2, &[port(0)]);
        assert_eq!(
            rx.paused(2),
            1 << 5,
            "a port RESUME leaves QOFF[5] in force"
        );
        assert!(!rx.poff(2));
        assert_eq!(rx.qoff(2), 1 << 5);
    }

    #[test]
    fn timer_expires_after_quanta_times_512_bit_times() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 2, &[frame(3, 10)]);
        // 10 quanta * 512 bits at 100 Gb/s and 1 GHz = 51.2 -> 52 cycles.
        let cycles = d.pause_cycles(2, 10);
        for now in 1..cycles {
            cycle(&mut rx, now, 2, &[]);
        }
        assert_eq!(rx.paused(2), 1 << 3);
        assert_eq!(rx.next_expiry(), cycles);
        cycle(&mut rx, cycles, 2, &[]);
        assert_eq!(rx.paused(2), 0);
        assert_eq!(rx.changed(), 1 << 2, "the expiry kicks the port");
    }

    #[test]
    fn refresh_and_resume() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 0, &[frame(1, 1)]);
        cycle(&mut rx, 1, 0, &[frame(1, 100)]);
        for now in 2..12 {
            cycle(&mut rx, now, 0, &[]);
        }
        assert_eq!(rx.paused(0), 0b10, "refreshed timer still running");
        cycle(&mut rx, 12, 0, &[frame(1, 0)]);
        assert_eq!(rx.paused(0), 0, "time zero resumes at once");
    }

    #[test]
    fn a_frame_for_one_class_leaves_the_other_classes_alone() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 2, &[frame(5, 100)]);
        cycle(&mut rx, 1, 2, &[frame(3, 100)]);
        assert_eq!(rx.paused(2), 1 << 5 | 1 << 3);
    }

    #[test]
    fn a_port_level_timer_runs_out_and_a_refresh_keeps_it() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        let port = |q: u16| PfcFrame {
            class_enable: 0xFF,
            quanta: [q; 8],
            port_level: true,
        };
        cycle(&mut rx, 0, 2, &[port(10)]);
        cycle(&mut rx, 1, 2, &[port(10)]);
        assert!(rx.poff(2), "a second port-level PAUSE keeps the port POFF");
        let end = 1 + d.pause_cycles(2, 10);
        assert!(rx.next_expiry() <= end, "the port-level timer is scheduled");
        for now in 2..=end {
            cycle(&mut rx, now, 2, &[]);
        }
        assert!(!rx.poff(2));
        assert_eq!(rx.paused(2), 0, "the port-level pause ran out");
    }

    #[test]
    fn a_port_without_timers_leaves_other_ports_timers_running() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 0, &[frame(3, 10)]);
        // Port 2 ends with nothing running: its refresh must not stop port 0's timer.
        cycle(&mut rx, 1, 2, &[frame(1, 0)]);
        let end = d.pause_cycles(0, 10);
        for now in 2..=end {
            cycle(&mut rx, now, 0, &[]);
        }
        assert_eq!(rx.paused(0), 0, "port 0's pause ran out");
    }

    /// `probed` names the ports whose probes changed at the edge, and only those; the probes
    /// read the state.
    #[test]
    fn probes_and_probed_follow_the_state() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 2, &[frame(5, 100)]);
        assert_eq!(rx.probed(), 1 << 2);
        cycle(&mut rx, 1, 2, &[frame(5, 100)]);
        assert_eq!(rx.probed(), 0, "a refresh changes no probe");
        let mut values = [0u64; 3];
        rx.probe_port(2, &mut rtl::probe::Read::new(&mut values));
        assert_eq!(values, [1 << 5, 0, 1 << 5], "rx_qoff, rx_poff, paused");
    }

    #[test]
    fn every_received_frame_is_counted() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        let mut stats = Stats::new(8);
        let frames = [(1, frame(0, 1)), (2, frame(3, 1)), (2, frame(4, 1))];
        Block::eval(&mut rx, 0, &frames[..], &mut stats).unwrap();
        assert_eq!(stats.pfc_frames_rx, 3);
    }

    /// A frame latched in `OnOff` under a switch in `Timer` mode holds its class past its
    /// quanta until a RESUME, while a timer frame of the same cycle runs out; `until`
    /// says which is which.
    #[test]
    fn the_mode_is_per_frame() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        rx.latch(1, frame(0, 10), PfcRxMode::OnOff);
        rx.latch(1, frame(2, 10), PfcRxMode::Timer);
        let port = PfcFrame {
            class_enable: 0xFF,
            quanta: [10; 8],
            port_level: true,
        };
        rx.latch(2, port, PfcRxMode::Timer);
        rx.commit(0).unwrap();
        let end = d.pause_cycles(1, 10);
        assert_eq!((rx.until(1, 0), rx.until(1, 2)), (u64::MAX, end));
        assert_eq!(rx.port_until(2), d.pause_cycles(2, 10));
        for now in 1..=end {
            cycle(&mut rx, now, 1, &[]);
        }
        assert_eq!(rx.paused(1), 1, "the held class alone");
        cycle(&mut rx, end + 1, 1, &[frame(0, 0)]);
        assert_eq!(rx.paused(1), 0);
        assert_eq!(rx.port_until(1), 0, "no port-level pause was received");
        assert!(!rx.poff(2), "the port-level timer ran out");
    }

    #[test]
    fn on_off_mode_ignores_time() {
        let mut c = SwitchConfig::small();
        c.pfc_rx_mode = PfcRxMode::OnOff;
        let d = c.build().unwrap();
        let mut rx = PfcRx::new(&d);
        cycle(&mut rx, 0, 1, &[frame(0, 1)]);
        for now in 1..100_000 {
            cycle(&mut rx, now, 1, &[]);
        }
        assert_eq!(rx.paused(1), 1, "OFF until an explicit RESUME");
        cycle(&mut rx, 100_000, 1, &[frame(0, 0)]);
        assert_eq!(rx.paused(1), 0);
    }
}
