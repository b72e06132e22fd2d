//! Built-in scenarios, written as scenario TOML so they exercise the same parser and
//! checks as user files, and so `mmu-sim show NAME` prints a file a user can start from.

use crate::{Scenario, ScenarioError};
use std::fmt::Write;

/// A named built-in scenario.
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    toml: fn() -> String,
}

impl Builtin {
    /// The scenario as TOML text.
    pub fn toml(&self) -> String {
        (self.toml)()
    }

    pub fn load(&self) -> Result<Scenario, ScenarioError> {
        Scenario::parse(&self.toml(), self.name)
    }
}

/// The scenario `mmu-sim run` runs without an argument.
pub const DEFAULT: &str = "fanin-burst";

pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "fanin-burst",
        description: "tomahawk, 16-to-1 lossless 1500 B burst (12% of the buffer) over 2-to-1 background at line rate: PFC, no lossless drop",
        toml: fanin_burst,
    },
    Builtin {
        name: "small-smoke",
        description: "small switch, four flows (constant, on/off, lossy mixed sizes), 20k cycles: a quick end-to-end check",
        toml: small_smoke,
    },
    Builtin {
        name: "mixed-speed",
        description: "small switch with 6 x 100G down-links and 2 x 400G up-links; 400G into 100G congests and pauses the up-link",
        toml: mixed_speed,
    },
    Builtin {
        name: "lossy-overload",
        description: "small switch, three lossy flows at line rate into one port (3:1) next to a lossless flow: lossy drops only",
        toml: lossy_overload,
    },
    Builtin {
        name: "poisson-cdf",
        description: "small switch, six Poisson message flows with a heavy-tailed size CDF at 40% load into two ports",
        toml: poisson_cdf,
    },
    Builtin {
        name: "dsh-port-level",
        description: "small switch under DSH, alpha = 4: six ports burst on two lossless classes into two ports; queue- and port-level PFC, insurance headroom, no lossless drop",
        toml: dsh_port_level,
    },
    Builtin {
        name: "hcf-tcp",
        description: "small switch, 24 long-lived TCP flows from six ports plus 5 Gb/s of constant UDP into one HCF queue (K = 20, c0 = 1, 20 packets, dynamic period); add --fifo for a 20-packet FIFO",
        toml: hcf_tcp,
    },
    Builtin {
        name: "ecm-fanin",
        description: "small switch, ECM on lossless priority 3: three sources at line rate into port 7 (3:1) beside an innocent flow into port 6; the reaction points throttle the sources so that port 7 sends no PFC pause",
        toml: ecm_fanin,
    },
    Builtin {
        name: "ecn-dctcp",
        description: "small switch, ECN step marking (K = 30 000 B on enqueue) on lossy priority 1: three long-lived DCTCP flows into port 7, marked above K, cut their windows by alpha/2 without a drop, beside a Reno flow into port 6 on an unmarked priority",
        toml: ecn_dctcp,
    },
    Builtin {
        name: "dcqcn-fanin",
        description: "small switch, ECN on lossy priority 1 with DCQCN's RED curve (Kmin 5 KB, Kmax 200 KB, Pmax 1 %): three DCQCN flows into port 7, started 100 us apart, cut their rates on CNPs and share the port",
        toml: dcqcn_fanin,
    },
    Builtin {
        name: "hpcc-fanin",
        description: "small switch with INT: three HPCC flows (ns3-datacenter's defaults) into port 7 on lossless priority 3, started 100 us apart; each egress stamps a hop record per packet and the senders hold port 7 near 95 % with its queue near empty",
        toml: hpcc_fanin,
    },
    Builtin {
        name: "powertcp-fanin",
        description: "small switch with INT: three PowerTCP flows (ns3-datacenter's defaults) into port 7 on lossless priority 3, started 100 us apart; the senders read the hop records' queue, its slope and the port's rate, and share port 7 with its queue near empty",
        toml: powertcp_fanin,
    },
    Builtin {
        name: "occamy-shaped",
        description: "shaped like the Occamy RTL switch core: 8 ports, 2047 cells of 64 B, one cell per cycle in and out, lossy DT alpha = 8; 64 B packets at full load (speed comparison)",
        toml: occamy_shaped,
    },
    Builtin {
        name: "dsh-deadlock",
        description: "network: DSH Fig. 12, the 2-spine, 4-leaf leaf-spine with S0-L3 and S1-L0 failed; fan-in 8 L0->L3, L3->L0, L1->L2, L2->L1, DCQCN, Hadoop sizes, Poisson at load 0.5 on the receivers' links, SIH: the cyclic buffer dependency S0->L1->S1->L2->S0",
        toml: dsh_deadlock,
    },
    Builtin {
        name: "dsh-deadlock-powertcp",
        description: "network: dsh-deadlock with PowerTCP (ns3-datacenter's defaults) in place of DCQCN on class 3, every switch stamping INT records: DSH's Fig. 12 compares both",
        toml: dsh_deadlock_powertcp,
    },
    Builtin {
        name: "dsh-collateral-fabric",
        description: "network: DSH Fig. 13, two switches S0 (H0, H1) and S1 (R0, R1, H2-H25) joined by one link, all 100G, 2 us: F0 H0->R0 and F1 H1->R1 long DCQCN flows, then 24 x 64 KB from H2-H25 to R1 at 1 ms; S1 pauses S0's link and F0 with it, SIH",
        toml: dsh_collateral_fabric,
    },
    Builtin {
        name: "l2bm-clos",
        description: "network: L2BM's three-layer Clos (2 core, 4 aggregation, 4 ToR switches, 32 servers per ToR at 25G, 4 MB each), 16 servers per ToR RDMA (DCQCN, load 0.4) and 16 TCP (DCTCP, load 0.8), web search sizes, L2BM",
        toml: l2bm_clos,
    },
    Builtin {
        name: "leafspine-256-websearch",
        description: "network: ns3-datacenter's topology-256 (256 servers at 25G under 8 ToRs, 8 aggregation and 4 core switches at 100G, 20 switches, 288 links) running its PowerTCP workload example: web search sizes, Poisson at load 0.8 of the ToR uplinks, DCQCN on lossless class 3, 4 MB buffers, DT alpha 1/8; 10 ms (the ns-3 speed anchor)",
        toml: leafspine_256_websearch,
    },
    Builtin {
        name: "dsh-leafspine",
        description: "network: DSH V-B (Figs. 14-15), the 16-leaf, 16-spine leaf-spine with 256 hosts, all 100G, 2 us: web search background (Poisson at load 0.6, classes 0-2 and 4-6 drawn) and bursts of 16 x 64 KB from other racks to one host (Poisson at load 0.3, class 3), DCQCN on every class, tomahawk, SIH; 200 us of arrivals, 300 us",
        toml: dsh_leafspine,
    },
    Builtin {
        name: "dsh-fattree",
        description: "network: dsh-leafspine's traffic and switches on a k = 16 fat-tree (320 switches of 16 ports, 1024 hosts), all 100G, 2 us; 50 us of arrivals, 100 us",
        toml: dsh_fattree,
    },
];

