//! A scenario as a command line names it: a built-in's name, else a TOML file's path. The
//! `mmu-sim` command line and the Python and C bindings all resolve it here, so they take
//! the same names and report an unknown one alike.

use crate::{builtin, scenario_file, ScenarioError};
use std::path::Path;
use thiserror::Error;

/// A scenario's TOML text and the name it runs under when it has no `name` key: a
/// built-in's name, or a file's stem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioSource {
    pub text: String,
    pub name: String,
}

#[derive(Debug, Error)]
pub enum ResolveError {
    /// Neither a built-in nor an existing file.
    #[error(
        "unknown scenario {arg:?}{}: not a built-in ({}) and no such file",
        crate::suggest::did_you_mean(arg, builtin::names()),
        builtin::names().join(", ")
    )]
    Unknown { arg: String },
    /// The file exists but cannot be read, or is past the limits [`scenario_file::read`]
    /// checks.
    #[error("{arg}: {source}")]
    File { arg: String, source: ScenarioError },
}

/// The built-in named `arg`, else the file at path `arg` (read within the limits of
/// [`scenario_file::read`]). A built-in's name wins over a file of the same name.
pub fn resolve_scenario(arg: &str) -> Result<ScenarioSource, ResolveError> {
    if let Some(b) = builtin::find(arg) {
        return Ok(ScenarioSource {
            text: b.toml(),
            name: b.name.to_string(),
        });
    }
    let path = Path::new(arg);
    if !path.exists() {
        return Err(ResolveError::Unknown { arg: arg.into() });
    }
    let text = scenario_file::read(path).map_err(|source| ResolveError::File {
        arg: arg.into(),
        source,
    })?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or(arg);
    Ok(ScenarioSource {
        text,
        name: stem.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builtin_resolves_to_its_text_and_name() {
        let s = resolve_scenario("small-smoke").unwrap();
        let b = builtin::find("small-smoke").unwrap();
        assert_eq!((s.text, s.name.as_str()), (b.toml(), "small-smoke"));
    }

    #[test]
    fn a_file_resolves_to_its_text_and_stem() {
        let dir = std::env::temp_dir().join(format!("resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("my-run.toml");
        std::fs::write(&path, "[run]\ncycles = 5\n").unwrap();
        let s = resolve_scenario(path.to_str().unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            (s.text.as_str(), s.name.as_str()),
            ("[run]\ncycles = 5\n", "my-run")
        );
    }

    #[test]
    fn an_unknown_name_lists_the_builtins() {
        let e = resolve_scenario("no-such-scenario").unwrap_err();
        assert!(matches!(e, ResolveError::Unknown { .. }));
        let msg = e.to_string();
        assert!(
            msg.starts_with("unknown scenario \"no-such-scenario\": not a built-in (")
                && builtin::names().iter().all(|n| msg.contains(n)),
            "{msg}"
        );
    }

    #[test]
    fn a_misspelt_name_gets_the_closest_builtin() {
        let msg = resolve_scenario("smal-smoke").unwrap_err().to_string();
        assert!(
            msg.starts_with("unknown scenario \"smal-smoke\" (did you mean \"small-smoke\"?): "),
            "{msg}"
        );
    }

    #[test]
    fn an_unreadable_file_names_the_argument() {
        // A directory exists but is no file to read.
        let dir = std::env::temp_dir();
        let arg = dir.to_str().unwrap();
        let e = resolve_scenario(arg).unwrap_err();
        assert!(matches!(e, ResolveError::File { .. }), "{e}");
        assert!(e.to_string().starts_with(&format!("{arg}: ")), "{e}");
    }
}
