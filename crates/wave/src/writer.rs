//! The format-independent part of waveform writing: validation, selection, the cycle window,
//! change detection, and the scope tree the headers are written from.

use std::collections::{HashMap, HashSet};

use crate::{SignalFilter, SignalSpec, Timescale, WaveError, Window};

/// A waveform file format the [`WaveWriter`] writes into: [`VcdEncoder`](crate::VcdEncoder),
/// [`FstEncoder`](crate::FstEncoder), or [`AnyEncoder`](crate::AnyEncoder) for either,
/// chosen at run time.
///
/// The writer calls, per dumped sample that has something to write, [`time`](Self::time)
/// once, then [`initial`](Self::initial) (first sample) or [`change`](Self::change) (later
/// samples, once per changed signal); and [`finish`](Self::finish) once at the end.
/// Slots are positions in [`WaveWriter::selected`], as in the [`Header`].
pub trait Encoder {
    /// What [`finish`](Self::finish) hands back: the inner writer.
    type Output;
    /// The following values are at `time` (strictly later than the previous call's).
    fn time(&mut self, time: u64) -> Result<(), WaveError>;
    /// Every selected signal's value at the first dumped time, in slot order.
    fn initial(&mut self, values: &[u64]) -> Result<(), WaveError>;
    /// Slot `slot` changed to `value` (already masked to its width).
    fn change(&mut self, slot: usize, value: u64) -> Result<(), WaveError>;
    /// Writes `end` as the closing time (if a sample was dumped), completes and flushes the
    /// file.
    fn finish(self, end: Option<u64>) -> Result<Self::Output, WaveError>;
}

/// An [`Encoder`] that starts a file: writes the header for `header`'s signals into `out`.
pub trait NewEncoder: Encoder + Sized {
    /// Writes the header into `out` (the writer [`finish`](Encoder::finish) hands back).
    fn new(out: Self::Output, header: &Header<'_>) -> Result<Self, WaveError>;
}

/// Writes a waveform by sampling a fixed set of signals once per clock cycle, in the format
/// of its [`Encoder`]: [`VcdWriter`](crate::VcdWriter) and [`FstWriter`](crate::FstWriter)
/// are the two concrete writers.
///
/// Built for dumps of thousands of signals over millions of cycles: the header is written
/// once, and after that each [`sample`](Self::sample) compares every selected signal
/// against its previous value and hands only the changes to the encoder.
///
/// The output is deterministic: identical inputs give byte-identical files (no date, no
/// tool version), so dumps can be diffed between runs.
///
/// Times in the file are absolute: cycle `c` is at `c * ticks_per_cycle` ticks of the
/// [`Timescale`], whatever the [`Window`], so the viewer's time axis matches the
/// simulator's cycle numbers.
///
/// Call [`finish`](Self::finish) at the end: it writes the closing timestamp and flushes.
/// Dropping the writer without it loses buffered output (and leaves an FST unreadable).
/// After any error, the file is incomplete and the writer should be dropped.
#[derive(Debug)]
pub struct WaveWriter<E: Encoder> {
    enc: E,
    /// Per slot: the index into the caller's `signals`.
    selected: Vec<usize>,
    /// Per slot, what a sample compares (one cache line holds several).
    slots: Vec<SlotState>,
    timescale: Timescale,
    window: Window,
    last_cycle: Option<u64>,
    last_dumped_cycle: Option<u64>,
}

/// One slot's index into the caller's signals, the mask of its width and its last value.
#[derive(Debug, Clone, Copy)]
struct SlotState {
    index: usize,
    mask: u64,
    prev: u64,
}

/// What an [`Encoder`] needs to write its header: the selected signals in slot order, their
/// scopes, the clock and the timescale.
pub struct Header<'a> {
    signals: &'a [SignalSpec],
    selected: &'a [usize],
    tree: ScopeTree<'a>,
    clock_hz: u64,
    timescale: Timescale,
}

/// One step of the scope tree, in declaration order (see [`Header::walk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declaration<'a> {
    /// Open a scope (a module) with this name.
    Scope(&'a str),
    /// Close the innermost open scope.
    Upscope,
    /// A signal in the innermost open scope.
    Var {
        /// Its position in the writer's selection.
        slot: usize,
        /// The last component of its path.
        name: &'a str,
        /// Bit width, `1..=64`.
        width: u32,
    },
}

impl Header<'_> {
    /// The clock frequency the writer was created with.
    pub fn clock_hz(&self) -> u64 {
        self.clock_hz
    }

    /// The timescale chosen for the clock.
    pub fn timescale(&self) -> Timescale {
        self.timescale
    }

    /// Number of selected signals (slots).
    pub fn slots(&self) -> usize {
        self.selected.len()
    }

    /// The selected signal in slot `slot`.
    pub fn signal(&self, slot: usize) -> &SignalSpec {
        &self.signals[self.selected[slot]]
    }

    /// Calls `f` for every scope, end of scope and signal: signals sharing a path prefix
    /// share the scope, and scopes come in order of first appearance.
    pub fn walk(
        &self,
        mut f: impl FnMut(Declaration<'_>) -> Result<(), WaveError>,
    ) -> Result<(), WaveError> {
        // Explicit stack instead of recursion: path depth is caller-controlled.
        let nodes = &self.tree.nodes;
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        while let Some((node, pos)) = stack.pop() {
            let Some(item) = nodes[node].items.get(pos) else {
                if node != 0 {
                    f(Declaration::Upscope)?;
                }
                continue;
            };
            stack.push((node, pos + 1));
            match *item {
                Item::Scope(child) => {
                    f(Declaration::Scope(nodes[child].name))?;
                    stack.push((child, 0));
                }
                Item::Var(slot) => {
                    let spec = self.signal(slot);
                    f(Declaration::Var {
                        slot,
                        name: spec.path.rsplit('.').next().unwrap_or_default(),
                        width: spec.width,
                    })?;
                }
            }
        }
        Ok(())
    }
}

