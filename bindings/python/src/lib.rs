//! `mmu_model`: the golden-model checker of mmu-sim for Python (docs/cosim.md).
//!
//! - [`check`]: a whole event stream against the model, the same verdicts as
//!   `mmu-sim check`;
//! - [`Checker`]: the same, one event at a time, for the monitors of a running cocotb test;
//! - [`Model`]: the model stepped a cycle at a time with input beats, its events read back
//!   and any probe read by its VCD path.
//!
//! Events are the stream's JSON objects, as Python dicts (or their JSON text).

use checker::events::{Dir, Event};
use checker::lockstep::{add_frame, beat};
use checker::record::Recorder;
use checker::{Decisions, Divergence, LineRate, Mode, Options};
use hw_model::{Beat, Derived, Inputs, Mmu, Outputs};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use scenario::{resolve_scenario, Overrides, Scenario};

/// The switch of a built-in scenario or a TOML file.
fn derived(scenario: &str) -> PyResult<Derived> {
    let src = resolve_scenario(scenario).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Scenario::parse(&src.text, &src.name)
        .and_then(|s| s.plan(&Overrides::default()))
        .map(|p| p.derived)
        .map_err(|e| PyValueError::new_err(format!("{scenario}: {e}")))
}

fn options(mode: &str, line_rate: &str, pfc_tolerance: u64, decisions: &str) -> PyResult<Options> {
    Ok(Options {
        mode: match mode {
            "follow" => Mode::Follow,
            "lockstep" => Mode::Lockstep,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "mode: {mode:?}; allowed: \"follow\", \"lockstep\""
                )))
            }
        },
        line_rate: match line_rate {
            "scenario" => LineRate::Scenario,
            "cell-per-cycle" => LineRate::CellPerCycle,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "line_rate: {line_rate:?}; allowed: \"scenario\", \"cell-per-cycle\""
                )))
            }
        },
        pfc_tolerance,
        decisions: match decisions {
            "reported" => Decisions::Reported,
            "inferred" => Decisions::Inferred,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "decisions: {decisions:?}; allowed: \"reported\", \"inferred\""
                )))
            }
        },
    })
}

/// An event given as a dict or as its JSON text: the text.
fn event_text(event: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = event.cast::<PyString>() {
        return Ok(s.to_string());
    }
    let json = event.py().import("json")?;
    json.call_method1("dumps", (event,))?.extract()
}

fn event_object<'py>(py: Python<'py>, ev: &Event) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (ev.to_line(),))
}

fn divergence<'py>(py: Python<'py>, d: &Divergence) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("cycle", d.cycle)?;
    out.set_item("line", d.line)?;
    out.set_item("check", d.check)?;
    out.set_item("event", &d.event)?;
    out.set_item("expected", &d.expected)?;
    out.set_item("history", &d.history)?;
    out.set_item("egress_queue", d.queue)?;
    out.set_item("text", d.to_string())?;
    Ok(out)
}

fn divergences<'py>(py: Python<'py>, ds: &[Divergence]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    ds.iter().map(|d| divergence(py, d)).collect()
}

/// Where the stream's `meta` and the scenario disagree, through Python's `warnings` (a
/// `UserWarning` each), as `mmu-sim check` prints them on stderr.
fn warn(py: Python<'_>, messages: &[String]) -> PyResult<()> {
    let warnings = py.import("warnings")?;
    for m in messages {
        warnings.call_method1("warn", (format!("mmu_model: {m}"),))?;
    }
    Ok(())
}

/// Check a whole stream: `events` is a path to a JSON Lines file, or a list of events
/// (dicts or JSON lines, the `meta` line first). Returns the divergences.
// One Rust argument per Python keyword argument.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (scenario, events, mode = "follow", line_rate = "scenario", pfc_tolerance = 2, keep_going = true, decisions = "reported"))]
fn check<'py>(
    py: Python<'py>,
    scenario: &str,
    events: &Bound<'py, PyAny>,
    mode: &str,
    line_rate: &str,
    pfc_tolerance: u64,
    keep_going: bool,
    decisions: &str,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let d = derived(scenario)?;
    let opts = options(mode, line_rate, pfc_tolerance, decisions)?;
    let text = match events.cast::<PyString>() {
        Ok(path) => {
            let path = path.to_string();
            std::fs::read_to_string(&path)
                .map_err(|e| PyValueError::new_err(format!("events {path}: {e}")))?
        }
        Err(_) => {
            let mut text = String::new();
            for ev in events.try_iter()? {
                text += &event_text(&ev?)?;
                text.push('\n');
            }
            text
        }
    };
    let report = checker::check(d, text.as_bytes(), opts, keep_going)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    warn(py, &report.warnings)?;
    divergences(py, &report.divergences)
}

