//! Received PFC: per egress (port, class) pause state.
//!
//! In `Timer` mode a frame loads `quanta * 512` bit times (converted to core cycles at the
//! port's rate) into the class's pause timer, refreshing any running timer; zero resumes.
//! In `OnOff` mode (the DSH paper's reading, its footnote 2) a non-zero time sets the
//! class OFF until a frame with time zero. Only ports with a running timer are ticked.
//!
//! DSH port-level frames (Fig. 9) drive a separate per-port state with the same timer
//! rules, and a class may send only if `NOT (QOFF[class] OR POFF[port])`: the OR gate of
//! DSH IV-D, eight two-input ORs per port (one per class), probed as `rx_qoff` and
//! `rx_poff` (inputs) and `paused` (output).

use crate::config::{Derived, PfcRxMode};
use crate::wires::PfcFrame;

#[derive(Debug, Clone)]
pub struct PfcRx {
    mode: PfcRxMode,
    d: Derived,
    /// Remaining pause cycles per (port, class); in OnOff mode, non-zero = OFF.
    timer: Vec<[u64; 8]>,
    /// Remaining port-level pause cycles per port; in OnOff mode, non-zero = POFF.
    port_timer: Vec<u64>,
    /// Bit `c` of `paused[p]`: class `c` of egress port `p` may not transmit.
    paused: Vec<u8>,
    /// Ports with a running timer (bit per port).
    ticking: u64,
    /// Ports whose pause mask changed since the last `take_changed`.
    changed: u64,
}

impl PfcRx {
    pub fn new(d: &Derived) -> Self {
        Self {
            mode: d.cfg.pfc_rx_mode,
            d: d.clone(),
            timer: vec![[0; 8]; d.ports],
            port_timer: vec![0; d.ports],
            paused: vec![0; d.ports],
            ticking: 0,
            changed: 0,
        }
    }

    #[inline]
    pub fn paused(&self, port: usize) -> u8 {
        self.paused[port]
    }

    /// Queue-level pause state of `port` (bit per class), before the OR gate.
    pub fn qoff(&self, port: usize) -> u8 {
        let mut m = 0;
        for (c, &t) in self.timer[port].iter().enumerate() {
            if t != 0 {
                m |= 1 << c;
            }
        }
        m
    }

    /// Port-level pause state of `port`, before the OR gate.
    pub fn poff(&self, port: usize) -> bool {
        self.port_timer[port] != 0
    }

    /// Apply a frame received on `port` (takes effect for the next cycle's scheduling).
    pub fn receive(&mut self, port: usize, f: &PfcFrame) {
        if f.port_level {
            let q = f.quanta.iter().copied().max().unwrap_or(0) as u64;
            self.port_timer[port] = match self.mode {
                PfcRxMode::Timer => self.d.pause_cycles(port, q as u16),
                PfcRxMode::OnOff => q.min(1),
            };
            self.refresh_port(port);
            return;
        }
        for c in 0..8 {
            if f.class_enable & (1 << c) == 0 {
                continue;
            }
            let q = f.quanta[c] as u64;
            self.timer[port][c] = match self.mode {
                PfcRxMode::Timer => self.d.pause_cycles(port, q as u16),
                PfcRxMode::OnOff => q.min(1),
            };
        }
        self.refresh_port(port);
    }

    /// One cycle of the pause timers (Timer mode only; OnOff never counts down).
    pub fn tick(&mut self) {
        if self.mode == PfcRxMode::OnOff {
            return;
        }
        let mut ports = self.ticking;
        while ports != 0 {
            let p = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            for t in self.timer[p].iter_mut() {
                *t = t.saturating_sub(1);
            }
            self.port_timer[p] = self.port_timer[p].saturating_sub(1);
            self.refresh_port(p);
        }
    }

    /// Ports whose pause mask changed since the last call (their schedulers must look again).
    pub fn take_changed(&mut self) -> u64 {
        std::mem::take(&mut self.changed)
    }

    fn refresh_port(&mut self, p: usize) {
        // The OR gate: a class is paused by its own state or by the port's.
        let m = self.qoff(p) | if self.poff(p) { 0xFF } else { 0 };
        if m != self.paused[p] {
            self.changed |= 1 << p;
        }
        self.paused[p] = m;
        if m != 0 && self.mode == PfcRxMode::Timer {
            self.ticking |= 1 << p;
        } else {
            self.ticking &= !(1 << p);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn egress_pause_is_qoff_or_poff() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        rx.receive(2, &frame(5, 100));
        let port = |q: u16| PfcFrame {
            class_enable: 0xFF,
            quanta: [q; 8],
            port_level: true,
        };
        rx.receive(2, &port(100));
        assert_eq!(rx.paused(2), 0xFF, "POFF pauses every class");
        rx.receive(2, &port(0));
        assert_eq!(
            rx.paused(2),
            1 << 5,
            "a port RESUME leaves QOFF[5] in force"
        );
        assert!(!rx.poff(2));
        assert_eq!(rx.qoff(2), 1 << 5);
    }

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

    #[test]
    fn timer_expires_after_quanta_times_512_bit_times() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        rx.receive(2, &frame(3, 10));
        // 10 quanta * 512 bits at 100 Gb/s and 1 GHz = 51.2 -> 52 cycles.
        let cycles = d.pause_cycles(2, 10);
        for _ in 0..cycles - 1 {
            rx.tick();
        }
        assert_eq!(rx.paused(2), 1 << 3);
        rx.tick();
        assert_eq!(rx.paused(2), 0);
    }

    #[test]
    fn refresh_and_resume() {
        let d = SwitchConfig::small().build().unwrap();
        let mut rx = PfcRx::new(&d);
        rx.receive(0, &frame(1, 1));
        rx.tick();
        rx.receive(0, &frame(1, 100));
        for _ in 0..10 {
            rx.tick();
        }
        assert_eq!(rx.paused(0), 0b10, "refreshed timer still running");
        rx.receive(0, &frame(1, 0));
        assert_eq!(rx.paused(0), 0, "time zero resumes at once");
    }

    #[test]
    fn on_off_mode_ignores_time() {
        let mut c = SwitchConfig::small();
        c.pfc_rx_mode = PfcRxMode::OnOff;
        let d = c.build().unwrap();
        let mut rx = PfcRx::new(&d);
        rx.receive(1, &frame(0, 1));
        for _ in 0..100_000 {
            rx.tick();
        }
        assert_eq!(rx.paused(1), 1, "OFF until an explicit RESUME");
        rx.receive(1, &frame(0, 0));
        assert_eq!(rx.paused(1), 0);
    }
}
