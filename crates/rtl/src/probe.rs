//! Probes: a block names each of its wires once, with its width and its value, in one
//! method ([`Probed::probe`]); a visitor walks them. The same walk declares the signals of
//! a waveform ([`Declare`]) and reads their values after an edge ([`Read`]), so a wire
//! cannot be declared without a value or shown under another wire's name.

use std::fmt::{self, Write};

/// A name in the probe hierarchy: a word (`sub_free`), or a word and an index with a fixed
/// number of digits (`p` 3 with 2 digits is `p03`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name {
    word: &'static str,
    index: u32,
    /// 0: no index.
    digits: u8,
}

impl Name {
    pub const fn word(word: &'static str) -> Self {
        Self {
            word,
            index: 0,
            digits: 0,
        }
    }

    /// `word` followed by `index` zero-padded to `digits` (at least 1) digits.
    pub const fn indexed(word: &'static str, index: u32, digits: u8) -> Self {
        Self {
            word,
            index,
            digits: if digits == 0 { 1 } else { digits },
        }
    }
}

impl From<&'static str> for Name {
    fn from(word: &'static str) -> Self {
        Self::word(word)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word)?;
        if self.digits > 0 {
            write!(f, "{:0w$}", self.index, w = self.digits as usize)?;
        }
        Ok(())
    }
}

/// What walks the probes of a block.
pub trait Visit: Sized {
    /// A wire of `width` bits named `name` in the current scope, and its value now.
    fn wire(&mut self, name: impl Into<Name>, width: u32, value: u64);

    /// A sub-scope named `name`; `inside` visits what it holds.
    fn scope(&mut self, name: impl Into<Name>, inside: impl FnOnce(&mut Self));

    /// The probes of `unit`, in a sub-scope named `name`.
    fn unit(&mut self, name: impl Into<Name>, unit: &impl Probed) {
        self.scope(name, |v| unit.probe(v));
    }

    /// Two units of the same kind side by side, wire by wire ([`interleave`]). A visitor
    /// that wants only the values overrides this to skip the names.
    fn pair<U: Probed>(&mut self, a: (Name, &U), b: (Name, &U)) {
        let (ra, rb) = (Record::of(a.1), Record::of(b.1));
        assert_eq!(ra.n, rb.n, "interleave: units of different shapes");
        for (ea, eb) in ra.entries[..ra.n].iter().zip(&rb.entries[..rb.n]) {
            self.scope(a.0, |v| emit(v, &ea.path[..ea.len], ea.width, ea.value));
            self.scope(b.0, |v| emit(v, &eb.path[..eb.len], eb.width, eb.value));
        }
    }
}

/// A block whose wires can be observed.
pub trait Probed {
    /// Visit every wire, always in the same order.
    fn probe<V: Visit>(&self, v: &mut V);
}

/// Collects the dot-separated path and the width of every wire.
#[derive(Debug, Default)]
pub struct Declare {
    prefix: String,
    pub wires: Vec<(String, u32)>,
}

impl Declare {
    /// Paths start with `root` (e.g. `top.mmu`).
    pub fn new(root: &str) -> Self {
        Self {
            prefix: root.to_string(),
            wires: Vec::new(),
        }
    }
}

impl Visit for Declare {
    fn wire(&mut self, name: impl Into<Name>, width: u32, _: u64) {
        let name = name.into();
        let path = if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        };
        self.wires.push((path, width));
    }

    fn scope(&mut self, name: impl Into<Name>, inside: impl FnOnce(&mut Self)) {
        let len = self.prefix.len();
        if len > 0 {
            self.prefix.push('.');
        }
        write!(self.prefix, "{}", name.into()).expect("writing to a String");
        inside(self);
        self.prefix.truncate(len);
    }
}

/// Writes the current values, in declaration order, into a slice as long as the walk.
#[derive(Debug)]
pub struct Read<'a> {
    out: &'a mut [u64],
    at: usize,
}

impl<'a> Read<'a> {
    pub fn new(out: &'a mut [u64]) -> Self {
        Self { out, at: 0 }
    }

    /// Values written so far.
    pub fn len(&self) -> usize {
        self.at
    }

    pub fn is_empty(&self) -> bool {
        self.at == 0
    }
}

impl Visit for Read<'_> {
    #[inline]
    fn wire(&mut self, _: impl Into<Name>, _: u32, value: u64) {
        self.out[self.at] = value;
        self.at += 1;
    }

    #[inline]
    fn scope(&mut self, _: impl Into<Name>, inside: impl FnOnce(&mut Self)) {
        inside(self);
    }

    /// Each unit's values into a buffer of its own, then alternated: no names recorded
    /// (this runs for every dirty block of every sampled cycle).
    fn pair<U: Probed>(&mut self, a: (Name, &U), b: (Name, &U)) {
        let mut va = [0u64; MAX_WIRES];
        let mut vb = [0u64; MAX_WIRES];
        let mut ra = Read::new(&mut va);
        a.1.probe(&mut ra);
        let n = ra.len();
        let mut rb = Read::new(&mut vb);
        b.1.probe(&mut rb);
        assert_eq!(n, rb.len(), "interleave: units of different shapes");
        for (x, y) in va[..n].iter().zip(&vb[..n]) {
            self.out[self.at] = *x;
            self.out[self.at + 1] = *y;
            self.at += 2;
        }
    }
}

