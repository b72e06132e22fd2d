//! The network: nodes (hosts and switches) and the links between them, read from the ns-3
//! data-centre topology file as HPCC's and ns3-datacenter's simulators write it.
//!
//! The format (whitespace-separated fields, one record a line):
//! - line 1: `nodes switches links` (HPCC, `simulation/scratch/third.cc` line 697:
//!   `topof >> node_num >> switch_num >> link_num`; e.g. `simulation/mix/topology.txt`) or
//!   `nodes switches tors links` (ns3-datacenter,
//!   `simulator/ns-3.39/examples/PowerTCP/powertcp-evaluation-workload.cc` line 940, which
//!   reads `tors` and does not use it; e.g. `examples/PowerTCP/topology-256.txt`);
//! - line 2: the ids of the switches (`third.cc` lines 704-708); every other node is a host;
//! - then one link a line, `src dst rate delay error_rate` (`third.cc` line 758), e.g.
//!   `0 256 25000000000.0 1us 0` or `0 1 100Gbps 0.001ms 0`.
//!
//! The simulators read exactly `links` link lines and ignore what follows; HPCC's own
//! `topology.txt` ends with a three-line note on the format. Text after the last link is
//! accepted here only if it is not a link (five fields starting with two whole numbers): a
//! link line beyond the count means the count disagrees with the file, and that is an error.
//!
//! **Ports.** A node's ports are its links in file order: ns-3 adds a device to both ends of
//! each link as it reads it (`qbb.Install(snode, dnode)`, `third.cc` line 786), so port `p`
//! here is ns-3's device `p + 1` (device 0 is the loopback).
//!
//! **Hosts** have one link: the simulators give a host its address on interface 1 only
//! (`ipv4->AddAddress(1, ...)`, `third.cc` lines 790, 795) and route through hosts never
//! (`CalculateRoute`, `third.cc` lines 252-254). Two links between the same pair of nodes are
//! refused: ns-3's neighbour table keeps one (`nbr2if[snode][dnode]`, `third.cc` line 799).

use crate::input::{field_error, numbered_lines, read_bounded, FieldError, InputError};
use crate::units::{BitRate, Picos, RATE_FORMS, TIME_FORMS};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// A node's id, as in the file (hosts and switches share one numbering).
pub type NodeId = u32;

/// A link's index in file order.
pub type LinkId = usize;

/// The largest topology file read, in bytes (a k = 64 fat-tree's file is about 4 MB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// The most nodes a file may declare.
pub const MAX_NODES: u32 = 1 << 20;
/// The most links a file may declare.
pub const MAX_LINKS: u32 = 1 << 22;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

/// A full-duplex link: the same rate and delay in both directions, as ns-3's point-to-point
/// channel has them.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub src: NodeId,
    pub dst: NodeId,
    pub rate: BitRate,
    pub delay: Picos,
    /// ns-3's receive error model's packet error rate, 0 to 1.
    pub error_rate: f64,
    /// False once the link is failed ([`Topology::fail_links`]): routing avoids it, and it
    /// keeps its port at both ends (ns-3's `TakeDownLink`, `third.cc` line 304).
    pub up: bool,
}

impl Link {
    /// The node at the other end from `node`.
    pub fn peer(&self, node: NodeId) -> NodeId {
        if node == self.src {
            self.dst
        } else {
            self.src
        }
    }
}

/// A failed link that is not in the topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed link ({a}, {b}): there is no link between {a} and {b}")]
pub struct NotALink {
    pub a: NodeId,
    pub b: NodeId,
}

/// The switch ids and counts of lines 1-2, before any link.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub nodes: u32,
    /// In the order of line 2.
    pub switches: Vec<NodeId>,
    /// ns3-datacenter's third count, if the first line has it.
    pub tors: Option<u32>,
}

/// A validated network.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    header: Header,
    kinds: Vec<NodeKind>,
    links: Vec<Link>,
    /// Per node, its links in file order: its ports.
    ports: Vec<Vec<LinkId>>,
}

