//! The sweep spec (TOML, see docs/sweep.md) and its expansion into runs.
//!
//! ```toml
//! base = "fanin-burst"                       # a built-in, or a scenario file beside the spec
//! seeds = { from = 1, to = 4 }               # or a list; default: the base's run.seed
//! collect = ["pfc_pause_frames", "drops_by_reason.headroom_full"]
//! [parameters]                               # each key an axis of the Cartesian product
//! "switch.policy" = ["sih", "dsh"]
//! "switch.alpha_log2" = { from = -3, to = 1 }
//! [[zip]]                                    # the lists of one group vary together
//! "flows[0].size_bytes" = [512, 1024]
//! "flows[1].size_bytes" = [512, 1024]
//! ```
//!
//! A sweep whose runs are not plain scenario runs (a reproduction's run that watches the
//! simulation as it goes) names a [`Measure`] instead of a base: `measure = "dsh-fig11"`;
//! its parameters are the measure's own, and `collect` names the measure's fields.
//!
//! The axes, outermost first: the `[parameters]` keys in sorted order, the `[[zip]]`
//! groups in file order, then the seeds (`run.seed`). Every run's scenario is the base with
//! the run's values set as `mmu-sim run --set KEY=VALUE` would set them, then checked as a
//! scenario file is; its id is a hash of the resolved scenario and the tool version
//! ([`run_id`]).

use scenario::{builtin, scenario_file, Overrides};
use scenario::{Scenario, ScenarioError};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The keys a spec may have.
pub const SPEC_KEYS: [&str; 7] = [
    "name",
    "base",
    "measure",
    "seeds",
    "collect",
    "parameters",
    "zip",
];

/// Parameter values of a run by key, and the fields a run yields.
pub type Values = std::collections::BTreeMap<String, Json>;

/// A run that is not a plain scenario run: a function of its parameters (e.g. one point
/// of a reproduction, which watches the simulation as it goes).
pub struct Measure {
    pub name: &'static str,
    /// The parameters it takes (every one must be given).
    pub params: &'static [&'static str],
    /// The fields it yields.
    pub fields: &'static [&'static str],
    /// Check the values of one run before anything runs.
    pub check: fn(&Values) -> Result<(), ScenarioError>,
    /// One run: its fields, or why it failed.
    pub run: fn(&Values) -> Result<Values, String>,
}

impl std::fmt::Debug for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Measure({})", self.name)
    }
}