/// Look up a built-in scenario by name.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Parse a built-in scenario by name.
pub fn load(name: &str) -> Result<Scenario, ScenarioError> {
    find(name)
        .ok_or_else(|| {
            ScenarioError::new(
                "scenario",
                format!(
                    "unknown scenario {name:?}{}; built-in: {}",
                    crate::suggest::did_you_mean(name, names()),
                    names().join(", ")
                ),
            )
        })?
        .load()
}

pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|b| b.name).collect()
}

fn header(name: &str) -> String {
    let b = find(name).map_or("", |b| b.description);
    format!("name = \"{name}\"\ndescription = \"{b}\"\n\n")
}

fn fanin_burst() -> String {
    let mut s = header("fanin-burst");
    s.push_str(
        r#"[switch]
profile = "tomahawk"

[run]
cycles = 200_000
seed = 1
expect_lossless = true

# Background: two lossless flows at line rate into port 31 (2:1 oversubscribed).
[[flows]]
src = 0
dst = 31
prio = 3
size_bytes = 1500
pattern = "constant"

[[flows]]
src = 1
dst = 31
prio = 3
size_bytes = 1500
pattern = "constant"
"#,
    );
    // Fan-in: ports 2..=17 each hand 87 x 1500 B to their partner at cycle 5000.
    for src in 2..=17 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = 30\nprio = 3\nsize_bytes = 1500\npattern = \"burst\"\nburst_bytes = 130_500\nstart_cycle = 5_000\n"
        );
    }
    s
}

fn small_smoke() -> String {
    header("small-smoke")
        + r#"[switch]
profile = "small"

[run]
cycles = 20_000
seed = 7
expect_lossless = true

# 50G + 60G into port 4: mildly oversubscribed, so PFC comes into play.
[[flows]]
src = 0
dst = 4
prio = 1
size_bytes = 1000
pattern = "constant"
rate_gbps = 50

[[flows]]
src = 1
dst = 4
prio = 1
size_bytes = 1500
pattern = "constant"
rate_gbps = 60

[[flows]]
src = 2
dst = 5
prio = 2
size_bytes = 512
pattern = "on_off"
on_cycles = 2_000
off_cycles = 3_000

# Lossy (priority 7 is not lossless in the small profile), mixed packet sizes.
[[flows]]
src = 3
dst = 6
prio = 7
size_cdf = [[64, 0.5], [576, 0.8], [1500, 1.0]]
pattern = "constant"
rate_gbps = 10
stop_cycle = 15_000
"#
}

