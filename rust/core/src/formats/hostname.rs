//! `hostname` (RFC 1123, with its A-labels checked as IDNA labels) and `idn-hostname` (RFC 5890
//! to 5893: UTS 46 processing by the `idna` crate, then the IDNA 2008 rules UTS 46 leaves out).
use idna::uts46::{AsciiDenyList, DnsLength, Hyphens, Uts46};
use unicode_general_category::{GeneralCategory, get_general_category};

/// RFC 1123 hostname: dot-separated labels of letters, digits and inner hyphens, at most 253
/// characters and 63 a label, no trailing dot. A label with `--` in its third and fourth places
/// must be an `xn--` A-label, and an A-label must decode to a valid IDNA label.
pub fn is_hostname(value: &str) -> bool {
    if !is_ascii_hostname(value) {
        return false;
    }
    value.split('.').all(|label| {
        let reserved = label.get(2..4) == Some("--");
        let a_label = label
            .get(..4)
            .is_some_and(|p| p.eq_ignore_ascii_case("xn--"));
        if !a_label {
            return !reserved;
        }
        let (unicode, outcome) =
            Uts46::new().to_unicode(label.as_bytes(), AsciiDenyList::STD3, Hyphens::Check);
        outcome.is_ok() && !unicode.is_empty() && idna2008_label(&unicode)
    })
}

/// The letters-digits-hyphens shape of a hostname, without the IDNA checks.
fn is_ascii_hostname(value: &str) -> bool {
    if value.is_empty() || value.len() > 253 {
        return false;
    }
    value.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    })
}

/// An internationalized hostname: valid after UTS 46 processing (mapping, STD3 rules, hyphens,
/// joiners, bidi, DNS lengths), and every label valid under the IDNA 2008 rules below.
pub fn is_idn_hostname(value: &str) -> bool {
    let Ok(ascii) = Uts46::new().to_ascii(
        value.as_bytes(),
        AsciiDenyList::STD3,
        Hyphens::Check,
        DnsLength::Verify,
    ) else {
        return false;
    };
    if !is_hostname(&ascii) {
        return false;
    }
    let (unicode, outcome) =
        Uts46::new().to_unicode(ascii.as_bytes(), AsciiDenyList::STD3, Hyphens::Check);
    outcome.is_ok()
        && unicode
            .split('.')
            .all(|label| !label.is_empty() && idna2008_label(label))
}

/// True for the general categories from which RFC 5892 derives most PVALID code points.
const fn letter_mark_or_digit(category: GeneralCategory) -> bool {
    matches!(
        category,
        GeneralCategory::UppercaseLetter
            | GeneralCategory::LowercaseLetter
            | GeneralCategory::TitlecaseLetter
            | GeneralCategory::ModifierLetter
            | GeneralCategory::OtherLetter
            | GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::DecimalNumber
    )
}

/// The IDNA 2008 rules on a U-label that UTS 46 does not apply: no leading combining mark
/// (RFC 5891 section 4.2.3.2), the DISALLOWED exceptions and the CONTEXTO rules of RFC 5892
/// appendix A, and code points outside letters, marks and digits.
fn idna2008_label(label: &str) -> bool {
    let first_is_mark = label.chars().next().is_some_and(|first| {
        matches!(
            get_general_category(first),
            GeneralCategory::SpacingMark
                | GeneralCategory::NonspacingMark
                | GeneralCategory::EnclosingMark
        )
    });
    if first_is_mark {
        return false;
    }
    let chars: Vec<char> = label.chars().collect();
    let (mut katakana_middle_dot, mut japanese) = (false, false);
    let (mut arabic_indic, mut extended_arabic_indic) = (false, false);
    for (index, &current) in chars.iter().enumerate() {
        let previous = index.checked_sub(1).and_then(|i| chars.get(i)).copied();
        let next = chars.get(index + 1).copied();
        match current {
            // MIDDLE DOT: only between two `l` (Catalan).
            '\u{00B7}' if previous != Some('l') || next != Some('l') => return false,
            // Greek KERAIA: followed by Greek.
            '\u{0375}' if !next.is_some_and(|c| ('\u{0370}'..='\u{03FF}').contains(&c)) => {
                return false;
            }
            // Hebrew GERESH and GERSHAYIM: preceded by Hebrew.
            '\u{05F3}' | '\u{05F4}'
                if !previous.is_some_and(|c| ('\u{0590}'..='\u{05FF}').contains(&c)) =>
            {
                return false;
            }
            '\u{30FB}' => katakana_middle_dot = true,
            '\u{3040}'..='\u{309F}'
            | '\u{30A0}'..='\u{30FA}'
            | '\u{30FC}'..='\u{30FF}'
            | '\u{3400}'..='\u{4DBF}'
            | '\u{4E00}'..='\u{9FFF}'
            | '\u{20000}'..='\u{2A6DF}' => japanese = true,
            '\u{0660}'..='\u{0669}' => arabic_indic = true,
            '\u{06F0}'..='\u{06F9}' => extended_arabic_indic = true,
            // DISALLOWED although letters or marks (RFC 5892 section 2.6).
            '\u{0640}'
            | '\u{07FA}'
            | '\u{302E}'
            | '\u{302F}'
            | '\u{3031}'..='\u{3035}'
            | '\u{303B}' => return false,
            // PVALID or CONTEXT exceptions whose category would say otherwise.
            '\u{00DF}' | '\u{03C2}' | '\u{06FD}' | '\u{06FE}' | '\u{0F0B}' | '\u{3007}'
            | '\u{200C}' | '\u{200D}' | '\u{00B7}' | '\u{0375}' | '\u{05F3}' | '\u{05F4}' => {}
            other if !other.is_ascii() && !letter_mark_or_digit(get_general_category(other)) => {
                return false;
            }
            _ => {}
        }
    }
    // KATAKANA MIDDLE DOT needs Hiragana, Katakana or Han in the label; the two kinds of
    // Arabic-Indic digits do not mix.
    (!katakana_middle_dot || japanese) && !(arabic_indic && extended_arabic_indic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostnames() {
        assert!(is_hostname("www.example.com"));
        assert!(is_hostname("xn--bcher-kva.example"));
        assert!(is_hostname("a--b.example"));
        assert!(!is_hostname("-bad.example"));
        assert!(!is_hostname("ab--c.example"));
        assert!(!is_hostname("example.com."));
        assert!(!is_hostname("xn--X"));
        assert!(is_idn_hostname("실례.테스트"));
        assert!(!is_idn_hostname(""));
        assert!(!is_idn_hostname("〮실례.테스트"));
        assert!(!is_idn_hostname("a·b"));
        assert!(is_idn_hostname("l·l"));
    }
}
