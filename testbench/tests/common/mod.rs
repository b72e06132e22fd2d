//! Helpers shared by the property-test files (`mod common;`). Each test crate uses a
//! part of them.
#![allow(dead_code)]

use hw_model::SwitchConfig;
use std::collections::BTreeSet;

/// Cycles per drawn stream: `SOAK_CYCLES` (underscores allowed) if set and positive, else
/// `default`.
pub fn soak_cycles(default: u64) -> u64 {
    std::env::var("SOAK_CYCLES")
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .filter(|&c| c > 0)
        .unwrap_or(default)
}

/// `make soak` is running (more cases, longer streams).
pub fn soak_mode() -> bool {
    std::env::var_os("SOAK_CYCLES").is_some()
}

/// Cells of Eq. 1's bytes on `port` when all of them are packets of `len` bytes, with one
/// extra packet for the partial packets at the ends of the window: the fragmentation worst
/// case for that size. Written out here on its own (not read from the model) so that the
/// test checks the model's `eta_cells` against it.
pub fn eq1_cells_for(cfg: &SwitchConfig, port: usize, len: u32) -> u64 {
    let bytes = cfg.eta_eq1_bytes(port);
    let wire = (len + cfg.wire_overhead_bytes) as u64;
    let per_packet = (len + cfg.packet_overhead_bytes).div_ceil(cfg.cell_bytes) as u64;
    (bytes.div_ceil(wire) + 1) * per_packet
}

/// Choose `headroom_packet_bytes` so that every lossless ingress queue has at least Eq. 1
/// of headroom *in cells* for every packet size the stimulus can send to it.
///
/// Eq. 1 is in bytes, the buffer in cells: a stream of packets one byte longer than a cell
/// needs almost twice Eq. 1's bytes in cells. `headroom_packet_bytes = Some(L)` makes the
/// model size `eta` for a stream of `L`-byte packets. The size to give is the one whose
/// stream needs the most cells, which is not always the smallest size (with 208 B cells,
/// 200 B packets take one cell per 220 wire bytes, 209 B packets two per 229), so every
/// lossless size of the stimulus is tried and the one needing the most cells on every port
/// is taken. If no single size is the worst on every port (ports differ in speed, so in
/// Eq. 1 bytes), the case is rejected rather than run with too little headroom.
pub fn honest_headroom(cfg: &SwitchConfig, sizes: &BTreeSet<u32>) -> Option<u32> {
    if sizes.is_empty() {
        return Some(cfg.mtu_bytes);
    }
    let need: Vec<u64> = (0..cfg.ports)
        .map(|p| {
            sizes
                .iter()
                .map(|&l| eq1_cells_for(cfg, p, l))
                .max()
                .unwrap_or(0)
        })
        .collect();
    sizes
        .iter()
        .copied()
        .find(|&l| (0..cfg.ports).all(|p| eq1_cells_for(cfg, p, l) >= need[p]))
}