impl Topology {
    /// Reads a topology file of at most [`MAX_FILE_BYTES`].
    pub fn read(path: &Path) -> Result<Topology, InputError> {
        Ok(Topology::parse(&read_bounded(path, MAX_FILE_BYTES)?)?)
    }

    /// Parses the text of a topology file (see the module's doc for the format).
    pub fn parse(text: &str) -> Result<Topology, FieldError> {
        let mut lines = numbered_lines(text);
        let (count_line, counts) = lines
            .next()
            .ok_or_else(|| field_error(1, "nodes", "the file is empty"))?;
        let counts = parse_counts(count_line, &counts)?;
        let (nodes, switches, links) = counts.check(count_line)?;
        let tors = counts.tors.map(|tors| tors as u32);
        let (switch_line, ids) = lines.next().ok_or_else(|| {
            field_error(
                count_line + 1,
                "switch id",
                "the file ends before the line of switch ids",
            )
        })?;
        let switch_ids = parse_switch_ids(switch_line, &ids, nodes, switches)?;
        let header = Header {
            nodes,
            switches: switch_ids,
            tors,
        };
        let mut builder = Builder::new(header, switch_line);
        let mut last_line = switch_line;
        for _ in 0..links {
            let (line, fields) = lines.next().ok_or_else(|| {
                field_error(
                    last_line + 1,
                    "links",
                    format!(
                        "the first line declares {links} links, the file has {}",
                        builder.links.len()
                    ),
                )
            })?;
            builder.push(line, parse_link(line, &fields, nodes)?)?;
            last_line = line;
        }
        // A link line is five fields that start with two whole numbers; HPCC's note starts
        // `src0 dst0`.
        let is_link = |fields: &[&str]| {
            fields.len() == 5 && fields[..2].iter().all(|f| f.parse::<u64>().is_ok())
        };
        if let Some((line, fields)) = lines.find(|(_, fields)| is_link(fields)) {
            return Err(field_error(
                line,
                "links",
                format!(
                    "the first line declares {links} links, but this line is one more ({})",
                    fields.join(" ")
                ),
            ));
        }
        builder.finish()
    }

    /// Builds a topology from its parts, with the checks of [`Topology::parse`] (the counts
    /// and switch ids included); errors give the lines the parts would have in the file (a
    /// link's is its index + 3).
    pub fn new(header: Header, links: Vec<Link>) -> Result<Topology, FieldError> {
        let nodes = header.nodes;
        let counts = Counts {
            nodes: u64::from(nodes),
            switches: header.switches.len() as u64,
            tors: header.tors.map(u64::from),
            links: links.len() as u64,
        };
        counts.check(1)?;
        check_switch_ids(2, &header.switches, nodes)?;
        let mut builder = Builder::new(header, 2);
        for (index, link) in links.into_iter().enumerate() {
            let line = index + 3;
            for (field, id) in [("src", link.src), ("dst", link.dst)] {
                check_node(line, field, id, nodes)?;
            }
            builder.push(line, link)?;
        }
        builder.finish()
    }

    /// The topology in the file format, with ns3-datacenter's four counts if it has `tors`.
    /// Failed links are written like the others (the file has no field for them).
    pub fn to_ns3(&self) -> String {
        let header = &self.header;
        let mut out = match header.tors {
            Some(tors) => format!(
                "{} {} {} {}\n",
                header.nodes,
                header.switches.len(),
                tors,
                self.links.len()
            ),
            None => format!(
                "{} {} {}\n",
                header.nodes,
                header.switches.len(),
                self.links.len()
            ),
        };
        let ids: Vec<String> = header.switches.iter().map(NodeId::to_string).collect();
        out.push_str(&ids.join(" "));
        out.push('\n');
        for link in &self.links {
            let _ = writeln!(
                out,
                "{} {} {} {} {}",
                link.src, link.dst, link.rate, link.delay, link.error_rate
            );
        }
        out
    }

    /// Fails the links between the given pairs (either order): routing then avoids them.
    pub fn fail_links(&mut self, pairs: &[(NodeId, NodeId)]) -> Result<(), NotALink> {
        for &(a, b) in pairs {
            let link = self
                .links
                .iter_mut()
                .find(|link| (link.src, link.dst) == (a, b) || (link.src, link.dst) == (b, a))
                .ok_or(NotALink { a, b })?;
            link.up = false;
        }
        Ok(())
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.kinds.len()
    }

