//! The QOFF and POFF registers of PFC generation, as the buffer policy reads them: which
//! ingress queues (and, under DSH, ports) are paused, and which of those may be checked for
//! resuming in this cycle. A leaf: the policy reads it and returns what resumes
//! (`policy/rules.rs`); the state machine (`fsm.rs`) writes it.

/// The pause state of the ingress side.
#[derive(Debug, Clone)]
pub struct PauseState {
    /// Bit `pg` of `off[port]`: the ingress queue is in QOFF.
    pub(super) off: Vec<u8>,
    /// Ports with at least one OFF queue.
    pub(super) off_ports: u64,
    /// DSH port-level state: bit `p` set = port `p` in POFF (Fig. 8).
    pub(super) poff: u64,
    /// During the flow-control phase: queues and ports charged in this cycle, which may
    /// not resume in it.
    pub(super) charged: Vec<u8>,
    pub(super) charged_poff: u64,
}

impl PauseState {
    pub fn new(ports: usize) -> Self {
        Self {
            off: vec![0; ports],
            off_ports: 0,
            poff: 0,
            charged: vec![0; ports],
            charged_poff: 0,
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

    /// OFF queues of `port` that may be checked for QON now.
    #[inline]
    pub fn resumable(&self, port: usize) -> u8 {
        self.off[port] & !self.charged[port]
    }

    /// DSH: ports in POFF.
    #[inline]
    pub fn poff(&self) -> u64 {
        self.poff
    }

    /// DSH: POFF ports that may be checked for PON now.
    #[inline]
    pub fn resumable_ports(&self) -> u64 {
        self.poff & !self.charged_poff
    }
}