/// What the runs of a spec are.
#[derive(Debug, Clone)]
pub enum Source {
    /// A scenario (a built-in name or a file) and its TOML text; `dir` is where its own
    /// relative files are (a network's topology and flow files).
    Base {
        name: String,
        text: String,
        dir: PathBuf,
    },
    Measure(&'static Measure),
}

/// What one run does.
#[derive(Debug, Clone)]
pub enum Job {
    Scenario(Box<Scenario>),
    /// A network scenario (`[fabric]`, built by `fabric::build`) and where its relative
    /// files are.
    Network(Box<Scenario>, PathBuf),
    Measure(&'static Measure),
}

/// Top-level fields of the run summary ([`switch_run::Summary`]; `ecn` only when ECN is on) a
/// spec may collect, or
/// descend into with a dotted path (`drops_by_reason.headroom_full`, `egress[0].cells`).
/// The summary's `run` part (wall and CPU time) is left out: it differs from run to run,
/// so a merged table would not be reproducible; rows keep it as metadata.
pub const SUMMARY_FIELDS: &[&str] = &[
    "schema_version",
    "tool_version",
    "scenario",
    "policy",
    "seed",
    "cycles",
    "clock_hz",
    "cell_bytes",
    "scenario_hash",
    "cells_injected",
    "cells_admitted",
    "cells_departed",
    "cells_dropped_lossless",
    "cells_dropped_lossy",
    "cells_buffered_at_end",
    "cells_owed_at_end",
    "cells_in_flight_at_end",
    "drops_by_reason",
    "admitted_by_segment",
    "reordered_cells",
    "misrouted_cells",
    "pfc_pause_frames",
    "pfc_resume_frames",
    "partner_pause_events",
    "pfc_port_pause_frames",
    "pfc_port_resume_frames",
    "partner_port_pause_events",
    "pfc_frames_rx_scripted",
    "conservation",
    "conservation_ok",
    "egress",
    "hcf",
    "ecm_frames",
    "ecm_rp",
    "ecn",
    "tcp",
    "ingress_priority_groups",
    "egress_queues",
    "pools",
    "pfc",
    "lossless",
    "violations",
];

/// Top-level fields of a network run's summary (`fabric::FabricSummary`, without its
/// machine-dependent `run`) a spec over a network base may collect.
pub const FABRIC_SUMMARY_FIELDS: &[&str] = &[
    "cycles",
    "clock_hz",
    "flows",
    "flows_completed",
    "cells_injected",
    "cells_delivered",
    "cells_dropped_lossless",
    "cells_dropped_lossy",
    "cells_buffered_at_end",
    "cells_on_links_at_end",
    "reordered_cells",
    "conservation",
    "conservation_ok",
    "deadlock",
    "violations",
    "headroom_warnings",
    "ecm",
    "switches",
    "links",
    "fct",
];

/// Whether a base scenario's text is a network's (has a `[fabric]` table).
fn is_network(text: &str) -> Result<bool, ScenarioError> {
    Ok(scenario::parse_table(text)?.contains_key("fabric"))
}

/// The largest number of runs one spec may expand to.
pub const MAX_RUNS: usize = 1_000_000;

/// A parsed sweep spec.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    pub source: Source,
    /// Outermost first; the seeds, if any, are the last axis.
    pub axes: Vec<Axis>,
    /// Summary fields, dotted paths (see [`SUMMARY_FIELDS`]).
    pub collect: Vec<String>,
}

/// One axis of the product: keys that take their values together (one key, or a zip group).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub keys: Vec<String>,
    /// One entry per step of the axis, one value per key.
    pub values: Vec<Vec<toml::Value>>,
}

/// One run of a sweep: its place in the product, id and parameter values.
#[derive(Debug, Clone)]
pub struct Run {
    pub index: usize,
    pub id: String,
    /// `(key, value)` in axis order.
    pub params: Vec<(String, Json)>,
    pub job: Job,
}

fn err(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(field, message)
}

impl Spec {
    /// Read a spec file; a relative `base` path is taken from the spec's directory.
    /// `measures` are the measures a `measure` key may name ([`Spec::parse_with`]).
    pub fn read_with(path: &Path, measures: &'static [Measure]) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| err("(file)", format!("{}: {e}", path.display())))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("sweep");
        Self::parse_with(
            &text,
            stem,
            path.parent().unwrap_or(Path::new(".")),
            measures,
        )
    }

