//! The VCD writer.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use crate::{SignalFilter, SignalSpec, Timescale, WaveError, Window};

/// Written into `$version`. Fixed (no tool version, no date) so that output is
/// byte-identical across runs and builds.
const VERSION: &str = "mmu-sim";

/// The internal buffer is handed to the inner writer once it holds this much.
/// Formatting into our own `Vec` and writing big chunks is much cheaper than
/// many tiny `write_all` calls, even into a `BufWriter`.
const FLUSH_AT: usize = 64 * 1024;

/// Longest identifier code a `u64` index can need in base 94.
const MAX_ID_LEN: usize = 10;

/// Per selected signal: everything the hot loop needs, kept together.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// Index into the caller's `signals`.
    index: usize,
    width: u32,
    mask: u64,
    /// The `vcd::IdCode` number, for the header.
    code: u64,
    id: [u8; MAX_ID_LEN],
    id_len: u8,
}

impl Slot {
    fn id(&self) -> &[u8] {
        &self.id[..usize::from(self.id_len)]
    }
}

/// Writes a VCD file by sampling a fixed set of signals once per clock cycle.
///
/// Built for dumps of thousands of signals over millions of cycles: the
/// header is written once (with the `vcd` crate), and after that each
/// [`sample`](Self::sample) compares every selected signal against its
/// previous value and formats only the changes, straight into a byte buffer.
///
/// The output is deterministic: identical inputs give byte-identical files
/// (there is no `$date`), so dumps can be diffed between runs.
///
/// Times in the file are absolute: cycle `c` is at `c * ticks_per_cycle`
/// ticks of the [`Timescale`], whatever the [`Window`], so the viewer's time
/// axis matches the simulator's cycle numbers.
///
/// Call [`finish`](Self::finish) at the end: it writes the closing timestamp
/// and flushes. Dropping the writer without it loses buffered output. After
/// any error, the file is incomplete and the writer should be dropped.
#[derive(Debug)]
pub struct VcdWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    slots: Vec<Slot>,
    selected: Vec<usize>,
    prev: Vec<u64>,
    timescale: Timescale,
    window: Window,
    last_cycle: Option<u64>,
    last_dumped_cycle: Option<u64>,
}

impl<W: Write> VcdWriter<W> {
    /// Validates the signals, writes the VCD header for those that pass
    /// `filter`, and returns a writer ready for [`sample`](Self::sample).
    ///
    /// The header has a fixed `$version` (`mmu-sim`), a `$comment` with the
    /// clock, the `$timescale` from [`Timescale::for_clock_hz`], and one
    /// `$scope module` per path component (signals sharing a prefix share the
    /// scope, in order of first appearance), each signal being a `$var wire`.
    ///
    /// Errors: a bad clock; a signal whose width is not `1..=64`, whose path
    /// has fewer than two components, an empty component, or characters that
    /// viewers misparse (whitespace, non-ASCII, `[`, `]`, a leading `$`); two
    /// signals with the same path; a selected signal whose path is also the
    /// scope of another selected signal; and I/O errors.
    pub fn new(
        mut out: W,
        signals: &[SignalSpec],
        clock_hz: u64,
        filter: &SignalFilter,
        window: Window,
    ) -> Result<Self, WaveError> {
        let timescale = Timescale::for_clock_hz(clock_hz)?;
        let mut seen = HashSet::with_capacity(signals.len());
        for s in signals {
            validate(s)?;
            if !seen.insert(s.path.as_str()) {
                return Err(WaveError::BadSignal {
                    path: s.path.clone(),
                    reason: "declared twice".to_owned(),
                });
            }
        }
        let selected: Vec<usize> = (0..signals.len())
            .filter(|&i| filter.matches(&signals[i].path))
            .collect();
        let mut next_code = 0u64;
        let slots: Vec<Slot> = selected
            .iter()
            .map(|&index| {
                let width = signals[index].width;
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
                let mut id = [0u8; MAX_ID_LEN];
                id[..text.len()].copy_from_slice(text.as_bytes());
                Slot {
                    index,
                    width,
                    mask: mask(width),
                    code,
                    id,
                    id_len: text.len() as u8,
                }
            })
            .collect();

        let tree = ScopeTree::build(signals, &selected)?;
        let mut header = Vec::new();
        {
            let mut vw = vcd::Writer::new(&mut header);
            vw.version(VERSION)?;
            vw.comment(&format!(
                "clock {clock_hz} Hz, {} ticks of {timescale} per cycle; time = cycle * {}",
                timescale.ticks_per_cycle(),
                timescale.ticks_per_cycle()
            ))?;
            vw.timescale(timescale.magnitude(), timescale.vcd_unit())?;
            tree.write(&mut vw, signals, &slots)?;
            vw.enddefinitions()?;
        }
        out.write_all(&header)?;

        Ok(Self {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            prev: vec![0; slots.len()],
            slots,
            selected,
            timescale,
            window,
            last_cycle: None,
            last_dumped_cycle: None,
        })
    }

