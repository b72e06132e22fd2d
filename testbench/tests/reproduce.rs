//! Paper reproductions: their numbers, their files, and the `reproduce` command line.

use hw_model::Policy;
use std::path::PathBuf;
use std::process::Command;
use testbench::reproduce::plot::{xy_chart, Series};
use testbench::reproduce::{dsh_fig11, headroom, NoProgress};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmu-repro-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn row<'a>(rows: &'a [headroom::Row], chip: &str, quantity: &str) -> &'a headroom::Row {
    rows.iter()
        .find(|r| r.chip == chip && r.quantity.starts_with(quantity))
        .unwrap_or_else(|| panic!("no row {chip} / {quantity}"))
}

#[test]
fn headroom_matches_the_papers_examples() {
    let rows = headroom::rows().unwrap();
    // Trident2: eta = 2 (40G * 1.5 us + 1500) + 3840 = 21840 B; 32 * 8 * eta = 5.33 MiB = 44.4 %.
    assert_eq!(row(&rows, "trident2", "eta").bytes, 21_840);
    let sih = row(&rows, "trident2", "SIH headroom");
    assert_eq!(sih.bytes, 5_591_040);
    assert_eq!(
        format!("{:.2}", sih.bytes as f64 / (1 << 20) as f64),
        "5.33"
    );
    assert_eq!(format!("{:.1}", sih.pct_of_buffer), "44.4");
    // Tomahawk: eta = 56840 B (274 cells of 208 B); SIH 56840 * 32 * 7 = 12.1 MiB; DSH 32 * eta.
    let eta = row(&rows, "tomahawk", "eta");
    assert_eq!((eta.bytes, eta.model_cells), (56_840, 274));
    let sih = row(&rows, "tomahawk", "SIH headroom");
    assert_eq!(sih.bytes, 56_840 * 32 * 7);
    assert_eq!(sih.model_cells, 274 * 32 * 7);
    assert_eq!(format!("{:.0}", sih.bytes as f64 / (1 << 20) as f64), "12");
    let dsh = row(&rows, "tomahawk", "DSH insurance");
    assert_eq!((dsh.bytes, dsh.model_cells), (56_840 * 32, 274 * 32));
}

#[test]
fn fig11_machinery_one_burst_both_policies() {
    let dir = scratch("fig11");
    let points = dsh_fig11::sweep(&dir, &[10], &mut NoProgress).unwrap();
    assert_eq!(points.len(), 2);
    let csv = std::fs::read_to_string(dir.join("fig11.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some(dsh_fig11::CSV_HEADER));
    assert_eq!(csv.lines().count(), 3);
    let by = |p: Policy| points.iter().find(|x| x.policy == p).unwrap();
    let (sih, dsh) = (by(Policy::Sih), by(Policy::Dsh));
    assert!(
        sih.background_pauses_before_burst > 0,
        "background not settled"
    );
    assert!(
        dsh.pause_duration_ns <= sih.pause_duration_ns,
        "{dsh:?} vs {sih:?}"
    );
    assert!(dsh.pause_frames <= sih.pause_frames, "{dsh:?} vs {sih:?}");
    assert!(sih.pause_frames > 0, "SIH pauses a 10 % burst: {sih:?}");
    assert!(std::fs::metadata(dir.join("fig11.png")).unwrap().len() > 0);
}

#[test]
fn plot_writes_a_png() {
    let path = scratch("plot").join("t.png");
    let line = |name: &str, line| Series {
        name: name.into(),
        points: vec![(5.0, 0.0), (10.0, 100.0), (20.0, 900.0)],
        line,
    };
    xy_chart(&path, "t", "x", "y", &[line("a", true), line("b", false)]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}

fn mmu_sim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_unknown_reproduction_exits_2_naming_the_allowed_ones() {
    let dir = scratch("cli-unknown");
    let out = mmu_sim(&["reproduce", "nope", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("headroom") && err.contains("dsh-fig11"),
        "{err}"
    );
}

#[test]
fn cli_unwritable_out_exits_2() {
    let dir = scratch("cli-out");
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("sub");
    let out = mmu_sim(&["reproduce", "headroom", "--out", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
}

#[test]
fn cli_headroom_prints_the_table_and_writes_the_csv() {
    let dir = scratch("cli-headroom");
    let out = mmu_sim(&["reproduce", "headroom", "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5591040") && text.contains("56840"), "{text}");
    assert!(dir.join("headroom.csv").exists());
}