    /// Parse spec text; `default_name` names it without a `name` key, `dir` is where a
    /// relative base file is, and `measures` are the measures a `measure` key may name.
    /// The engine has no measures of its own: the reproductions hand theirs in
    /// (`Spec::parse` in `crate::reproduce`), so this module depends on none of them.
    pub fn parse_with(
        text: &str,
        default_name: &str,
        dir: &Path,
        measures: &'static [Measure],
    ) -> Result<Self, ScenarioError> {
        let mut top: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| err("(file)", e.to_string()))?;
        if let Some(k) = top.keys().find(|k| !SPEC_KEYS.contains(&k.as_str())) {
            return Err(err(
                k.as_str(),
                format!("unknown key; allowed: {}", SPEC_KEYS.join(", ")),
            ));
        }
        let name = match top.remove("name") {
            None => default_name.to_string(),
            Some(toml::Value::String(s)) => s,
            Some(v) => {
                return Err(err(
                    "name",
                    format!("expected a string, found {}", v.type_str()),
                ))
            }
        };
        let source = match (top.remove("base"), top.remove("measure")) {
            (Some(toml::Value::String(name)), None) => {
                let text = base_text(&name, dir)?;
                let file_dir = match builtin::find(&name) {
                    Some(_) => PathBuf::from("."),
                    None => dir.join(&name).parent().unwrap_or(dir).to_path_buf(),
                };
                Source::Base {
                    name,
                    text,
                    dir: file_dir,
                }
            }
            (None, Some(toml::Value::String(name))) => Source::Measure(measure(&name, measures)?),
            (Some(v), None) | (None, Some(v)) => {
                return Err(err(
                    "base",
                    format!("expected a string, found {}", v.type_str()),
                ))
            }
            (Some(_), Some(_)) => {
                return Err(err(
                    "measure",
                    "given with base; allowed: one of base and measure",
                ))
            }
            (None, None) => {
                return Err(err(
                    "base",
                    format!(
                        "missing; allowed: a built-in ({}) or a scenario file, or a measure ({})",
                        builtin::names().join(", "),
                        measure_names(measures)
                    ),
                ))
            }
        };
        let mut axes = Vec::new();
        if let Some(v) = top.remove("parameters") {
            let toml::Value::Table(t) = v else {
                return Err(err(
                    "parameters",
                    format!("expected a table, found {}", v.type_str()),
                ));
            };
            let mut leaves = Vec::new();
            flatten("", t, &mut leaves)?;
            for (key, v) in leaves {
                let values = values(&format!("parameters.{key}"), v)?;
                axes.push(Axis {
                    keys: vec![key],
                    values: values.into_iter().map(|v| vec![v]).collect(),
                });
            }
        }
        if let Some(v) = top.remove("zip") {
            let toml::Value::Array(groups) = v else {
                return Err(err(
                    "zip",
                    format!("expected [[zip]] tables, found {}", v.type_str()),
                ));
            };
            for (g, group) in groups.into_iter().enumerate() {
                axes.push(zip_axis(g, group)?);
            }
        }
        if let Some(v) = top.remove("seeds") {
            let seeds = values("seeds", v)?;
            if let Some(s) = seeds.iter().find(|s| s.as_integer().is_none_or(|i| i < 0)) {
                return Err(err(
                    "seeds",
                    format!("{s} is not a seed; allowed: integers 0..=2^63-1"),
                ));
            }
            // A measured sweep's seeds are its measure's `seed` parameter.
            let key = match &source {
                Source::Base { .. } => "run.seed",
                Source::Measure(_) => "seed",
            };
            axes.push(Axis {
                keys: vec![key.into()],
                values: seeds.into_iter().map(|v| vec![v]).collect(),
            });
        }
        check_keys(&axes)?;
        let allowed: &[&str] = match &source {
            Source::Base { text, .. } if is_network(text)? => FABRIC_SUMMARY_FIELDS,
            Source::Base { .. } => SUMMARY_FIELDS,
            Source::Measure(m) => {
                check_measure_keys(m, &axes)?;
                m.fields
            }
        };
        let collect = collect(top.remove("collect"), allowed)?;
        let spec = Self {
            name,
            source,
            axes,
            collect,
        };
        let n = spec.len();
        if n > MAX_RUNS {
            return Err(err(
                "parameters",
                format!("{n} runs; allowed: at most {MAX_RUNS}"),
            ));
        }
        Ok(spec)
    }

    /// Number of runs: the product of the axis lengths.
    pub fn len(&self) -> usize {
        self.axes
            .iter()
            .map(|a| a.values.len())
            .fold(1usize, |n, l| n.saturating_mul(l))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every parameter key, in axis order: the columns of the merged table.
    pub fn keys(&self) -> Vec<String> {
        self.axes.iter().flat_map(|a| a.keys.clone()).collect()
    }

    /// The parameter values of run `index` (the last axis fastest).
    pub fn params(&self, index: usize) -> Vec<(String, toml::Value)> {
        let mut rest = index;
        let mut steps = vec![0; self.axes.len()];
        for (a, axis) in self.axes.iter().enumerate().rev() {
            steps[a] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        self.axes
            .iter()
            .zip(steps)
            .flat_map(|(axis, s)| axis.keys.iter().cloned().zip(axis.values[s].clone()))
            .collect()
    }

    /// The base scenario or the measure, by name.
    pub fn source_name(&self) -> &str {
        match &self.source {
            Source::Base { name, .. } => name,
            Source::Measure(m) => m.name,
        }
    }

    /// Resolve run `index`: the base with its values set, checked as a scenario file; or
    /// the measure's values, checked by the measure.
    pub fn run(&self, index: usize) -> Result<Run, ScenarioError> {
        let params = self.params(index);
        let (base, text, dir) = match &self.source {
            Source::Base { name, text, dir } => (name, text, dir),
            Source::Measure(m) => {
                let json: Vec<(String, Json)> = params
                    .iter()
                    .map(|(k, v)| (k.clone(), toml_to_json(v.clone())))
                    .collect();
                let values: Values = json.iter().cloned().collect();
                (m.check)(&values)
                    .map_err(|e| err(format!("run {index} ({})", show(&params)), e.to_string()))?;
                return Ok(Run {
                    index,
                    id: measure_id(m, &values),
                    params: json,
                    job: Job::Measure(m),
                });
            }
        };
        let mut table = scenario::parse_table(text)?;
        for (k, v) in &params {
            scenario::set_key(&mut table, &format!("{k}={v}"))?;
        }
        let base_name = Path::new(base)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(base);
        // A network's files and topology are read when it runs.
        let scenario = Scenario::from_table(table, base_name)
            .and_then(|s| match s.fabric {
                Some(_) => Ok(s),
                None => s.plan(&Overrides::default()).map(|_| s),
            })
            .map_err(|e| err(format!("run {index} ({})", show(&params)), e.to_string()))?;
        let id = run_id(&scenario);
        let params = params
            .into_iter()
            .map(|(k, v)| (k, toml_to_json(v)))
            .collect();
        let job = match scenario.fabric {
            Some(_) => Job::Network(Box::new(scenario), dir.clone()),
            None => Job::Scenario(Box::new(scenario)),
        };
        Ok(Run {
            index,
            id,
            params,
            job,
        })
    }

    /// Every run, resolved and checked; two runs that resolve to the same scenario are an
    /// error (a repeated value).
    pub fn runs(&self) -> Result<Vec<Run>, ScenarioError> {
        use rayon::prelude::*;
        let runs = (0..self.len())
            .into_par_iter()
            .map(|i| self.run(i))
            .collect::<Result<Vec<_>, _>>()?;
        let mut seen = std::collections::HashMap::new();
        for r in &runs {
            if let Some(first) = seen.insert(&r.id, r.index) {
                return Err(err(
                    "parameters",
                    format!(
                        "runs {first} and {} resolve to the same scenario ({}); allowed: distinct values",
                        r.index,
                        show_json(&r.params)
                    ),
                ));
            }
        }
        Ok(runs)
    }
}

/// A run's id: the first 16 hex digits of SHA-256 over the tool version and the resolved
/// scenario's hash ([`Scenario::hash`]). The mmu-sim binary itself is not hashed, so a
/// rebuild of the same version (another machine, another compiler) resumes the same runs.
pub fn run_id(scenario: &Scenario) -> String {
    hex_id(&format!(
        "mmu-sim {}\n{}\n",
        env!("CARGO_PKG_VERSION"),
        scenario.hash(&Overrides::default())
    ))
}

/// The first 16 hex digits of SHA-256 of `text`.
fn hex_id(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A measured run's id: as [`run_id`], over the measure's name and the run's values.
fn measure_id(m: &Measure, values: &Values) -> String {
    hex_id(&format!(
        "mmu-sim {}\nmeasure {}\n{}\n",
        env!("CARGO_PKG_VERSION"),
        m.name,
        serde_json::to_string(values).expect("values serialize")
    ))
}

fn measure(name: &str, measures: &'static [Measure]) -> Result<&'static Measure, ScenarioError> {
    measures.iter().find(|m| m.name == name).ok_or_else(|| {
        err(
            "measure",
            format!(
                "{name:?} is not a measure; allowed: {}",
                measure_names(measures)
            ),
        )
    })
}

fn measure_names(measures: &[Measure]) -> String {
    let names: Vec<&str> = measures.iter().map(|m| m.name).collect();
    names.join(", ")
}

/// The axes of a measured sweep set exactly the measure's parameters.
fn check_measure_keys(m: &Measure, axes: &[Axis]) -> Result<(), ScenarioError> {
    let keys: Vec<&String> = axes.iter().flat_map(|a| &a.keys).collect();
    if let Some(k) = keys.iter().find(|k| !m.params.contains(&k.as_str())) {
        return Err(err(
            format!("parameters.{k}"),
            format!(
                "not a parameter of measure {}; allowed: {}",
                m.name,
                m.params.join(", ")
            ),
        ));
    }
    if let Some(p) = m.params.iter().find(|p| !keys.iter().any(|k| k == p)) {
        return Err(err(
            format!("parameters.{p}"),
            format!("missing; measure {} takes {}", m.name, m.params.join(", ")),
        ));
    }
    Ok(())
}

/// The text of a built-in or of a scenario file (relative to `dir`).
fn base_text(base: &str, dir: &Path) -> Result<String, ScenarioError> {
    if let Some(b) = builtin::find(base) {
        return Ok(b.toml());
    }
    let path: PathBuf = dir.join(base);
    if !path.exists() {
        return Err(err(
            "base",
            format!(
                "{base:?} is neither a built-in nor a file ({}); allowed: {}",
                path.display(),
                builtin::names().join(", ")
            ),
        ));
    }
    scenario_file::read(&path).map_err(|e| err("base", format!("{}: {e}", path.display())))
}

/// The leaves of `[parameters]`: quoted dotted keys, or nested tables down to a list or a
/// range.
fn flatten(
    prefix: &str,
    t: toml::Table,
    out: &mut Vec<(String, toml::Value)>,
) -> Result<(), ScenarioError> {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) if !t.contains_key("from") => flatten(&key, t, out)?,
            v => out.push((key, v)),
        }
    }
    Ok(())
}