    /// The counts and switch ids of the first two lines.
    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn kind(&self, node: NodeId) -> NodeKind {
        self.kinds[node as usize]
    }

    pub fn is_switch(&self, node: NodeId) -> bool {
        self.kind(node) == NodeKind::Switch
    }

    /// The hosts, in id order.
    pub fn hosts(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.kinds.len() as NodeId).filter(|&node| !self.is_switch(node))
    }

    /// The switches, in the order of the file's second line.
    pub fn switches(&self) -> &[NodeId] {
        &self.header.switches
    }

    /// The links, in file order.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// A node's ports: its links in file order.
    pub fn ports(&self, node: NodeId) -> &[LinkId] {
        &self.ports[node as usize]
    }

    /// The node at the far end of a node's port.
    pub fn peer(&self, node: NodeId, port: usize) -> NodeId {
        self.links[self.ports(node)[port]].peer(node)
    }

    /// The switch a host is attached to (its ToR).
    pub fn tor_of(&self, host: NodeId) -> NodeId {
        self.peer(host, 0)
    }
}

/// The counts of line 1, each a whole number.
struct Counts {
    nodes: u64,
    switches: u64,
    tors: Option<u64>,
    links: u64,
}

fn parse_counts(line: usize, fields: &[&str]) -> Result<Counts, FieldError> {
    let names: &[&'static str] = match fields.len() {
        3 => &["nodes", "switches", "links"],
        4 => &["nodes", "switches", "tors", "links"],
        n => {
            return Err(field_error(
                line,
                "nodes",
                format!(
                    "{n} counts; allowed: `nodes switches links` or `nodes switches tors links`"
                ),
            ))
        }
    };
    let mut values = [0u64; 4];
    for ((name, text), value) in names.iter().zip(fields).zip(&mut values) {
        *value = text
            .parse::<u64>()
            .map_err(|_| field_error(line, name, format!("`{text}`; allowed: a whole number")))?;
    }
    let [nodes, switches, third, fourth] = values;
    Ok(match fields.len() {
        4 => Counts {
            nodes,
            switches,
            tors: Some(third),
            links: fourth,
        },
        _ => Counts {
            nodes,
            switches,
            tors: None,
            links: third,
        },
    })
}

impl Counts {
    /// The limits and the counts' order (switches among the nodes, ToRs among the
    /// switches), checked before anything of their size is allocated.
    fn check(&self, line: usize) -> Result<(u32, u32, u32), FieldError> {
        let within = |name, value: u64, limit: u64, what: &str| {
            u32::try_from(value)
                .ok()
                .filter(|&v| u64::from(v) <= limit)
                .ok_or_else(|| {
                    field_error(line, name, format!("{value}; allowed: 0..={limit}{what}"))
                })
        };
        let nodes = within("nodes", self.nodes, u64::from(MAX_NODES), "")?;
        let switches = within("switches", self.switches, u64::from(nodes), " (the nodes)")?;
        if let Some(tors) = self.tors {
            within("tors", tors, u64::from(switches), " (the switches)")?;
        }
        let links = within("links", self.links, u64::from(MAX_LINKS), "")?;
        Ok((nodes, switches, links))
    }
}

fn check_node(
    line: usize,
    field: &'static str,
    id: NodeId,
    nodes: u32,
) -> Result<NodeId, FieldError> {
    if id < nodes {
        Ok(id)
    } else {
        Err(field_error(
            line,
            field,
            format!(
                "unknown node {id}; allowed: 0..={} (the first line declares {nodes} nodes)",
                i64::from(nodes) - 1
            ),
        ))
    }
}

fn parse_node(
    line: usize,
    field: &'static str,
    text: &str,
    nodes: u32,
) -> Result<NodeId, FieldError> {
    let id = text.parse::<NodeId>().map_err(|_| {
        field_error(
            line,
            field,
            format!(
                "`{text}` is not a node id; allowed: 0..={}",
                i64::from(nodes) - 1
            ),
        )
    })?;
    check_node(line, field, id, nodes)
}

