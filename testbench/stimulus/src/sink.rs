//! Downstream devices on the egress ports: infinite sinks that count what they absorb, and
//! an optional script of PFC frames they send back into the switch (to exercise the
//! model's received-PFC handling).

use hw_model::{Beat, PfcFrame};

/// What one egress port delivered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkCounts {
    pub cells: u64,
    pub packets: u64,
    /// Packet bytes of the packets whose last cell arrived.
    pub bytes: u64,
}

/// One infinite sink per egress port.
#[derive(Debug, Clone)]
pub struct Sinks {
    ports: Vec<SinkCounts>,
}

impl Sinks {
    pub fn new(ports: usize) -> Self {
        Self {
            ports: vec![SinkCounts::default(); ports],
        }
    }

    /// Absorb one cell departing on `port`.
    #[inline]
    pub fn absorb(&mut self, port: u8, beat: &Beat) {
        let Some(s) = self.ports.get_mut(port as usize) else {
            return;
        };
        s.cells += 1;
        if beat.eop() {
            s.packets += 1;
            s.bytes += beat.hdr.len as u64;
        }
    }

    pub fn per_port(&self) -> &[SinkCounts] {
        &self.ports
    }
}

/// Scripted PFC frames from the downstream devices, replayed in cycle order.
#[derive(Debug, Clone)]
pub struct PfcScript {
    frames: Vec<(u64, u8, PfcFrame)>,
    next: usize,
}

impl PfcScript {
    /// `frames` must be sorted by cycle (the scenario plan sorts them).
    pub fn new(frames: Vec<(u64, u8, PfcFrame)>) -> Self {
        Self { frames, next: 0 }
    }

    /// Append the frames due at `now` to `out` (the MMU's `Inputs::pfc_rx`).
    pub fn due(&mut self, now: u64, out: &mut Vec<(u8, PfcFrame)>) {
        while let Some(&(cycle, port, frame)) = self.frames.get(self.next) {
            if cycle > now {
                break;
            }
            self.next += 1;
            if cycle == now {
                out.push((port, frame));
            }
        }
    }

    /// The cycle of the next frame, `u64::MAX` after the last.
    pub fn next_cycle(&self) -> u64 {
        self.frames.get(self.next).map_or(u64::MAX, |f| f.0)
    }

    /// Largest number of frames due in one cycle: the capacity `due` needs.
    pub fn max_per_cycle(&self) -> usize {
        let mut best = 0;
        let mut i = 0;
        while i < self.frames.len() {
            let j = self.frames[i..].partition_point(|f| f.0 == self.frames[i].0);
            best = best.max(j);
            i += j;
        }
        best
    }
}