/// A list of values, or an integer range `{ from, to, step = 1 }` (both ends included).
fn values(field: &str, v: toml::Value) -> Result<Vec<toml::Value>, ScenarioError> {
    let list = match v {
        toml::Value::Array(a) => a,
        toml::Value::Table(t) => range(field, t)?,
        v => {
            return Err(err(
                field,
                format!(
                    "expected a list or a range {{ from, to, step }}, found {}",
                    v.type_str()
                ),
            ))
        }
    };
    if list.is_empty() {
        return Err(err(field, "an empty list; allowed: at least one value"));
    }
    Ok(list)
}

fn range(field: &str, mut t: toml::Table) -> Result<Vec<toml::Value>, ScenarioError> {
    let mut int = |k: &str, default: Option<i64>| match t.remove(k) {
        Some(toml::Value::Integer(i)) => Ok(i),
        None if default.is_some() => Ok(default.unwrap_or_default()),
        other => Err(err(
            format!("{field}.{k}"),
            format!(
                "expected an integer, found {}",
                other.map_or("nothing", |v| v.type_str())
            ),
        )),
    };
    let (from, to, step) = (int("from", None)?, int("to", None)?, int("step", Some(1))?);
    if let Some(k) = t.keys().next() {
        return Err(err(
            format!("{field}.{k}"),
            "unknown key; allowed: from, to, step",
        ));
    }
    if step < 1 || to < from {
        return Err(err(
            field,
            format!("from {from} to {to} step {step}; allowed: from <= to, step >= 1"),
        ));
    }
    let n = (to - from) / step + 1;
    if n > MAX_RUNS as i64 {
        return Err(err(
            field,
            format!("{n} values; allowed: at most {MAX_RUNS}"),
        ));
    }
    Ok((0..n)
        .map(|i| toml::Value::Integer(from + i * step))
        .collect())
}

