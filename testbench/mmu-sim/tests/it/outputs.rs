//! An output that fails during a run (a full disk, a closed pipe) is named by its option
//! and path, and `mmu-sim` exits with code 2, never a panic.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::common::mmu_sim;

/// `/dev/full` takes the file open and fails every write with ENOSPC. The traces are
/// buffered, so theirs fail during the run; the summary JSON fails after it.
#[test]
fn every_output_on_a_full_disk_is_named_with_its_path() {
    for flag in [
        "--summary-json",
        "--trace-cells",
        "--trace-ecm",
        "--trace-rp",
        "--vcd",
    ] {
        let o = mmu_sim(&["run", "ecm-fanin", "--cycles", "50000", flag, "/dev/full"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag}: {err}");
        assert!(
            err.starts_with(&format!("error: {flag} /dev/full: "))
                && err.contains("No space left on device"),
            "{flag}: {err}"
        );
    }
}

/// stdout closed before the summary is written: an error naming stdout, exit 2.
#[test]
fn a_closed_stdout_is_an_output_error_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmu-sim"))
        .args(["run", "fanin-burst"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run takes a good part of a second; the pipe is closed long before it ends.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.starts_with("error: stdout: Broken pipe"), "{err}");
}

/// A run refused for its input (exit 2) leaves the outputs of an earlier run as they
/// were: a glob that matches no signal, a window outside the run, and a path that cannot
/// be opened after others that can. Without the checks before the files are opened, the
/// earlier files are left empty.
#[test]
fn a_refused_run_leaves_the_earlier_outputs_untouched() {
    let dir = std::env::temp_dir().join(format!("mmu-sim-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (json, vcd) = (path("s.json"), path("x.vcd"));
    let good = ["run", "small-smoke", "--summary-json", &json, "--vcd", &vcd];
    assert_eq!(mmu_sim(&good).status.code(), Some(0));
    let names = ["s.json", "x.vcd", "x.gtkw"];
    let read = || names.map(|n| std::fs::read(dir.join(n)).unwrap());
    let before = read();
    assert!(before.iter().all(|b| !b.is_empty()));
    let missing = path("no-such-dir/cells.csv");
    let refused: [(&[&str], &str); 3] = [
        (&["--vcd-signals", "nomatch"], "--wave-signals"),
        (&["--vcd-window", "30000:40000"], "--wave-window"),
        (&["--trace-cells", &missing], "--trace-cells"),
    ];
    for (extra, named) in refused {
        let o = mmu_sim(&[&good[..], extra].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.starts_with(&format!("error: {named}")),
            "{extra:?}: {err}"
        );
        assert!(read() == before, "{extra:?} changed the earlier outputs");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
