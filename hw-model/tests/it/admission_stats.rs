//! The admission block's count of the beats it takes (`admission.rs`), which the summary
//! reports. It pins a behaviour that mutation testing found unchecked (docs/testing.md).

use hw_model::{Beat, FiveTuple, Inputs, Mmu, Outputs, PacketHdr, SwitchConfig};

/// Two ports each send one packet at line rate: every beat counts in `cells_in`.
#[test]
fn every_beat_taken_counts_in_cells_in() {
    let d = SwitchConfig::small().build().unwrap();
    let mut mmu = Mmu::new(d.clone());
    let gap = (d.cfg.cell_bytes as u64 * 8 * d.clock_hz).div_ceil(d.rate_bps[0]);
    let n = d.cells_for(1500) as u16;
    let mut out = Outputs::with_ports(d.ports);
    let mut ingress = vec![None; d.ports];
    for c in 0..n as u64 * gap {
        for src in 0..2u8 {
            let hdr = PacketHdr {
                flow: src as u32,
                src,
                dst: 5,
                prio: 1,
                len: 1500,
                tuple: FiveTuple::for_flow(src as u32, src, 5, FiveTuple::UDP),
                ..PacketHdr::default()
            };
            ingress[src as usize] = c.is_multiple_of(gap).then_some(Beat {
                hdr,
                idx: (c / gap) as u16,
                ncells: n,
            });
        }
        let inputs = Inputs {
            ingress: &ingress,
            pfc_rx: &[],
        };
        mmu.step(&inputs, &mut out).unwrap();
    }
    assert_eq!(mmu.stats().cells_in, 2 * n as u64);
}
