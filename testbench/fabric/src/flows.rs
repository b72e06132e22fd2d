//! The ns-3 flow file of HPCC's and ns3-datacenter's simulators.
//!
//! Line 1 is `flow_num`; then one flow a line, `src dst pg dport size start_time`
//! (`simulation/scratch/third.cc` line 131: `flowf >> src >> dst >> pg >> dport >>
//! maxPacketCount >> start_time`; e.g. HPCC's `simulation/mix/flow.txt`,
//! `2 1 3 100 200000000 2`):
//! - `src`, `dst`: host ids of the topology (`third.cc` line 132 asserts both are hosts);
//! - `pg`: the priority group, the switch queue the flow's packets use (`qIndex =
//!   ch.udp.pg`, `switch-node.cc` line 116), 0-7 (`qCnt = 8`, `qbb-net-device.h` line 40);
//!   the generators write 3, as HPCC's `traffic_gen.py` and ns3-datacenter do;
//! - `dport`: the destination port; the source port is not in the file, the simulator
//!   numbers each host pair's flows from 10000 (`third.cc` lines 137, 988; [`five_tuples`]);
//! - `size`: bytes to send (`maxPacketCount` is the `RdmaClientHelper`'s `size`,
//!   `rdma-client-helper.cc` line 31; ns3-datacenter reads it as 64 bits,
//!   `powertcp-evaluation-workload.cc` line 155, and writes 10^12 in `flow-burstExp-256.txt`);
//! - `start_time`: seconds, a decimal (`traffic_gen.py` writes nine digits).
//!
//! The simulator reads the flows in order and schedules the next one at its start
//! (`ScheduleFlowInputs`, `third.cc` lines 135-153), so start times must not decrease
//! (HPCC's `flow.txt` ends: "Please order the flows in ascending start_time!"). It reads
//! exactly `flow_num` flows and ignores the rest of the file (that `flow.txt` declares 2,
//! lists 256 and ends with a note on the format): [`FlowFile::ignored_lines`] counts the
//! non-blank lines left so a command line can say so.

use crate::input::{field_error, numbered_lines, read_bounded, FieldError, InputError};
use crate::routing::{FiveTuple, UDP};
use crate::topology::{NodeId, Topology};
use crate::units::Picos;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// The largest flow file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 << 20;
/// The most flows a file may declare.
pub const MAX_FLOWS: u32 = 4_000_000;
/// Priority groups 0..PRIORITY_GROUPS.
pub const PRIORITY_GROUPS: u8 = 8;
/// The first source port of each host pair (`third.cc` line 988).
pub const FIRST_SPORT: u16 = 10_000;

/// One flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    pub src: NodeId,
    pub dst: NodeId,
    pub pg: u8,
    pub dport: u16,
    /// Bytes.
    pub size: u64,
    pub start: Picos,
}

/// The flows of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowFile {
    pub flows: Vec<Flow>,
    /// Non-blank lines after the `flow_num` flows, which the simulators do not read.
    pub ignored_lines: usize,
}

impl FlowFile {
    /// Reads a flow file of at most [`MAX_FILE_BYTES`] for the topology.
    pub fn read(path: &Path, topo: &Topology) -> Result<FlowFile, InputError> {
        Ok(FlowFile::parse(&read_bounded(path, MAX_FILE_BYTES)?, topo)?)
    }

    /// Parses the text of a flow file (see the module's doc for the format).
    pub fn parse(text: &str, topo: &Topology) -> Result<FlowFile, FieldError> {
        let mut lines = numbered_lines(text);
        let (count_line, count) = lines
            .next()
            .ok_or_else(|| field_error(1, "flow_num", "the file is empty"))?;
        let flow_num = match count[..] {
            [text] => text
                .parse::<u32>()
                .ok()
                .filter(|&n| n <= MAX_FLOWS)
                .ok_or_else(|| {
                    field_error(
                        count_line,
                        "flow_num",
                        format!("`{text}`; allowed: a whole number 0..={MAX_FLOWS}"),
                    )
                })?,
            _ => {
                return Err(field_error(
                    count_line,
                    "flow_num",
                    format!("{} fields; allowed: 1, the number of flows", count.len()),
                ))
            }
        };
        // A flow line has at least 12 bytes (`0 1 0 0 1 0\n`): a small file declaring many
        // flows does not reserve room for them.
        let mut flows = Vec::with_capacity((flow_num as usize).min(text.len() / 12));
        let mut last_line = count_line;
        for _ in 0..flow_num {
            let (line, fields) = lines.next().ok_or_else(|| {
                field_error(
                    last_line + 1,
                    "flow_num",
                    format!(
                        "{flow_num} flows declared on line {count_line}, the file has {}",
                        flows.len()
                    ),
                )
            })?;
            let flow = parse_flow(line, &fields, topo)?;
            if let Some(previous) = flows.last().filter(|p: &&Flow| p.start > flow.start) {
                return Err(field_error(
                    line,
                    "start_time",
                    format!(
                        "{} is before the flow above's {}; allowed: start times that do not decrease",
                        flow.start.seconds_text(),
                        previous.start.seconds_text()
                    ),
                ));
            }
            flows.push(flow);
            last_line = line;
        }
        Ok(FlowFile {
            flows,
            ignored_lines: lines.count(),
        })
    }
}