fn mixed_speed() -> String {
    header("mixed-speed")
        + r#"[switch]
profile = "small"
port_speeds_gbps = [100, 100, 100, 100, 100, 100, 400, 400]
buffer_bytes = 4_194_304

[run]
cycles = 100_000
seed = 3
expect_lossless = true

# 400G up-link into a 100G down-link: 4:1, the up-link gets paused.
[[flows]]
src = 6
dst = 0
prio = 3
size_bytes = 1500
pattern = "constant"

# 200G from the other up-link spread over two down-links.
[[flows]]
src = 7
dst = 1
prio = 4
size_bytes = 1500
pattern = "constant"
rate_gbps = 100

[[flows]]
src = 7
dst = 2
prio = 4
size_bytes = 1500
pattern = "constant"
rate_gbps = 100

# Down-links to an up-link: no congestion.
[[flows]]
src = 2
dst = 6
prio = 3
size_bytes = 1500
pattern = "constant"

[[flows]]
src = 3
dst = 6
prio = 3
size_bytes = 1500
pattern = "constant"
"#
}

fn lossy_overload() -> String {
    header("lossy-overload")
        + r#"[switch]
profile = "small"
lossless_priorities = [3]

[run]
cycles = 50_000
seed = 5
expect_lossless = true

[[flows]]
src = 0
dst = 4
prio = 1
size_bytes = 1500
pattern = "constant"

[[flows]]
src = 1
dst = 4
prio = 1
size_bytes = 1500
pattern = "constant"

[[flows]]
src = 2
dst = 4
prio = 1
size_bytes = 1500
pattern = "constant"

# Lossless traffic through the same switch must not lose a cell.
[[flows]]
src = 5
dst = 6
prio = 3
size_bytes = 1500
pattern = "constant"
"#
}

fn poisson_cdf() -> String {
    let mut s = header("poisson-cdf");
    s.push_str(
        r#"[switch]
profile = "small"
# Messages are cut into 1500 B packets, the last one as short as 64 B: the headroom is
# sized for 64 B packets (148 cells), and only the two classes in use are lossless, so
# that SIH keeps a shared segment.
lossless_priorities = [1, 2]
headroom_min_packet_bytes = 64

[run]
cycles = 200_000
seed = 11
expect_lossless = true
"#,
    );
    for src in 0..6 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = {}\nprio = {}\nsize_bytes = 1500\npattern = \"poisson\"\nrate_gbps = 40\nmessage_cdf = [[200, 0.3], [1_000, 0.5], [5_000, 0.7], [20_000, 0.9], [100_000, 0.99], [500_000, 1.0]]\n",
            6 + src % 2,
            1 + src % 3
        );
    }
    s
}

/// The configuration the Occamy switch core's RTL is built with, for comparing speed
/// with a Verilator build of it: 2047 cells of 64 B, one cell written and one read per
/// cycle, Dynamic Threshold with alpha = 8, all traffic lossy. Eight ports of 64 Gb/s at
/// 1 GHz with no preamble or gap make exactly one 64 B cell per cycle in aggregate; each
/// port sends to the next one, and ports 0 and 1 also share port 2, so DT drops. The MTU
/// is 64 B: the SRAM ports are sized for the worst packet size a line carries.
fn occamy_shaped() -> String {
    let mut s = header("occamy-shaped");
    s.push_str(
        r#"[switch]
profile = "small"
ports = 8
port_speed_gbps = 64
core_clock_mhz = 1000
cell_bytes = 64
wire_overhead_bytes = 0
mtu_bytes = 64
buffer_bytes = 131_008
sram_write_cells_per_cycle = 1
sram_read_cells_per_cycle = 1
lossless_priorities = []
lossy_pool_bytes = 131_008
lossy_alpha_log2 = 3
lossy_private_bytes = 0

[run]
cycles = 1_000_000
seed = 1
"#,
    );
    for src in 0..8u32 {
        let dst = if src == 0 { 2 } else { (src + 1) % 8 };
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = {dst}\nprio = 0\nsize_bytes = 64\npattern = \"constant\"\n"
        );
    }
    s
}