    /// Indices (into the `signals` given to [`new`](Self::new)) of the
    /// signals that passed the filter, in declaration order. `sample`'s
    /// callback is asked for exactly these.
    pub fn selected(&self) -> &[usize] {
        &self.selected
    }

    /// The timescale chosen for the clock.
    pub fn timescale(&self) -> Timescale {
        self.timescale
    }

    /// The cycle window being dumped.
    pub fn window(&self) -> Window {
        self.window
    }

    /// Samples every selected signal at `cycle`.
    ///
    /// `value(i)` is called once for each selected index `i` (see
    /// [`selected`](Self::selected)) and returns the current value; bits above
    /// the signal's width are ignored. Outside the window nothing is called
    /// or written. At the first cycle inside the window, all values are
    /// written under `$dumpvars`; after that a `#time` line and the changed
    /// values are written only if something changed.
    ///
    /// Cycles must strictly increase from call to call (inside the window or
    /// not); a repeated or earlier cycle is an error and writes nothing.
    pub fn sample(&mut self, cycle: u64, value: impl FnMut(usize) -> u64) -> Result<(), WaveError> {
        self.sample_slots(cycle, 0..self.slots.len(), value)
    }

    /// Like [`sample`](Self::sample), but only the slots listed (positions into
    /// [`selected`](Self::selected), in the order given) are compared for changes: for a
    /// model that knows which of its blocks were touched in a cycle, this makes dumping cost
    /// proportional to activity rather than to the number of signals. The first sample in
    /// the window still dumps every slot. Listing a slot whose value did not change is
    /// harmless; omitting one that did loses that change.
    pub fn sample_slots(
        &mut self,
        cycle: u64,
        slots: impl IntoIterator<Item = usize>,
        mut value: impl FnMut(usize) -> u64,
    ) -> Result<(), WaveError> {
        if let Some(previous) = self.last_cycle {
            if cycle <= previous {
                return Err(WaveError::CycleNotIncreasing {
                    previous,
                    got: cycle,
                });
            }
        }
        if !self.window.contains(cycle) {
            self.last_cycle = Some(cycle);
            return Ok(());
        }
        let tpc = self.timescale.ticks_per_cycle();
        // Also check the closing time `finish` will write, so it cannot fail.
        let time = cycle
            .checked_add(1)
            .and_then(|next| next.checked_mul(tpc))
            .map(|_| cycle * tpc)
            .ok_or(WaveError::TimeOverflow {
                cycle,
                ticks_per_cycle: tpc,
            })?;
        self.last_cycle = Some(cycle);

        let buf = &mut self.buf;
        if self.last_dumped_cycle.is_none() {
            push_time(buf, time);
            buf.extend_from_slice(b"$dumpvars\n");
            for (slot, prev) in self.slots.iter().zip(self.prev.iter_mut()) {
                let v = value(slot.index) & slot.mask;
                *prev = v;
                push_change(buf, slot, v);
            }
            buf.extend_from_slice(b"$end\n");
        } else {
            let mut timed = false;
            for k in slots {
                let (slot, prev) = (&self.slots[k], &mut self.prev[k]);
                let v = value(slot.index) & slot.mask;
                if v != *prev {
                    if !timed {
                        push_time(buf, time);
                        timed = true;
                    }
                    *prev = v;
                    push_change(buf, slot, v);
                }
            }
        }
        self.last_dumped_cycle = Some(cycle);
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes a closing `#time` one cycle after the last dumped cycle (so the
    /// viewer draws the last values over a full cycle), flushes, and returns
    /// the inner writer. If no cycle inside the window was sampled, the file
    /// has a header and no value changes.
    pub fn finish(mut self) -> Result<W, WaveError> {
        if let Some(last) = self.last_dumped_cycle {
            // `sample` checked that this does not overflow.
            let end = (last + 1) * self.timescale.ticks_per_cycle();
            push_time(&mut self.buf, end);
        }
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        Ok(self.out)
    }
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
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
/// as declared.
fn push_change(buf: &mut Vec<u8>, slot: &Slot, v: u64) {
    if slot.width == 1 {
        buf.push(b'0' + (v & 1) as u8);
    } else {
        buf.push(b'b');
        buf.extend(
            (0..slot.width)
                .rev()
                .map(|bit| b'0' + ((v >> bit) & 1) as u8),
        );
        buf.push(b' ');
    }
    buf.extend_from_slice(slot.id());
    buf.push(b'\n');
}

fn validate(s: &SignalSpec) -> Result<(), WaveError> {
    let bad = |reason: String| WaveError::BadSignal {
        path: s.path.clone(),
        reason,
    };
    if !(1..=64).contains(&s.width) {
        return Err(bad(format!("width {} is not in 1..=64", s.width)));
    }
    let components: Vec<&str> = s.path.split('.').collect();
    if components.len() < 2 {
        return Err(bad(
            "a path needs at least one scope and a name, e.g. \"top.x\"".to_owned(),
        ));
    }
    for c in components {
        if c.is_empty() {
            return Err(bad("empty path component".to_owned()));
        }
        if let Some(ch) = c
            .chars()
            .find(|&ch| !ch.is_ascii_graphic() || ch == '[' || ch == ']')
        {
            return Err(bad(format!(
                "component {c:?} contains {ch:?}; only printable ASCII without \
                 spaces or brackets is allowed (viewers read brackets as bit ranges)"
            )));
        }
        if c.starts_with('$') {
            return Err(bad(format!(
                "component {c:?} starts with '$', which VCD reserves for keywords"
            )));
        }
    }
    Ok(())
}

/// Scopes of the selected signals, in order of first appearance, so that
/// signals of one module are declared under a single `$scope` even when they
/// are not adjacent in the caller's list.
struct ScopeTree<'a> {
    nodes: Vec<ScopeNode<'a>>,
}

struct ScopeNode<'a> {
    name: &'a str,
    items: Vec<Item>,
}

enum Item {
    Scope(usize),
    /// Position in `selected` (and in the writer's slots).
    Var(usize),
}

impl<'a> ScopeTree<'a> {
    /// Node 0 is a nameless root holding the top-level scopes.
    fn build(signals: &'a [SignalSpec], selected: &[usize]) -> Result<Self, WaveError> {
        let mut nodes = vec![ScopeNode {
            name: "",
            items: Vec::new(),
        }];
        let mut children: HashMap<(usize, &'a str), usize> = HashMap::new();
        let mut leaves: HashSet<(usize, &'a str)> = HashSet::new();
        let clash = |path: &str| WaveError::BadSignal {
            path: path.to_owned(),
            reason: "is both a signal and the scope of another selected signal".to_owned(),
        };
        for (slot, &index) in selected.iter().enumerate() {
            let path = signals[index].path.as_str();
            let mut parts: Vec<&'a str> = path.split('.').collect();
            let leaf = parts.pop().unwrap_or_default();
            let mut node = 0;
            for part in parts {
                if leaves.contains(&(node, part)) {
                    return Err(clash(path));
                }
                node = match children.get(&(node, part)) {
                    Some(&child) => child,
                    None => {
                        let child = nodes.len();
                        nodes.push(ScopeNode {
                            name: part,
                            items: Vec::new(),
                        });
                        nodes[node].items.push(Item::Scope(child));
                        children.insert((node, part), child);
                        child
                    }
                };
            }
            if children.contains_key(&(node, leaf)) {
                return Err(clash(path));
            }
            leaves.insert((node, leaf));
            nodes[node].items.push(Item::Var(slot));
        }
        Ok(Self { nodes })
    }

    fn write<O: Write>(
        &self,
        vw: &mut vcd::Writer<O>,
        signals: &[SignalSpec],
        slots: &[Slot],
    ) -> std::io::Result<()> {
        // Explicit stack instead of recursion: path depth is caller-controlled.
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        while let Some((node, pos)) = stack.pop() {
            let Some(item) = self.nodes[node].items.get(pos) else {
                if node != 0 {
                    vw.upscope()?;
                }
                continue;
            };
            stack.push((node, pos + 1));
            match *item {
                Item::Scope(child) => {
                    vw.add_module(self.nodes[child].name)?;
                    stack.push((child, 0));
                }
                Item::Var(slot) => {
                    let slot = &slots[slot];
                    let spec = &signals[slot.index];
                    let leaf = spec.path.rsplit('.').next().unwrap_or_default();
                    vw.var_def(
                        vcd::VarType::Wire,
                        spec.width,
                        vcd::IdCode::from(slot.code),
                        leaf,
                        None,
                    )?;
                }
            }
        }
        Ok(())
    }
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
    fn decimal_formatting() {
        for v in [0u64, 7, 10, 12345, u64::MAX] {
            let mut b = Vec::new();
            push_decimal(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn masks() {
        assert_eq!(mask(1), 1);
        assert_eq!(mask(20), 0xF_FFFF);
        assert_eq!(mask(63), u64::MAX >> 1);
        assert_eq!(mask(64), u64::MAX);
    }
}
