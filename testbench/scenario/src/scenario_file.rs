//! Scenario text within bounded memory.
//!
//! While it parses a document, the TOML parser holds up to about 80 bytes per byte of
//! text (its tokens and events, then the tree of values: 1.3 GB for a 16 MiB array of
//! small integers). So no more than [`MAX_PART_BYTES`] is parsed at once:
//! - a scan of the TOML tokens (the `toml_parser` lexer, which allocates nothing) finds the
//!   tables of the top-level arrays [`ARRAYS`] (`[[flows]]`, ...) before anything is
//!   parsed, and more than [`MAX_FLOWS`] flows are refused at once;
//! - each of those tables, with the sub-tables that follow it (`[flows.pattern]`, ...),
//!   is parsed on its own, one at a time, and the rest of the document without them.
//!
//! A text the scan cannot split (a table header whose quoted key has escapes, or a
//! sub-table of an array's last table after another table) is parsed whole. Syntax errors
//! give the file's line and column, in the parser's own format.

use crate::{ScenarioError, MAX_FLOWS};
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use toml_parser::lexer::{Token, TokenKind};
use toml_parser::Source;

/// Largest scenario file, bytes.
pub const MAX_SCENARIO_BYTES: usize = 16 << 20;
/// Largest piece parsed at once, bytes: one table of an array of [`ARRAYS`], the rest of
/// the file, or a file the scan cannot split.
pub const MAX_PART_BYTES: usize = 1 << 20;
/// The top-level arrays of tables whose tables are parsed one at a time.
pub const ARRAYS: [&str; 3] = ["links", "flows", "pfc_script"];

/// One table of an array of [`ARRAYS`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    array: &'static str,
    range: Range<usize>,
}

/// A scenario text and where the tables of its arrays are.
#[derive(Debug)]
pub struct Layout<'a> {
    text: &'a str,
    /// In file order; `None`: the text is parsed whole.
    parts: Option<Vec<Part>>,
}

impl<'a> Layout<'a> {
    /// Check the size of `text` and its number of flows, and find the tables.
    pub fn scan(text: &'a str) -> Result<Self, ScenarioError> {
        if text.len() > MAX_SCENARIO_BYTES {
            return Err(too_long(text.len()));
        }
        let parts = split(text);
        let Some(parts) = &parts else {
            if text.len() > MAX_PART_BYTES {
                return Err(ScenarioError::new(
                    "(file)",
                    format!("{} bytes in one piece (a table header the reader cannot split at: a quoted key with escapes, or a sub-table of an array's last table after another table); allowed: at most {MAX_PART_BYTES}", text.len()),
                ));
            }
            return Ok(Self { text, parts: None });
        };
        check_flow_count(parts.iter().filter(|p| p.array == "flows").count())?;
        let mut index = [0usize; ARRAYS.len()];
        for p in parts {
            let k = ARRAYS.iter().position(|&a| a == p.array).unwrap_or(0);
            if p.range.len() > MAX_PART_BYTES {
                return Err(ScenarioError::new(
                    format!("{}[{}]", p.array, index[k]),
                    format!(
                        "the table is {} bytes; allowed: at most {MAX_PART_BYTES}",
                        p.range.len()
                    ),
                ));
            }
            index[k] += 1;
        }
        let rest = text.len() - parts.iter().map(|p| p.range.len()).sum::<usize>();
        if rest > MAX_PART_BYTES {
            return Err(ScenarioError::new(
                "(file)",
                format!("{rest} bytes outside the [[links]], [[flows]] and [[pfc_script]] tables; allowed: at most {MAX_PART_BYTES}"),
            ));
        }
        Ok(Self {
            text,
            parts: Some(parts.clone()),
        })
    }

    /// Everything but the tables of the arrays, parsed.
    pub fn top(&self) -> Result<toml::Table, ScenarioError> {
        let parts = self.parts.as_deref().unwrap_or_default();
        // Pieces of the rest: (offset in `rest`, offset in the text).
        let mut pieces = Vec::with_capacity(parts.len() + 1);
        let mut rest = String::new();
        let mut at = 0;
        for r in parts
            .iter()
            .map(|p| &p.range)
            .chain([&(self.text.len()..self.text.len())])
        {
            pieces.push((rest.len(), at));
            rest.push_str(&self.text[at..r.start]);
            at = r.end;
        }
        rest.parse()
            .map_err(|e| syntax_error(self.text, &e, |pos| map_offset(&pieces, pos)))
    }

