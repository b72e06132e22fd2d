//! What the network reproductions share: a network built-in's switch configuration and
//! transports (so a reproduction runs the switches `mmu-sim run NAME` runs), one run of a
//! `fabric::Network` that a model invariant or a broken fabric check voids, and the
//! PAUSE frames a run's switches sent.

use super::ReproError;
use fabric::deadlock::DeadlockOptions;
use fabric::flows::Flow;
use fabric::routing::Ecmp;
use fabric::topology::Topology;
use fabric::transport::Transports;
use fabric::{FabricSummary, Network, RunOptions};
use hw_model::SwitchConfig;

/// A network built-in's `[switch]` and `[[fabric.transport]]` tables.
pub struct Base {
    pub switch: SwitchConfig,
    pub transports: Transports,
    pub ecmp: Ecmp,
}

impl Base {
    /// The built-in `name` (one with a `[fabric]` table).
    pub fn builtin(name: &str) -> Result<Self, ReproError> {
        let s = scenario::builtin::load(name)?;
        let spec = s
            .fabric
            .as_ref()
            .ok_or_else(|| ReproError::Invariant(format!("{name}: not a network built-in")))?;
        Ok(Self {
            transports: Transports {
                by_pg: spec.transports()?,
                feedback_pg: spec.feedback_pg,
            },
            ecmp: Ecmp {
                fabric_seed: spec.ecmp_seed,
            },
            switch: s.switch.clone(),
        })
    }

    /// Run `flows` on `topo` with every switch on `cfg` (this base's `switch` changed as a
    /// run needs) and this base's transports for `end_cycle` cycles; a model invariant or
    /// a fabric check that fails voids the run.
    pub fn run(
        &self,
        topo: Topology,
        flows: &[Flow],
        cfg: &SwitchConfig,
        end_cycle: u64,
        stop_at_deadlock: bool,
    ) -> Result<FabricSummary, ReproError> {
        let mut net = Network::new(topo, flows, self.ecmp, &self.transports, |_| cfg.clone())
            .map_err(|e| ReproError::Invariant(e.to_string()))?;
        let summary = net
            .run(&RunOptions {
                end_cycle,
                deadlock: DeadlockOptions::default(),
                stop_at_deadlock,
                // The sweep engine runs the points side by side.
                threads: 1,
                horizon_error: 0,
            })
            .map_err(|e| {
                ReproError::Invariant(format!(
                    "model invariant broken at switch {}: {}",
                    e.switch, e.error.what
                ))
            })?;
        if !summary.ok() {
            return Err(ReproError::Invariant(summary.violations.join("; ")));
        }
        Ok(summary)
    }
}

/// PAUSE frames every switch sent (toward switches and hosts).
pub fn pause_frames(s: &FabricSummary) -> u64 {
    s.switches.iter().map(|w| w.pfc_pause_frames).sum()
}