impl<E: NewEncoder> WaveWriter<E> {
    /// Validates and selects the signals (see [`with_encoder`](Self::with_encoder)), writes
    /// the header for those that pass `filter` into `out`, and returns a writer ready for
    /// [`sample`](Self::sample).
    pub fn new(
        out: E::Output,
        signals: &[SignalSpec],
        clock_hz: u64,
        filter: &SignalFilter,
        window: Window,
    ) -> Result<Self, WaveError> {
        Self::with_encoder(signals, clock_hz, filter, window, |h| E::new(out, h))
    }
}

impl<E: Encoder> WaveWriter<E> {
    /// Validates the signals, selects those that pass `filter`, lets `encoder` write the
    /// header for them, and returns a writer ready for [`sample`](Self::sample).
    ///
    /// Errors: a bad clock; a signal whose width is not `1..=64`, whose path has fewer
    /// than two components, an empty component, or characters that viewers misparse
    /// (whitespace, non-ASCII, `[`, `]`, a leading `$`); two signals with the same path; a
    /// selected signal whose path is also the scope of another selected signal; a glob of
    /// `filter` that matches no signal ([`WaveError::NoMatch`], with the closest paths);
    /// and whatever `encoder` returns.
    pub fn with_encoder(
        signals: &[SignalSpec],
        clock_hz: u64,
        filter: &SignalFilter,
        window: Window,
        encoder: impl FnOnce(&Header<'_>) -> Result<E, WaveError>,
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
        filter.check_matches(signals)?;
        let selected: Vec<usize> = (0..signals.len())
            .filter(|&i| filter.matches(&signals[i].path))
            .collect();
        let header = Header {
            signals,
            selected: &selected,
            tree: ScopeTree::build(signals, &selected)?,
            clock_hz,
            timescale,
        };
        let enc = encoder(&header)?;
        let slots = selected
            .iter()
            .map(|&index| SlotState {
                index,
                mask: mask(signals[index].width),
                prev: 0,
            })
            .collect();
        Ok(Self {
            enc,
            slots,
            selected,
            timescale,
            window,
            last_cycle: None,
            last_dumped_cycle: None,
        })
    }

    /// Indices (into the `signals` given to the constructor) of the signals that passed the
    /// filter, in declaration order. `sample`'s callback is asked for exactly these.
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
    /// [`selected`](Self::selected)) and returns the current value; bits above the
    /// signal's width are ignored. Outside the window nothing is called or written. At the
    /// first cycle inside the window, all values are written (VCD: under `$dumpvars`);
    /// after that a timestamp and the changed values are written only if something changed.
    ///
    /// Cycles must strictly increase from call to call (inside the window or not); a
    /// repeated or earlier cycle is an error and writes nothing.
    pub fn sample(&mut self, cycle: u64, value: impl FnMut(usize) -> u64) -> Result<(), WaveError> {
        self.sample_slots(cycle, 0..self.selected.len(), value)
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

        if self.last_dumped_cycle.is_none() {
            for s in &mut self.slots {
                s.prev = value(s.index) & s.mask;
            }
            let values: Vec<u64> = self.slots.iter().map(|s| s.prev).collect();
            self.enc.time(time)?;
            self.enc.initial(&values)?;
        } else {
            let mut timed = false;
            for k in slots {
                let s = &mut self.slots[k];
                let v = value(s.index) & s.mask;
                if v != s.prev {
                    s.prev = v;
                    if !timed {
                        self.enc.time(time)?;
                        timed = true;
                    }
                    self.enc.change(k, v)?;
                }
            }
        }
        self.last_dumped_cycle = Some(cycle);
        Ok(())
    }

    /// Writes a closing timestamp one cycle after the last dumped cycle (so the viewer draws
    /// the last values over a full cycle), completes the file, and returns the inner writer.
    /// If no cycle inside the window was sampled, the file has a header and no value changes.
    pub fn finish(self) -> Result<E::Output, WaveError> {
        // `sample` checked that this does not overflow.
        let end = self
            .last_dumped_cycle
            .map(|last| (last + 1) * self.timescale.ticks_per_cycle());
        self.enc.finish(end)
    }
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
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

/// Scopes of the selected signals, in order of first appearance, so that signals of one
/// module are declared under a single scope even when they are not adjacent in the caller's
/// list.
struct ScopeTree<'a> {
    nodes: Vec<ScopeNode<'a>>,
}

struct ScopeNode<'a> {
    name: &'a str,
    items: Vec<Item>,
}

enum Item {
    Scope(usize),
    /// Position in `selected` (the writer's slot).
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(mask(1), 1);
        assert_eq!(mask(20), 0xF_FFFF);
        assert_eq!(mask(63), u64::MAX >> 1);
        assert_eq!(mask(64), u64::MAX);
    }
}