/// The checker fed one event at a time.
#[pyclass(unsendable)]
struct Checker {
    inner: checker::Checker,
    line: usize,
}

#[pymethods]
impl Checker {
    #[new]
    #[pyo3(signature = (scenario, mode = "follow", line_rate = "scenario", pfc_tolerance = 2, decisions = "reported"))]
    fn new(
        scenario: &str,
        mode: &str,
        line_rate: &str,
        pfc_tolerance: u64,
        decisions: &str,
    ) -> PyResult<Self> {
        let d = derived(scenario)?;
        let opts = options(mode, line_rate, pfc_tolerance, decisions)?;
        Ok(Self {
            inner: checker::Checker::new(d, opts),
            line: 0,
        })
    }

    /// The next event (a dict or its JSON line); the divergences it settles.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        event: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.line += 1;
        let warned = self.inner.warnings.len();
        self.inner
            .feed_line(self.line, &event_text(event)?)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        warn(py, &self.inner.warnings[warned..])?;
        divergences(py, &self.inner.take())
    }

    /// The end of the stream: the divergences of its last cycles and its end.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner.finish();
        divergences(py, &self.inner.take())
    }
}

/// The model, stepped a cycle at a time.
#[pyclass(unsendable)]
struct Model {
    mmu: Mmu,
    rec: Recorder,
    out: Outputs,
    ingress: Vec<Option<Beat>>,
}

#[pymethods]
impl Model {
    #[new]
    fn new(scenario: &str) -> PyResult<Self> {
        let d = derived(scenario)?;
        Ok(Self {
            rec: Recorder::new(&d),
            out: Outputs::with_ports(d.ports),
            ingress: vec![None; d.ports],
            mmu: Mmu::new(d),
        })
    }

    /// The next cycle to step.
    #[getter]
    fn cycle(&self) -> u64 {
        self.mmu.cycle()
    }

    /// Step one cycle with `inputs`: `arrive` events (one cell per port; `cell` gives its
    /// index, 0 if absent) and received `pfc` events. Their `cycle` is ignored. Returns
    /// the model's events of the cycle.
    #[pyo3(signature = (inputs = Vec::new()))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let d = self.mmu.config().clone();
        let mut frames = Vec::new();
        self.ingress.iter_mut().for_each(|b| *b = None);
        for ev in &inputs {
            let text = event_text(ev)?;
            match checker::events::parse_line(&text).map_err(PyValueError::new_err)? {
                Event::Arrive(a) if (a.port as usize) < d.ports => {
                    self.ingress[a.port as usize] = Some(beat(&a))
                }
                Event::Pfc(p) if p.dir == Dir::Received && (p.port as usize) < d.ports => {
                    add_frame(&d, &p, &mut frames)
                }
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "input {text}: allowed: arrive, or received pfc, on ports 0..{}",
                        d.ports
                    )))
                }
            }
        }
        let now = self.mmu.cycle();
        let inp = Inputs {
            ingress: &self.ingress,
            pfc_rx: &frames,
        };
        self.mmu
            .step(&inp, &mut self.out)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut events = Vec::new();
        self.rec
            .step(now, &inp, &self.out, &self.mmu, |e| events.push(e.clone()));
        events.iter().map(|e| event_object(py, e)).collect()
    }

    /// The value of the signal at `path` (e.g. `top.mmu.buffer.total_cells`), as the
    /// waveforms show it.
    fn probe(&self, path: &str) -> PyResult<u64> {
        let i = self
            .mmu
            .signals()
            .iter()
            .position(|s| s.path == path)
            .ok_or_else(|| PyValueError::new_err(format!("probe {path:?}: no such signal")))?;
        Ok(self.mmu.signal_value(i))
    }

    /// Every probe's path.
    fn probes(&self) -> Vec<String> {
        self.mmu.signals().iter().map(|s| s.path.clone()).collect()
    }
}

#[pymodule]
fn mmu_model(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_class::<Checker>()?;
    m.add_class::<Model>()?;
    Ok(())
}