fn parse_switch_ids(
    line: usize,
    fields: &[&str],
    nodes: u32,
    switches: u32,
) -> Result<Vec<NodeId>, FieldError> {
    if fields.len() != switches as usize {
        return Err(field_error(
            line,
            "switch id",
            format!(
                "{} ids; the first line declares {switches} switches",
                fields.len()
            ),
        ));
    }
    let ids = fields
        .iter()
        .map(|text| parse_node(line, "switch id", text, nodes))
        .collect::<Result<Vec<_>, _>>()?;
    check_switch_ids(line, &ids, nodes)?;
    Ok(ids)
}

fn check_switch_ids(line: usize, ids: &[NodeId], nodes: u32) -> Result<(), FieldError> {
    let mut seen = vec![false; nodes as usize];
    for &id in ids {
        check_node(line, "switch id", id, nodes)?;
        if std::mem::replace(&mut seen[id as usize], true) {
            return Err(field_error(
                line,
                "switch id",
                format!("switch {id} is listed twice"),
            ));
        }
    }
    Ok(())
}

fn parse_link(line: usize, fields: &[&str], nodes: u32) -> Result<Link, FieldError> {
    if fields.len() != 5 {
        return Err(field_error(
            line,
            "src",
            format!(
                "{} fields; allowed: 5, `src dst rate delay error_rate`",
                fields.len()
            ),
        ));
    }
    let src = parse_node(line, "src", fields[0], nodes)?;
    let dst = parse_node(line, "dst", fields[1], nodes)?;
    let rate = BitRate::parse(fields[2]).ok_or_else(|| {
        field_error(
            line,
            "rate",
            format!("`{}`; allowed: {RATE_FORMS}", fields[2]),
        )
    })?;
    let delay = Picos::parse_delay(fields[3]).ok_or_else(|| {
        field_error(
            line,
            "delay",
            format!("`{}`; allowed: {TIME_FORMS}", fields[3]),
        )
    })?;
    let error_rate = fields[4]
        .parse::<f64>()
        .ok()
        .filter(|rate| (0.0..=1.0).contains(rate))
        .ok_or_else(|| {
            field_error(
                line,
                "error_rate",
                format!("`{}`; allowed: a number 0..=1", fields[4]),
            )
        })?;
    Ok(Link {
        src,
        dst,
        rate,
        delay,
        error_rate,
        up: true,
    })
}

/// Adds links one at a time with the checks that need the links before them.
struct Builder {
    header: Header,
    switch_line: usize,
    kinds: Vec<NodeKind>,
    links: Vec<Link>,
    ports: Vec<Vec<LinkId>>,
    /// The line of the link between each pair (smaller id first).
    pair_lines: HashMap<(NodeId, NodeId), usize>,
}

impl Builder {
    fn new(header: Header, switch_line: usize) -> Builder {
        let mut kinds = vec![NodeKind::Host; header.nodes as usize];
        for &id in &header.switches {
            kinds[id as usize] = NodeKind::Switch;
        }
        Builder {
            ports: vec![Vec::new(); header.nodes as usize],
            header,
            switch_line,
            kinds,
            links: Vec::new(),
            pair_lines: HashMap::new(),
        }
    }

    fn push(&mut self, line: usize, link: Link) -> Result<(), FieldError> {
        let (src, dst) = (link.src, link.dst);
        if src == dst {
            return Err(field_error(
                line,
                "dst",
                format!("{dst} is the src; a link joins two nodes"),
            ));
        }
        if self.kinds[src as usize] == NodeKind::Host && self.kinds[dst as usize] == NodeKind::Host
        {
            return Err(field_error(
                line,
                "dst",
                format!("{src} and {dst} are both hosts; a link needs a switch at one end"),
            ));
        }
        if let Some(first) = self.pair_lines.insert((src.min(dst), src.max(dst)), line) {
            return Err(field_error(
                line,
                "dst",
                format!("a second link between {src} and {dst} (the first is on line {first}); one link per pair"),
            ));
        }
        for (field, node) in [("src", src), ("dst", dst)] {
            if self.kinds[node as usize] == NodeKind::Host && !self.ports[node as usize].is_empty()
            {
                let first = self.links[self.ports[node as usize][0]].clone();
                return Err(field_error(
                    line,
                    field,
                    format!(
                        "host {node} already has a link (to {}); a host has one link",
                        first.peer(node)
                    ),
                ));
            }
        }
        self.ports[src as usize].push(self.links.len());
        self.ports[dst as usize].push(self.links.len());
        self.links.push(link);
        Ok(())
    }

