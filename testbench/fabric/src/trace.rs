//! `--trace-events DIR` of a network: each switch's golden-model event stream
//! (docs/cosim.md), `DIR/swNN.jsonl`, and the scenario `mmu-sim check` needs to check it,
//! `DIR/swNN.toml`: the switch's configuration as the network built it (ports, port speeds
//! and headroom from its links) and no flows. The stream is written by the switch's own
//! recorder (`SwitchEvents`, a field of its `Switch`) as it steps, so no writer is
//! shared between switches.

use crate::switch::{Switch, SwitchError};
use crate::topology::NodeId;
use hw_model::{Inputs, Mmu, Outputs, SwitchConfig};
use serde::Serialize;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use switch_run::events::EventTrace;
use thiserror::Error;
use wave::WaveError;

/// A switch's name in the outputs: `sw` and its node id, at least two digits (`sw03`,
/// `sw68`, `sw256`).
pub fn switch_name(node: NodeId) -> String {
    format!("sw{node:02}")
}

/// `DIR/swNN.jsonl` and `DIR/swNN.toml`: a switch's stream and its scenario.
pub fn stream_paths(dir: &Path, node: NodeId) -> (PathBuf, PathBuf) {
    let name = switch_name(node);
    (
        dir.join(format!("{name}.jsonl")),
        dir.join(format!("{name}.toml")),
    )
}

/// The scenario of a switch's stream: `cfg` (the network's, every key written out) as
/// `[switch]`, `cycles` as `[run]`, named after the switch.
pub fn check_scenario(node: NodeId, cfg: &SwitchConfig, cycles: u64) -> Result<String, String> {
    #[derive(Serialize)]
    struct Run {
        cycles: u64,
    }
    #[derive(Serialize)]
    struct CheckScenario<'a> {
        name: String,
        run: Run,
        switch: &'a SwitchConfig,
    }
    let name = switch_name(node);
    let text = toml::to_string(&CheckScenario {
        name: name.clone(),
        run: Run { cycles },
        switch: cfg,
    })
    .map_err(|e| e.to_string())?;
    Ok(format!(
        "# The configuration of switch {node} as the network built it: check its stream with\n\
         # mmu-sim check {name}.toml --dut-events {name}.jsonl --mode lockstep\n{text}"
    ))
}

/// One switch's event stream as it runs; the first write error is kept for the end.
pub(crate) struct SwitchEvents {
    trace: EventTrace,
    err: Option<io::Error>,
}

impl SwitchEvents {
    /// Writes the `meta` line: the stream of scenario `name` with `seed`.
    pub(crate) fn new(file: File, mmu: &Mmu, name: &str, seed: u64) -> io::Result<Self> {
        Ok(Self {
            trace: EventTrace::new(file, mmu, name, seed)?,
            err: None,
        })
    }

    /// The events of cycle `now`, which `mmu` has just stepped with `inp` into `out`.
    pub(crate) fn step(&mut self, now: u64, inp: &Inputs, out: &Outputs, mmu: &Mmu) {
        if self.err.is_none() {
            self.err = self.trace.step(now, inp, out, mmu).err();
        }
    }

    /// The end of the stream at cycle `end` (the first not run); `mmu` has been brought
    /// to it.
    pub(crate) fn finish(self, end: u64, mmu: &Mmu) -> io::Result<()> {
        match self.err {
            Some(e) => Err(e),
            None => self.trace.finish(end, mmu),
        }
    }
}

/// An output of the run that could not be written or completed.
#[derive(Debug, Error)]
pub enum OutputError {
    /// A switch's event stream or its scenario (`path`).
    #[error("{path}: {error}", path = .path.display())]
    Events { path: PathBuf, error: io::Error },
    /// The waveform or its view.
    #[error(transparent)]
    Waves(#[from] WaveError),
    /// Bringing a switch's model to the end of the run for the streams' last line broke
    /// one of its invariants.
    #[error("switch {}: {}", .0.switch, .0.error.what)]
    Model(SwitchError),
}

/// Give every switch of `switches` its event stream in `dir` (created if missing), with
/// its scenario beside it for a run of `cycles` cycles; `seed` goes into the `meta` lines.
pub(crate) fn attach<'a>(
    switches: impl IntoIterator<Item = &'a mut Switch>,
    dir: &Path,
    cycles: u64,
    seed: u64,
) -> Result<(), OutputError> {
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |error| OutputError::Events { path, error }
    };
    fs::create_dir_all(dir).map_err(failed(dir))?;
    for sw in switches {
        let (stream, scenario) = stream_paths(dir, sw.node);
        let text = check_scenario(sw.node, &sw.mmu.config().cfg, cycles)
            .map_err(|e| failed(&scenario)(io::Error::other(e)))?;
        fs::write(&scenario, text).map_err(failed(&scenario))?;
        let file = File::create(&stream).map_err(failed(&stream))?;
        let events = SwitchEvents::new(file, &sw.mmu, &switch_name(sw.node), seed);
        sw.events = Some(events.map_err(failed(&stream))?);
    }
    Ok(())
}

/// The streams' last lines at `end`, the first cycle not run: each switch's model is
/// brought to it first (as the single switch's is at the end of its run).
pub(crate) fn finish(switches: &mut [Switch], dir: &Path, end: u64) -> Result<(), OutputError> {
    for sw in switches {
        let Some(events) = sw.events.take() else {
            continue;
        };
        if sw.mmu.cycle() < end {
            sw.mmu.skip_to(end).map_err(|error| {
                OutputError::Model(SwitchError {
                    switch: sw.node,
                    error,
                })
            })?;
        }
        let path = stream_paths(dir, sw.node).0;
        events
            .finish(end, &sw.mmu)
            .map_err(|error| OutputError::Events { path, error })?;
    }
    Ok(())
}
