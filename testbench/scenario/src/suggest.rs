//! "Did you mean": the allowed name closest to a misspelt one, added to the messages that
//! name an unknown word and list the allowed ones.

/// The name of `allowed` closest to `word`, if it is close enough: a normalised
/// Damerau-Levenshtein similarity of at least 0.6, which takes one transposition in a
/// three-letter name (`dhs` for `dsh`), where Jaro (clap's measure) finds no match.
pub fn closest<'a>(word: &str, allowed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    allowed
        .into_iter()
        .map(|a| (strsim::normalized_damerau_levenshtein(word, a), a))
        .filter(|&(similarity, _)| similarity >= 0.6)
        .max_by(|x, y| x.0.total_cmp(&y.0))
        .map(|(_, a)| a)
}

/// ` (did you mean "NAME"?)` for the closest allowed name, or nothing.
pub fn did_you_mean<'a>(word: &str, allowed: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, allowed).map_or(String::new(), |a| format!(" (did you mean {a:?}?)"))
}

/// `message` with the closest allowed name put after the unknown word, when it has one of
/// the two forms that list the allowed names: serde's (``unknown field `w`, expected one
/// of `a`, `b` ``, also `unknown variant` and ``expected `a` or `b` ``) and this
/// project's (`unknown profile "w"; allowed: a, b`).
pub(crate) fn suggest_in(message: &str) -> String {
    suggest_serde(message)
        .or_else(|| suggest_listed(message))
        .unwrap_or_else(|| message.to_string())
}

fn suggest_serde(message: &str) -> Option<String> {
    let start = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|m| message.find(m).map(|i| i + m.len()))?;
    let len = message[start..].find('`')?;
    let (word, rest) = (&message[start..start + len], &message[start + len + 1..]);
    let allowed = rest
        .split_once("expected ")?
        .1
        .split('`')
        .skip(1)
        .step_by(2);
    let best = closest(word, allowed)?;
    let head = &message[..start + len + 1];
    Some(format!("{head} (did you mean `{best}`?){rest}"))
}

fn suggest_listed(message: &str) -> Option<String> {
    let (head, list) = message.split_once("; allowed: ")?;
    let word = head.strip_suffix('"')?.rsplit_once('"')?.1;
    if !head.starts_with("unknown ") {
        return None;
    }
    let hint = did_you_mean(word, list.split(", "));
    (!hint.is_empty()).then(|| format!("{head}{hint}; allowed: {list}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_name_above_the_threshold_or_none() {
        let names = ["small-smoke", "fanin-burst", "ecm-fanin"];
        assert_eq!(closest("smal-smoke", names), Some("small-smoke"));
        assert_eq!(closest("ecm-fanim", names), Some("ecm-fanin"));
        assert_eq!(closest("zzz", names), None);
        assert_eq!(closest("dhs", ["sih", "dsh", "l2bm"]), Some("dsh"));
        assert_eq!(did_you_mean("zzz", names), "");
    }

    #[test]
    fn serde_messages_get_the_hint_after_the_word() {
        let m = "unknown field `alpah_log2`, expected one of `ports`, `alpha_log2`, `policy`";
        assert_eq!(
            suggest_in(m),
            "unknown field `alpah_log2` (did you mean `alpha_log2`?), expected one of `ports`, `alpha_log2`, `policy`"
        );
        let m = "unknown variant `dhs`, expected one of `sih`, `dsh`, `l2bm`";
        assert!(suggest_in(m).starts_with("unknown variant `dhs` (did you mean `dsh`?), "));
        let m = "unknown variant `fif`, expected `fifo` or `hcf`";
        assert!(suggest_in(m).contains("(did you mean `fifo`?)"));
    }

    #[test]
    fn listed_messages_get_the_hint_before_the_list() {
        let m = "unknown profile \"tomahwk\"; allowed: tomahawk, small";
        assert_eq!(
            suggest_in(m),
            "unknown profile \"tomahwk\" (did you mean \"tomahawk\"?); allowed: tomahawk, small"
        );
    }

    #[test]
    fn other_messages_and_far_words_are_left_alone() {
        for m in [
            "unknown field `zzzzzzzz`, expected one of `ports`, `policy`",
            "unknown profile \"zzzzzzzz\"; allowed: tomahawk, small",
            "5 is out of range; allowed: 0..=3",
            "invalid type: string \"x\", expected u32",
        ] {
            assert_eq!(suggest_in(m), m);
        }
    }
}
