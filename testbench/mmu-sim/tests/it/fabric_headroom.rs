//! The fabric's headroom check (`run.expect_lossless`, docs/fabric.md "Lossless packets
//! outside the headroom") on `dsh-leafspine` under SIH with PowerTCP on its seven lossless
//! classes: ACKs on the data's classes are refused before the run, naming the switch, port,
//! class, the packets and the fixes; with either fix the network runs with no lossless drop;
//! without the check the same network drops lossless cells (what the check guards), and
//! its summary lists the refused queues as `headroom warnings`.

use crate::common::mmu_sim;
use std::process::Output;

/// `dsh-leafspine` with PowerTCP on classes 0-6, 150 us, `extra` keys set.
fn powertcp_leafspine(extra: &[&str]) -> Output {
    let mut sets = vec![
        "switch.int=true".to_string(),
        "run.cycles=150000".to_string(),
    ];
    sets.extend((0..7).map(|pg| format!("fabric.transport[{pg}]={{pg={pg},powertcp={{}}}}")));
    sets.extend(extra.iter().map(|s| s.to_string()));
    let mut args = vec!["run", "dsh-leafspine"];
    for s in &sets {
        args.extend(["--set", s]);
    }
    mmu_sim(&args)
}

/// The lossless cells the run dropped, from its summary.
fn lossless_drops(out: &Output) -> u64 {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("cells dropped (lossless)"))
        .unwrap_or_else(|| panic!("no lossless drop count:\n{stdout}"));
    line.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn acks_on_the_lossless_data_classes_are_refused_naming_the_queue_and_the_fixes() {
    let out = powertcp_leafspine(&["run.expect_lossless=true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "refused before the run");
    for part in [
        "error: fabric.feedback_pg: switch ",
        ", lossless class ",
        "ACKs of ",
        "(64 B: 1 cell per 84 wire bytes, one per data packet)",
        "denser than the 1500 B packets eta is sized for (8 cells per 1520 wire bytes; switch.headroom_min_packet_bytes = 1500)",
        "within Eq. 1's 56840 B can take 684 cells, eta is 307 cells",
        "allowed: fabric.feedback_pg = 7 (a lossy class), or switch.headroom_min_packet_bytes = 64 (eta 684 cells)",
        "(run.expect_lossless = true)",
    ] {
        assert!(err.contains(part), "{part:?} missing from:\n{err}");
    }
}

#[test]
fn either_fix_runs_with_no_lossless_drop() {
    // Sized for 64 B packets, seven lossless classes do not fit SIH's buffer: two do.
    for fix in [
        &["fabric.feedback_pg=7"][..],
        &[
            "switch.headroom_min_packet_bytes=64",
            "switch.lossless_priorities=[0, 3]",
        ],
    ] {
        let mut sets = vec!["run.expect_lossless=true"];
        sets.extend(fix);
        let out = powertcp_leafspine(&sets);
        assert!(
            out.status.success(),
            "{fix:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(lossless_drops(&out), 0, "{fix:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("headroom warnings"), "{fix:?}: {stdout}");
    }
}

/// The companion: without the check the refused network runs, and drops lossless cells;
/// its summary carries what the check would have refused as warnings.
#[test]
fn without_the_check_the_refused_network_drops_lossless_cells() {
    let out = powertcp_leafspine(&[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let warnings = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("headroom warnings"))
        .unwrap_or_else(|| panic!("no headroom warnings:\n{stdout}"));
    assert!(warnings.contains("ACKs of "), "{warnings}");
    assert!(!warnings.contains("run.expect_lossless"), "{warnings}");
    assert!(lossless_drops(&out) > 0, "{stdout}");
    assert!(
        stdout.contains("VIOLATION: lossless cells dropped"),
        "{stdout}"
    );
}
