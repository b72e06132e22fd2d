//! `--trace-events`: the model's own co-simulation event stream (docs/cosim.md), written
//! by the checker crate's recorder as the run goes.

use checker::events::{Event, Writer};
use checker::record::{self, Recorder};
use hw_model::{Inputs, Mmu, Outputs};
use std::fs::File;
use std::io::{self, BufWriter};

/// The recorder and its file; the first write error is kept for the end of the cycle.
pub struct EventTrace {
    rec: Recorder,
    out: Writer<BufWriter<File>>,
    err: Option<io::Error>,
}

impl EventTrace {
    /// Writes the `meta` line of scenario `name` run with `seed`.
    pub fn new(file: File, mmu: &Mmu, name: &str, seed: u64) -> io::Result<Self> {
        let mut out = Writer::new(BufWriter::new(file));
        out.write(&record::meta(mmu.config(), name, seed))?;
        Ok(Self {
            rec: Recorder::new(mmu.config()),
            out,
            err: None,
        })
    }

    fn emit(out: &mut Writer<BufWriter<File>>, err: &mut Option<io::Error>, ev: &Event) {
        if err.is_none() {
            if let Err(e) = out.write(ev) {
                *err = Some(e);
            }
        }
    }

    /// The events of cycle `now`, just stepped.
    pub fn step(&mut self, now: u64, inp: &Inputs, out: &Outputs, mmu: &Mmu) -> io::Result<()> {
        let (w, err) = (&mut self.out, &mut self.err);
        self.rec.step(now, inp, out, mmu, |e| Self::emit(w, err, e));
        self.err.take().map_or(Ok(()), Err)
    }

    /// The end of the run at cycle `now`: the last changes and the final counters.
    pub fn finish(mut self, now: u64, mmu: &Mmu) -> io::Result<()> {
        let (w, err) = (&mut self.out, &mut self.err);
        self.rec.finish(now, mmu, |e| Self::emit(w, err, e));
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        self.out.finish().map(drop)
    }
}