    /// The tables of `array`, parsed one at a time, if the scan found any (`None`: they
    /// are in [`top`](Self::top), as the `array` key).
    pub fn tables(
        &self,
        array: &'static str,
    ) -> Option<impl Iterator<Item = Result<toml::Table, ScenarioError>> + '_> {
        let parts = self.parts.as_ref()?;
        let mut mine = parts.iter().filter(move |p| p.array == array).peekable();
        mine.peek()?;
        Some(mine.map(move |p| {
            let start = p.range.start;
            let mut doc: toml::Table = self.text[p.range.clone()]
                .parse()
                .map_err(|e| syntax_error(self.text, &e, |pos| start + pos))?;
            // An array-of-tables header and what follows up to the next other header.
            if let Some(toml::Value::Array(mut entries)) = doc.remove(array) {
                if let (Some(toml::Value::Table(t)), true) = (entries.pop(), entries.is_empty()) {
                    return Ok(t);
                }
            }
            Err(ScenarioError::new(
                array,
                format!("a [[{array}]] table did not parse as one table (scan error)"),
            ))
        }))
    }
}

/// Read a scenario file of at most [`MAX_SCENARIO_BYTES`]; a longer one is refused after
/// reading that much, for its flow count if that much already holds too many flows.
pub fn read(path: &Path) -> Result<String, ScenarioError> {
    let io = |e: std::io::Error| ScenarioError::new("(file)", e.to_string());
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_SCENARIO_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_SCENARIO_BYTES {
        let head = String::from_utf8_lossy(&bytes);
        // Whole lines only: a header cut short cannot be named.
        let head = &head[..head.rfind('\n').unwrap_or(0)];
        let flows = split(head).map_or(0, |p| p.iter().filter(|p| p.array == "flows").count());
        if flows > MAX_FLOWS {
            return Err(ScenarioError::new(
                "flows",
                format!(
                    "{flows} flows in the first {MAX_SCENARIO_BYTES} bytes alone are too many; allowed: at most {MAX_FLOWS}"
                ),
            ));
        }
        // A device or a pipe (`/dev/zero`) has no length: only "more than the limit" is known.
        return Err(match std::fs::metadata(path) {
            Ok(m) if m.is_file() => too_long(m.len() as usize),
            _ => ScenarioError::new(
                "(file)",
                format!("more than {MAX_SCENARIO_BYTES} bytes is too long; allowed: at most {MAX_SCENARIO_BYTES} (16 MiB)"),
            ),
        });
    }
    String::from_utf8(bytes)
        .map_err(|e| ScenarioError::new("(file)", format!("not UTF-8 text: {e}")))
}

fn too_long(len: usize) -> ScenarioError {
    ScenarioError::new(
        "(file)",
        format!("{len} bytes is too long; allowed: at most {MAX_SCENARIO_BYTES} (16 MiB)"),
    )
}

/// More than [`MAX_FLOWS`] flows are refused.
pub fn check_flow_count(n: usize) -> Result<(), ScenarioError> {
    if n > MAX_FLOWS {
        return Err(ScenarioError::new(
            "flows",
            format!("{n} flows are too many; allowed: at most {MAX_FLOWS}"),
        ));
    }
    Ok(())
}

/// The text offset of `pos` in a string made of `pieces` `(offset there, offset in text)`.
fn map_offset(pieces: &[(usize, usize)], pos: usize) -> usize {
    let i = pieces
        .partition_point(|&(at, _)| at <= pos)
        .saturating_sub(1);
    let (at, text_at) = pieces[i];
    text_at + (pos - at)
}

/// A syntax error found in a piece of `text`, shown as the parser shows one in the whole
/// text: line, column, the line with the span marked, the message. `to_text` maps an
/// offset in the piece to one in `text`.
fn syntax_error(
    text: &str,
    e: &toml::de::Error,
    to_text: impl Fn(usize) -> usize,
) -> ScenarioError {
    let Some(span) = e.span() else {
        return ScenarioError::new("(file)", e.message());
    };
    let start = to_text(span.start).min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    if e.message().contains("as i128") {
        if let Some(err) = huge_integer(text, line_start, start, span.len()) {
            return err;
        }
    }
    let line_num = text[..line_start].matches('\n').count() + 1;
    let content = text[line_start..].split('\n').next().unwrap_or_default();
    let column = text[line_start..start].chars().count();
    let marks = span.len().min(content.len().saturating_sub(column)).max(1);
    let gutter = " ".repeat(line_num.to_string().len() + 1);
    ScenarioError::new(
        "(file)",
        format!(
            "TOML parse error at line {line_num}, column {}\n{gutter}|\n{line_num} | {content}\n{gutter}|{}{}\n{}",
            column + 1,
            " ".repeat(column + 1),
            "^".repeat(marks),
            e.message().trim_end()
        ),
    )
}

