//! The docs name only files and items that exist, and no folder of a particular machine.
//!
//! Every Markdown file the repository tracks is read. In its code spans (`` `...` ``) and
//! link targets (`](...)`) the test finds:
//! - source paths (`hw-model/src/mmu.rs`, `../cosim/tb/events.py`, or a bare `admission.rs`):
//!   a tracked file must have that path, relative to the root or to the doc, or end with it;
//! - `file.rs::item`: the item must be a word of a tracked file of that name;
//! - Rust paths (`Mmu::check_invariants`, `testbench::Sim`): a `CamelCase` segment must be
//!   declared (`struct`, `enum`, `trait`, `type`, `union`) in some tracked `.rs` file, and
//!   every other segment must be a word of one;
//! - absolute paths under `/tmp/`, `/work/`, `/home/`, `/root/` or `/Users/`: a reader's
//!   machine has none of them (docs write `OUT`, `CHECKOUT` or a path relative to the
//!   checkout).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Extensions of the files a doc may cite as source: a path with another extension is an
/// output (`waveforms/default.vcd`) or a user's file (`burst.toml`) and is not checked.
const SOURCE_EXTENSIONS: [&str; 10] = ["rs", "py", "pyi", "sv", "v", "c", "h", "cpp", "sh", "md"];

/// The folder beside the checkout that the project's sessions share (papers, anchors): cited,
/// but not part of the repository.
const BESIDE_THE_CHECKOUT: &str = "../shared/";

/// Prefixes of folders that belong to one machine.
const MACHINE_PATHS: [&str; 5] = ["/tmp/", "/work/", "/home/", "/root/", "/Users/"];

/// First segments of Rust paths that are not this workspace's, never checked.
const FOREIGN: [&str; 12] = [
    "std", "core", "alloc", "serde", "clap", "wellen", "proptest", "Default", "Vec", "Option",
    "Result", "String",
];

/// What the repository holds: tracked files, the words of its Rust sources and the types
/// they declare.
struct Repo {
    root: PathBuf,
    files: BTreeSet<String>,
    /// The first components of the tracked paths: a cited path starting elsewhere is
    /// another repository's (`inc/saibuffer.h` of SAI) and is not checked.
    tops: BTreeSet<String>,
    words: BTreeSet<String>,
    types: BTreeSet<String>,
}

fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

impl Repo {
    fn new(root: &Path, files: BTreeSet<String>, sources: &[(String, String)]) -> Self {
        let mut words = BTreeSet::new();
        let mut types = BTreeSet::new();
        for (_, text) in sources {
            let mut prev = "";
            for w in words_of(text) {
                if matches!(prev, "struct" | "enum" | "trait" | "type" | "union") {
                    types.insert(w.to_string());
                }
                words.insert(w.to_string());
                prev = w;
            }
        }
        // A module is also named by its file or folder (`mmu.rs` is `mmu`).
        for f in files.iter().filter(|f| f.ends_with(".rs")) {
            let stem = f.trim_end_matches(".rs");
            words.extend(stem.split('/').map(str::to_string));
        }
        let tops = files
            .iter()
            .filter_map(|f| f.split_once('/').map(|(top, _)| top.to_string()))
            .collect();
        Self {
            root: root.to_path_buf(),
            files,
            tops,
            words,
            types,
        }
    }

    fn open(root: &Path) -> Self {
        let out = Command::new("git")
            .args(["ls-files", "--cached", "--others", "--exclude-standard"])
            .current_dir(root)
            .output()
            .expect("git ls-files");
        assert!(out.status.success(), "git ls-files failed");
        let files: BTreeSet<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|f| root.join(f).is_file())
            .map(str::to_string)
            .collect();
        let sources: Vec<(String, String)> = files
            .iter()
            .filter(|f| f.ends_with(".rs"))
            .map(|f| (f.clone(), std::fs::read_to_string(root.join(f)).unwrap()))
            .collect();
        Self::new(root, files, &sources)
    }

    /// The tracked files `cited` may mean, from the doc at `doc` (root-relative).
    fn resolve(&self, doc: &str, cited: &str) -> Vec<&String> {
        let from_doc = normalise(&Path::new(doc).parent().unwrap().join(cited));
        let suffix = format!("/{}", cited.trim_start_matches("./"));
        self.files
            .iter()
            .filter(|f| {
                f.as_str() == cited
                    || Some(f.as_str()) == from_doc.as_deref()
                    || f.ends_with(&suffix)
            })
            .collect()
    }

    fn file_has_word(&self, file: &str, word: &str) -> bool {
        std::fs::read_to_string(self.root.join(file))
            .map(|text| words_of(&text).any(|w| w == word))
            .unwrap_or(false)
    }
}

/// `a/b/../c` as `a/c`; `None` when it climbs out of the root.
fn normalise(path: &Path) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(parts.join("/"))
}

/// The code spans and link targets of a Markdown text, with their line numbers.
fn references(text: &str) -> Vec<(usize, String)> {
    let mut refs = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let n = i + 1;
        if fenced {
            refs.extend(line.split_whitespace().map(|w| (n, w.to_string())));
            continue;
        }
        refs.extend(
            line.split('`')
                .skip(1)
                .step_by(2)
                .flat_map(|span| span.split_whitespace().map(move |w| (n, w.to_string()))),
        );
        let mut rest = line;
        while let Some(k) = rest.find("](") {
            rest = &rest[k + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split('#').next().unwrap();
            if !target.contains("://") && !target.is_empty() {
                refs.push((n, target.to_string()));
            }
            rest = &rest[end..];
        }
    }
    refs
}