/// DSH's two levels of flow control at work (section IV-B). Six ports each burst 600 KB on
/// two lossless classes (one toward port 6, one toward port 7): twelve congested queues
/// drive `T` down; with alpha = 4, queues pause at `X_qoff = T - eta` (Eq. 5) and ports
/// whose total exceeds `X_poff = N_q * T` (Eq. 6) pause as a whole, their in-flight cells
/// landing in the insurance headroom (Eq. 4). On the egress side, the downstream device
/// of port 6 pauses class 1 (queue level) and then the whole port (port level), so the
/// OR gate `paused = QOFF OR POFF` (Fig. 9) shows both inputs. The committed view
/// `waveforms/dsh-view.gtkw` opens on the units involved.
fn dsh_port_level() -> String {
    let mut s = header("dsh-port-level");
    s.push_str(
        r#"[switch]
profile = "small"
policy = "dsh"
alpha_log2 = 2

[run]
cycles = 150_000
seed = 3
expect_lossless = true
"#,
    );
    // Downstream of port 6: queue-level PAUSE of class 1 at 20 us for 200 quanta (about
    // 1 us at 100G), port-level PAUSE at 40 us, port-level RESUME at 41 us.
    s.push_str(
        r#"
[[pfc_script]]
cycle = 20_000
port = 6
classes = [1]
quanta = 200

[[pfc_script]]
cycle = 40_000
port = 6
quanta = 0xFFFF
port_level = true

[[pfc_script]]
cycle = 41_000
port = 6
quanta = 0
port_level = true
"#,
    );
    for src in 0..6 {
        for (prio, dst) in [(1, 6), (2, 7)] {
            let _ = write!(
                s,
                "\n[[flows]]\nsrc = {src}\ndst = {dst}\nprio = {prio}\nsize_bytes = 1500\npattern = \"burst\"\nburst_bytes = 600_000\nstart_cycle = 1_000\n"
            );
        }
    }
    s
}

/// HCF's long-flow setting (HCF V-B) on one 100G output: 24 long-lived TCP flows (flows
/// 0..23, four from each of ports 0..5) and a constant UDP-like flow at 5 % of the line
/// (flow 24, port 6) share egress queue 1 of port 7, which runs HCF with the paper's
/// parameters: K = 20 bins, c0 = 1, B = 20 packets split 10/10 between HP and LP, dynamic
/// period. All traffic is lossy (TCP and HCF live on drops), so `expect_lossless` is false.
///
/// The lossy pool is 168 cells, 21 packets of 1500 B (8 cells each), with alpha = 8, so the
/// pool, not DT, is the limit: under HCF it never binds (at most 10 + 10 packets queued and
/// one on the wire), and `mmu-sim run hcf-tcp --fifo` turns the queue into a drop-tail FIFO
/// of 20 packets plus the one on the wire, the paper's comparison. The committed view
/// `waveforms/hcf-view.gtkw` (`make waves-hcf`) opens on the HCF registers of this queue.
fn hcf_tcp() -> String {
    let mut s = header("hcf-tcp");
    s.push_str(
        r#"[switch]
profile = "small"
lossless_priorities = [3]
lossy_pool_bytes = 34_944
lossy_alpha_log2 = 3

# Egress queue 1 of port 7 is HCF; no period_cycles: a dynamic priority period.
[[switch.hcf]]
ports = [7]
queue = 1
bins = 20
c0 = 1
buffer = 20
unit = "packet"

[run]
cycles = 2_000_000
seed = 1
expect_lossless = false
"#,
    );
    // 24 long-lived TCP flows, four per port from ports 0..5, starting 1 us apart.
    for i in 0..24 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {}\ndst = 7\nprio = 1\nsize_bytes = 1500\npattern = {{ tcp = {{ base_rtt_us = 10, min_rto_us = 200 }} }}\nstart_cycle = {}\n",
            i / 4,
            i * 1_000
        );
    }
    s.push_str(
        r#"
# Flow 24, UDP-like: 5 Gb/s of 1500 B packets, 5 % of the bottleneck.
[[flows]]
src = 6
dst = 7
prio = 1
size_bytes = 1500
pattern = "constant"
rate_gbps = 5
"#,
    );
    s
}

/// Flows of 1500 B packets from ports 0, 1 and 2 into port 7 on priority `prio`, with
/// `pattern` (a TOML value).
fn three_into_port_7(s: &mut String, prio: u8, pattern: &str) {
    for src in 0..3 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = 7\nprio = {prio}\nsize_bytes = 1500\npattern = {pattern}\n"
        );
    }
}

