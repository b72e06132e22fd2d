//! The VCD (IEEE 1364 Value Change Dump) encoder.

use std::io::Write;

use crate::writer::{Declaration, Encoder, Header, NewEncoder};
use crate::{WaveError, WaveWriter};

/// Written into `$version`. Fixed (no tool version, no date) so that output is
/// byte-identical across runs and builds.
const VERSION: &str = "mmu-sim";

/// The internal buffer is handed to the inner writer once it holds this much.
/// Formatting into our own `Vec` and writing big chunks is much cheaper than
/// many tiny `write_all` calls, even into a `BufWriter`.
const FLUSH_AT: usize = 64 * 1024;

/// Longest identifier code a `u64` index can need in base 94.
const MAX_ID_LEN: usize = 10;

/// A [`WaveWriter`] that writes VCD text.
pub type VcdWriter<W> = WaveWriter<VcdEncoder<W>>;

/// Per slot: what formatting a change needs.
#[derive(Debug, Clone, Copy)]
struct Slot {
    width: u32,
    id: [u8; MAX_ID_LEN],
    id_len: u8,
}

/// Formats VCD text: the header with the `vcd` crate, the values straight into a byte
/// buffer (`0!` for a bit, `b0101 !` for a vector, leading zeros kept).
#[derive(Debug)]
pub struct VcdEncoder<W: Write> {
    out: W,
    buf: Vec<u8>,
    slots: Vec<Slot>,
}

impl<W: Write> NewEncoder for VcdEncoder<W> {
    /// The header has a fixed `$version` (`mmu-sim`), a `$comment` with the clock, the
    /// `$timescale` from [`Timescale::for_clock_hz`](crate::Timescale::for_clock_hz), and
    /// one `$scope module` per path component, each signal being a `$var wire`.
    fn new(mut out: W, header: &Header<'_>) -> Result<Self, WaveError> {
        let mut next_code = 0u64;
        let mut codes = Vec::with_capacity(header.slots());
        let slots: Vec<Slot> = (0..header.slots())
            .map(|slot| {
                // Skip codes starting with '$': legal VCD, but a token like
                // `$end` as an id would derail every parser, and some tools
                // take any `$...` token for a keyword.
                let (code, text) = loop {
                    let code = next_code;
                    next_code += 1;
                    let text = vcd::IdCode::from(code).to_string();
                    if !text.starts_with('$') {
                        break (code, text);
                    }
                };
                codes.push(code);
                let mut id = [0u8; MAX_ID_LEN];
                id[..text.len()].copy_from_slice(text.as_bytes());
                Slot {
                    width: header.signal(slot).width,
                    id,
                    id_len: text.len() as u8,
                }
            })
            .collect();

        let ts = header.timescale();
        let mut text = Vec::new();
        {
            let mut vw = vcd::Writer::new(&mut text);
            vw.version(VERSION)?;
            vw.comment(&format!(
                "clock {} Hz, {} ticks of {ts} per cycle; time = cycle * {}",
                header.clock_hz(),
                ts.ticks_per_cycle(),
                ts.ticks_per_cycle()
            ))?;
            vw.timescale(ts.magnitude(), ts.vcd_unit())?;
            header.walk(|d| {
                match d {
                    Declaration::Scope(name) => vw.add_module(name)?,
                    Declaration::Upscope => vw.upscope()?,
                    Declaration::Var { slot, name, width } => vw.var_def(
                        vcd::VarType::Wire,
                        width,
                        vcd::IdCode::from(codes[slot]),
                        name,
                        None,
                    )?,
                }
                Ok(())
            })?;
            vw.enddefinitions()?;
        }
        out.write_all(&text)?;
        Ok(Self {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            slots,
        })
    }
}

impl<W: Write> Encoder for VcdEncoder<W> {
    type Output = W;

    fn time(&mut self, time: u64) -> Result<(), WaveError> {
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        push_time(&mut self.buf, time);
        Ok(())
    }

