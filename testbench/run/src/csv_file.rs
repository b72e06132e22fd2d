//! Every CSV file the testbench writes goes through the `csv` crate, one
//! `#[derive(Serialize)]` row struct per file: the field names are the header, so the
//! header and the rows cannot drift apart. Numbers keep the formatting the files always
//! had: [`Fixed`] for a fixed number of decimals, [`Plain`] for Rust's shortest `Display`
//! (`3`, not the `3.0` the crate would write for an `f64`).

use serde::{Serialize, Serializer};
use std::io::{self, Write};
use std::marker::PhantomData;
use std::path::Path;

/// A float written with `D` decimals (`format!("{:.D}")`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Fixed<const D: usize>(pub f64);

impl<const D: usize> Serialize for Fixed<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:.*}", D, self.0))
    }
}

/// A float written as `Display` writes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Plain(pub f64);

impl Serialize for Plain {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

fn io_err(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

/// The header line of rows `R` (their field names, comma-separated).
pub fn header<R: Serialize + Default>() -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // A plain struct of numbers and strings always serializes; an empty header otherwise.
    let _ = w.serialize(R::default());
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8_lossy(&bytes)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A CSV writer of rows `R` that writes the header when created, so that a file with no
/// rows still has one.
pub struct CsvWriter<W: Write, R> {
    out: csv::Writer<W>,
    row: PhantomData<R>,
}

impl<W: Write, R: Serialize + Default> CsvWriter<W, R> {
    pub fn new(out: W) -> io::Result<Self> {
        let mut out = csv::WriterBuilder::new()
            .has_headers(false)
            .buffer_capacity(1 << 16)
            .from_writer(out);
        out.write_record(header::<R>().split(',')).map_err(io_err)?;
        Ok(Self {
            out,
            row: PhantomData,
        })
    }

    pub fn record(&mut self, row: &R) -> io::Result<()> {
        self.out.serialize(row).map_err(io_err)
    }

    /// Flush and return the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// Write `rows` as the whole CSV file `path`.
pub fn write<R: Serialize + Default>(
    path: &Path,
    rows: impl IntoIterator<Item = R>,
) -> io::Result<()> {
    let mut w = CsvWriter::new(std::fs::File::create(path)?)?;
    for r in rows {
        w.record(&r)?;
    }
    w.finish()?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Row {
        name: &'static str,
        n: u64,
        x: Fixed<2>,
        y: Plain,
        z: Option<u8>,
    }

    #[test]
    fn header_comes_from_the_fields_and_numbers_keep_their_format() {
        assert_eq!(header::<Row>(), "name,n,x,y,z");
        let mut w = CsvWriter::<_, Row>::new(Vec::new()).unwrap();
        for (name, y, z) in [("a", 3.0, None), ("b, c", 0.25, Some(7))] {
            let row = Row {
                name,
                n: 42,
                x: Fixed(1.0 / 3.0),
                y: Plain(y),
                z,
            };
            w.record(&row).unwrap();
        }
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "name,n,x,y,z\na,42,0.33,3,\n\"b, c\",42,0.33,0.25,7\n"
        );
        let empty = CsvWriter::<_, Row>::new(Vec::new())
            .unwrap()
            .finish()
            .unwrap();
        assert_eq!(
            empty, b"name,n,x,y,z\n",
            "a file without rows has its header"
        );
    }
}
