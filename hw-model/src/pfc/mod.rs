//! Priority flow control: generation of PAUSE / RESUME frames from the ingress queues'
//! state (`fsm.rs`, its QOFF/POFF registers in `state.rs`), and reception of the frames the
//! downstream devices send (`rx.rs`).

pub mod fsm;
pub mod rx;
pub mod state;
