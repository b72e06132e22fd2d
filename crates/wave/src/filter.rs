//! Glob filter over signal paths.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::{SignalSpec, WaveError};

/// Selects signals by glob patterns over their dot-separated paths.
///
/// Patterns use globset syntax: `*` (which also matches `.`, so
/// `"*.shared_cells"` finds that leaf at any depth), `?`, `[0-3]`, `{a,b}`.
/// A signal is selected if any pattern matches its full path. A filter with no
/// patterns selects everything, so "no option given" and "all signals" are the
/// same thing.
#[derive(Debug, Clone, Default)]
pub struct SignalFilter {
    /// `None` = everything passes.
    set: Option<GlobSet>,
    patterns: Vec<String>,
}

impl SignalFilter {
    /// A filter that selects every signal.
    pub fn all() -> Self {
        Self::default()
    }

    /// Parses a comma-separated list of globs, e.g.
    /// `"top.mmu.ingress.p0[0-3].*, *.shared_cells"`.
    ///
    /// Whitespace around each glob is ignored, and so are empty entries (a
    /// trailing comma); an empty or all-blank string gives [`SignalFilter::all`].
    /// A comma inside `{...}` belongs to the alternation, not the list.
    /// The error names the first glob that does not parse.
    pub fn parse(globs: &str) -> Result<Self, WaveError> {
        let mut builder = GlobSetBuilder::new();
        let mut patterns = Vec::new();
        for raw in split_top_level_commas(globs) {
            let glob = raw.trim();
            if glob.is_empty() {
                continue;
            }
            let compiled = Glob::new(glob).map_err(|source| WaveError::BadGlob {
                glob: glob.to_owned(),
                source,
            })?;
            builder.add(compiled);
            patterns.push(glob.to_owned());
        }
        if patterns.is_empty() {
            return Ok(Self::all());
        }
        let set = builder.build().map_err(|source| WaveError::BadGlob {
            glob: patterns.join(","),
            source,
        })?;
        Ok(Self {
            set: Some(set),
            patterns,
        })
    }

    /// True if `path` passes the filter.
    pub fn matches(&self, path: &str) -> bool {
        match &self.set {
            None => true,
            Some(set) => set.is_match(path),
        }
    }

    /// True if this filter selects everything.
    pub fn is_all(&self) -> bool {
        self.set.is_none()
    }

    /// The globs this filter was built from (empty for [`SignalFilter::all`]).
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The signals that pass the filter, in order. Handy for passing the
    /// signals that are actually in a VCD to [`crate::write_gtkw`].
    pub fn apply(&self, signals: &[SignalSpec]) -> Vec<SignalSpec> {
        signals
            .iter()
            .filter(|s| self.matches(&s.path))
            .cloned()
            .collect()
    }
}

/// Splits on commas that are not inside `{...}` or `[...]`, so that globset
/// alternations like `top.{a,b}.x` survive the list split.
fn split_top_level_commas(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut brace_depth = 0usize;
    let mut in_class = false;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => brace_depth += 1,
            '}' if !in_class => brace_depth = brace_depth.saturating_sub(1),
            ',' if !in_class && brace_depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_all() {
        for s in ["", "  ", ",", " , "] {
            let f = SignalFilter::parse(s).unwrap();
            assert!(f.is_all(), "{s:?}");
            assert!(f.matches("top.anything"));
        }
        assert!(SignalFilter::all().matches("x.y"));
    }

    #[test]
    fn globs_match() {
        let f = SignalFilter::parse("top.mmu.ingress.p0[0-3].*, *.shared_cells").unwrap();
        assert!(f.matches("top.mmu.ingress.p03.pg5.headroom"));
        assert!(f.matches("top.mmu.ingress.p00.x"));
        assert!(!f.matches("top.mmu.ingress.p04.pg5.headroom"));
        assert!(f.matches("top.mmu.egress.q7.shared_cells"));
        assert!(!f.matches("top.mmu.egress.q7.shared_cells_max"));
        assert_eq!(f.patterns().len(), 2);
    }

    #[test]
    fn alternation_commas_are_not_list_separators() {
        let f = SignalFilter::parse("top.{a,b}.x,top.c.y").unwrap();
        assert_eq!(f.patterns(), ["top.{a,b}.x", "top.c.y"]);
        assert!(f.matches("top.a.x"));
        assert!(f.matches("top.b.x"));
        assert!(f.matches("top.c.y"));
        assert!(!f.matches("top.c.x"));
    }

    #[test]
    fn bad_glob_is_named() {
        let err = SignalFilter::parse("top.ok.*, top.bad[0-").unwrap_err();
        match &err {
            WaveError::BadGlob { glob, .. } => assert_eq!(glob, "top.bad[0-"),
            other => panic!("unexpected error {other:?}"),
        }
        assert!(err.to_string().contains("top.bad[0-"), "{err}");
    }

    #[test]
    fn apply_keeps_order() {
        let sigs = [
            SignalSpec::new("t.a.x", 1),
            SignalSpec::new("t.b.x", 2),
            SignalSpec::new("t.a.y", 3),
        ];
        let f = SignalFilter::parse("t.a.*").unwrap();
        let kept: Vec<_> = f.apply(&sigs).into_iter().map(|s| s.path).collect();
        assert_eq!(kept, ["t.a.x", "t.a.y"]);
    }
}