/// ECN and DCTCP (docs/ecn.md): egress queue 1 of every port marks CE above K = 30 000 B
/// (DCTCP's step, `kmin = kmax`); three DCTCP senders into port 7 cut their windows by
/// `alpha / 2` and keep the queue near K without a drop. Flow 3, Reno into port 6 on
/// priority 2, is neither ECN-capable nor marked. The committed view
/// `waveforms/ecn-view.gtkw` (`make waves-ecn`) opens on port 7's marker.
fn ecn_dctcp() -> String {
    let mut s = header("ecn-dctcp");
    s.push_str(
        r#"[switch]
profile = "small"
lossless_priorities = [3]
lossy_pool_bytes = 262144

[switch.ecn]
priorities = [1]
kmin = 30000
kmax = 30000

[run]
cycles = 400_000
seed = 1
expect_lossless = true
"#,
    );
    three_into_port_7(&mut s, 1, r#"{ tcp = { cc = "dctcp", base_rtt_us = 10 } }"#);
    s.push_str(
        r#"
# A Reno flow on an unmarked priority into port 6.
[[flows]]
src = 4
dst = 6
prio = 2
size_bytes = 1500
pattern = { tcp = { base_rtt_us = 10 } }
"#,
    );
    s
}

/// DCQCN (docs/ecn.md): egress queue 1 of every port marks on DCQCN's recommended RED
/// curve (the `[switch.ecn]` defaults); three DCQCN flows into port 7 start 100 us apart at
/// line rate, and their NICs' reaction points cut the rates on the CNPs of port 7's
/// receiver. The paper's parameters, with `R_AI` and `R_HAI` scaled by 10 for 100 Gb/s
/// links (docs/ecn.md).
fn dcqcn_fanin() -> String {
    let mut s = header("dcqcn-fanin");
    s.push_str(
        r#"[switch]
profile = "small"
lossless_priorities = [3]
lossy_pool_bytes = 1048576

[switch.ecn]
priorities = [1]

[run]
cycles = 1_000_000
seed = 1
expect_lossless = true
"#,
    );
    for src in 0..3 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = 7\nprio = 1\nsize_bytes = 1500\nstart_cycle = {}\n\
             pattern = {{ dcqcn = {{ r_ai_mbps = 400, r_hai_mbps = 1000 }} }}\n",
            src * 100_000
        );
    }
    s
}

/// HPCC (docs/int.md): INT on every egress port; three HPCC flows into port 7 start 100 us
/// apart at line rate and settle at their share of `eta` = 95 % of the line.
fn hpcc_fanin() -> String {
    int_fanin("hpcc-fanin", "hpcc")
}

/// PowerTCP (docs/int.md): as `hpcc-fanin`, the senders PowerTCP's.
fn powertcp_fanin() -> String {
    int_fanin("powertcp-fanin", "powertcp")
}

/// Three flows of `law` with its defaults from ports 0, 1 and 2 into port 7, 100 us
/// apart, lossless priority 3, INT on; 1 ms.
fn int_fanin(name: &str, law: &str) -> String {
    let mut s = header(name);
    s.push_str(
        r#"[switch]
profile = "small"
lossless_priorities = [3]
int = true

[run]
cycles = 1_000_000
seed = 1
expect_lossless = true
"#,
    );
    for src in 0..3 {
        let _ = write!(
            s,
            "\n[[flows]]\nsrc = {src}\ndst = 7\nprio = 3\nsize_bytes = 1000\nstart_cycle = {}\n\
             pattern = {{ {law} = {{}} }}\n",
            src * 100_000
        );
    }
    s
}

