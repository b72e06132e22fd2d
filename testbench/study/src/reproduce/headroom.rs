//! DSH Eq. 1, 3 and 4 for the paper's two worked examples (sections III-A and V-A).
//!
//! The byte values follow the paper's formulas exactly; next to them stand the values the
//! model's registers hold after [`SwitchConfig::build`], twice: with `headroom =
//! "paper-bytes"`, the paper's arithmetic (`eta` rounded up to whole 208 B cells), which the
//! comparison with the paper uses, and with the default `headroom = "cells"` (`eta` sized
//! for MTU packets, 8 cells per 1520 wire bytes), what the hardware needs to be lossless.
//! "MB" in the paper is MiB: 5.33 MB is 5,591,040 B / 2^20.

use super::{Progress, ReproError};
use hw_model::{HeadroomMode, Policy, SwitchConfig};
use std::fmt::Write;
use std::path::Path;
use switch_run::csv_file::Fixed;

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
    /// What the model reserves with `headroom = "paper-bytes"`, cells.
    pub model_cells: u64,
    /// `model_cells` in bytes.
    pub model_bytes: u64,
    /// What the model reserves with the default `headroom = "cells"`, cells.
    pub cells_mode_cells: u64,
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
        let cfg = chip.cfg;
        let buffer = cfg.buffer_bytes;
        let cell = cfg.cell_bytes as u64;
        let paper = Reserved::of(&cfg, HeadroomMode::PaperBytes, chip.name)?;
        let cells = Reserved::of(&cfg, HeadroomMode::Cells, chip.name)?;
        let eta = cfg.eta_eq1_bytes(0);
        let np = cfg.ports as u64;
        let nq = cfg.lossless_priorities.len() as u64;
        let mut row = |quantity, paper_says, bytes: u64, of: fn(&Reserved) -> u64| {
            out.push(Row {
                chip: chip.name,
                quantity,
                paper: paper_says,
                bytes,
                pct_of_buffer: bytes as f64 * 100.0 / buffer as f64,
                model_cells: of(&paper),
                model_bytes: of(&paper) * cell,
                cells_mode_cells: of(&cells),
            })
        };
        row("eta (Eq. 1)", chip.paper_eta, eta, |r| r.eta);
        row(
            "SIH headroom Np*Nq*eta (Eq. 3)",
            chip.paper_sih,
            np * nq * eta,
            |r| r.sih_headroom,
        );
        row(
            "DSH insurance Np*eta (Eq. 4)",
            chip.paper_dsh,
            np * eta,
            |r| r.dsh_headroom,
        );
        // B_s is the model's alone (after private and lossy pools): bytes = cells * cell.
        row("SIH shared B_s (model)", "", paper.sih_shared * cell, |r| {
            r.sih_shared
        });
        row("DSH shared B_s (model)", "", paper.dsh_shared * cell, |r| {
            r.dsh_shared
        });
    }
    Ok(out)
}

/// What the model reserves for one chip under one headroom mode, cells.
struct Reserved {
    eta: u64,
    sih_headroom: u64,
    dsh_headroom: u64,
    sih_shared: u64,
    dsh_shared: u64,
}

impl Reserved {
    fn of(cfg: &SwitchConfig, headroom: HeadroomMode, chip: &str) -> Result<Self, ReproError> {
        let build = |policy| {
            SwitchConfig {
                policy,
                headroom,
                ..cfg.clone()
            }
            .build()
            .map_err(|e| bad_config(chip, e))
        };
        let (sih, dsh) = (build(Policy::Sih)?, build(Policy::Dsh)?);
        let np = cfg.ports as u64;
        let nq = sih.lossless_queues_per_port as u64;
        let eta = sih.eta_cells[0] as u64;
        // The model must reserve exactly Eq. 3 / Eq. 4 in its own (cell) units.
        if sih.headroom_cells as u64 != np * nq * eta || dsh.headroom_cells as u64 != np * eta {
            return Err(ReproError::Invariant(format!(
                "{chip}: model headroom {} / {} cells is not N_p*N_q*eta / N_p*eta with eta = {eta} cells",
                sih.headroom_cells, dsh.headroom_cells
            )));
        }
        Ok(Self {
            eta,
            sih_headroom: sih.headroom_cells as u64,
            dsh_headroom: dsh.headroom_cells as u64,
            sih_shared: sih.shared_cells as u64,
            dsh_shared: dsh.shared_cells as u64,
        })
    }
}

fn bad_config(chip: &str, e: hw_model::ConfigError) -> ReproError {
    ReproError::Invariant(format!("{chip} configuration does not build: {e}"))
}

const MIB: f64 = 1024.0 * 1024.0;

/// `DIR/headroom.csv` and the table on stdout.
pub fn run(out: &Path, progress: &mut dyn Progress) -> Result<String, ReproError> {
    progress.set_len(1);
    let rows = rows()?;
    /// One line of `headroom.csv`; `mib` is `bytes` in MiB; `cells_mode_cells` is what the
    /// model reserves with the default `headroom = "cells"`.
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
        cells_mode_cells: u64,
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
        cells_mode_cells: r.cells_mode_cells,
    });
    let path = out.join("headroom.csv");
    super::write_csv(&path, lines)?;
    progress.inc(1);

    let mut rep = String::new();
    let _ = writeln!(
        rep,
        "DSH Eq. 1/3/4 (MB = MiB; model values in 208 B cells: \"paper-bytes cells\" = eta rounded\n\
         up to whole cells, the paper's arithmetic, and those cells in bytes; \"cells mode\" = the\n\
         default, eta sized for MTU packets)\n"
    );
    let _ = writeln!(
        rep,
        "{:<9} {:<31} {:>12} {:>8} {:>7} {:>17} {:>13} {:>10}  paper",
        "chip",
        "quantity",
        "bytes",
        "MiB",
        "% buf",
        "paper-bytes cells",
        "cells x 208 B",
        "cells mode"
    );
    for r in &rows {
        let _ = writeln!(
            rep,
            "{:<9} {:<31} {:>12} {:>8.3} {:>7.2} {:>17} {:>13} {:>10}  {}",
            r.chip,
            r.quantity,
            r.bytes,
            r.bytes as f64 / MIB,
            r.pct_of_buffer,
            r.model_cells,
            r.model_bytes,
            r.cells_mode_cells,
            r.paper
        );
    }
    let _ = writeln!(rep, "\nwrote {}", path.display());
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's "cells x 208 B" column is its "paper-bytes cells" column in bytes, and
    /// each header stands over its column.
    #[test]
    fn each_cell_column_is_what_its_header_says() {
        let dir = std::env::temp_dir().join(format!("headroom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = run(&dir, &mut super::super::NoProgress).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let header = report.lines().find(|l| l.starts_with("chip ")).unwrap();
        let end = |name: &str| header.find(name).unwrap() + name.len();
        let (pb, bytes, mode) = (
            end("paper-bytes cells"),
            end("cells x 208 B"),
            end("cells mode"),
        );
        let lines = report
            .lines()
            .filter(|l| l.contains("(Eq.") || l.contains("(model)"));
        let mut n = 0;
        for row in lines {
            // Right-aligned: a column's number ends where its header does.
            let num = |at: usize| -> u64 { row[..at].rsplit(' ').next().unwrap().parse().unwrap() };
            assert_eq!(num(pb) * 208, num(bytes), "{row}");
            assert!(num(mode) > 0, "{row}");
            n += 1;
        }
        assert_eq!(n, rows().unwrap().len());
    }
}