fn parse_flow(line: usize, fields: &[&str], topo: &Topology) -> Result<Flow, FieldError> {
    if fields.len() != 6 {
        return Err(field_error(
            line,
            "src",
            format!(
                "{} fields; allowed: 6, `src dst pg dport size start_time`",
                fields.len()
            ),
        ));
    }
    let host = |field, text: &str| {
        text.parse::<NodeId>()
            .ok()
            .filter(|&id| (id as usize) < topo.node_count() && !topo.is_switch(id))
            .ok_or_else(|| {
                field_error(
                    line,
                    field,
                    format!("`{text}` is not a host; allowed: the nodes 0..={} not on the topology's switch line", topo.node_count() - 1),
                )
            })
    };
    let src = host("src", fields[0])?;
    let dst = host("dst", fields[1])?;
    if dst == src {
        return Err(field_error(
            line,
            "dst",
            format!("{dst} is the src; allowed: another host"),
        ));
    }
    let pg = fields[2]
        .parse::<u8>()
        .ok()
        .filter(|&pg| pg < PRIORITY_GROUPS)
        .ok_or_else(|| {
            field_error(
                line,
                "pg",
                format!("`{}`; allowed: 0..={}", fields[2], PRIORITY_GROUPS - 1),
            )
        })?;
    let dport = fields[3].parse::<u16>().map_err(|_| {
        field_error(
            line,
            "dport",
            format!("`{}`; allowed: 0..=65535", fields[3]),
        )
    })?;
    let size = fields[4]
        .parse::<u64>()
        .ok()
        .filter(|&size| size > 0)
        .ok_or_else(|| {
            field_error(
                line,
                "size",
                format!("`{}`; allowed: bytes, 1..={}", fields[4], u64::MAX),
            )
        })?;
    let start = Picos::parse_seconds(fields[5]).ok_or_else(|| {
        field_error(
            line,
            "start_time",
            format!(
                "`{}`; allowed: seconds as a decimal (2.000000100), at most picosecond digits",
                fields[5]
            ),
        )
    })?;
    Ok(Flow {
        src,
        dst,
        pg,
        dport,
        size,
        start,
    })
}

/// The flows in the file format.
pub fn to_ns3(flows: &[Flow]) -> String {
    let mut out = format!("{}\n", flows.len());
    for flow in flows {
        let _ = writeln!(
            out,
            "{} {} {} {} {} {}",
            flow.src,
            flow.dst,
            flow.pg,
            flow.dport,
            flow.size,
            flow.start.seconds_text()
        );
    }
    out
}

