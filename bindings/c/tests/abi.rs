//! The C ABI from outside: the header and the SystemVerilog package agree, and a C
//! program (gcc) feeds the recorded RTL event streams through it to the verdicts of
//! `mmu-sim check`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const HEADER: &str = include_str!("../include/mmu_model.h");
const SV: &str = include_str!("../sv/mmu_model_pkg.sv");

/// A declaration: return type and argument types (names left out: they may differ), or a
/// constant's value.
type Decls = BTreeMap<String, Vec<String>>;

/// The SystemVerilog type DPI-C passes for a C type (IEEE 1800-2017, Annex H.7.4).
fn sv_type(c: &str) -> String {
    let c = c.replace("struct ", "");
    match c.as_str() {
        "uint64_t" => "longint unsigned",
        "int64_t" => "longint",
        "uint32_t" => "int unsigned",
        "int32_t" => "int",
        "uint16_t" => "shortint unsigned",
        "uint8_t" => "byte unsigned",
        "void" => "void",
        "const char *" => "string",
        p if p.ends_with('*') => "chandle",
        other => return format!("(no DPI-C type for {other})"),
    }
    .to_string()
}

/// Split `ty name` into its type (the words before the last, pointer stars kept).
fn type_of(param: &str) -> String {
    let p = param.trim();
    let cut = p
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let ty = p[..cut].replace('*', " * ");
    ty.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out += &rest[..i];
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out += rest;
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The header's `mmu_*` functions (as SystemVerilog types) and `#define`d constants.
fn header_decls(h: &str) -> Decls {
    let text = strip_comments(h);
    let mut out = Decls::new();
    for l in text.lines() {
        let w: Vec<_> = l.split_whitespace().collect();
        if let ["#define", name, value] = w[..] {
            if name.starts_with("MMU_") && name != "MMU_MODEL_H" {
                out.insert(name.to_string(), vec![value.to_string()]);
            }
        }
    }
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    for stmt in code.split(';') {
        let (Some(open), Some(close)) = (stmt.find('('), stmt.rfind(')')) else {
            continue;
        };
        let head = stmt[..open].trim();
        let Some(name) = head.rsplit(|c: char| c == '*' || c.is_whitespace()).next() else {
            continue;
        };
        if !name.starts_with("mmu_") {
            continue;
        }
        let mut sig = vec![sv_type(&type_of(head))];
        sig.extend(
            stmt[open + 1..close]
                .split(',')
                .map(|p| sv_type(&type_of(p))),
        );
        out.insert(name.to_string(), sig);
    }
    out
}

/// The package's `import "DPI-C" function`s and `localparam int`s.
fn sv_decls(sv: &str) -> Decls {
    let text = strip_comments(sv);
    let mut out = Decls::new();
    for stmt in text
        .split(';')
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
    {
        if let Some(rest) = stmt.strip_prefix("localparam int ") {
            if let Some((name, value)) = rest.split_once(" = ") {
                out.insert(name.to_string(), vec![value.to_string()]);
            }
        } else if let Some(rest) = stmt.strip_prefix("import \"DPI-C\" function ") {
            let (Some(open), Some(close)) = (rest.find('('), rest.rfind(')')) else {
                continue;
            };
            let head = type_of(&rest[..open]);
            let name = rest[..open].trim().rsplit(' ').next().unwrap_or("");
            let mut sig = vec![head];
            sig.extend(
                rest[open + 1..close]
                    .split(',')
                    .map(|p| type_of(p.trim().trim_start_matches("input "))),
            );
            out.insert(name.to_string(), sig);
        }
    }
    out
}

/// What differs between the header and the package, one line per declaration.
fn drift(header: &str, sv: &str) -> Vec<String> {
    let (h, s) = (header_decls(header), sv_decls(sv));
    let mut out = Vec::new();
    for name in h.keys().chain(s.keys().filter(|k| !h.contains_key(*k))) {
        match (h.get(name), s.get(name)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => out.push(format!("{name}: header {a:?}, SystemVerilog {b:?}")),
        }
    }
    out
}

#[test]
fn the_header_and_the_systemverilog_package_agree() {
    let h = header_decls(HEADER);
    assert!(h.len() >= 24, "the header parsed to {h:?}");
    assert_eq!(
        h["mmu_depart"],
        [
            "int",
            "chandle",
            "longint unsigned",
            "byte unsigned",
            "byte unsigned",
            "int unsigned",
            "int unsigned",
            "byte unsigned",
            "shortint unsigned"
        ]
    );
    assert_eq!(drift(HEADER, SV), Vec::<String>::new());
}

#[test]
fn a_drifted_package_is_caught() {
    let drifted = [
        // A type: the cycle narrowed to 32 bits.
        (
            "function int mmu_depart(chandle h, longint unsigned cycle",
            "function int mmu_depart(chandle h, int unsigned cycle",
            "mmu_depart",
        ),
        // An argument lost.
        (
            "byte unsigned pause, byte unsigned dir",
            "byte unsigned pause",
            "mmu_pfc",
        ),
        // A function lost.
        (
            "  import \"DPI-C\" function void mmu_free(chandle h);\n",
            "",
            "mmu_free",
        ),
        // A return type.
        (
            "function int unsigned mmu_errors",
            "function int mmu_errors",
            "mmu_errors",
        ),
        // A constant.
        (
            "MMU_PFC_RECEIVED = 1",
            "MMU_PFC_RECEIVED = 2",
            "MMU_PFC_RECEIVED",
        ),
    ];
    for (from, to, name) in drifted {
        assert!(SV.contains(from), "{from:?} is not in the package");
        let found = drift(HEADER, &SV.replacen(from, to, 1));
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        assert!(found[0].starts_with(&format!("{name}:")), "{found:?}");
    }
    let widened = HEADER.replacen("uint8_t cls", "uint16_t cls", 1);
    assert_eq!(
        drift(&widened, SV).len(),
        1,
        "a header change is caught too"
    );
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tests/replay.c` built with gcc against the crate's static library, which `cargo test`
/// does not build (it builds the crate only as a test harness): built here, with the
/// test profile and the targets of `make test`'s `cargo test --workspace --exclude
/// mmu-bench-criterion`, so that features resolve as they did for it and only this crate is
/// compiled (`-p mmu-model-c` alone resolves them without the workspace's dev-dependencies
/// and rebuilt about 20 crates: 39 s of a cold `make test`).
fn replay() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap();
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--profile",
            "test",
            "--workspace",
            "--exclude",
            "mmu-bench-criterion",
            "--all-targets",
            "--target-dir",
        ])
        .arg(target)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build of the static library failed");
    let lib = target.join("debug/libmmu_model.a");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(dir.join("tests/replay.c"))
        .arg("-I")
        .arg(dir.join("include"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .expect("gcc runs");
    assert!(status.success(), "gcc failed");
    out
}

/// Replay `events` against `scenario` (with `extra` arguments): exit code, stdout, stderr.
fn run_with(exe: &Path, scenario: &str, events: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(exe)
        .arg(scenario)
        .arg(events)
        .args(extra)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap(),
        text(out.stdout),
        text(out.stderr),
    )
}

