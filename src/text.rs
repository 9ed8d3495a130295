//! Text cut to a size without splitting a character: the one rule every cap of the server
//! (tool descriptions, tool output, partial results, the workspace tools' answers) applies.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut_utf8("héllo", 10), "héllo");
        assert_eq!(cut_utf8("héllo", 2), "h", "é is two bytes: not split");
        assert_eq!(cut_utf8("héllo", 3), "hé");
        assert_eq!(cut_utf8("€", 2), "");
        assert_eq!(cut_utf8("", 0), "");
    }
}