/// A word without the punctuation around it (a leading `../` stays).
fn trim_token(word: &str) -> &str {
    word.trim_start_matches(|c: char| "([{<'\"".contains(c))
        .trim_end_matches(|c: char| ")]}>,;:'\"*.!?".contains(c))
}

/// Every stale reference of the doc at `doc` (root-relative) with text `text`.
fn stale(repo: &Repo, doc: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, raw) in references(text) {
        let at = format!("{doc}:{n}");
        if let Some(p) = MACHINE_PATHS.iter().find(|p| raw.contains(*p)) {
            found.push(format!("{at}: `{raw}` is a folder of one machine ({p}...): use OUT, CHECKOUT or a path relative to the checkout"));
            continue;
        }
        let word = trim_token(&raw);
        let (path, item) = match word.split_once(".rs::") {
            Some((file, item)) => (Some(format!("{file}.rs")), Some(item)),
            None => (Some(word.to_string()), None),
        };
        let path = path.filter(|p| {
            let ext = p.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
            SOURCE_EXTENSIONS.contains(&ext)
                && !p.contains("::")
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
                && !p.starts_with(BESIDE_THE_CHECKOUT)
                && match p.split_once('/') {
                    None => ext == "rs",
                    Some((top, _)) => top == ".." || repo.tops.contains(top),
                }
        });
        if let Some(path) = path {
            let files = repo.resolve(doc, &path);
            if files.is_empty() {
                found.push(format!("{at}: `{path}` is not a file of the repository"));
            } else if let Some(item) = item {
                let item = item.split("::").last().unwrap();
                if !files.iter().any(|f| repo.file_has_word(f, item)) {
                    found.push(format!("{at}: `{path}` has no `{item}`"));
                }
            }
            continue;
        }
        if item.is_none() && word.contains("::") && !word.contains('/') && !word.contains('.') {
            let segments: Vec<&str> = word.split("::").collect();
            if FOREIGN.contains(&segments[0])
                || segments.iter().any(|s| {
                    s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
            {
                continue;
            }
            let last = segments.len() - 1;
            for (i, s) in segments.iter().enumerate() {
                let camel = s.starts_with(|c: char| c.is_ascii_uppercase())
                    && s.chars().any(|c| c.is_ascii_lowercase());
                // The head of a path must be a declared type (or a module); a lower-case
                // last segment may be a test filter, a prefix of test names.
                let known = if i == 0 && camel {
                    repo.types.contains(*s)
                } else if i == last && !camel {
                    repo.words
                        .range(s.to_string()..)
                        .next()
                        .is_some_and(|w| w.starts_with(s))
                } else {
                    repo.words.contains(*s)
                };
                if !known {
                    found.push(format!("{at}: `{word}`: no `{s}` in the Rust sources"));
                    break;
                }
            }
        }
    }
    found
}

fn root() -> PathBuf {
    let out = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git rev-parse");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

#[test]
fn docs_name_only_files_and_items_that_exist() {
    let root = root();
    let repo = Repo::open(&root);
    let docs: Vec<&String> = repo.files.iter().filter(|f| f.ends_with(".md")).collect();
    assert!(docs.len() >= 15, "{} Markdown files", docs.len());
    let mut found = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        found.extend(stale(&repo, doc, &text));
    }
    assert!(
        found.is_empty(),
        "{} stale references:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The check bites: a moved file, a removed item, an unknown type and a machine's folder
/// are each reported; what exists passes.
#[test]
fn a_stale_path_item_or_machine_folder_is_caught() {
    let files: BTreeSet<String> = ["hw-model/src/mmu.rs", "docs/cosim.md", "cosim/tb/events.py"]
        .map(String::from)
        .into();
    let sources = [(
        "hw-model/src/mmu.rs".to_string(),
        "pub struct Mmu; impl Mmu { pub fn step() {} } mod probes;".to_string(),
    )];
    let dir = std::env::temp_dir().join(format!("doc-refs-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("hw-model/src")).unwrap();
    std::fs::write(dir.join("hw-model/src/mmu.rs"), &sources[0].1).unwrap();
    let repo = Repo::new(&dir, files, &sources);
    let good = "See `hw-model/src/mmu.rs`, `mmu.rs::step`, `Mmu::step`, `mmu::probes`, `mmu::st` \
        (a test filter), [events](../cosim/tb/events.py), SAI's `inc/saibuffer.h`.";
    assert_eq!(stale(&repo, "docs/cosim.md", good), Vec::<String>::new());
    let bad = [
        ("`hw-model/src/pfc_fsm.rs`", "is not a file"),
        ("`dsh_thresholds.rs`", "is not a file"),
        ("`mmu.rs::write_stage`", "has no `write_stage`"),
        ("`Core::step`", "no `Core`"),
        ("`Mmu::egress_cycle`", "no `egress_cycle`"),
        ("`Mmu::step::x`", "no `x`"),
        ("[rtl](../cosim/rtl/tm.v)", "is not a file"),
        ("`mmu-sim run x --vcd /tmp/x.vcd`", "one machine"),
        (
            "```\n$ make cosim\nevents in /work/wt/k13/cosim/build/e.jsonl\n```",
            "one machine",
        ),
    ];
    for (text, want) in bad {
        let found = stale(&repo, "docs/cosim.md", text);
        assert!(
            found.len() == 1 && found[0].contains(want),
            "{text}: {found:?}, wanted one finding with {want:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
