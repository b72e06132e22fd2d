//! Benchmarks of the model and the testbench. `src/bin/bench.rs` times the built-ins through
//! the testbench library and prints `make bench`'s table; `criterion/benches/cycle_loop.rs`
//! (the crate `mmu-bench-criterion`, which `make test` leaves out so criterion is never
//! compiled there) is criterion's benchmark of the model's cycle loop alone.
//!
//! [`Load`] is the cycle loop's stimulus, shared by both; [`ns3_leafspine`] runs the ns-3
//! anchor beside the fabric built-in.

pub mod ns3_leafspine;

use hw_model::{Beat, Inputs, Mmu, Outputs, PacketHdr};

/// Cycles of one measurement of the cycle loop.
pub const CYCLES: u64 = 100_000;

/// A minimal driver of the `tomahawk` profile at high load: every port receives 1500 B
/// lossless packets at line rate; port `p` sends to `(p + 1) % 32` except ports 0..8, which
/// all send to port 31, so eight ports are congested, PFC pauses them and the buffer holds a
/// standing queue. The driver honours PAUSE immediately and presents one beat per cell
/// time; its cost is part of the figure.
pub struct Load {
    next_beat: Vec<u64>,
    cur: Vec<Option<Beat>>,
    seq: Vec<u32>,
    paused: Vec<u8>,
    gap: u64,
    ncells: u16,
}

impl Load {
    pub fn new(mmu: &Mmu) -> Self {
        let d = mmu.config();
        let n = d.ports;
        Self {
            next_beat: (0..n as u64).collect(),
            cur: vec![None; n],
            seq: vec![0; n],
            paused: vec![0; n],
            gap: (d.cfg.cell_bytes as u64 * 8 * d.clock_hz).div_ceil(d.rate_bps[0]),
            ncells: d.cells_for(1500) as u16,
        }
    }

    fn beats(&mut self, cycle: u64, ingress: &mut [Option<Beat>]) {
        let n = ingress.len();
        for (p, slot) in ingress.iter_mut().enumerate() {
            *slot = None;
            if cycle < self.next_beat[p] {
                continue;
            }
            let beat = match self.cur[p] {
                Some(b) if !b.eop() => Beat {
                    idx: b.idx + 1,
                    ..b
                },
                _ => {
                    if self.paused[p] & 1 != 0 {
                        continue;
                    }
                    let dst = if p < 8 { 31 } else { ((p + 1) % n) as u8 };
                    self.seq[p] += 1;
                    let hdr = PacketHdr {
                        flow: p as u32,
                        seq: self.seq[p],
                        src: p as u8,
                        dst,
                        prio: 0,
                        len: 1500,
                        ..Default::default()
                    };
                    Beat {
                        hdr,
                        idx: 0,
                        ncells: self.ncells,
                    }
                }
            };
            self.cur[p] = Some(beat);
            *slot = Some(beat);
            self.next_beat[p] = cycle + self.gap;
        }
    }
}

/// Clock `mmu` for [`CYCLES`] cycles under `load`.
pub fn run(mmu: &mut Mmu, load: &mut Load) {
    let ports = mmu.config().ports;
    let mut out = Outputs::with_ports(ports);
    let mut ingress = vec![None; ports];
    for _ in 0..CYCLES {
        load.beats(mmu.cycle(), &mut ingress);
        mmu.step(
            &Inputs {
                ingress: &ingress,
                pfc_rx: &[],
            },
            &mut out,
        )
        .expect("model invariant");
        for (p, f) in &out.pfc_tx {
            let p = *p as usize;
            load.paused[p] = (load.paused[p] | f.paused()) & !f.resumed();
        }
    }
}
