//! The outputs of a network run (docs/fabric.md, docs/waveforms.md): each switch's event
//! stream passes `mmu-sim check` with the scenario written beside it, and an edited line
//! is caught; the one waveform has a scope per switch, agrees with the streams, filters
//! across switches, opens on the first PAUSE between two switches and is the same
//! byte for byte from run to run.

use crate::common::{mmu_sim, wave_changes};
use std::fs;
use std::path::{Path, PathBuf};
use wave::lint::lint_vcd;

/// Two switches (4, 5) with two hosts each; hosts 0 and 2 send 1 MB each to host 3 under
/// switch 5, whose lossless queue pauses the link from switch 4 within the run.
fn network(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmu-sim-fabout-{tag}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("topology.txt"),
        "6 2 5\n4 5\n0 4 100Gbps 200ns 0\n1 4 100Gbps 200ns 0\n2 5 100Gbps 200ns 0\n3 5 100Gbps 200ns 0\n4 5 100Gbps 1us 0\n",
    )
    .unwrap();
    fs::write(
        dir.join("flow.txt"),
        "2\n0 3 3 100 1000000 0\n2 3 3 100 1000000 0.000001\n",
    )
    .unwrap();
    fs::write(
        dir.join("net.toml"),
        "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nbuffer_bytes = 1048576\n\n[run]\ncycles = 60000\n\n[fabric]\ntopology = \"topology.txt\"\nflow_file = \"flow.txt\"\n",
    )
    .unwrap();
    dir
}

fn run_ok(dir: &Path, args: &[&str]) {
    let net = dir.join("net.toml");
    let mut all = vec!["run", net.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = mmu_sim(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check(dir: &Path, sw: &str) -> std::process::Output {
    let toml = dir.join(format!("ev/{sw}.toml"));
    let stream = dir.join(format!("ev/{sw}.jsonl"));
    mmu_sim(&[
        "check",
        toml.to_str().unwrap(),
        "--dut-events",
        stream.to_str().unwrap(),
        "--mode",
        "lockstep",
    ])
}

#[test]
fn every_switch_stream_passes_check_and_an_edited_line_is_caught() {
    let dir = network("events");
    run_ok(&dir, &["--trace-events", dir.join("ev").to_str().unwrap()]);
    for sw in ["sw04", "sw05"] {
        let out = check(&dir, sw);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sw}: {stdout}");
        assert!(stdout.starts_with("consistent: "), "{stdout}");
        let stream = fs::read_to_string(dir.join(format!("ev/{sw}.jsonl"))).unwrap();
        assert!(stream.lines().count() > 1000, "{sw}: a weak test");
    }
    // Companion: the first PAUSE switch 5 sent, turned into a RESUME.
    let path = dir.join("ev/sw05.jsonl");
    let stream = fs::read_to_string(&path).unwrap();
    let line = stream
        .lines()
        .find(|l| l.contains("\"event\":\"pfc\"") && l.contains("\"pause\":true"))
        .expect("switch 5 pauses");
    let edited = line.replace("\"pause\":true", "\"pause\":false");
    fs::write(&path, stream.replacen(line, &edited, 1)).unwrap();
    let out = check(&dir, "sw05");
    let stdout = String::from_utf8_lossy(&out.stdout);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("DIVERGED"), "{stdout}");
}

#[test]
fn the_event_streams_are_the_same_on_two_threads() {
    let dir = network("streams-threads");
    for (n, sub) in [("1", "ev1"), ("2", "ev2")] {
        run_ok(
            &dir,
            &[
                "--threads",
                n,
                "--trace-events",
                dir.join(sub).to_str().unwrap(),
            ],
        );
    }
    for sw in ["sw04", "sw05"] {
        let one = fs::read(dir.join(format!("ev1/{sw}.jsonl"))).unwrap();
        let two = fs::read(dir.join(format!("ev2/{sw}.jsonl"))).unwrap();
        assert!(!one.is_empty() && one == two, "{sw}: the streams differ");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_waveform_has_a_scope_per_switch_and_agrees_with_the_streams() {
    let dir = network("waves");
    let vcd = dir.join("net.vcd");
    let ev = dir.join("ev");
    run_ok(
        &dir,
        &[
            "--vcd",
            vcd.to_str().unwrap(),
            "--trace-events",
            ev.to_str().unwrap(),
        ],
    );
    lint_vcd(&fs::read_to_string(&vcd).unwrap()).unwrap();
    let waves = wave_changes(&vcd);
    for scope in [
        "top.sw04.mmu.",
        "top.sw05.mmu.",
        "top.sw04.nic.p00.",
        "top.sw05.nic.p01.",
    ] {
        assert!(waves.keys().any(|k| k.starts_with(scope)), "no {scope}");
    }
    // Every QOFF change in the dump is a `pfc sent` of the switch's stream, which stamps
    // a change with the cycle after the step that made it; and the other way round.
    let mut changes = 0;
    for sw in ["sw04", "sw05"] {
        let stream = fs::read_to_string(ev.join(format!("{sw}.jsonl"))).unwrap();
        let mut from_stream: Vec<(u64, u64)> = stream
            .lines()
            .filter(|l| l.contains("\"dir\":\"sent\""))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["cycle"].as_u64().unwrap() - 1,
                    v["port"].as_u64().unwrap(),
                )
            })
            .collect();
        let mut from_dump = Vec::new();
        for p in 0..3 {
            let (_, changes) = &waves[&format!("top.{sw}.mmu.ingress.p{p:02}.qoff")];
            // The first value is the initial one at time 0.
            from_dump.extend(changes.iter().skip(1).map(|c| (c.0, p)));
        }
        from_stream.sort();
        from_stream.dedup();
        from_dump.sort();
        changes += from_dump.len();
        assert_eq!(from_dump, from_stream, "{sw}");
    }
    assert!(changes > 10, "{changes} QOFF changes: a weak test");
    fs::remove_dir_all(&dir).unwrap();
}