    fn finish(self) -> Result<Topology, FieldError> {
        if let Some(&switch) = self
            .header
            .switches
            .iter()
            .find(|&&id| self.ports[id as usize].is_empty())
        {
            return Err(field_error(
                self.switch_line,
                "switch id",
                format!("switch {switch} has no link; a switch needs at least one port"),
            ));
        }
        if let Some(host) = (0..self.header.nodes).find(|&id| {
            self.kinds[id as usize] == NodeKind::Host && self.ports[id as usize].is_empty()
        }) {
            return Err(field_error(
                self.switch_line,
                "switch id",
                format!(
                    "node {host} is not a switch, so a host, and has no link; a host has one link"
                ),
            ));
        }
        Ok(Topology {
            header: self.header,
            kinds: self.kinds,
            links: self.links,
            ports: self.ports,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::assert_field_errors;

    /// One switch (2) and two hosts, in HPCC's three-count form.
    const SMALL: &str = "3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 1us 0\n";

    #[test]
    fn a_small_hpcc_file_reads_with_ports_in_file_order() {
        let topo = Topology::parse(SMALL).unwrap();
        assert_eq!(topo.node_count(), 3);
        assert_eq!(topo.switches(), &[2]);
        assert_eq!(topo.hosts().collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(topo.ports(2), &[0, 1]);
        assert_eq!(topo.peer(2, 1), 1);
        assert_eq!(topo.tor_of(1), 2);
        assert_eq!(topo.links()[1].delay, Picos::micros(1));
        assert_eq!(topo.header().tors, None);
    }

    #[test]
    fn hpccs_format_note_after_the_links_is_accepted() {
        let text = format!(
            "{SMALL}src0 dst0 rate delay error_rate\nsrc1 dst1 rate delay error_rate\n...\n"
        );
        assert_eq!(
            Topology::parse(&text).unwrap(),
            Topology::parse(SMALL).unwrap()
        );
    }

    #[test]
    fn written_files_read_back() {
        let topo = Topology::parse(SMALL).unwrap();
        let again = Topology::parse(&topo.to_ns3()).unwrap();
        assert_eq!(again, topo);
        let four = "3 1 1 2\n2\n0 2 25000000000.0 1us 0\n1 2 25000000000.0 1us 0.5\n";
        assert_eq!(Topology::parse(four).unwrap().to_ns3(), four);
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let cases: &[(&str, usize, &str, &str)] = &[
            ("", 1, "nodes", "empty"),
            ("3 1\n2\n", 1, "nodes", "2 counts"),
            ("x 1 2\n2\n", 1, "nodes", "a whole number"),
            ("1048577 1 2\n2\n", 1, "nodes", "0..=1048576"),
            ("3 1 99999999\n2\n", 1, "links", "0..=4194304"),
            ("3 4 2\n2\n", 1, "switches", "0..=3"),
            ("3 1 2 2\n2\n", 1, "tors", "0..=1"),
            ("3 1 2\n", 2, "switch id", "ends before"),
            ("3 1 2\n2 1\n", 2, "switch id", "2 ids"),
            ("3 1 2\n7\n", 2, "switch id", "unknown node 7"),
            ("3 2 2\n2 2\n", 2, "switch id", "listed twice"),
            ("3 1 2\n2\n0 9 1Gbps 1us 0\n", 3, "dst", "unknown node 9"),
            ("3 1 2\n2\n0 2 fast 1us 0\n", 3, "rate", "Gbps"),
            ("3 1 2\n2\n0 2 1Gbps 1 0\n", 3, "delay", "us"),
            ("3 1 2\n2\n0 2 1Gbps 1us 2\n", 3, "error_rate", "0..=1"),
            ("3 1 2\n2\n0 2 1Gbps 1us\n", 3, "src", "4 fields"),
            (
                "3 1 2\n2\n0 2 1Gbps 1us 0\n",
                4,
                "links",
                "declares 2 links, the file has 1",
            ),
            (
                "3 1 1\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n",
                4,
                "links",
                "one more",
            ),
            (
                "3 1 1\n2\n0 2 1Gbps 1us 0\nnote\n9 9 fast 1 x\n",
                5,
                "links",
                "one more (9 9 fast 1 x)",
            ),
            (
                "3 1 2\n2\n0 2 1Gbps 1us 0\n2 0 1Gbps 1us 0\n",
                4,
                "dst",
                "first is on line 3",
            ),
            (
                "3 1 2\n2\n0 2 1Gbps 1us 0\n0 1 1Gbps 1us 0\n",
                4,
                "dst",
                "both hosts",
            ),
            ("3 1 1\n2\n2 2 1Gbps 1us 0\n", 3, "dst", "is the src"),
            (
                "4 2 3\n2 3\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n0 3 1Gbps 1us 0\n",
                5,
                "src",
                "host 0 already",
            ),
            (
                "4 2 2\n2 3\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n",
                2,
                "switch id",
                "switch 3 has no link",
            ),
            (
                "4 1 2\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n",
                2,
                "switch id",
                "node 3 is not a switch",
            ),
        ];
        assert_field_errors(cases, Topology::parse);
    }

    #[test]
    fn failing_a_link_keeps_its_ports_and_unknown_pairs_are_errors() {
        let mut topo = Topology::parse(SMALL).unwrap();
        topo.fail_links(&[(2, 1)]).unwrap();
        assert!(topo.links()[0].up && !topo.links()[1].up);
        assert_eq!(topo.ports(2).len(), 2);
        let err = topo.fail_links(&[(0, 1)]).unwrap_err();
        assert_eq!(err, NotALink { a: 0, b: 1 });
    }

    #[test]
    fn parts_get_the_checks_of_the_file() {
        let topo = Topology::parse(SMALL).unwrap();
        let rebuilt = Topology::new(topo.header().clone(), topo.links().to_vec()).unwrap();
        assert_eq!(rebuilt, topo);
        let cases = [
            (vec![2, 2], 2, "switch id", "listed twice"),
            (vec![3], 2, "switch id", "unknown node 3"),
            (vec![0, 1, 2, 2], 1, "switches", "0..=3"),
        ];
        for (switches, line, field, needle) in cases {
            let header = Header {
                switches,
                ..topo.header().clone()
            };
            let err = Topology::new(header, topo.links().to_vec()).unwrap_err();
            assert_eq!((err.line, err.field), (line, field), "{err}");
            assert!(err.problem.contains(needle), "{err}");
        }
    }

    #[test]
    fn files_are_read_with_their_errors() {
        let path = std::env::temp_dir().join(format!("fabric-topology-{}.txt", std::process::id()));
        std::fs::write(&path, SMALL).unwrap();
        assert_eq!(
            Topology::read(&path).unwrap(),
            Topology::parse(SMALL).unwrap()
        );
        std::fs::write(&path, "3 1 2\n2\n0 2 1Gbps 1us 0\n").unwrap();
        let err = Topology::read(&path).unwrap_err();
        assert!(
            matches!(
                err,
                InputError::Field(FieldError {
                    line: 4,
                    field: "links",
                    ..
                })
            ),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(Topology::read(&path), Err(InputError::Read(_))));
    }

    #[test]
    fn the_count_limits_apply_before_allocating() {
        // A file declaring the most nodes allowed plus one is refused on line 1, not after
        // allocating a table of that many nodes.
        let err = Topology::parse(&format!("{} 0 0\n\n", MAX_NODES + 1)).unwrap_err();
        assert_eq!((err.line, err.field), (1, "nodes"));
    }
}