/// An integer past TOML's 64 bits at `start` (`len` digits) of the `key = value` line at
/// `line_start`: the key's dotted path (from the last table header above it, and the
/// indices of an array on the line) and its documented range, if it is an integer key.
fn huge_integer(text: &str, line_start: usize, start: usize, len: usize) -> Option<ScenarioError> {
    let (key, value_start) = text[line_start..start].split_once('=')?;
    // Inside an array on the same line: the indices down to the number.
    let mut indices: Vec<usize> = Vec::new();
    for c in value_start.chars() {
        match c {
            '[' => indices.push(0),
            ']' => _ = indices.pop(),
            ',' => *indices.last_mut()? += 1,
            _ => {}
        }
    }
    let mut table = String::new();
    let above = &text[..line_start];
    if let Some(header) = above
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
    {
        let name = header.trim_start_matches('[');
        let name = name[..name.find(']')?].trim();
        // An array of tables (`[[flows]]`, `[[switch.hcf]]`) gets its index; so does the
        // first key of a sub-table below one (`[flows.pattern]`).
        let count = |h: &str| above.lines().filter(|l| l.trim() == h).count();
        let (first, rest) = name.split_once('.').unwrap_or((name, ""));
        table = match count(&format!("[[{first}]]")) {
            _ if header.starts_with("[[") => format!("{name}[{}].", count(header) - 1),
            0 => format!("{name}."),
            n => format!("{first}[{}].{rest}.", n - 1),
        };
    }
    let mut field = format!("{table}{}", key.trim());
    for i in indices {
        field += &format!("[{i}]");
    }
    let allowed = crate::int_keys::allowed(&field)?;
    let value = &text[start..(start + len).min(text.len())];
    Some(ScenarioError::new(
        field,
        format!("{value} is past the largest TOML integer, 2^63 - 1; allowed: {allowed}"),
    ))
}

