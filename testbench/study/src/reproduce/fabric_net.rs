//! What the network reproductions share: a network built-in, changed as a run needs and
//! built by `fabric::build` (so a reproduction runs the network `mmu-sim run NAME`
//! runs), one run of it that a model invariant or a broken fabric check voids, and the
//! PAUSE frames a run's switches sent.

use super::ReproError;
use fabric::build::{build, Built, Overrides};
use fabric::FabricSummary;
use scenario::{FabricSpec, IntCcSpec, Scenario, ScenarioError, TransportSpec};
use std::path::Path;

/// The built-in `name` (one with a `[fabric]` table).
pub fn builtin(name: &str) -> Result<Scenario, ReproError> {
    let s = scenario::builtin::load(name)?;
    if s.fabric.is_none() {
        return Err(ReproError::Invariant(format!(
            "{name}: not a network built-in"
        )));
    }
    Ok(s)
}

/// The `[fabric]` table of a scenario from [`builtin`].
pub fn spec(s: &mut Scenario) -> &mut FabricSpec {
    s.fabric.as_mut().expect("a network built-in")
}

/// The network of `s` (a built-in has no files to read).
pub fn network(s: &Scenario) -> Result<Built, ReproError> {
    Ok(build(s, Path::new("."), Overrides::default())?)
}

/// A model invariant broken at a switch voids the run.
pub fn broken(e: fabric::SwitchError) -> ReproError {
    ReproError::Invariant(e.to_string())
}

/// Run `s` for its `run.cycles` (the sweep engine runs the points side by side, so one
/// thread each); a model invariant or a fabric check that fails voids the run.
pub fn run(s: &Scenario) -> Result<(FabricSummary, Built), ReproError> {
    let mut built = network(s)?;
    let summary = built.net.run(&built.options).map_err(broken)?;
    if !summary.ok() {
        return Err(ReproError::Invariant(summary.violations.join("; ")));
    }
    Ok((summary, built))
}

/// The congestion control of the DSH reproductions' lossless class: DSH's Figs. 12 and
/// 13 compare DCQCN and PowerTCP, each "with the default parameter settings in their
/// open-source simulations".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Transport {
    Dcqcn,
    /// PowerTCP with ns3-datacenter's defaults, reading the INT records every switch
    /// stamps (`int = true`).
    PowerTcp,
}

impl Transport {
    pub const ALL: [Transport; 2] = [Transport::Dcqcn, Transport::PowerTcp];

    /// The name in a sweep's parameters, CSV and table.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Dcqcn => "dcqcn",
            Transport::PowerTcp => "powertcp",
        }
    }

    /// A measure's `transport` parameter.
    pub fn parse(v: Option<&serde_json::Value>) -> Result<Self, ScenarioError> {
        v.and_then(serde_json::Value::as_str)
            .and_then(|t| Self::ALL.into_iter().find(|x| x.name() == t))
            .ok_or_else(|| ScenarioError::new("transport", "allowed: dcqcn, powertcp"))
    }

    /// Run class `pg` of `s` on this transport (a built-in's class runs DCQCN).
    pub fn apply(self, s: &mut Scenario, pg: u8) {
        if self == Transport::PowerTcp {
            s.switch.int = true;
            let t = spec(s).transport.iter_mut().find(|t| t.pg == pg);
            *t.expect("the built-in's class has a transport") = TransportSpec {
                pg,
                tcp: None,
                dcqcn: None,
                hpcc: None,
                powertcp: Some(IntCcSpec::default()),
                theta_powertcp: None,
            };
        }
    }
}

/// PAUSE frames every switch sent (toward switches and hosts).
pub fn pause_frames(s: &FabricSummary) -> u64 {
    s.switches.iter().map(|w| w.pfc_pause_frames).sum()
}
