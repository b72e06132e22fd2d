//! `--set KEY=VALUE` on a scenario: the text read as one TOML table within the limits of
//! `scenario_file` ([`parse_table`]), and a dotted key (`flows[3].dst`) assigned in it
//! ([`set_key`]).

use crate::scenario_file::{Layout, ARRAYS};
use crate::ScenarioError;

/// Read scenario text as a TOML table, for [`set_key`] and [`Scenario::from_table`](crate::Scenario::from_table): within
/// the limits of [`crate::scenario_file`], each table of its arrays parsed on its own.
/// [`Scenario::parse`](crate::Scenario::parse) reads the same without holding every table at once.
pub fn parse_table(text: &str) -> Result<toml::Table, ScenarioError> {
    let layout = Layout::scan(text)?;
    let mut top = layout.top()?;
    for key in ARRAYS {
        let Some(tables) = layout.tables(key) else {
            continue;
        };
        if top.contains_key(key) {
            return Err(defined_twice(key));
        }
        let tables = tables
            .map(|t| t.map(toml::Value::Table))
            .collect::<Result<_, _>>()?;
        top.insert(key.to_string(), toml::Value::Array(tables));
    }
    Ok(top)
}

/// An array given both as `[[key]]` tables and as a `key` key or table.
pub(crate) fn defined_twice(key: &str) -> ScenarioError {
    ScenarioError::new(
        key,
        format!("defined both by [[{key}]] tables and by a {key} key or table"),
    )
}

/// Apply `KEY=VALUE` (the `--set` option) to a scenario's TOML table, before
/// [`Scenario::from_table`](crate::Scenario::from_table) checks it: the file's own checks then judge the result, so a
/// key outside the schema or a bad value gets the same error as in a file.
///
/// `KEY` is a dotted path with array indices: `switch.alpha_log2`, `flows[3].prio`,
/// `switch.hcf[0].bins`. Missing tables on the way are created (`ecm_rp.w` without an
/// `[ecm_rp]`); an array index must name an existing entry. `VALUE` is a TOML value
/// (`2`, `true`, `"dsh"`, `[1, 2]`, `{ tcp = {} }`); a bare word that is not one (`dsh`)
/// is taken as a string.
pub fn set_key(top: &mut toml::Table, assignment: &str) -> Result<(), ScenarioError> {
    let opt = |m: String| ScenarioError::new(format!("--set {assignment}"), m);
    let Some((key, text)) = assignment.split_once('=') else {
        return Err(opt("expected KEY=VALUE".into()));
    };
    let key = key.trim();
    let value = set_value(text.trim()).map_err(opt)?;
    let steps = key_steps(key).map_err(opt)?;
    let (last, path) = steps
        .split_last()
        .expect("key_steps returns at least one step");
    let mut table = top;
    let mut at = String::new();
    for step in path {
        let mut node = match table.entry(step.name.clone()) {
            toml::map::Entry::Occupied(e) => e.into_mut(),
            toml::map::Entry::Vacant(e) if step.index.is_empty() => {
                e.insert(toml::Value::Table(toml::Table::new()))
            }
            toml::map::Entry::Vacant(_) => {
                return Err(ScenarioError::new(
                    format!("{at}{}", step.name),
                    "index into an array the scenario does not have",
                ))
            }
        };
        at.push_str(&step.name);
        node = index(node, &step.index, &mut at)?;
        table = match node {
            toml::Value::Table(t) => t,
            other => {
                return Err(ScenarioError::new(
                    at,
                    format!(
                        "is a {}, not a table: cannot set a key in it",
                        other.type_str()
                    ),
                ))
            }
        };
        at.push('.');
    }
    if last.index.is_empty() {
        table.insert(last.name.clone(), value);
        return Ok(());
    }
    let Some(node) = table.get_mut(&last.name) else {
        return Err(ScenarioError::new(
            format!("{at}{}", last.name),
            "index into an array the scenario does not have",
        ));
    };
    at.push_str(&last.name);
    *index(node, &last.index, &mut at)? = value;
    Ok(())
}

/// One step of a `--set` key: a table key and the array indices after it.
struct Step {
    name: String,
    index: Vec<usize>,
}

/// `a.b[2].c` as steps; every name non-empty, indices decimal.
fn key_steps(key: &str) -> Result<Vec<Step>, String> {
    key.split('.')
        .map(|part| {
            let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
            let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if name.is_empty() || !name.chars().all(valid) {
                return Err(format!(
                    "bad key {key:?}: expected dotted names with array indices, e.g. flows[3].prio"
                ));
            }
            let mut index = Vec::new();
            while let Some(r) = rest.strip_prefix('[') {
                let (i, tail) = r
                    .split_once(']')
                    .ok_or_else(|| format!("bad key {key:?}: unclosed ["))?;
                index.push(
                    i.parse()
                        .map_err(|_| format!("bad key {key:?}: index {i:?} is not a number"))?,
                );
                rest = tail;
            }
            if !rest.is_empty() {
                return Err(format!("bad key {key:?}: unexpected {rest:?}"));
            }
            Ok(Step {
                name: name.to_string(),
                index,
            })
        })
        .collect()
}

/// Follow `idx` into nested arrays from `v`, extending the path `at` (`flows[3]`).
fn index<'v>(
    mut v: &'v mut toml::Value,
    idx: &[usize],
    at: &mut String,
) -> Result<&'v mut toml::Value, ScenarioError> {
    for &i in idx {
        let toml::Value::Array(a) = v else {
            return Err(ScenarioError::new(
                at.clone(),
                format!(
                    "holds a value of type {}, not an array: cannot index it",
                    v.type_str()
                ),
            ));
        };
        let n = a.len();
        let Some(next) = a.get_mut(i) else {
            let allowed = match n {
                0 => "the array is empty".to_string(),
                n => format!("allowed: 0..={}", n - 1),
            };
            return Err(ScenarioError::new(
                format!("{at}[{i}]"),
                format!("index {i} is out of range; {allowed}"),
            ));
        };
        at.push_str(&format!("[{i}]"));
        v = next;
    }
    Ok(v)
}

/// A `--set` value: TOML, or a bare word taken as a string.
fn set_value(text: &str) -> Result<toml::Value, String> {
    if let Ok(mut t) = format!("v = {text}").parse::<toml::Table>() {
        if t.len() == 1 {
            if let Some(v) = t.remove("v") {
                return Ok(v);
            }
        }
    }
    let word = |c: char| c.is_ascii_alphanumeric() || "_-.:/+".contains(c);
    if !text.is_empty() && text.chars().all(word) {
        Ok(toml::Value::String(text.to_string()))
    } else {
        Err(format!(
            "{text:?} is not a TOML value (a number, true/false, \"text\", [array] or {{ table }})"
        ))
    }
}