/// The flows' 5-tuples as the simulator makes them: UDP, and source ports numbered per
/// host pair from [`FIRST_SPORT`] in file order, wrapping at 65535 as ns-3's `uint16_t` does.
pub fn five_tuples(flows: &[Flow]) -> Vec<FiveTuple> {
    let mut next_sport: HashMap<(NodeId, NodeId), u16> = HashMap::new();
    flows
        .iter()
        .map(|flow| {
            let sport = next_sport
                .entry((flow.src, flow.dst))
                .or_insert(FIRST_SPORT);
            let tuple = FiveTuple {
                src: flow.src,
                dst: flow.dst,
                sport: *sport,
                dport: flow.dport,
                protocol: UDP,
            };
            *sport = sport.wrapping_add(1);
            tuple
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::assert_field_errors;
    use proptest::prelude::*;

    fn random_flows() -> impl Strategy<Value = Vec<Flow>> {
        let flow = (
            0u32..3,
            1u32..3,
            0..PRIORITY_GROUPS,
            any::<u16>(),
            1..=u64::MAX,
            0u64..1 << 50,
        );
        proptest::collection::vec(flow, 0..20).prop_map(|fields| {
            let mut flows: Vec<Flow> = fields
                .into_iter()
                .map(|(src, step, pg, dport, size, start)| Flow {
                    src,
                    dst: (src + step) % 3,
                    pg,
                    dport,
                    size,
                    start: Picos(start),
                })
                .collect();
            flows.sort_by_key(|f| f.start);
            flows
        })
    }

    proptest! {
        /// Any valid list of flows written out reads back the same.
        #[test]
        fn written_flows_read_back(flows in random_flows()) {
            let file = FlowFile::parse(&to_ns3(&flows), &star()).unwrap();
            prop_assert_eq!(file, FlowFile { flows, ignored_lines: 0 });
        }
    }

    /// Hosts 0-2 under switch 3.
    fn star() -> Topology {
        Topology::parse("4 1 3\n3\n0 3 100Gbps 1us 0\n1 3 100Gbps 1us 0\n2 3 100Gbps 1us 0\n")
            .unwrap()
    }

    #[test]
    fn hpccs_example_reads_its_declared_flows_only() {
        // The shape of HPCC's simulation/mix/flow.txt: flow_num 2, more flows after, and a
        // note on the format at the end.
        let text = "2\n2 1 3 100 200000000 2\n0 1 3 100 200000000 2\n0 2 3 100 150000000 2.5\n\n\
                    First line: # of flows\nsrc0 dst0 3 dst_port0 size0 start_time0\n\
                    src1 dst1 3 dst_port1 size1 start_time1\n...\n\n\
                    Please order the flows in ascending start_time!\n";
        let file = FlowFile::parse(text, &star()).unwrap();
        assert_eq!(file.ignored_lines, 6);
        assert_eq!(file.flows.len(), 2);
        assert_eq!(
            file.flows[0],
            Flow {
                src: 2,
                dst: 1,
                pg: 3,
                dport: 100,
                size: 200_000_000,
                start: Picos(2_000_000_000_000),
            }
        );
    }

    #[test]
    fn written_files_read_back() {
        let text = "3\n0 1 3 100 1000 2.000000000\n0 1 3 100 1000000000000 2.000000100\n1 0 0 7 1 2.000000100\n";
        let file = FlowFile::parse(text, &star()).unwrap();
        assert_eq!(to_ns3(&file.flows), text);
    }

    #[test]
    fn source_ports_count_per_host_pair_from_10000() {
        let file = FlowFile::parse(
            "3\n0 1 3 100 10 1\n0 2 3 100 10 1\n0 1 3 100 10 1\n",
            &star(),
        )
        .unwrap();
        let sports: Vec<u16> = five_tuples(&file.flows).iter().map(|t| t.sport).collect();
        assert_eq!(sports, vec![10_000, 10_000, 10_001]);
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let cases: &[(&str, usize, &str, &str)] = &[
            ("", 1, "flow_num", "empty"),
            ("x\n", 1, "flow_num", "0..=4000000"),
            ("9999999\n", 1, "flow_num", "0..=4000000"),
            ("1 2\n", 1, "flow_num", "2 fields"),
            ("2\n0 1 3 100 10 1\n", 3, "flow_num", "the file has 1"),
            ("1\n0 1 3 100 10\n", 2, "src", "5 fields"),
            ("1\n3 1 3 100 10 1\n", 2, "src", "`3` is not a host"),
            ("1\n0 9 3 100 10 1\n", 2, "dst", "`9` is not a host"),
            ("1\n0 0 3 100 10 1\n", 2, "dst", "is the src"),
            ("1\n0 1 8 100 10 1\n", 2, "pg", "0..=7"),
            ("1\n0 1 3 70000 10 1\n", 2, "dport", "0..=65535"),
            ("1\n0 1 3 100 0 1\n", 2, "size", "1..="),
            ("1\n0 1 3 100 1.5 1\n", 2, "size", "1..="),
            ("1\n0 1 3 100 10 soon\n", 2, "start_time", "seconds"),
            (
                "2\n0 1 3 100 10 2\n\n1 0 3 100 10 1.5\n",
                4,
                "start_time",
                "before the flow above's 2.000000000",
            ),
        ];
        assert_field_errors(cases, |text| FlowFile::parse(text, &star()));
    }
}
