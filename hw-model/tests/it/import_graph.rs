//! The files of `hw-model/src` import one another without a circle, so each can be read
//! knowing only the files below it.
//!
//! Each file's `use` trees and the `crate::`, `super::` and `self::` paths in its code
//! (comments, strings and character literals left out) are resolved to the file that
//! holds the module they name: the longest prefix of the path that is a file's module. A
//! `use` whose first segment is a module the file declares (`pub use dsh::Dsh` in
//! `policy/mod.rs`) names that child. A `mod x;` declaration is not an import. `super::`
//! inside an inline module (`mod tests { use super::*; }`) names the enclosing module, so
//! a file's unit tests count as the file. The graph's strongly connected components of
//! more than one file are the circles; the test names the files of each.
//!
//! Companion: a synthetic crate of four files with a circle of three is caught, with the
//! three named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A file's module path from the crate root (`policy/mod.rs` is `["policy"]`, `lib.rs`
/// is `[]`).
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").expect("a .rs file");
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a Rust file with comments, string literals and character literals blanked
/// (a space each), so the braces and paths left are the code's.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &src[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if src[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(hashes) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            i += body
                + rest[body..]
                    .find(&close)
                    .map_or(rest.len() - body, |e| e + close.len());
            out.push(' ');
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime / label ('a).
            let len = char_literal_len(rest);
            i += len.unwrap_or(1);
            out.push(if len.is_some() { ' ' } else { '\'' });
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `r"`, `r#"`, `br"`...: the number of `#`, if `s` starts a raw string.
fn raw_string_start(s: &str) -> Option<usize> {
    let s = s.strip_prefix('b').unwrap_or(s).strip_prefix('r')?;
    let hashes = s.len() - s.trim_start_matches('#').len();
    s[hashes..].starts_with('"').then_some(hashes)
}

/// The length of the character literal `s` starts with, if it is one.
fn char_literal_len(s: &str) -> Option<usize> {
    let body = &s[1..];
    let end = if let Some(esc) = body.strip_prefix('\\') {
        1 + esc.find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    (body[end..].starts_with('\'')).then_some(end + 2)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of a `use` tree (`a::{b, c::{d as e}, self}`), each as its segments.
fn use_paths(tree: &str) -> Vec<Vec<String>> {
    fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        let Some(open) = tree.find('{') else {
            let path = tree.split(" as ").next().unwrap_or(tree);
            let mut segs = prefix.to_vec();
            segs.extend(
                path.split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
                    .map(str::to_string),
            );
            out.push(segs);
            return;
        };
        let mut segs = prefix.to_vec();
        segs.extend(
            tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        let inner = &tree[open + 1..tree.rfind('}').expect("a closed use tree")];
        let (mut depth, mut start) = (0, 0);
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&inner[start..k], &segs, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        if !inner[start..].trim().is_empty() {
            expand(&inner[start..], &segs, out);
        }
    }
    let mut out = Vec::new();
    expand(tree, &[], &mut out);
    out
}

/// One reference found in a file: the module path it is written in (the file's, plus
/// its inline modules) and the path as written.
struct Reference {
    scope: Vec<String>,
    path: Vec<String>,
    /// Written in a `use` (a bare first segment may then be a child module).
    in_use: bool,
}

/// The references of one file and the child modules it declares.
fn references(file: &str, src: &str) -> (Vec<Reference>, BTreeSet<String>) {
    let code = code_only(src);
    let base = module_of(file);
    let mut refs = Vec::new();
    let mut children = BTreeSet::new();
    // Inline modules open at a brace depth.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let scope = |inline: &[(String, usize)]| {
        let mut s = base.clone();
        s.extend(inline.iter().map(|(n, _)| n.clone()));
        s
    };
    let mut i = 0;
    while i < code.len() {
        let c = code[i..].chars().next().expect("not at the end");
        let word_start = i == 0 || !is_ident(code[..i].chars().next_back().unwrap_or(' '));
        if c == '{' {
            depth += 1;
            i += 1;
        } else if c == '}' {
            depth -= 1;
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            i += 1;
        } else if word_start && code[i..].starts_with("mod ") {
            let rest = &code[i + 4..];
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            if after.starts_with(';') {
                if inline.is_empty() {
                    children.insert(name);
                }
            } else if after.starts_with('{') {
                inline.push((name, depth));
            }
            i += 4;
        } else if word_start && code[i..].starts_with("use ") {
            let end = i + code[i..].find(';').expect("a use ends with ;");
            for path in use_paths(&code[i + 4..end]) {
                refs.push(Reference {
                    scope: scope(&inline),
                    path,
                    in_use: true,
                });
            }
            i = end + 1;
        } else if word_start
            && ["crate::", "super::", "self::", "$crate::"]
                .iter()
                .any(|p| code[i..].starts_with(p))
        {
            let len = code[i..]
                .find(|c: char| !is_ident(c) && c != ':' && c != '$')
                .unwrap_or(code.len() - i);
            let path: Vec<String> = code[i..i + len]
                .trim_start_matches('$')
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            refs.push(Reference {
                scope: scope(&inline),
                path,
                in_use: false,
            });
            i += len;
        } else {
            i += c.len_utf8();
        }
    }
    (refs, children)
}

/// The import graph of a crate given as (path under `src/`, text) pairs: each file and
/// the files it imports from.
pub(crate) fn import_graph(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|(f, _)| (module_of(f), f.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for (file, src) in files {
        let (refs, children) = references(file, src);
        let mut edges = BTreeSet::new();
        for r in refs {
            let mut abs = r.scope.clone();
            let mut segs = r.path.as_slice();
            match segs.first().map(String::as_str) {
                Some("crate") => {
                    abs.clear();
                    segs = &segs[1..];
                }
                Some("self") => segs = &segs[1..],
                Some("super") => {
                    while segs.first().map(String::as_str) == Some("super") {
                        abs.pop();
                        segs = &segs[1..];
                    }
                }
                Some(first) if r.in_use && children.contains(first) => {}
                // Another crate (std, rtl) or a name in scope.
                _ => continue,
            }
            abs.extend(segs.iter().cloned());
            let target = (0..=abs.len())
                .rev()
                .find_map(|n| modules.get(&abs[..n]))
                .expect("the crate root is a file");
            if target != file {
                edges.insert(target.clone());
            }
        }
        graph.insert(file.clone(), edges);
    }
    graph
}

/// The circles of `graph`: its strongly connected components of more than one file
/// (Tarjan), each sorted.
pub(crate) fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                } else if self.on_stack.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().expect("v is on the stack");
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

/// Every `.rs` file under `dir`, as (path relative to `dir` with `/`, text).
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("a readable source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(dir).expect("under dir");
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&path).expect("UTF-8 source")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn hw_model_files_import_one_another_without_a_circle() {
    let files = sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(files.len() > 20, "found {} files", files.len());
    let graph = import_graph(&files);
    // The parser sees the imports that matter: mmu.rs wires the blocks.
    let mmu = &graph["mmu.rs"];
    for block in [
        "admission.rs",
        "egress_port.rs",
        "pfc/fsm.rs",
        "policy/mod.rs",
    ] {
        assert!(mmu.contains(block), "mmu.rs -> {block} not found: {mmu:?}");
    }
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "import circles between the files of hw-model/src: {}",
        found
            .iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("; ")
    );
}

#[test]
fn a_circle_of_three_files_is_caught_and_named() {
    let file = |path: &str, text: &str| (path.to_string(), text.to_string());
    let files = [
        file("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
        file(
            "a.rs",
            "use crate::b::{Thing, other::{More as M}};\n// use crate::d::X;\n",
        ),
        // A path in code, not in a `use`; the string and comment mention d, not imports.
        file(
            "b.rs",
            "pub struct Thing;\nfn f() -> u32 { let _ = \"crate::d::X\"; crate::c::value() }\n",
        ),
        // `super::` from c.rs is the crate root; its test's `super::*` is c.rs itself.
        file(
            "c.rs",
            "use super::a;\npub fn value() -> u32 { 1 }\n#[cfg(test)]\nmod tests { use super::*; }\n",
        ),
        file("d.rs", "use crate::a::Anything;\npub struct X;\n"),
    ];
    let graph = import_graph(&files);
    assert_eq!(
        graph["b.rs"],
        BTreeSet::from(["c.rs".to_string()]),
        "comments and strings are not imports"
    );
    assert_eq!(
        circles(&graph),
        vec![vec![
            "a.rs".to_string(),
            "b.rs".to_string(),
            "c.rs".to_string()
        ]],
        "{graph:?}"
    );
    // Breaking the circle (c no longer imports a) leaves none.
    let mut fixed = files.to_vec();
    fixed[3].1 = fixed[3].1.replace("use super::a;", "");
    assert!(circles(&import_graph(&fixed)).is_empty());
}
