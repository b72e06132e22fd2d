//! `mmu-sim run` of a network scenario (`[fabric]`): a topology file and a flow file
//! beside the scenario run as a network and write the summary JSON and `fct.txt`; a bad
//! flow file exits 2 naming the file's line and field; the single switch's options that a
//! network does not have are refused; `--threads` gives the same summary.

use crate::common::mmu_sim;
use std::fs;
use std::path::PathBuf;

/// Two switches (4, 5) with two hosts each (0, 1 under 4; 2, 3 under 5), in the ns-3
/// format, and a scenario of small switches using it with `flows` as its flow file.
fn network_dir(tag: &str, flows: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mmu-sim-fabric-{tag}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("topology.txt"),
        "6 2 5\n4 5\n0 4 100Gbps 200ns 0\n1 4 100Gbps 200ns 0\n2 5 100Gbps 200ns 0\n3 5 100Gbps 200ns 0\n4 5 100Gbps 1us 0\n",
    )
    .unwrap();
    fs::write(dir.join("flow.txt"), flows).unwrap();
    fs::write(
        dir.join("net.toml"),
        "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nbuffer_bytes = 1048576\n\n[run]\ncycles = 400000\n\n[fabric]\ntopology = \"topology.txt\"\nflow_file = \"flow.txt\"\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_network_scenario_runs_and_writes_its_outputs() {
    let dir = network_dir("ok", "2\n0 3 3 100 1000000 0\n2 3 3 100 1000000 0.000001\n");
    let json = dir.join("summary.json");
    let ns3 = dir.join("ns3");
    let out = mmu_sim(&[
        "run",
        dir.join("net.toml").to_str().unwrap(),
        "--summary-json",
        json.to_str().unwrap(),
        "--ns3-out",
        ns3.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("fabric | 2 switches | 2 flows | 400000 cycles"),
        "{stdout}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(summary["conservation_ok"], true);
    assert_eq!(summary["flows_completed"], 2);
    let fct = fs::read_to_string(ns3.join("fct.txt")).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(fct.lines().count(), 2, "{fct}");
    assert!(fct.lines().all(|l| l.split(' ').count() == 8), "{fct}");
}

#[test]
fn a_bad_flow_file_exits_2_naming_the_line_and_field() {
    let dir = network_dir("bad", "1\n0 9 3 100 1000 0\n");
    let out = mmu_sim(&["run", dir.join("net.toml").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("flow.txt: line 2, dst: `9` is not a host"),
        "{stderr}"
    );
}

#[test]
fn single_switch_options_are_refused_for_a_network() {
    let dir = network_dir("cells", "1\n0 3 3 100 1000 0\n");
    let out = mmu_sim(&[
        "run",
        dir.join("net.toml").to_str().unwrap(),
        "--trace-cells",
        "x.csv",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--trace-cells: not available for a network scenario"),
        "{stderr}"
    );
}

/// A generated leaf-spine (2 leaves of 2 hosts, 1 spine) of small switches, and `rest`.
fn generated(tag: &str, rest: &str) -> (PathBuf, std::process::Output) {
    let dir = std::env::temp_dir().join(format!("mmu-sim-fabric-gen-{tag}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let toml = format!(
        "[switch]\nprofile = \"small\"\nlossless_priorities = [3]\nbuffer_bytes = 1048576\n\n\
         [run]\ncycles = 200000\n\n[fabric.leaf_spine]\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\n\
         host_link_gbps = 100\nhost_link_delay_ns = 200\nfabric_link_gbps = 100\nfabric_link_delay_ns = 1000\n{rest}"
    );
    let path = dir.join("net.toml");
    fs::write(&path, toml).unwrap();
    let out = mmu_sim(&["run", path.to_str().unwrap()]);
    (dir, out)
}

/// Generators, transports and per-switch overrides from the `[fabric]` keys: a permutation
/// and a fan-in under DCTCP with the spine (layer 2) on another buffer run clean.
#[test]
fn generators_transports_and_switch_overrides_run() {
    let (dir, out) = generated(
        "ok",
        "\n[[fabric.workload]]\nkind = \"permutation\"\nsize_bytes = 100000\n\
         \n[[fabric.workload]]\nkind = \"fan_in\"\nreceiver = 0\nsenders = 2\nsize_bytes = 50000\n\
         \n[[fabric.transport]]\npg = 3\ntcp = { cc = \"dctcp\" }\n\
         \n[[fabric.switch]]\nlayer = 2\nbuffer_bytes = 2097152\n",
    );
    fs::remove_dir_all(&dir).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("| 6 flows |"), "{stdout}");
    assert!(
        stdout.contains("flows completed              6"),
        "{stdout}"
    );
    assert!(
        stdout.contains("transport dctcp              6 flows"),
        "{stdout}"
    );
}

/// `hpcc = {}` on a priority group: with `int = true` on every switch (here through
/// `[[fabric.switch]]`) every ACK brings records back; with INT off on every switch the
/// run is refused (exit 2, naming `switch.int`) rather than run at line rate. (A switch
/// without INT on the path is the companion of `testbench/fabric/tests/int_cc.rs`.)
#[test]
fn hpcc_acks_bring_int_records_from_switches_with_int_on() {
    let flows = "\n[[fabric.workload]]\nkind = \"fan_in\"\nreceiver = 0\nsenders = 2\nsize_bytes = 500000\n\
         \n[[fabric.transport]]\npg = 3\nhpcc = {}\n";
    let int =
        "\n[[fabric.switch]]\nlayer = 1\nint = true\n\n[[fabric.switch]]\nlayer = 2\nint = true\n";
    let (dir, out) = generated("int", &format!("{flows}{int}"));
    fs::remove_dir_all(&dir).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("2 flows, 668 of 668 ACKs with INT records"),
        "{stdout}"
    );
    assert!(
        stdout.contains("flows completed              2"),
        "{stdout}"
    );
    let (dir, out) = generated("noint", flows);
    fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("switch.int: false on every switch, and hpcc reads"),
        "{stderr}"
    );
}

/// Every new key out of its range exits 2 naming it and what is allowed.
#[test]
fn bad_fabric_keys_exit_2_naming_the_field() {
    let perm = "\n[[fabric.workload]]\nkind = \"permutation\"\nsize_bytes = 1000\n";
    let cases = [
        (
            "\n[[fabric.workload]]\nkind = \"poisson\"\nduration_us = 10\nreceiver = 1\n"
                .to_string(),
            "fabric.workload[0].receiver: not a key of this kind; allowed: cdf, load",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"poisson\"\nduration_us = 10\nload = 2.0\n".to_string(),
            "fabric.workload[0].load: 2; allowed: 0 < load <= 1",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"fan_in\"\nreceiver = 0\nsize_bytes = 10\n".to_string(),
            "fabric.workload[0].senders: missing",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"fan_in_bursts\"\nreceiver = 1\n".to_string(),
            "fabric.workload[0].receiver: not a key of this kind; allowed: senders, size_bytes, load, base, duration_us",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"fan_in_bursts\"\nsenders = 1\nsize_bytes = 10\nduration_us = 10\nload = 0.0\n".to_string(),
            "fabric.workload[0].load: 0; allowed: 0 < load <= 1",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"fan_in_bursts\"\nsize_bytes = 10\nduration_us = 10\n".to_string(),
            "fabric.workload[0].senders: missing",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"poisson\"\nduration_us = 10\npg = 1\npgs = [2]\n".to_string(),
            "fabric.workload[0].pgs: given with pg; allowed: one of pg (one class) and pgs (classes drawn)",
        ),
        (
            "\n[[fabric.workload]]\nkind = \"poisson\"\nduration_us = 10\npgs = [1, 8]\n".to_string(),
            "fabric.workload[0].pgs: [1, 8]; allowed: distinct classes 0..=7",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 9\n"),
            "fabric.transport[0].pg: 9; allowed: 0..=7",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 3\ndcqcn = {{ r_ai_mbps = 0 }}\n"),
            "fabric.transport[0].dcqcn.r_ai_mbps: 0 is out of range",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 3\ndcqcn = {{ qp = \"message\" }}\n"),
            "fabric.transport[0].dcqcn.qp: not used in a network",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 3\nhpcc = {{ u_target = 1.5 }}\n"),
            "fabric.transport[0].hpcc.u_target: 1.5 is out of range; allowed: 0 < u_target <= 1",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 3\npowertcp = {{ mi_thresh = 3 }}\n"),
            "fabric.transport[0].powertcp.mi_thresh: not used by powertcp; remove the key",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 3\ntcp = {{}}\ntheta_powertcp = {{}}\n"),
            "fabric.transport[0].pg: more than one transport; allowed: one of tcp, dcqcn, hpcc, powertcp and theta_powertcp",
        ),
        (
            format!("{perm}\n[[fabric.transport]]\npg = 3\ntcp = {{ flavor = \"ns2\" }}\n"),
            "fabric.transport[0].tcp.syn_: true (ns-2's default) is not available in a network; allowed: false",
        ),
        (
            format!("{perm}\n[fabric]\nfeedback_pg = 8\n"),
            "fabric.feedback_pg: 8 is out of range; allowed: 0..=7",
        ),
        (
            format!("{perm}\n[fabric]\necm_pg = 8\n"),
            "fabric.ecm_pg: 8 is out of range; allowed: 0..=7",
        ),
        (
            format!("{perm}\n[[fabric.switch]]\nnodes = [0]\nalpha_log2 = 1\n"),
            "fabric.switch[0].nodes: 0 is not a switch",
        ),
        (
            format!("{perm}\n[[fabric.switch]]\nlayer = 1\npolicy = \"fifo\"\n"),
            "fabric.switch[0].policy",
        ),
        (
            format!("{perm}\n[[fabric.switch]]\nlayer = 2\nports = 1\n"),
            "switch 6: ports: 2 links; allowed: at most 1",
        ),
    ];
    for (i, (rest, want)) in cases.iter().enumerate() {
        let (dir, out) = generated(&format!("bad{i}"), rest);
        fs::remove_dir_all(&dir).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rest}: {stderr}");
        assert!(stderr.contains(want), "{rest}: want {want}, got {stderr}");
    }
}

/// `--threads`: a built-in network on 3 threads writes the summary (but for its `run`
/// section) that one thread writes; 0 threads, or threads for a single switch, exit 2.
#[test]
fn threads_give_the_same_summary_and_are_refused_out_of_range() {
    let dir = std::env::temp_dir().join(format!("mmu-sim-fabric-threads-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let summary = |threads: &str| {
        let json = dir.join(format!("summary-{threads}.json"));
        let out = mmu_sim(&[
            "run",
            "dsh-deadlock",
            "--cycles",
            "300000",
            "--threads",
            threads,
            "--set",
            "fabric.occupancy_interval_us=10",
            "--summary-json",
            json.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
        let run = v.as_object_mut().unwrap().remove("run").unwrap();
        let parts = run["partition_busy_share"].as_array().unwrap().len();
        (v, parts)
    };
    let (one, parts_one) = summary("1");
    let (three, parts_three) = summary("3");
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!((parts_one, parts_three), (1, 3));
    // The occupancy series too: 300 us in 10 us intervals.
    assert_eq!(
        one["switches"][0]["occupancy"]["peak_cells"]
            .as_array()
            .map(Vec::len),
        Some(30)
    );
    assert_eq!(one, three);
    for args in [
        &["run", "dsh-deadlock", "--threads", "0"][..],
        &["run", "--threads", "2"],
    ] {
        let out = mmu_sim(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--threads"), "{stderr}");
    }
}

/// `--mem-limit`: a built-in network whose estimated peak is above the limit is refused
/// before it is built (exit 2) with the estimate, the limit and what would fit it; under
/// a limit that holds it, and under the machine's own memory, it runs. A limit out of
/// range exits 2 naming the range.
#[test]
fn a_network_above_its_memory_limit_is_refused_and_one_within_it_runs() {
    let out = mmu_sim(&[
        "run",
        "dsh-deadlock",
        "--cycles",
        "1000",
        "--mem-limit",
        "8M",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for part in [
        "memory: the run's estimated peak is",
        "at most 8 MiB, --mem-limit",
    ] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    assert!(
        stderr.contains("MPI ranks") || stderr.contains("no rank count fits it"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "refused before the run");
    for limit in [&["--mem-limit", "4G"][..], &[]] {
        let mut args = vec!["run", "dsh-deadlock", "--cycles", "1000"];
        args.extend_from_slice(limit);
        let out = mmu_sim(&args);
        assert!(
            out.status.success(),
            "{limit:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for bad in ["0", "1023K", "2048T", "12X"] {
        let out = mmu_sim(&["run", "dsh-deadlock", "--mem-limit", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains("--mem-limit") && stderr.contains("1M..=1024T"),
            "{stderr}"
        );
    }
}

/// The refusal's hint reads the per-rank estimate (an MPI rank builds only its
/// partition's switches and hosts): a 32-leaf `dsh-deadlock` of 16 MiB buffers, about
/// 261 MiB in one process, fits 100 MiB a rank on 4 ranks (with every rank holding the
/// whole network no rank count would).
#[test]
fn the_memory_hint_counts_the_ranks_whose_parts_fit() {
    let out = mmu_sim(&[
        "run",
        "dsh-deadlock",
        "--set",
        "fabric.failed_links=[]",
        "--set",
        "switch.buffer_bytes=16777216",
        "--set",
        "fabric.leaf_spine.leaves=32",
        "--cycles",
        "1000",
        "--mem-limit",
        "100M",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("4 MPI ranks of this memory each would fit it (mpirun -np 4"),
        "{stderr}"
    );
}

/// `--mpi`, `--mem-limit` on a single switch, and `--mpi` with `--threads`, exit 2 naming
/// the option; so does `--mpi` in a build without the feature (the build named).
#[test]
fn mpi_and_mem_limit_are_refused_where_they_do_not_apply() {
    for (args, flag) in [
        (&["run", "--mpi"][..], "--mpi"),
        (&["run", "--mem-limit", "1G"], "--mem-limit"),
        (
            &["run", "dsh-deadlock", "--mpi", "--threads", "2"],
            "--threads",
        ),
    ] {
        let out = mmu_sim(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
    if !cfg!(feature = "mpi") {
        let out = mmu_sim(&["run", "dsh-deadlock", "--mpi"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--features mpi"), "{stderr}");
    }
}

/// SHA-256 of ns3-datacenter's `simulator/ns-3.39/examples/PowerTCP/topology-256.txt` (8078
/// bytes, no newline at the end), the same at commits dc4d0c0b3797494b2cefeea688c1bce329b14561
/// and 6ddb4a40f4db1c22f53bcf7d341f9da621d27816 (the ns-3 anchor's). The file is GPL-2.0 and
/// this repository MIT/Apache-2.0, so only its hash is kept (as in `fabric::generate`'s test).
const TOPOLOGY_256_SHA256: &str =
    "7aefabdcfe1ec80d2062f7a26e661a1709148179c1184f43a553aa12271b83df";

/// The SHA-256 of the `topology.txt` that `leafspine-256-websearch` with `extra` arguments
/// writes into `--ns3-out` (run for one cycle: the topology is what matters).
fn leafspine_256_topology_sha(tag: &str, extra: &[&str]) -> String {
    use sha2::{Digest, Sha256};
    let dir = std::env::temp_dir().join(format!("mmu-sim-ls256-{tag}-{}", std::process::id()));
    let mut args = vec![
        "run",
        "leafspine-256-websearch",
        "--cycles",
        "1",
        "--ns3-out",
    ];
    args.push(dir.to_str().unwrap());
    args.extend_from_slice(extra);
    let out = mmu_sim(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = fs::read_to_string(dir.join("topology.txt")).unwrap();
    fs::remove_dir_all(&dir).unwrap();
    let digest = Sha256::digest(text.trim_end_matches('\n').as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The built-in runs on ns3-datacenter's 256-server topology: the topology it ran, written
/// out, is that file byte for byte (every link, its rate and delay, in the file's order).
#[test]
fn leafspine_256_runs_ns3_datacenters_topology_256() {
    assert_eq!(leafspine_256_topology_sha("same", &[]), TOPOLOGY_256_SHA256);
}

/// The comparison above must be able to fail: one class of links 1 us shorter, or one link
/// failed (written like the others, so only a changed link moves the hash), is caught.
#[test]
fn a_changed_link_of_leafspine_256_is_caught() {
    let shorter = ["--set", "fabric.clos.agg_core_link_delay_ns=4000"];
    assert_ne!(
        leafspine_256_topology_sha("shorter", &shorter),
        TOPOLOGY_256_SHA256
    );
    let slower = ["--set", "fabric.clos.host_link_gbps=10"];
    assert_ne!(
        leafspine_256_topology_sha("slower", &slower),
        TOPOLOGY_256_SHA256
    );
}

/// 200 us of the built-in (100 us idle, then web search flows at load 0.8): the checks hold,
/// flows start, and the summary is the same on two threads (the run's speed apart).
#[test]
fn leafspine_256_runs_its_workload_with_the_checks_held() {
    let dir = std::env::temp_dir().join(format!("mmu-sim-ls256-run-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let summary = |threads: &str| {
        let json = dir.join(format!("{threads}.json"));
        let out = mmu_sim(&[
            "run",
            "leafspine-256-websearch",
            "--cycles",
            "200000",
            "--threads",
            threads,
            "--summary-json",
            json.to_str().unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        assert!(stdout.starts_with("fabric | 20 switches | "), "{stdout}");
        let mut v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&json).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("run");
        v
    };
    let (one, two) = (summary("1"), summary("2"));
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(one, two);
    assert!(one["cells_delivered"].as_u64().unwrap() > 0, "{one}");
    assert_eq!(one["conservation_ok"], true);
}
