//! `--ns3-out DIR`: flow completion, PFC and queue-length files in the formats of the HPCC
//! ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control,
//! `simulation/scratch/third.cc`), so that the analysis scripts written for it read them.
//! docs/ns3-outputs.md describes the files, which flows count and how nodes map.
//!
//! Node ids follow an HPCC topology of one switch: hosts `0..ports` (host `p` is the NIC
//! on switch port `p`), the switch is node `ports`. An ns-3 node's interface 0 is its
//! loopback, so switch port `p` is interface `p + 1` and a host's NIC is interface 1.

use hw_model::config::QUEUES;
use hw_model::{Departure, FiveTuple, Mmu, PfcFrame};
use scenario::{Pattern, Plan};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use stimulus::source::MessageStats;
use stimulus::tcp::TcpStats;

/// HPCC samples queue lengths every 100 ns (`qlen_mon_interval`).
pub const QLEN_SAMPLE_NS: u64 = 100;
/// HPCC's histogram buckets are 1000 bytes (`QlenDistribution::add`).
pub const QLEN_BUCKET_BYTES: u64 = 1000;

/// Cycles to nanoseconds, rounded down (HPCC's `GetTimeStep()` in ns).
fn ns(cycles: u64, clock_hz: u64) -> u64 {
    (cycles as u128 * 1_000_000_000 / clock_hz as u128) as u64
}

/// The three files, collected during the run and written at its end.
pub struct Ns3Out {
    dir: PathBuf,
    /// `pfc.txt` lines: time ns, node, node type, interface, 1 PAUSE / 0 RESUME.
    pfc: Vec<(u64, usize, u8, usize, u8)>,
    /// Per switch port, samples of its egress bytes by 1000 B bucket.
    qlen: Vec<Vec<u64>>,
    sample_every: u64,
    /// Per scenario flow, a `burst` flow's progress as one message (`None`: another
    /// pattern).
    bursts: Vec<Option<Burst>>,
}

/// A `burst` flow as one message: its packets' bytes and count delivered so far, and the
/// cycle its last byte left once `burst_bytes` were delivered.
#[derive(Debug, Clone, Copy)]
struct Burst {
    bytes: u64,
    packets: u64,
    done_at: Option<u64>,
}

impl Ns3Out {
    /// Check that `dir` can hold the files (created if missing) before the run starts.
    pub fn new(dir: &Path, plan: &Plan) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        for f in ["fct.txt", "pfc.txt", "qlen.txt"] {
            File::create(dir.join(f))?;
        }
        let d = &plan.derived;
        Ok(Self {
            dir: dir.to_path_buf(),
            pfc: Vec::new(),
            qlen: vec![Vec::new(); d.ports],
            sample_every: scenario::ns_to_cycles(QLEN_SAMPLE_NS, d.clock_hz).max(1),
            bursts: plan
                .flows
                .iter()
                .map(|f| {
                    matches!(f.pattern, Pattern::Burst { .. }).then_some(Burst {
                        bytes: 0,
                        packets: 0,
                        done_at: None,
                    })
                })
                .collect(),
        })
    }

    /// After the MMU stepped in cycle `now`: the PFC frames it sent (received by host `p`
    /// one propagation delay later) and the scripted frames it received, one line per
    /// priority a frame carries; every 100 ns, the egress queue lengths.
    pub fn cycle(
        &mut self,
        now: u64,
        sent: &[(u8, PfcFrame)],
        received: &[(u8, PfcFrame)],
        departures: &[Departure],
        mmu: &Mmu,
        plan: &Plan,
    ) {
        let d = &plan.derived;
        for dep in departures.iter().filter(|x| x.beat.eop()) {
            let h = &dep.beat.hdr;
            if let Some(Some(b)) = self.bursts.get_mut(h.flow as usize) {
                b.bytes += h.len as u64;
                b.packets += 1;
                if let Pattern::Burst { bytes } = plan.flows[h.flow as usize].pattern {
                    if b.bytes >= bytes && b.done_at.is_none() {
                        b.done_at = Some(now);
                    }
                }
            }
        }
        let switch = d.ports;
        for &(p, f) in sent {
            let at = ns(now + plan.links[p as usize].prop_cycles, d.clock_hz);
            self.frame(at, p as usize, 0, 1, &f);
        }
        for &(p, f) in received {
            self.frame(ns(now, d.clock_hz), switch, 1, p as usize + 1, &f);
        }
        if now.is_multiple_of(self.sample_every) {
            self.sample_qlen(1, mmu, plan);
        }
    }

    /// Cycles `from..to` were idle (the queues did not move): their queue-length samples.
    pub fn idle(&mut self, from: u64, to: u64, mmu: &Mmu, plan: &Plan) {
        let samples = to.div_ceil(self.sample_every) - from.div_ceil(self.sample_every);
        if samples > 0 {
            self.sample_qlen(samples, mmu, plan);
        }
    }

    /// Add `samples` samples of the current egress queue lengths.
    fn sample_qlen(&mut self, samples: u64, mmu: &Mmu, plan: &Plan) {
        let d = &plan.derived;
        for (p, hist) in self.qlen.iter_mut().enumerate() {
            let cells: u64 = (0..QUEUES).map(|q| mmu.egress_cells(p, q) as u64).sum();
            let kb = (cells * d.cfg.cell_bytes as u64 / QLEN_BUCKET_BYTES) as usize;
            if hist.len() <= kb {
                hist.resize(kb + 1, 0);
            }
            hist[kb] += samples;
        }
    }

    fn frame(&mut self, at: u64, node: usize, node_type: u8, iface: usize, f: &PfcFrame) {
        for c in 0..QUEUES {
            if f.class_enable & (1 << c) != 0 {
                self.pfc
                    .push((at, node, node_type, iface, (f.quanta[c] != 0) as u8));
            }
        }
    }

    /// Write the three files: `now` is the cycle the run ended.
    pub fn finish(
        mut self,
        now: u64,
        plan: &Plan,
        messages: &[MessageStats],
        tcp: &[TcpStats],
    ) -> io::Result<()> {
        let d = &plan.derived;
        let mut fct = BufWriter::new(File::create(self.dir.join("fct.txt"))?);
        for l in fct_lines(plan, messages, &self.bursts, tcp) {
            writeln!(
                fct,
                "{:08x} {:08x} {} {} {} {} {} {}",
                l.tuple.src_ip,
                l.tuple.dst_ip,
                l.tuple.src_port,
                l.tuple.dst_port,
                l.bytes,
                l.start_ns,
                l.fct_ns,
                l.standalone_ns
            )?;
        }
        fct.flush()?;
        self.pfc.sort_by_key(|l| l.0);
        let mut pfc = BufWriter::new(File::create(self.dir.join("pfc.txt"))?);
        for (t, node, kind, iface, pause) in &self.pfc {
            writeln!(pfc, "{t} {node} {kind} {iface} {pause}")?;
        }
        pfc.flush()?;
        let mut q = BufWriter::new(File::create(self.dir.join("qlen.txt"))?);
        writeln!(q, "time: {}", ns(now, d.clock_hz))?;
        for (p, hist) in self.qlen.iter().enumerate() {
            write!(q, "{} {}", d.ports, p + 1)?;
            for n in hist {
                write!(q, " {n}")?;
            }
            writeln!(q)?;
        }
        q.flush()
    }
}

