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

    /// Checks that every glob matches at least one of `signals`. A glob that matches none
    /// is most likely a typo; the error ([`WaveError::NoMatch`]) names it and the five
    /// paths closest to it (an edit distance in which wildcards cost nothing).
    pub fn check_matches(&self, signals: &[SignalSpec]) -> Result<(), WaveError> {
        let Some(set) = &self.set else {
            return Ok(());
        };
        let mut matched = vec![false; self.patterns.len()];
        for s in signals {
            for g in set.matches(&s.path) {
                matched[g] = true;
            }
        }
        match matched.iter().position(|&m| !m) {
            None => Ok(()),
            Some(g) => {
                let glob = &self.patterns[g];
                Err(WaveError::NoMatch {
                    glob: glob.clone(),
                    closest: closest(glob, signals.iter().map(|s| s.path.as_str()), 5),
                })
            }
        }
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

/// The `n` paths closest to `glob`, closest first (ties in the given order), by an edit
/// distance in which the glob's wildcards cost nothing: `*` (and a `{...}` alternation)
/// matches any run of characters, `?` (and a `[...]` class) any one character. So a typo
/// such as `*.qof` finds the `qoff` signals, and `top.mmu.ingres.*` the ingress ones.
fn closest<'a>(glob: &str, paths: impl Iterator<Item = &'a str>, n: usize) -> Vec<String> {
    let pattern = glob_tokens(glob);
    let mut scored: Vec<(usize, usize, &str)> = paths
        .enumerate()
        .map(|(i, p)| (wildcard_distance(&pattern, p.as_bytes()), i, p))
        .collect();
    scored.sort_unstable();
    scored
        .into_iter()
        .take(n)
        .map(|(_, _, p)| p.to_owned())
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Byte(u8),
    One,
    Any,
}

fn glob_tokens(glob: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut bytes = glob.bytes();
    while let Some(b) = bytes.next() {
        out.push(match b {
            b'*' => Token::Any,
            b'?' => Token::One,
            b'[' => {
                bytes.by_ref().find(|&c| c == b']');
                Token::One
            }
            b'{' => {
                bytes.by_ref().find(|&c| c == b'}');
                Token::Any
            }
            b'\\' => Token::Byte(bytes.next().unwrap_or(b'\\')),
            b => Token::Byte(b),
        });
    }
    out
}

/// Levenshtein distance between `text` and the best string `pattern` matches (one row of
/// the table at a time).
fn wildcard_distance(pattern: &[Token], text: &[u8]) -> usize {
    // row[j]: distance between the pattern so far and text[..j].
    let mut row: Vec<usize> = (0..=text.len()).collect();
    for &t in pattern {
        let mut next = vec![0; text.len() + 1];
        next[0] = row[0] + usize::from(t != Token::Any);
        for j in 1..=text.len() {
            next[j] = match t {
                // Match nothing (row[j]) or one more byte (next[j - 1]).
                Token::Any => row[j].min(next[j - 1]),
                Token::One => row[j - 1].min(row[j] + 1).min(next[j - 1] + 1),
                Token::Byte(b) => (row[j - 1] + usize::from(b != text[j - 1]))
                    .min(row[j] + 1)
                    .min(next[j - 1] + 1),
            };
        }
        row = next;
    }
    row[text.len()]
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
    fn a_glob_matching_nothing_is_an_error_naming_the_closest_paths() {
        let sigs = [
            SignalSpec::new("top.mmu.ingress.p00.qoff", 8),
            SignalSpec::new("top.mmu.ingress.p01.qoff", 8),
            SignalSpec::new("top.mmu.egress.p00.paused", 8),
            SignalSpec::new("top.mmu.dt.t", 21),
        ];
        SignalFilter::parse("*.qoff, top.mmu.dt.*")
            .unwrap()
            .check_matches(&sigs)
            .unwrap();
        SignalFilter::all().check_matches(&sigs).unwrap();
        let err = SignalFilter::parse("top.mmu.dt.*, *.qof")
            .unwrap()
            .check_matches(&sigs)
            .unwrap_err();
        match &err {
            WaveError::NoMatch { glob, closest } => {
                assert_eq!(glob, "*.qof");
                assert_eq!(
                    closest[..2],
                    ["top.mmu.ingress.p00.qoff", "top.mmu.ingress.p01.qoff"]
                );
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(
            err.to_string().contains("top.mmu.ingress.p00.qoff"),
            "{err}"
        );
        let err = SignalFilter::parse("top.mmu.ingres.p0[0-1].qoff")
            .unwrap()
            .check_matches(&sigs)
            .unwrap_err();
        assert!(
            matches!(&err, WaveError::NoMatch { closest, .. } if closest[0].starts_with("top.mmu.ingress.p0")),
            "{err}"
        );
    }

    #[test]
    fn wildcard_distance_costs_nothing_for_wildcards() {
        let d = |g: &str, t: &str| wildcard_distance(&glob_tokens(g), t.as_bytes());
        assert_eq!(d("top.mmu.dt.t", "top.mmu.dt.t"), 0);
        assert_eq!(d("*.t", "top.mmu.dt.t"), 0);
        assert_eq!(d("top.*", "top.mmu.dt.t"), 0);
        assert_eq!(d("top.?mu.dt.t", "top.mmu.dt.t"), 0);
        assert_eq!(d("top.[m]mu.{dt,x}.t", "top.mmu.dt.t"), 0);
        assert_eq!(d("*.qof", "top.x.qoff"), 1);
        assert_eq!(d("abc", "abd"), 1);
        assert_eq!(d("abc", ""), 3);
        assert_eq!(d("", "ab"), 2);
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