/// One `[[zip]]` group: lists of one length that vary together.
fn zip_axis(g: usize, group: toml::Value) -> Result<Axis, ScenarioError> {
    let field = format!("zip[{g}]");
    let toml::Value::Table(t) = group else {
        return Err(err(
            field,
            format!("expected a table, found {}", group.type_str()),
        ));
    };
    let mut leaves = Vec::new();
    flatten("", t, &mut leaves)?;
    if leaves.is_empty() {
        return Err(err(field, "an empty group; allowed: at least one key"));
    }
    let mut keys = Vec::new();
    let mut lists = Vec::new();
    for (k, v) in leaves {
        lists.push(values(&format!("{field}.{k}"), v)?);
        keys.push(k);
    }
    let n = lists[0].len();
    if let Some(i) = lists.iter().position(|l| l.len() != n) {
        return Err(err(
            format!("{field}.{}", keys[i]),
            format!(
                "{} values, but {} has {n}; allowed: the same length for every key of a group",
                lists[i].len(),
                keys[0]
            ),
        ));
    }
    let values = (0..n)
        .map(|s| lists.iter().map(|l| l[s].clone()).collect())
        .collect();
    Ok(Axis { keys, values })
}

/// A key set by two axes (or `run.seed` beside `seeds`) is an error.
fn check_keys(axes: &[Axis]) -> Result<(), ScenarioError> {
    let mut seen = std::collections::HashSet::new();
    for k in axes.iter().flat_map(|a| &a.keys) {
        if !seen.insert(k) {
            return Err(err(
                k.as_str(),
                "set by two parameters (or by run.seed and seeds); allowed: once",
            ));
        }
    }
    Ok(())
}