/// One `fct.txt` line.
pub struct FctLine {
    pub tuple: FiveTuple,
    pub bytes: u64,
    pub start_ns: u64,
    pub fct_ns: u64,
    pub standalone_ns: u64,
}

/// The completed messages of `poisson` flows (arrival to the last cell's departure), the
/// completed `burst` flows as one message each (`start_cycle` to the last cell's
/// departure; size: its packets' bytes, `burst_bytes` rounded up to whole packets) and the
/// finished `tcp` flows with `flow_bytes` (start to the last ACK), in that order.
/// Standalone FCT, as HPCC computes it (base delay + bytes on the wire at the path's
/// bottleneck rate): the source link's propagation delay (TCP: plus `base_rtt_us`, the
/// ACK's way back) + the packets' wire bytes at the slower of the two ports.
fn fct_lines(
    plan: &Plan,
    messages: &[MessageStats],
    bursts: &[Option<Burst>],
    tcp: &[TcpStats],
) -> Vec<FctLine> {
    let d = &plan.derived;
    let hz = d.clock_hz;
    let standalone = |flow: u32, bytes: u64, packets: u64, extra_ns: u64| {
        let f = &plan.flows[flow as usize];
        let rate = d.rate_bps[f.src as usize].min(d.rate_bps[f.dst as usize]);
        let wire_bits = (bytes + packets * d.cfg.wire_overhead_bytes as u64) * 8;
        let prop = ns(plan.links[f.src as usize].prop_cycles, hz);
        prop + extra_ns + (wire_bits as u128 * 1_000_000_000 / rate as u128) as u64
    };
    let mut lines: Vec<FctLine> = messages
        .iter()
        .filter_map(|m| {
            let fct = m.fct_cycles()?;
            let f = &plan.flows[m.flow as usize];
            Some(FctLine {
                tuple: f.five_tuple(FiveTuple::UDP),
                bytes: m.bytes,
                start_ns: ns(m.arrival_cycle, hz),
                fct_ns: ns(fct, hz),
                standalone_ns: standalone(m.flow, m.bytes, m.packets as u64, 0),
            })
        })
        .collect();
    for (i, b) in bursts.iter().enumerate() {
        let Some(Burst {
            bytes,
            packets,
            done_at: Some(done),
        }) = *b
        else {
            continue;
        };
        let f = &plan.flows[i];
        lines.push(FctLine {
            tuple: f.five_tuple(FiveTuple::UDP),
            bytes,
            start_ns: ns(f.start_cycle, hz),
            fct_ns: ns(done - f.start_cycle, hz),
            standalone_ns: standalone(i as u32, bytes, packets, 0),
        });
    }
    for t in tcp {
        let f = &plan.flows[t.flow as usize];
        let (Pattern::Tcp(p), Some(fct)) = (&f.pattern, t.fct_cycles) else {
            continue;
        };
        let Some(bytes) = p.flow_bytes else { continue };
        let size = match f.size {
            scenario::SizeDist::Fixed(b) => b as u64,
            scenario::SizeDist::Steps(_) => continue,
        };
        lines.push(FctLine {
            tuple: f.five_tuple(FiveTuple::TCP),
            bytes,
            start_ns: ns(f.start_cycle, hz),
            fct_ns: ns(fct, hz),
            standalone_ns: standalone(t.flow, bytes, bytes.div_ceil(size), p.base_rtt_us * 1000),
        });
    }
    lines
}