    fn initial(&mut self, values: &[u64]) -> Result<(), WaveError> {
        self.buf.extend_from_slice(b"$dumpvars\n");
        for (slot, &v) in self.slots.iter().zip(values) {
            push_change(&mut self.buf, slot, v);
        }
        self.buf.extend_from_slice(b"$end\n");
        Ok(())
    }

    fn change(&mut self, slot: usize, value: u64) -> Result<(), WaveError> {
        push_change(&mut self.buf, &self.slots[slot], value);
        Ok(())
    }

    fn finish(mut self, end: Option<u64>) -> Result<W, WaveError> {
        if let Some(end) = end {
            push_time(&mut self.buf, end);
        }
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn push_time(buf: &mut Vec<u8>, time: u64) {
    buf.push(b'#');
    push_decimal(buf, time);
    buf.push(b'\n');
}

fn push_decimal(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// `0!` for a scalar, `b<width binary digits> <id>` for a vector. Vectors keep
/// their leading zeros: the lint (and some tools) want values exactly as wide
/// as declared. The line is built on the stack and appended in one copy (a change is
/// written for every value that moves, so this is the dump's innermost loop).
fn push_change(buf: &mut Vec<u8>, slot: &Slot, v: u64) {
    // Fixed-size copies only: all 64 digits land at `DIGITS`, and the line starts `width`
    // digits before the id (plus the `b`), so no copy depends on the width.
    const DIGITS: usize = 1 + 64;
    let mut line = [0u8; DIGITS + 64 + 1 + MAX_ID_LEN + 1];
    let w = slot.width as usize;
    let (start, mut end) = if w == 1 {
        line[DIGITS + 63] = b'0' + (v & 1) as u8;
        (DIGITS + 63, DIGITS + 64)
    } else {
        line[DIGITS..DIGITS + 64].copy_from_slice(&binary64(v));
        line[DIGITS + 64] = b' ';
        line[DIGITS + 63 - w] = b'b';
        (DIGITS + 63 - w, DIGITS + 65)
    };
    line[end..end + MAX_ID_LEN].copy_from_slice(&slot.id);
    end += usize::from(slot.id_len);
    line[end] = b'\n';
    buf.extend_from_slice(&line[start..=end]);
}

/// Byte `b` as eight ASCII binary digits, most significant first.
const BINARY: [[u8; 8]; 256] = {
    let mut t = [[b'0'; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b][i] = b'0' + ((b >> (7 - i)) & 1) as u8;
            i += 1;
        }
        b += 1;
    }
    t
};

/// All 64 bits of `v` as ASCII binary digits, most significant first, eight at a time.
fn binary64(v: u64) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&BINARY[(v >> (56 - 8 * k)) as u8 as usize]);
    }
    out
}

/// The low `width` bits of `v` (`1..=64`) as ASCII binary digits, most significant first.
pub(crate) fn push_binary(buf: &mut Vec<u8>, v: u64, width: u32) {
    buf.extend_from_slice(&binary64(v)[64 - width as usize..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_codes_match_vcd_crate_and_fit() {
        for n in [0u64, 1, 93, 94, 95, 94 * 94, 1_000_000, u64::MAX] {
            let s = vcd::IdCode::from(n).to_string();
            assert!(s.len() <= MAX_ID_LEN, "{n} -> {s}");
            assert!(s.bytes().all(|b| (b'!'..=b'~').contains(&b)));
        }
        assert_eq!(vcd::IdCode::from(0u64).to_string(), "!");
    }

    #[test]
    fn binary_formatting_keeps_every_digit_of_the_width() {
        for (v, width) in [
            (0u64, 2u32),
            (5, 3),
            (0xA5, 8),
            (0x1FF, 9),
            (u64::MAX, 64),
            (1, 64),
        ] {
            let mut b = Vec::new();
            push_binary(&mut b, v, width);
            let want = format!("{:0w$b}", v, w = width as usize);
            assert_eq!(String::from_utf8(b).unwrap(), want);
        }
    }

    #[test]
    fn decimal_formatting() {
        for v in [0u64, 7, 10, 12345, u64::MAX] {
            let mut b = Vec::new();
            push_decimal(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }
}