fn collect(v: Option<toml::Value>, fields: &[&str]) -> Result<Vec<String>, ScenarioError> {
    let allowed = || format!("allowed: {}", fields.join(", "));
    let Some(v) = v else {
        return Err(err("collect", format!("missing; {}", allowed())));
    };
    let toml::Value::Array(list) = v else {
        return Err(err(
            "collect",
            format!("expected a list of summary fields; {}", allowed()),
        ));
    };
    if list.is_empty() {
        return Err(err("collect", format!("an empty list; {}", allowed())));
    }
    let mut out: Vec<String> = Vec::new();
    for v in list {
        let toml::Value::String(path) = v else {
            return Err(err(
                "collect",
                format!("{v} is not a string; {}", allowed()),
            ));
        };
        let head = path.split(['.', '[']).next().unwrap_or_default();
        if !fields.contains(&head) {
            return Err(err(
                "collect",
                format!("{path:?} is not a field of the runs; {}", allowed()),
            ));
        }
        if out.contains(&path) {
            return Err(err("collect", format!("{path:?} twice; allowed: once")));
        }
        out.push(path);
    }
    Ok(out)
}

/// The value at a dotted path with indices (`egress[0].cells`) in a summary's JSON; `None`
/// if the summary has nothing there (e.g. a drop reason that did not occur).
pub fn field<'a>(summary: &'a Json, path: &str) -> Option<&'a Json> {
    let mut at = summary;
    for part in path.split('.') {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        at = at.get(name)?;
        while let Some(r) = rest.strip_prefix('[') {
            let (i, tail) = r.split_once(']')?;
            at = at.get(i.parse::<usize>().ok()?)?;
            rest = tail;
        }
    }
    Some(at)
}

pub fn toml_to_json(v: toml::Value) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

fn show(params: &[(String, toml::Value)]) -> String {
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    p.join(", ")
}

fn show_json(params: &[(String, Json)]) -> String {
    let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    p.join(", ")
}
