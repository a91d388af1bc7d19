//! Capping a caller-supplied string at a byte length (pure).

use std::borrow::Cow;

/// What marks a capped string's end: `…` (3 bytes in UTF-8), counted in the cap.
pub(crate) const CUT_MARK: char = '…';

/// `text` cut to at most `max_bytes` bytes of UTF-8, on a char boundary, ending with
/// [`CUT_MARK`] when it was cut (so a capped text never passes for the whole one). Borrowed
/// when it fits; when cut, a fresh allocation of the capped length, so nothing of the
/// original's size is kept. A cap below the mark's own length gives the longest prefix
/// that fits, without the mark.
pub(crate) fn cap(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let mark = CUT_MARK.len_utf8();
    let (keep, marked) = if max_bytes >= mark {
        (max_bytes - mark, true)
    } else {
        (max_bytes, false)
    };
    let end = floor_char_boundary(text, keep);
    let mut capped = String::with_capacity(end + if marked { mark } else { 0 });
    capped.push_str(&text[..end]);
    if marked {
        capped.push(CUT_MARK);
    }
    Cow::Owned(capped)
}

/// Whether `text` is at most `max_bytes` bytes long: the check for a string whose meaning
/// a cut would change (a task name to look up), which is refused rather than capped.
pub(crate) fn fits(text: &str, max_bytes: usize) -> bool {
    text.len() <= max_bytes
}

/// The largest char boundary of `text` at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut end = index.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_text_that_fits_is_borrowed_unchanged() {
        assert!(matches!(cap("node-a", 6), Cow::Borrowed("node-a")));
        assert!(fits("node-a", 6));
        assert!(!fits("node-a", 5));
    }

    #[test]
    fn a_long_text_is_cut_on_a_char_boundary_and_marked() {
        // "é" is 2 bytes: a cut inside it moves back to its start.
        let capped = cap("aé€bbbb", 5);
        assert_eq!(capped, "a…");
        assert_eq!(cap("abcdefgh", 6), "abc…");
        assert_eq!(cap("abcdefgh", 2), "ab");
        assert_eq!(cap("abcdefgh", 0), "");
    }

    #[test]
    fn a_cut_text_keeps_no_memory_of_the_original() {
        let huge = "x".repeat(1 << 20);
        let Cow::Owned(capped) = cap(&huge, 256) else {
            panic!("a cut text is owned");
        };
        assert!(capped.capacity() <= 256, "{}", capped.capacity());
    }

    proptest! {
        #[test]
        fn a_capped_text_is_within_the_cap_and_a_prefix(text in ".{0,64}", max in 0usize..80) {
            let capped = cap(&text, max);
            prop_assert!(capped.len() <= max);
            if text.len() <= max {
                prop_assert_eq!(capped.as_ref(), text.as_str());
            } else {
                let body = capped.strip_suffix(CUT_MARK).unwrap_or(&capped);
                prop_assert!(text.starts_with(body));
                prop_assert!(max < CUT_MARK.len_utf8() || capped.ends_with(CUT_MARK));
            }
        }
    }
}