fn run(exe: &Path, scenario: &str, events: &Path) -> (i32, String, String) {
    run_with(exe, scenario, events, &[])
}

#[test]
fn the_recorded_rtl_streams_through_the_c_abi() {
    let exe = replay();
    let dut = root().join("cosim/dut.toml");
    let dut = dut.to_str().unwrap();
    let fixture = |name: &str| {
        root().join(format!(
            "testbench/mmu-sim/tests/fixtures/cosim/{name}.jsonl"
        ))
    };
    let (code, out, err) = run(&exe, dut, &fixture("clean"));
    assert_eq!(
        (code, out.as_str()),
        (0, "3317 events, 0 divergences\n"),
        "{err}"
    );
    let (code, out, err) = run(&exe, dut, &fixture("bug1"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("first: cycle 479, admission\ncycle 479: admission"),
        "{out}"
    );
    assert!(out.contains("shared 43 vs T 43"), "{out}");
    let (code, _, err) = run(&exe, dut, &fixture("bug2"));
    assert_eq!(code, 1, "{err}");
    // BUG=3 with its monitors' payload CRCs, through mmu_arrive_crc and mmu_depart_crc.
    let (code, out, err) = run(&exe, dut, &fixture("bug3"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("first: cycle 9, payload\n"), "{out}");
    // A DUT that exports no decision: the clean RTL passes; BUG=2's stream ends with
    // packets the model admitted that never departed.
    let inferred = |name: &str| run_with(&exe, dut, &fixture(name), &["inferred"]);
    let (code, out, err) = inferred("clean");
    assert_eq!(
        (code, out.as_str()),
        (0, "2223 events, 0 divergences\n"),
        "{err}"
    );
    let (code, out, err) = inferred("bug2");
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("first: cycle 938, cells left in the buffer"),
        "{out}"
    );

    let (code, _, err) = run(&exe, "no-such-scenario", &fixture("clean"));
    assert_eq!(code, 2);
    assert!(
        err.contains("not a built-in (") && err.contains("small-smoke"),
        "{err}"
    );
    let bad = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"cycle\":3,\"event\":\"arrive\",\"port\":9,\"prio\":0,\"flow\":1,\"seq\":0,\"bytes\":64,\"dst\":0,\"ncells\":1}\n",
    )
    .unwrap();
    let (code, _, err) = run(&exe, dut, &bad);
    assert_eq!(code, 2);
    assert!(err.contains("arrive.port: 9; allowed: 0..4"), "{err}");
}