/// ECM (docs/ecm.md): the congestion point of egress queue 3 of port 7 samples the three
/// line-rate sources and their NICs' reaction points throttle them toward `Qeq` = 16 KiB;
/// flow 3, into port 6, shares no queue with them. The committed view
/// `waveforms/ecm-view.gtkw` (`make waves-ecm`) opens on the congestion point and the
/// limiters of NIC 0.
fn ecm_fanin() -> String {
    let mut s = header("ecm-fanin");
    s.push_str(
        r#"[switch]
profile = "small"
lossless_priorities = [3]

[switch.ecm]
priorities = [3]
qeq_bytes = 16384
sf_bytes = 20000
sr_bytes = 10000

[ecm_rp]
fine_limiters = 4

[run]
cycles = 400_000
seed = 1
expect_lossless = true
"#,
    );
    three_into_port_7(&mut s, 3, r#""constant""#);
    s.push_str(
        r#"
# The innocent flow: half line rate into port 6.
[[flows]]
src = 4
dst = 6
prio = 3
size_bytes = 1500
pattern = "constant"
rate_gbps = 50
"#,
    );
    s
}

/// DSH's Fig. 12 (seed 000, section V; docs/fabric.md): `LeafSpine::dsh()` (hosts 0-63
/// under leaves L0-L3 = 64-67, spines S0, S1 = 68, 69) with S0-L3 and S1-L0 failed, so
/// the four fan-ins close the cycle S0 -> L1 -> S1 -> L2 -> S0. Each fan-in: 8 hosts of
/// one leaf send Hadoop-sized flows (ns3-datacenter's CDF) with Poisson arrivals to the
/// last host of the other leaf, together at load 0.5 of its 100G link (0.5 / 8 of each
/// sender's link). DCQCN on the lossless class 3 with the switch's ECN marking on it.
/// Short by default (5 ms; the paper runs 100 ms).
fn dsh_deadlock() -> String {
    dsh_leaf_spine("dsh-deadlock", "", "dcqcn")
}

/// `dsh-deadlock` with PowerTCP on class 3, its INT records stamped by every switch.
fn dsh_deadlock_powertcp() -> String {
    dsh_leaf_spine("dsh-deadlock-powertcp", "int = true\n", "powertcp")
}

/// The network of `dsh-deadlock`, `switch` added to its `[switch]` and `transport` on
/// class 3.
fn dsh_leaf_spine(name: &str, switch: &str, transport: &str) -> String {
    const FAN_IN: u32 = 8;
    let mut s = header(name);
    s.push_str(
        r#"[switch]
profile = "tomahawk"
policy = "sih"
lossless_priorities = [3]
buffer_bytes = 4194304
"#,
    );
    s.push_str(switch);
    s.push_str(
        r#"
[switch.ecn]
priorities = [3]

[run]
cycles = 5_000_000

[fabric]
failed_links = [[68, 67], [69, 64]]

[fabric.leaf_spine]
leaves = 4
spines = 2
hosts_per_leaf = 16
host_link_gbps = 100
host_link_delay_ns = 2000
fabric_link_gbps = 400
fabric_link_delay_ns = 2000

[[fabric.transport]]
pg = 3
"#,
    );
    let _ = writeln!(s, "{transport} = {{}}");
    for (seed, (from, to)) in [(0u32, 3u32), (3, 0), (1, 2), (2, 1)]
        .into_iter()
        .enumerate()
    {
        let senders: Vec<String> = (0..FAN_IN).map(|i| (from * 16 + i).to_string()).collect();
        let _ = write!(
            s,
            "\n[[fabric.workload]]\nkind = \"poisson\"\ncdf = \"hadoop\"\nbase = \"host-link\"\n\
             load = {}\nduration_us = 5000\nfrom = [{}]\nto = [{}]\nseed = {}\n",
            0.5 / FAN_IN as f64,
            senders.join(", "),
            to * 16 + 15,
            seed + 1
        );
    }
    s
}

/// DSH's Fig. 13a (seed 000, section V-A, "Collateral damage mitigation"; docs/fabric.md)
/// as an inline topology: hosts H0, H1 = 0, 1 under S0 = 28; R0, R1 = 2, 3 and H2-H25 =
/// 4-27 under S1 = 29; one link S0-S1; every link 100G, 2 us. F0 (H0 -> R0) and F1 (H1 ->
/// R1) are long DCQCN flows on the lossless class 3 sharing the link S0 -> S1; at 1 ms
/// H2-H25 each send 64 KB to R1, each within a microsecond. The switches are
/// `dsh-deadlock`'s with the paper's 16 MiB buffer and seven lossless queues per port.
/// 1.3 ms.
fn dsh_collateral_fabric() -> String {
    let mut s = header("dsh-collateral-fabric");
    s.push_str(
        r#"[switch]
profile = "tomahawk"
policy = "sih"
lossless_priorities = [0, 1, 2, 3, 4, 5, 6]
buffer_bytes = 16777216

[switch.ecn]
priorities = [3]

[run]
cycles = 1_300_000

[[fabric.transport]]
pg = 3
dcqcn = {}

[fabric.links]
nodes = 30
switches = [28, 29]
"#,
    );
    let hosts = |from: u32, to: u32| (from..to).map(|h| h.to_string()).collect::<Vec<_>>();
    let list: Vec<String> = [(0, 2, 28), (2, 28, 29)]
        .into_iter()
        .flat_map(|(from, to, switch)| {
            hosts(from, to)
                .into_iter()
                .map(move |h| format!("[{h}, {switch}, 100, 2000]"))
        })
        .chain(["[28, 29, 100, 2000]".to_string()])
        .collect();
    let _ = writeln!(s, "list = [\n    {},\n]", list.join(",\n    "));
    // F0 and F1 do not end within the run.
    for (src, dst) in [(0, 2), (1, 3)] {
        let _ = write!(
            s,
            "\n[[fabric.workload]]\nkind = \"fan_in\"\npg = 3\nreceiver = {dst}\nfrom = [{src}]\n\
             size_bytes = 17179869184\n"
        );
    }
    let _ = write!(
        s,
        "\n[[fabric.workload]]\nkind = \"fan_in\"\npg = 3\nreceiver = 3\nfrom = [{}]\n\
         size_bytes = 65536\nstart_us = 1000\njitter_ns = 1000\nseed = 1\n",
        hosts(4, 28).join(", ")
    );
    s
}

/// L2BM's evaluation (seed 002, section IV, Fig. 6; `Clos::l2bm()`): hosts 0-127, 32 under
/// each ToR; the first 16 of each ToR send RDMA (DCQCN, lossless class 3, load 0.4) to the
/// other RDMA hosts, the last 16 TCP (DCTCP, lossy class 1, load 0.8) to the other TCP
/// hosts, web search sizes, Poisson arrivals at the load of their 25G links. ECN on both
/// classes (DCQCN's RED curve). 1 ms by default.
fn l2bm_clos() -> String {
    let mut s = header("l2bm-clos");
    s.push_str(
        r#"[switch]
profile = "tomahawk"
# A ToR has 32 servers and 2 aggregation switches.
ports = 34
policy = "l2bm"
lossless_priorities = [3]
buffer_bytes = 4194304

[switch.ecn]
priorities = [1, 3]

[run]
cycles = 1_000_000

[fabric.clos]
pods = 2
tors_per_pod = 2
aggs_per_pod = 2
cores = 2
servers_per_tor = 32
host_link_gbps = 25
host_link_delay_ns = 1000
tor_agg_link_gbps = 100
tor_agg_link_delay_ns = 1000
agg_core_link_gbps = 100
agg_core_link_delay_ns = 5000

[[fabric.transport]]
pg = 3
dcqcn = {}

[[fabric.transport]]
pg = 1
tcp = { cc = "dctcp" }
"#,
    );
    let hosts = |first: u32| -> String {
        let v: Vec<String> = (0..4)
            .flat_map(|tor| (0..16).map(move |i| (tor * 32 + first + i).to_string()))
            .collect();
        v.join(", ")
    };
    for (pg, load, first) in [(3, 0.4, 0), (1, 0.8, 16)] {
        let _ = write!(
            s,
            "\n[[fabric.workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nbase = \"host-link\"\n\
             load = {load}\nduration_us = 1000\npg = {pg}\nseed = {pg}\nfrom = [{h}]\nto = [{h}]\n",
            h = hosts(first)
        );
    }
    s
}

/// ns3-datacenter's PowerTCP workload example (`simulator/ns-3.39/examples/PowerTCP/
/// powertcp-evaluation-workload.cc`, commit 6ddb4a40f4db1c22f53bcf7d341f9da621d27816) as
/// the ns-3 anchor's `leafspine.sh` runs it: `topology-256.txt` (`Clos::ns3_datacenter_256()`,
/// hosts 0-255, ToRs 256-263, aggregation 264-271, cores 272-275), every server sending
/// (`LEAF_COUNT=8`), web search sizes, Poisson arrivals from 100 us (`START_US`) at load 0.8
/// as the example defines it (lines 1262 and 1270: `load * LEAF_SERVER_CAPACITY / oversubRatio`
/// per server, i.e. of the ToR uplinks' capacity shared by its servers: `base =
/// "tor-uplinks"`). The switches as its `config-burst.txt` and lines 1115-1141 set them:
/// 4 MiB buffers, DT alpha 1/8, lossless class 3, 1000-byte packets (`PACKET_PAYLOAD_SIZE`),
/// RED marking at Kmin/Kmax 100/400 KB on 25G ports and 400/1600 KB on 100G ports, Pmax 0.2
/// (`KMIN_MAP`, `KMAX_MAP`, `PMAX_MAP`; here per layer: a ToR takes its host ports' curve,
/// since one curve is kept per class). DCQCN with the config's `RATE_AI` 50 Mb/s, `RATE_HAI`
/// 100 Mb/s, `MIN_RATE` 100 Mb/s, `EWMA_GAIN` 1/256, `ALPHA_RESUME_INTERVAL` 1 us, `RP_TIMER`
/// 900 us and `FAST_RECOVERY_TIMES` 1; its `RATE_DECREASE_INTERVAL` (at most one cut per
/// 4 us) as the receiver's CNP interval `N` = 4 us. 10 ms of arrivals after the idle start;
/// `--set run.cycles=N` shortens the run (flows due after it do not start).
fn leafspine_256_websearch() -> String {
    let mut s = header("leafspine-256-websearch");
    s.push_str(
        r#"[switch]
profile = "tomahawk"
# A ToR has 32 servers and 2 aggregation switches.
ports = 34
policy = "sih"
lossless_priorities = [3]
buffer_bytes = 4194304
alpha_log2 = -3
mtu_bytes = 1000
# The 100G ports' curve (aggregation and core switches).
ecn = { priorities = [3], kmin = 400000, kmax = 1600000, pmax = 0.2 }

[run]
cycles = 10_100_000

# ToRs: their host ports' (25G) curve.
[[fabric.switch]]
layer = 1
ecn = { priorities = [3], kmin = 100000, kmax = 400000, pmax = 0.2 }

[fabric.clos]
pods = 4
tors_per_pod = 2
aggs_per_pod = 2
cores = 4
servers_per_tor = 32
host_link_gbps = 25
host_link_delay_ns = 1000
tor_agg_link_gbps = 100
tor_agg_link_delay_ns = 1000
agg_core_link_gbps = 100
agg_core_link_delay_ns = 5000

[[fabric.transport]]
pg = 3
dcqcn = { g = 0.00390625, k_us = 1, t_us = 900, f = 1, r_ai_mbps = 50, r_hai_mbps = 100, min_rate_mbps = 100, n_us = 4 }

[[fabric.workload]]
kind = "poisson"
cdf = "websearch"
base = "tor-uplinks"
load = 0.8
start_us = 100
duration_us = 10000
seed = 7
"#,
    );
    s
}

/// DSH's benchmark traffic (seed 000, section V-B; docs/fabric.md) on its leaf-spine: 16
/// leaves (hosts 0-255, 16 each; leaves 256-271, spines 272-287), every link 100G and 2 us.
/// The switches are `dsh-collateral-fabric`'s (tomahawk: 16 MiB, seven lossless queues per
/// port, SIH) with ECN on every lossless class, which all run DCQCN. Background: web
/// search sizes, one-to-one between random hosts, Poisson arrivals at load 0.6 of the ToR
/// uplinks, each flow on one of classes 0-2 and 4-6 drawn at random; fan-in: bursts of 16
/// senders from racks other than a random receiver's, 64 KB each, Poisson at load 0.3, on
/// class 3: together the paper's total load 0.9. Short by default: 200 us of arrivals in
/// a 300 us run.
fn dsh_leafspine() -> String {
    dsh_benchmark(
        "dsh-leafspine",
        "",
        "[fabric.leaf_spine]\nleaves = 16\nspines = 16\nhosts_per_leaf = 16\nhost_link_gbps = 100\n\
         host_link_delay_ns = 2000\nfabric_link_gbps = 100\nfabric_link_delay_ns = 2000\n",
        200,
        300,
    )
}

/// `dsh-leafspine`'s switches and traffic on the k = 16 fat-tree (320 switches, 1024
/// hosts), each switch with the 16 ports it has. 50 us of arrivals in a 100 us run.
fn dsh_fattree() -> String {
    dsh_benchmark(
        "dsh-fattree",
        "ports = 16\n",
        "[fabric.fat_tree]\nk = 16\nhost_link_gbps = 100\nfabric_link_gbps = 100\nlink_delay_ns = 2000\n",
        50,
        100,
    )
}

/// The switches (`switch` added to `[switch]`), transports and workloads of DSH's benchmark
/// on `topology` (a `[fabric.*]` generator table): arrivals over `arrivals_us`, a run of
/// `run_us`.
fn dsh_benchmark(
    name: &str,
    switch: &str,
    topology: &str,
    arrivals_us: u64,
    run_us: u64,
) -> String {
    let mut s = header(name);
    s.push_str(
        r#"[switch]
profile = "tomahawk"
policy = "sih"
"#,
    );
    s.push_str(switch);
    let _ = write!(
        s,
        "\n[switch.ecn]\npriorities = [0, 1, 2, 3, 4, 5, 6]\n\n[run]\ncycles = {}\n\n{topology}",
        run_us * 1000
    );
    for pg in 0..7 {
        let _ = write!(s, "\n[[fabric.transport]]\npg = {pg}\ndcqcn = {{}}\n");
    }
    let _ = write!(
        s,
        "\n[[fabric.workload]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.6\n\
         pgs = [0, 1, 2, 4, 5, 6]\nduration_us = {arrivals_us}\nseed = 1\n\
         \n[[fabric.workload]]\nkind = \"fan_in_bursts\"\npg = 3\nsenders = 16\n\
         size_bytes = 65536\nload = 0.3\nduration_us = {arrivals_us}\nseed = 2\n"
    );
    s
}