/// A binary value of the dump as a number.
fn bits(v: &str) -> u64 {
    u64::from_str_radix(v, 2).unwrap()
}

/// The link between switches 4 and 5 has its scope, each direction recorded by the switch
/// that sees it: the PFC frames switch 4 received are those switch 5's stream sent on the
/// port, `in_flight` is `tx_cells - rx_cells` at every change and never more than the
/// 1 us wire holds at one cell a cycle, and the paused mask follows switch 4's egress.
#[test]
fn the_link_scope_counts_what_crosses_the_link() {
    let dir = network("link");
    let vcd = dir.join("net.vcd");
    let ev = dir.join("ev");
    run_ok(
        &dir,
        &[
            "--vcd",
            vcd.to_str().unwrap(),
            "--trace-events",
            ev.to_str().unwrap(),
        ],
    );
    lint_vcd(&fs::read_to_string(&vcd).unwrap()).unwrap();
    let waves = wave_changes(&vcd);
    let at = "top.link.sw04_p02__sw05_p02.sw04_to_sw05";
    let series = |leaf: &str| &waves[&format!("{at}.{leaf}")].1;
    let last = |leaf: &str| bits(&series(leaf).last().unwrap().1);
    // Value of `leaf` at cycle `t`: the last change at or before it.
    let value = |leaf: &str, t: u64| {
        series(leaf)
            .iter()
            .take_while(|c| c.0 <= t)
            .last()
            .map_or(0, |c| bits(&c.1))
    };
    // Switch 5's frames on the port, by the cycle of the step that sent them (the stream
    // stamps the cycle after); each reaches switch 4 after the 1 us wire and switch 4's
    // reaction delay, the same for every frame, so those sent in the last 2 us do not.
    let stream = fs::read_to_string(ev.join("sw05.jsonl")).unwrap();
    let sent: Vec<u64> = stream
        .lines()
        .filter(|l| l.contains("\"event\":\"pfc\"") && l.contains("\"dir\":\"sent\""))
        .filter(|l| l.contains("\"port\":2,"))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["cycle"].as_u64().unwrap() - 1
        })
        .filter(|&c| c + 2_000 < 60_000)
        .collect();
    assert!(sent.len() > 2, "{} frames: a weak test", sent.len());
    let received: Vec<u64> = series("pfc_rx_frames")
        .iter()
        .skip(1)
        .map(|c| c.0)
        .collect();
    assert_eq!(last("pfc_rx_frames"), received.len() as u64);
    assert_eq!(
        received.len(),
        sent.len(),
        "sent {sent:?}, received {received:?}"
    );
    let delays: Vec<u64> = received.iter().zip(&sent).map(|(r, s)| r - s).collect();
    assert!(
        delays.iter().all(|&d| d == delays[0] && d > 1_000),
        "{delays:?}"
    );
    let flight = series("in_flight");
    assert!(flight.len() > 10, "in_flight moves");
    for &(t, ref v) in flight.iter().skip(1) {
        let v = bits(v);
        assert_eq!(v, value("tx_cells", t) - value("rx_cells", t), "cycle {t}");
        assert!(v <= 1_001, "cycle {t}: {v} cells on a 1000-cycle wire");
    }
    // 1 us at 100 Gb/s holds 65 cells of the small profile at line rate.
    assert!(flight.iter().any(|c| bits(&c.1) > 32), "the wire fills");
    // Switch 4's egress toward switch 5 is paused when the link says so.
    let egress = &waves["top.sw04.mmu.egress.p02.paused"].1;
    let paused = series("paused");
    assert!(
        paused.iter().any(|c| bits(&c.1) == 1 << 3),
        "class 3 paused"
    );
    let first = |s: &Vec<(u64, String)>| s.iter().find(|c| bits(&c.1) != 0).unwrap().0;
    assert_eq!(first(paused), first(egress));
    // The other direction carries the frames' data the other way: nothing here.
    let back = &waves["top.link.sw04_p02__sw05_p02.sw05_to_sw04.tx_cells"].1;
    assert_eq!(back.len(), 1, "no cells from switch 5 to switch 4");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_waveform_is_byte_identical_filters_across_switches_and_opens_on_a_crossing_pause() {
    let dir = network("same");
    let dump = |name: &str, extra: &[&str]| {
        let p = dir.join(name);
        let mut args = vec!["--vcd", p.to_str().unwrap()];
        args.extend_from_slice(extra);
        run_ok(&dir, &args);
        (
            fs::read(&p).unwrap(),
            fs::read_to_string(p.with_extension("gtkw")).unwrap(),
        )
    };
    let (a, gtkw) = dump("a.vcd", &[]);
    let (b, _) = dump("b.vcd", &[]);
    assert!(a == b, "two runs of one scenario differ");
    // Each switch in its own partition: the same bytes (the dump merges at each horizon).
    let (c, _) = dump("c.vcd", &["--threads", "2"]);
    assert!(a == c, "one thread and two give different dumps");
    let (d, _) = dump("d.vcd", &["--threads", "4"]);
    assert!(a == d, "one thread and four give different dumps");
    // The view opens on switch 5's first PAUSE to switch 4, its groups first.
    let marker: u64 = gtkw
        .lines()
        .find_map(|l| l.strip_prefix("*"))
        .and_then(|l| l.split(' ').nth(1))
        .unwrap()
        .parse()
        .unwrap();
    let waves = wave_changes(&dir.join("a.vcd"));
    let qoff = &waves["top.sw05.mmu.ingress.p02.qoff"].1;
    let first_pause = qoff.iter().find(|c| c.1 != "00000000").unwrap().0;
    assert!(
        (first_pause..first_pause + 100).contains(&marker),
        "marker {marker}, QOFF of the port to switch 4 set at {first_pause}"
    );
    assert!(gtkw.contains("\n-PAUSE sw05 p02 -> sw04 p02\n"), "{gtkw}");
    // Then the link it crossed (after the group's closing line, its title again).
    let after = gtkw
        .split("\n-PAUSE sw05 p02 -> sw04 p02\n")
        .nth(2)
        .unwrap();
    // (A line of "-" alone is an analog trace's extra row.)
    let next_group = after
        .lines()
        .find(|l| l.len() > 1 && l.starts_with('-'))
        .unwrap();
    assert_eq!(next_group, "-link sw04 p02 -- sw05 p02", "{gtkw}");
    let groups: Vec<&str> = gtkw.lines().filter_map(|l| l.strip_prefix("-sw")).collect();
    assert!(groups[0].starts_with("05 "), "{groups:?}");
    assert!(groups.iter().any(|g| g.starts_with("04 ")), "{groups:?}");
    // A glob over the full name picks signals of both switches, and only those.
    let (filtered, _) = dump("f.vcd", &["--vcd-signals", "top.sw0*.mmu.ingress.*.qoff"]);
    let text = String::from_utf8(filtered).unwrap();
    let vars: Vec<&str> = text.lines().filter(|l| l.starts_with("$var")).collect();
    assert_eq!(vars.len(), 6, "{vars:?}");
    assert!(vars.iter().all(|v| v.contains(" qoff ")), "{vars:?}");
    // A link's `in_flight` alone: its counters are recorded for it but not dumped.
    let (flight, _) = dump("g.vcd", &["--vcd-signals", "top.link.*.in_flight"]);
    let text = String::from_utf8(flight).unwrap();
    let vars: Vec<&str> = text.lines().filter(|l| l.starts_with("$var")).collect();
    assert_eq!(vars.len(), 2, "{vars:?}");
    let flight =
        &wave_changes(&dir.join("g.vcd"))["top.link.sw04_p02__sw05_p02.sw04_to_sw05.in_flight"].1;
    assert!(
        flight.len() > 10,
        "in_flight moves without its counters dumped"
    );
    // A glob that matches nothing is refused, naming the flag.
    let net = dir.join("net.toml");
    let out = mmu_sim(&[
        "run",
        net.to_str().unwrap(),
        "--vcd",
        dir.join("x.vcd").to_str().unwrap(),
        "--vcd-signals",
        "top.mmu.*",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--wave-signals"), "{stderr}");
}

#[test]
fn an_fst_holds_what_the_vcd_holds() {
    let dir = network("fst");
    let (vcd, fst) = (dir.join("n.vcd"), dir.join("n.fst"));
    run_ok(&dir, &["--vcd", vcd.to_str().unwrap(), "--cycles", "40000"]);
    run_ok(
        &dir,
        &["--wave", fst.to_str().unwrap(), "--cycles", "40000"],
    );
    let (v, f) = (wave_changes(&vcd), wave_changes(&fst));
    fs::remove_dir_all(&dir).unwrap();
    assert!(v.len() > 100, "{} signals", v.len());
    assert!(v == f, "FST and VCD differ");
}
