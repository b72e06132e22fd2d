//! Waveform output: the model's probed signals, sampled after every cycle into a VCD, and a
//! GTKWave save file beside it (same stem, `.gtkw`) that opens the dump with the model's
//! signal groups already laid out.

use hw_model::Mmu;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use wave::{write_gtkw, GtkwGroup, SignalFilter, SignalSpec, VcdWriter, WaveError, Window};

/// The `.gtkw` path that goes with a VCD path.
pub fn gtkw_path(vcd: &Path) -> PathBuf {
    vcd.with_extension("gtkw")
}

/// A VCD being written for one run.
pub struct Waves {
    writer: VcdWriter<BufWriter<File>>,
    vcd_path: PathBuf,
    /// The signals that passed the filter (what the .gtkw may reference).
    dumped: Vec<SignalSpec>,
    /// Writer slots grouped by the model's signal block, so a cycle samples only the
    /// blocks the model touched.
    slots_by_block: Vec<Vec<usize>>,
}

impl Waves {
    /// Write the VCD header for `mmu`'s signals into `file` (already created at `vcd_path`).
    pub fn new(
        mmu: &Mmu,
        file: File,
        vcd_path: &Path,
        filter: &SignalFilter,
        window: Window,
    ) -> Result<Self, WaveError> {
        let specs: Vec<SignalSpec> = mmu
            .signals()
            .iter()
            .map(|s| SignalSpec::new(s.path.clone(), s.width))
            .collect();
        let writer = VcdWriter::new(
            BufWriter::new(file),
            &specs,
            mmu.config().clock_hz,
            filter,
            window,
        )?;
        let mut slots_by_block = vec![Vec::new(); mmu.signal_blocks()];
        for (slot, &i) in writer.selected().iter().enumerate() {
            slots_by_block[mmu.signal_block(i)].push(slot);
        }
        Ok(Self {
            writer,
            vcd_path: vcd_path.to_path_buf(),
            dumped: filter.apply(&specs),
            slots_by_block,
        })
    }

    /// Sample the selected signals after the MMU clocked cycle `cycle`.
    #[inline]
    pub fn sample(&mut self, cycle: u64, mmu: &Mmu) -> Result<(), WaveError> {
        let dirty = mmu.dirty_blocks();
        let slots = self
            .slots_by_block
            .iter()
            .enumerate()
            .filter(|(b, _)| dirty[b / 64] & (1 << (b % 64)) != 0)
            .flat_map(|(_, s)| s.iter().copied());
        self.writer
            .sample_slots(cycle, slots, |i| mmu.signal_value(i))
    }

    /// Close the VCD and write the `.gtkw` beside it.
    pub fn finish(self, mmu: &Mmu) -> Result<(), WaveError> {
        self.writer.finish()?;
        let groups: Vec<GtkwGroup> = mmu
            .gtkw_groups()
            .into_iter()
            .map(|(name, signals)| GtkwGroup::new(name, signals))
            .collect();
        write_gtkw(
            &gtkw_path(&self.vcd_path),
            &self.vcd_path,
            &groups,
            &self.dumped,
        )
    }
}
