//! The README's help blocks are `mmu-sim`'s own `--help`, generated and compared.
//!
//! A help block is the fenced block right after a `<!-- help: ARGS -->` line: the output of
//! `mmu-sim ARGS --help`. The test fails when a block and the binary disagree; with
//! `UPDATE_README=1` (`make readme-help`) it writes the binary's text into the README
//! instead.

use std::path::Path;
use std::process::Command;

/// The README's help blocks: `(ARGS, first line of the block's text, line after it)`.
fn help_blocks(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(args) = line
            .trim()
            .strip_prefix("<!-- help:")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        let open = i + 1;
        assert!(
            lines.get(open).is_some_and(|l| l.starts_with("```")),
            "README.md:{}: a help marker must be followed by a fenced block",
            i + 1
        );
        let close = (open + 1..lines.len())
            .find(|&k| lines[k].starts_with("```"))
            .unwrap_or_else(|| panic!("README.md:{}: unclosed block", open + 1));
        blocks.push((args.trim().to_string(), open + 1, close));
    }
    blocks
}

/// The README with every help block replaced by `render(ARGS)`, and the ARGS whose block
/// differed.
fn refresh(text: &str, render: impl Fn(&str) -> String) -> (String, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut stale = Vec::new();
    let mut next = 0;
    for (args, start, end) in help_blocks(&lines) {
        out.extend(lines[next..start].iter().map(|l| l.to_string()));
        let want = render(&args);
        if lines[start..end].join("\n") != want.trim_end() {
            stale.push(format!("mmu-sim {args} --help"));
        }
        out.extend(want.trim_end().lines().map(str::to_string));
        next = end;
    }
    out.extend(lines[next..].iter().map(|l| l.to_string()));
    (out.join("\n") + "\n", stale)
}

fn help(args: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
        .args(args.split_whitespace())
        .arg("--help")
        .output()
        .expect("mmu-sim runs");
    assert!(out.status.success(), "mmu-sim {args} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn readme_help_blocks_are_the_binarys_help() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (fresh, stale) = refresh(&text, help);
    assert!(
        help_blocks(&text.lines().collect::<Vec<_>>()).len() >= 3,
        "README.md has fewer than three help blocks"
    );
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(&path, fresh).unwrap();
        return;
    }
    assert!(
        stale.is_empty(),
        "README.md's help blocks differ from the binary's: {}; run `make readme-help`",
        stale.join(", ")
    );
}

/// The comparison bites: a block that is not the help text is found and rewritten.
#[test]
fn a_stale_help_block_is_found_and_rewritten() {
    let text = "# T\n<!-- help: run -->\n```\nold\n```\ntail\n<!-- help: -->\n```\ntop\n```\n";
    let render = |args: &str| {
        if args == "run" {
            "new 1\nnew 2\n".to_string()
        } else {
            "top\n".to_string()
        }
    };
    let (fresh, stale) = refresh(text, render);
    assert_eq!(stale, ["mmu-sim run --help"]);
    assert_eq!(
        fresh,
        "# T\n<!-- help: run -->\n```\nnew 1\nnew 2\n```\ntail\n<!-- help: -->\n```\ntop\n```\n"
    );
    assert_eq!(refresh(&fresh, render).1, Vec::<String>::new());
}
