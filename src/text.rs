//! Text cut to a size without splitting a character: the one rule every cap of the server
//! (tool descriptions, tool output, partial results, the workspace tools' answers, a stop's
//! reason) applies;
//! and the characters that hide what text says ([`is_hidden`]), which child tool
//! descriptions lose and the workspace tools' file names show escaped.

/// The longest prefix of `text` that is at most `max` bytes and ends on a character
/// boundary.
pub fn cut_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    // Index 0 is always a boundary, so this stops.
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` as it is if it is at most `max` bytes, else cut on a character boundary and ended
/// with "…", the whole within `max` bytes.
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    format!("{}…", cut_utf8(text, max.saturating_sub('…'.len_utf8())))
}

/// Characters that are invisible, or change how the text around them reads, without being
/// whitespace: every control character (Cc), every format character (Cf: zero-width
/// characters, bidi marks and overrides, the soft hyphen, invisible operators, Arabic and
/// other number signs, interlinear annotation marks, shorthand format controls, musical
/// beam marks, the tag characters used for "ASCII smuggling"), variation selectors, the
/// combining grapheme joiner, and the Hangul fillers, which render as nothing.
pub fn is_hidden(c: char) -> bool {
    c.is_control() || HIDDEN.iter().any(|&(low, high)| (low..=high).contains(&c))
}

/// Inclusive ranges of [`is_hidden`] characters beyond the controls: general category Cf as of
/// Unicode 16, plus the invisible characters of other categories.
const HIDDEN: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),   // soft hyphen
    ('\u{034F}', '\u{034F}'),   // combining grapheme joiner
    ('\u{0600}', '\u{0605}'),   // Arabic number signs
    ('\u{061C}', '\u{061C}'),   // Arabic letter mark
    ('\u{06DD}', '\u{06DD}'),   // Arabic end of ayah
    ('\u{070F}', '\u{070F}'),   // Syriac abbreviation mark
    ('\u{0890}', '\u{0891}'),   // Arabic pound and piastre marks above
    ('\u{08E2}', '\u{08E2}'),   // Arabic disputed end of ayah
    ('\u{115F}', '\u{1160}'),   // Hangul choseong and jungseong fillers
    ('\u{17B4}', '\u{17B5}'),   // Khmer inherent vowels (invisible)
    ('\u{180B}', '\u{180F}'),   // Mongolian variation selectors, vowel separator
    ('\u{200B}', '\u{200F}'),   // zero-width space, joiners, LRM, RLM
    ('\u{202A}', '\u{202E}'),   // bidi embeddings and overrides
    ('\u{2060}', '\u{206F}'),   // word joiner, invisible operators, bidi isolates, …
    ('\u{3164}', '\u{3164}'),   // Hangul filler
    ('\u{FE00}', '\u{FE0F}'),   // variation selectors
    ('\u{FEFF}', '\u{FEFF}'),   // zero-width no-break space (byte order mark)
    ('\u{FFA0}', '\u{FFA0}'),   // halfwidth Hangul filler
    ('\u{FFF0}', '\u{FFFB}'),   // unassigned specials, interlinear annotation
    ('\u{110BD}', '\u{110BD}'), // Kaithi number sign
    ('\u{110CD}', '\u{110CD}'), // Kaithi number sign above
    ('\u{13430}', '\u{1343F}'), // Egyptian hieroglyph format controls
    ('\u{1BCA0}', '\u{1BCA3}'), // shorthand format controls
    ('\u{1D173}', '\u{1D17A}'), // musical symbol beam and phrase marks
    ('\u{E0000}', '\u{E007F}'), // tag characters
    ('\u{E0100}', '\u{E01EF}'), // variation selectors supplement
];

/// `text` with the escapes of JSON strings decoded (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, `\uXXXX`, surrogate pairs joined, a lone surrogate shown as U+FFFD), wherever
/// they stand: what a raw JSON body says, as a person reads it. Anything else after a
/// backslash is kept as it is.
pub fn decode_json_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (decoded, used) = match after.as_bytes().first() {
            Some(b'"') => ('"', 1),
            Some(b'\\') => ('\\', 1),
            Some(b'/') => ('/', 1),
            Some(b'b') => ('\u{8}', 1),
            Some(b'f') => ('\u{c}', 1),
            Some(b'n') => ('\n', 1),
            Some(b'r') => ('\r', 1),
            Some(b't') => ('\t', 1),
            Some(b'u') => match unicode_escape(&after[1..]) {
                Some((c, used)) => (c, 1 + used),
                None => {
                    out.push('\\');
                    rest = after;
                    continue;
                }
            },
            _ => {
                out.push('\\');
                rest = after;
                continue;
            }
        };
        out.push(decoded);
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The character of a `\u` escape whose four hex digits begin `text` (joined with a
/// following `\uXXXX` low surrogate when it is a high one), and how many bytes it used.
fn unicode_escape(text: &str) -> Option<(char, usize)> {
    let unit = |at: usize| {
        text.get(at..at + 4)
            .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
    };
    let first = unit(0)?;
    if (0xD800..0xDC00).contains(&first)
        && text.get(4..6) == Some("\\u")
        && let Some(second) = unit(6).filter(|s| (0xDC00..0xE000).contains(s))
    {
        let joined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        return Some((char::from_u32(joined).unwrap_or('\u{FFFD}'), 10));
    }
    Some((char::from_u32(first).unwrap_or('\u{FFFD}'), 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortened_text_ends_with_an_ellipsis_within_the_cap() {
        assert_eq!(shorten("short", 5), "short");
        assert_eq!(shorten("héllo world", 8), "héll…");
        assert_eq!(shorten("héllo world", 5), "h…", "é is not split");
        assert!(shorten(&"x".repeat(5000), 1024).len() <= 1024);
    }

    #[test]
    fn json_escapes_decode_wherever_they_stand() {
        assert_eq!(
            decode_json_escapes(r#"{"detail":"key \u0073\u006b-abc is bad"}"#),
            r#"{"detail":"key sk-abc is bad"}"#
        );
        assert_eq!(decode_json_escapes(r"sk-proj\/abc"), "sk-proj/abc");
        assert_eq!(decode_json_escapes(r#"a\"b\\u0073"#), r#"a"b\u0073"#);
        assert_eq!(decode_json_escapes(r"\ud83d\ude00 \ud800!"), "😀 \u{FFFD}!");
        assert_eq!(
            decode_json_escapes(r"\n\t\x \u12 end\"),
            "\n\t\\x \\u12 end\\"
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut_utf8("héllo", 10), "héllo");
        assert_eq!(cut_utf8("héllo", 2), "h", "é is two bytes: not split");
        assert_eq!(cut_utf8("héllo", 3), "hé");
        assert_eq!(cut_utf8("€", 2), "");
        assert_eq!(cut_utf8("", 0), "");
    }
}