/// Every probe of `unit` as (path below it, width, value); for tests and small tools.
pub fn probes_of(unit: &impl Probed) -> Vec<(String, u32, u64)> {
    let mut d = Declare::new("");
    unit.probe(&mut d);
    let mut values = vec![0; d.wires.len()];
    unit.probe(&mut Read::new(&mut values));
    d.wires
        .into_iter()
        .zip(values)
        .map(|((path, width), value)| (path, width, value))
        .collect()
}

/// Wires a unit may have for [`interleave`], and how deep its scopes may nest.
const MAX_WIRES: usize = 16;
const MAX_DEPTH: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Scopes below the unit, then the wire's own name.
    path: [Name; MAX_DEPTH],
    len: usize,
    width: u32,
    value: u64,
}

/// Records a unit's walk on the stack (no allocation: `interleave` runs in every sample).
struct Record {
    scopes: [Name; MAX_DEPTH],
    depth: usize,
    entries: [Entry; MAX_WIRES],
    n: usize,
}

impl Record {
    fn of(unit: &impl Probed) -> Self {
        let none = Name::word("");
        let mut r = Self {
            scopes: [none; MAX_DEPTH],
            depth: 0,
            entries: [Entry {
                path: [none; MAX_DEPTH],
                len: 0,
                width: 0,
                value: 0,
            }; MAX_WIRES],
            n: 0,
        };
        unit.probe(&mut r);
        r
    }
}

impl Visit for Record {
    fn wire(&mut self, name: impl Into<Name>, width: u32, value: u64) {
        assert!(
            self.n < MAX_WIRES,
            "interleave: more than {MAX_WIRES} wires"
        );
        assert!(self.depth < MAX_DEPTH, "interleave: scopes nest too deep");
        let mut path = self.scopes;
        path[self.depth] = name.into();
        self.entries[self.n] = Entry {
            path,
            len: self.depth + 1,
            width,
            value,
        };
        self.n += 1;
    }

    fn scope(&mut self, name: impl Into<Name>, inside: impl FnOnce(&mut Self)) {
        assert!(
            self.depth + 1 < MAX_DEPTH,
            "interleave: scopes nest too deep"
        );
        self.scopes[self.depth] = name.into();
        self.depth += 1;
        inside(self);
        self.depth -= 1;
    }
}

fn emit<V: Visit>(v: &mut V, path: &[Name], width: u32, value: u64) {
    match path {
        [name] => v.wire(*name, width, value),
        [scope, rest @ ..] => v.scope(*scope, |v| emit(v, rest, width, value)),
        [] => unreachable!("a recorded wire has a name"),
    }
}

/// Two units of the same kind side by side, wire by wire: `a.x, b.x, a.y, b.y, ...`, each
/// under its own scope (`a` and `b` are the scope names). For units of at most 16 wires.
pub fn interleave<V: Visit, U: Probed>(v: &mut V, a: (Name, &U), b: (Name, &U)) {
    v.pair(a, b);
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair {
        x: u64,
        inner: u64,
    }

    impl Probed for Pair {
        fn probe<V: Visit>(&self, v: &mut V) {
            v.wire("x", 4, self.x);
            v.scope(Name::indexed("q", 3, 1), |v| v.wire("inner", 8, self.inner));
        }
    }

    #[test]
    fn declare_and_read_walk_the_same_wires() {
        let p = Pair { x: 5, inner: 200 };
        assert_eq!(
            probes_of(&p),
            vec![("x".to_string(), 4, 5), ("q3.inner".to_string(), 8, 200)]
        );
        let mut d = Declare::new("top");
        d.unit(Name::indexed("p", 7, 2), &p);
        assert_eq!(d.wires[1].0, "top.p07.q3.inner");
    }

    #[test]
    fn interleave_alternates_wire_by_wire() {
        let (a, b) = (Pair { x: 1, inner: 2 }, Pair { x: 3, inner: 4 });
        let mut d = Declare::new("top");
        interleave(&mut d, ("a".into(), &a), ("b".into(), &b));
        let paths: Vec<&str> = d.wires.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(
            paths,
            ["top.a.x", "top.b.x", "top.a.q3.inner", "top.b.q3.inner"]
        );
        let mut values = [0; 4];
        interleave(
            &mut Read::new(&mut values),
            ("a".into(), &a),
            ("b".into(), &b),
        );
        assert_eq!(values, [1, 3, 2, 4]);
    }
}
