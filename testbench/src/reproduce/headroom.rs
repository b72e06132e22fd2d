//! DSH Eq. 1, 3 and 4 for the paper's two worked examples (sections III-A and V-A).
//!
//! The byte values follow the paper's formulas exactly; next to them stand the values the
//! model's registers hold after [`SwitchConfig::build`], which rounds `eta` up to whole
//! 208 B cells, so that an architect sees both the paper's arithmetic and what the
//! hardware reserves. "MB" in the paper is MiB: 5.33 MB is 5,591,040 B / 2^20.

use super::{Progress, ReproError};
use crate::csv_file::Fixed;
use hw_model::{Policy, SwitchConfig};
use std::fmt::Write;
use std::path::Path;

/// One line of the table: a quantity of one chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub chip: &'static str,
    pub quantity: &'static str,
    /// What the paper states for it (empty when it states nothing).
    pub paper: &'static str,
    /// By the paper's formula, bytes.
    pub bytes: u64,
    /// Share of the chip's whole buffer, percent.
    pub pct_of_buffer: f64,
    /// What the model reserves, cells.
    pub model_cells: u64,
    /// `model_cells` in bytes.
    pub model_bytes: u64,
}

/// A chip of the paper: its configuration (which fixes the lossless queues per port) and
/// what the paper states about it.
struct Chip {
    name: &'static str,
    cfg: SwitchConfig,
    paper_eta: &'static str,
    paper_sih: &'static str,
    paper_dsh: &'static str,
}

/// Trident2 (section III-A): 32 x 40G, 12 MB, 8 lossless queues, `D_prop` 1.5 us, MTU 1500.
fn trident2() -> SwitchConfig {
    SwitchConfig {
        port_speed_gbps: 40.0,
        buffer_bytes: 12 * 1024 * 1024,
        link_delay_ns: 1500,
        lossless_priorities: (0..8).collect(),
        ..SwitchConfig::tomahawk()
    }
}

fn chips() -> [Chip; 2] {
    [
        Chip {
            name: "trident2",
            cfg: trident2(),
            paper_eta: "",
            paper_sih: "~5.33 MB, 44.4 %",
            paper_dsh: "",
        },
        Chip {
            name: "tomahawk",
            cfg: SwitchConfig::tomahawk(),
            paper_eta: "56840 B",
            paper_sih: "56840 B x 32 x 7 = 12 MB",
            paper_dsh: "N_p x eta = 32 x 56840 B",
        },
    ]
}

/// The table: per chip, `eta` (Eq. 1), SIH headroom (Eq. 3), DSH insurance (Eq. 4) and the
/// shared segment `B_s` each policy leaves.
pub fn rows() -> Result<Vec<Row>, ReproError> {
    let mut out = Vec::new();
    for chip in chips() {
        let mut cfg = chip.cfg;
        let buffer = cfg.buffer_bytes;
        let cell = cfg.cell_bytes as u64;
        cfg.policy = Policy::Sih;
        let sih = cfg.build().map_err(|e| bad_config(chip.name, e))?;
        cfg.policy = Policy::Dsh;
        let dsh = cfg.build().map_err(|e| bad_config(chip.name, e))?;
        let np = cfg.ports as u64;
        let nq = sih.lossless_queues_per_port as u64;
        let eta = cfg.eta_eq1_bytes(0);
        let eta_cells = sih.eta_cells[0] as u64;
        // The model must reserve exactly Eq. 3 / Eq. 4 in its own (cell) units.
        if sih.headroom_cells as u64 != np * nq * eta_cells
            || dsh.headroom_cells as u64 != np * eta_cells
        {
            return Err(ReproError::Invariant(format!(
                "{}: model headroom {} / {} cells is not N_p*N_q*eta / N_p*eta with eta = {eta_cells} cells",
                chip.name, sih.headroom_cells, dsh.headroom_cells
            )));
        }
        let mut row = |quantity, paper, bytes: u64, cells: u64| {
            out.push(Row {
                chip: chip.name,
                quantity,
                paper,
                bytes,
                pct_of_buffer: bytes as f64 * 100.0 / buffer as f64,
                model_cells: cells,
                model_bytes: cells * cell,
            })
        };
        row("eta (Eq. 1)", chip.paper_eta, eta, eta_cells);
        row(
            "SIH headroom Np*Nq*eta (Eq. 3)",
            chip.paper_sih,
            np * nq * eta,
            sih.headroom_cells as u64,
        );
        row(
            "DSH insurance Np*eta (Eq. 4)",
            chip.paper_dsh,
            np * eta,
            dsh.headroom_cells as u64,
        );
        // B_s is the model's alone (after private and lossy pools): bytes = cells * cell.
        row(
            "SIH shared B_s (model)",
            "",
            sih.shared_cells as u64 * cell,
            sih.shared_cells as u64,
        );
        row(
            "DSH shared B_s (model)",
            "",
            dsh.shared_cells as u64 * cell,
            dsh.shared_cells as u64,
        );
    }
    Ok(out)
}

fn bad_config(chip: &str, e: hw_model::ConfigError) -> ReproError {
    ReproError::Invariant(format!("{chip} configuration does not build: {e}"))
}

const MIB: f64 = 1024.0 * 1024.0;

/// `DIR/headroom.csv` and the table on stdout.
pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    progress.set_len(1);
    let rows = rows()?;
    /// One line of `headroom.csv`; `mib` is `bytes` in MiB.
    #[derive(Default, serde::Serialize)]
    struct Line {
        chip: &'static str,
        quantity: &'static str,
        paper: &'static str,
        bytes: u64,
        mib: Fixed<4>,
        pct_of_buffer: Fixed<2>,
        model_cells: u64,
        model_bytes: u64,
    }
    let lines = rows.iter().map(|r| Line {
        chip: r.chip,
        quantity: r.quantity,
        paper: r.paper,
        bytes: r.bytes,
        mib: Fixed(r.bytes as f64 / MIB),
        pct_of_buffer: Fixed(r.pct_of_buffer),
        model_cells: r.model_cells,
        model_bytes: r.model_bytes,
    });
    let path = out.join("headroom.csv");
    super::write_csv(&path, lines)?;
    progress.inc(1);

    let mut rep = String::new();
    let _ = writeln!(
        rep,
        "DSH Eq. 1/3/4 (MB = MiB; model values in 208 B cells, eta rounded up to whole cells)\n"
    );
    let _ = writeln!(
        rep,
        "{:<9} {:<31} {:>12} {:>8} {:>7} {:>8} {:>12}  paper",
        "chip", "quantity", "bytes", "MiB", "% buf", "cells", "cell bytes"
    );
    for r in &rows {
        let _ = writeln!(
            rep,
            "{:<9} {:<31} {:>12} {:>8.3} {:>7.2} {:>8} {:>12}  {}",
            r.chip,
            r.quantity,
            r.bytes,
            r.bytes as f64 / MIB,
            r.pct_of_buffer,
            r.model_cells,
            r.model_bytes,
            r.paper
        );
    }
    let _ = writeln!(rep, "\nwrote {}", path.display());
    Ok(rep)
}
