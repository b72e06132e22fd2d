//! The admission block's count of the beats it takes (`admission.rs`), which the summary
//! reports, and the grants of a cycle its decisions see. Each test pins a behaviour that
//! mutation testing found unchecked (docs/testing.md).

use hw_model::accounting::{Accounting, Cells};
use hw_model::admission::Admission;
use hw_model::dt_threshold::DtThreshold;
use hw_model::policy::{Plan, Request, Sih};
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

/// A decision sees its pool's shared cells as the registered total plus the shared cells
/// granted earlier in the cycle, the lossless and the lossy pool apart.
#[test]
fn a_decision_sees_the_shared_cells_granted_earlier_in_the_cycle() {
    let d = SwitchConfig::small().build().unwrap();
    let mut adm = Admission::new(&d);
    let mut acct = Accounting::new(d.ports);
    acct.shared_total = Cells::try_new(100).unwrap();
    acct.lossy_shared_total = Cells::try_new(40).unwrap();
    let dt = DtThreshold::new(1000, 0);
    let mut policy = Sih::new(&d, dt.t());
    let lossless = Request::new(0, 3, 5, 4, true);
    let lossy = Request::new(1, 0, 5, 4, false);
    let plan = |seg0, seg1| Plan {
        seg0,
        seg1,
        headroom: 0,
    };
    adm.charge(&lossless, &plan(1, 3), &mut acct);
    adm.charge(&lossy, &plan(0, 2), &mut acct);
    adm.charge(&lossless, &plan(0, 4), &mut acct);
    let mut seen = |r| adm.view(r, &acct, &dt, &dt, &mut policy).shared_in_use;
    assert_eq!([seen(&lossless), seen(&lossy)], [107, 42]);
}