/// The tables of the top-level arrays of [`ARRAYS`] in `text`, each running to the next
/// top-level header outside its array (or the end); `None` if a header's key cannot be
/// named without decoding it, or a sub-table of an array (`[flows.pattern]`) comes after
/// another table: it belongs to the array's last table, which the scan does not follow.
fn split(text: &str) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let mut open: Option<(&'static str, usize)> = None;
    let mut tokens = Source::new(text).lex();
    // At the start of a line, outside any value: a `[` opens a table header.
    let mut line_start = true;
    let mut in_value = false;
    // Arrays and inline tables open inside the current value.
    let mut depth = 0u32;
    while let Some(t) = tokens.next() {
        match t.kind() {
            TokenKind::Eof => break,
            TokenKind::Whitespace | TokenKind::Comment => {}
            TokenKind::Newline => {
                if depth == 0 {
                    line_start = true;
                    in_value = false;
                }
            }
            TokenKind::LeftSquareBracket if line_start => {
                let start = t.span().start();
                let (array_table, key) = header(text, &mut tokens, &t)?;
                let array = ARRAYS.iter().find(|&&a| key.first() == Some(&a));
                let close = |open: Option<(&'static str, usize)>, parts: &mut Vec<Part>| {
                    if let Some((array, s)) = open {
                        parts.push(Part {
                            array,
                            range: s..start,
                        });
                    }
                };
                match array {
                    Some(&a) if array_table && key.len() == 1 => {
                        close(open.replace((a, start)), &mut parts);
                    }
                    Some(&a) => {
                        if open.is_none_or(|(o, _)| o != a) && parts.iter().any(|p| p.array == a) {
                            return None;
                        }
                        if open.is_some_and(|(o, _)| o != a) {
                            close(open.take(), &mut parts);
                        }
                    }
                    None => close(open.take(), &mut parts),
                }
                line_start = false;
            }
            kind => {
                line_start = false;
                match kind {
                    TokenKind::Equals if depth == 0 => in_value = true,
                    TokenKind::LeftSquareBracket | TokenKind::LeftCurlyBracket if in_value => {
                        depth += 1
                    }
                    TokenKind::RightSquareBracket | TokenKind::RightCurlyBracket if in_value => {
                        depth = depth.checked_sub(1)?
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some((array, s)) = open {
        parts.push(Part {
            array,
            range: s..text.len(),
        });
    }
    Some(parts)
}

/// Read a table header after its first `[`: whether it is an array of tables (`[[...]]`)
/// and its dotted key; `None` for anything but plain keys.
fn header<'t>(
    text: &'t str,
    tokens: &mut impl Iterator<Item = Token>,
    first: &Token,
) -> Option<(bool, Vec<&'t str>)> {
    let mut key = Vec::new();
    let mut array = false;
    let mut want_key = true;
    loop {
        let t = tokens.next()?;
        let span = t.span();
        let raw = &text[span.start()..span.end()];
        match t.kind() {
            TokenKind::LeftSquareBracket
                if key.is_empty() && !array && span.start() == first.span().end() =>
            {
                array = true;
            }
            TokenKind::Whitespace => {}
            TokenKind::Dot if !want_key => want_key = true,
            TokenKind::Atom if want_key => {
                key.push(raw);
                want_key = false;
            }
            TokenKind::BasicString | TokenKind::LiteralString
                if want_key && raw.len() >= 2 && !raw.contains('\\') =>
            {
                key.push(&raw[1..raw.len() - 1]);
                want_key = false;
            }
            TokenKind::RightSquareBracket if !want_key => {
                if array {
                    let close = tokens.next()?;
                    if close.kind() != TokenKind::RightSquareBracket
                        || close.span().start() != span.end()
                    {
                        return None;
                    }
                }
                return Some((array, key));
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Vec<(&str, &str)> {
        split(text)
            .unwrap()
            .into_iter()
            .map(|p| (p.array, &text[p.range]))
            .collect()
    }

    /// A device has no length (`metadata().len()` is 0): the message says what was read.
    #[test]
    fn an_endless_device_is_more_than_the_limit_not_zero_bytes() {
        let e = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.message,
            format!("more than {MAX_SCENARIO_BYTES} bytes is too long; allowed: at most {MAX_SCENARIO_BYTES} (16 MiB)")
        );
    }

    #[test]
    fn tables_run_to_the_next_header_outside_their_array() {
        let text = "name = \"[[flows]]\"\n[run]\ncycles = 1\n[[flows]]\nsrc = 0\ncdf = [\n[64, 0.5],\n[1500, 1.0]]\n[flows.pattern]\ntcp = {}\n[[ \"flows\" ]]\nsrc = 1\n[[links]]\nport = 0\n[switch]\nports = 8\n[[flows]] # last\nsrc = 2\n";
        assert_eq!(
            parts(text),
            [
                (
                    "flows",
                    "[[flows]]\nsrc = 0\ncdf = [\n[64, 0.5],\n[1500, 1.0]]\n[flows.pattern]\ntcp = {}\n"
                ),
                ("flows", "[[ \"flows\" ]]\nsrc = 1\n"),
                ("links", "[[links]]\nport = 0\n"),
                ("flows", "[[flows]] # last\nsrc = 2\n")
            ]
        );
    }

    #[test]
    fn strings_comments_and_values_hide_headers() {
        let text = "description = \"\"\"\n[[flows]]\n\"\"\"\n# [[flows]]\nx = [\n[[1]]\n]\n[[switch.hcf]]\nqueue = 0\n";
        assert!(parts(text).is_empty());
        assert!(
            parts("[[flows.x]]\n").is_empty(),
            "a sub-table is not a flow"
        );
    }

    #[test]
    fn the_scan_gives_up_on_keys_it_cannot_name() {
        assert_eq!(split("[[\"fl\\u006fws\"]]\nsrc = 0\n"), None);
        assert_eq!(split("[ [flows]]\n"), None);
        assert_eq!(
            split("[[flows]]\nsrc = 0\n[run]\n[flows.pattern]\ntcp = {}\n"),
            None,
            "the last flow's sub-table after [run]"
        );
    }

    #[test]
    fn syntax_errors_give_the_files_line_and_column() {
        let text =
            "[run]\ncycles = 10\n[[flows]]\nsrc = 0\n\n[[flows]]\ndst = = 1\n[switch]\nx = \n";
        let whole = text.parse::<toml::Table>().unwrap_err().to_string();
        let layout = Layout::scan(text).unwrap();
        let e = layout.tables("flows").unwrap().nth(1).unwrap().unwrap_err();
        assert_eq!(e.message, whole.trim_end());
        assert!(e.message.contains("at line 7, column 7"), "{}", e.message);
        let e = layout.top().unwrap_err();
        assert!(
            e.message
                .starts_with("TOML parse error at line 9, column 5\n  |\n9 | x = \n"),
            "{}",
            e.message
        );
        let huge = "[run]\ncycles = 1\n[[flows]]\nsrc = 0\n[[flows]]\nstart_cycle = 99999999999999999999\n";
        let e = Layout::scan(huge)
            .unwrap()
            .tables("flows")
            .unwrap()
            .nth(1)
            .unwrap()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows[1].start_cycle: 99999999999999999999 is past the largest TOML integer, 2^63 - 1; allowed: any cycle, 0 or later"
        );
    }
}
