//! What the network reproductions share: a network built-in, changed as a run needs
//! through its keys (as `mmu-sim run --set` changes it) and built by `fabric::build` (so a
//! reproduction runs the network `mmu-sim run NAME --set ...` runs), one run of it that a
//! model invariant or a broken fabric check voids, and the PAUSE frames a run's switches
//! sent.

use super::ReproError;
use fabric::build::{build, Built, Overrides};
use fabric::FabricSummary;
use scenario::{Scenario, ScenarioError};
use std::fmt::Display;
use std::path::Path;

/// A network built-in (one with a `[fabric]` table) as its TOML table, changed key by key
/// before it is parsed: a `[switch]` key set here reaches every `[[fabric.switch]]` entry
/// that does not set it itself, as the built-in's own `[switch]` keys do (a change made to
/// the parsed `Scenario::switch` would miss them).
pub struct Edit {
    name: String,
    table: toml::Table,
}

impl Edit {
    /// The built-in `name`.
    pub fn builtin(name: &str) -> Result<Self, ReproError> {
        let b = scenario::builtin::find(name)
            .ok_or_else(|| ReproError::Invariant(format!("{name}: not a built-in scenario")))?;
        let table = scenario::parse_table(&b.toml())?;
        if !table.contains_key("fabric") {
            return Err(ReproError::Invariant(format!(
                "{name}: not a network built-in"
            )));
        }
        Ok(Self {
            name: name.to_string(),
            table,
        })
    }

    /// `key = value` (a dotted key with array indices and a TOML value, as `--set`).
    pub fn set(&mut self, key: &str, value: impl Display) -> Result<&mut Self, ReproError> {
        scenario::set_key(&mut self.table, &format!("{key}={value}"))?;
        Ok(self)
    }

    /// The index of the one `[[fabric.ARRAY]]` entry (`transport`, `workload`) whose `key`
    /// is `value`: a reproduction finds what it changes by what it is (its class, its
    /// start), not by its place in the built-in.
    pub fn entry(&self, array: &str, key: &str, value: i64) -> Result<usize, ReproError> {
        let entries = self
            .table
            .get("fabric")
            .and_then(|f| f.get(array))
            .and_then(toml::Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let of: Vec<usize> = (0..entries.len())
            .filter(|&i| entries[i].get(key).and_then(toml::Value::as_integer) == Some(value))
            .collect();
        match of[..] {
            [i] => Ok(i),
            _ => Err(ScenarioError::new(
                format!("fabric.{array}"),
                format!(
                    "{}: {} entries with {key} = {value}; expected exactly one",
                    self.name,
                    of.len()
                ),
            )
            .into()),
        }
    }

    /// The scenario, checked as a file with these keys would be.
    pub fn scenario(self) -> Result<Scenario, ReproError> {
        Ok(Scenario::from_table(self.table, &self.name)?)
    }
}

/// The `[fabric]` table of a scenario from [`Edit::scenario`].
pub fn spec(s: &mut Scenario) -> &mut scenario::FabricSpec {
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

    /// Run class `pg` of `e` on this transport (a built-in's class runs DCQCN).
    pub fn apply(self, e: &mut Edit, pg: u8) -> Result<(), ReproError> {
        if self == Transport::PowerTcp {
            let i = e.entry("transport", "pg", pg.into())?;
            e.set("switch.int", true)?.set(
                &format!("fabric.transport[{i}]"),
                format!("{{ pg = {pg}, powertcp = {{}} }}"),
            )?;
        }
        Ok(())
    }
}

/// PAUSE frames every switch sent (toward switches and hosts).
pub fn pause_frames(s: &FabricSummary) -> u64 {
    s.switches.iter().map(|w| w.pfc_pause_frames).sum()
}
