//! The one rule every name given to this crate follows: supervisor, task, group and
//! controller slot names (docs/semantics.md#names).
//!
//! A name is valid when it is not empty once leading and trailing whitespace is trimmed,
//! and at most [`MAX_NAME_LEN`] bytes long. The name is kept as given (not trimmed): the
//! rule only refuses names a person could not tell apart from nothing, and names so long
//! they would flood logs, metric labels and event payloads.

/// The longest valid name, in bytes (UTF-8): 16 KiB. A bound, not a style rule: it keeps a
/// name from growing an event, a log line or a metric label without limit, and it leaves
/// room for names that carry data (a URL, a key). Another node names a task, slot or
/// group of at most 1 KiB (the remote name cap); a longer task is reached there by its id.
pub const MAX_NAME_LEN: usize = 16 << 10;

/// Reason text of an empty or whitespace-only name.
pub(crate) const BLANK: &str = "a name must not be empty or whitespace only";

/// Reason text of a name longer than [`MAX_NAME_LEN`] bytes.
pub(crate) const TOO_LONG: &str = "a name must be at most 16384 bytes long";

/// How many bytes of a refused, overlong name an error carries: the start of the name,
/// marked as cut (`…`), so a 1 MiB name does not make a 1 MiB error message.
pub(crate) const SHOWN_LEN: usize = 256;

/// `name` as an error about it carries it: whole when it is not over [`MAX_NAME_LEN`],
/// else its first [`SHOWN_LEN`] bytes, marked as cut.
pub(crate) fn shown(name: &str) -> std::sync::Arc<str> {
    if name.len() > MAX_NAME_LEN {
        crate::bounds::cap(name, SHOWN_LEN).into()
    } else {
        name.into()
    }
}

/// Why `name` is not a valid name (see the module documentation); `None` when it is.
pub(crate) fn problem(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some(BLANK)
    } else if name.len() > MAX_NAME_LEN {
        Some(TOO_LONG)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_and_overlong_names_are_refused_and_the_rest_kept() {
        assert_eq!(problem(""), Some(BLANK));
        assert_eq!(problem(" \t\n"), Some(BLANK));
        assert_eq!(problem(&"x".repeat(MAX_NAME_LEN + 1)), Some(TOO_LONG));
        assert_eq!(problem(&"x".repeat(MAX_NAME_LEN)), None);
        assert_eq!(problem(" padded "), None);
        assert_eq!(problem("é"), None);
        assert!(TOO_LONG.contains(&MAX_NAME_LEN.to_string()));
    }

    /// A fresh user's trial: a 1 MiB task name made a 1 MiB error message.
    #[test]
    fn an_error_carries_at_most_the_start_of_an_overlong_name() {
        let long = "x".repeat(1 << 20);
        assert!(shown(&long).len() <= SHOWN_LEN);
        assert!(shown(&long).ends_with('…'));
        let fits = "y".repeat(MAX_NAME_LEN);
        assert_eq!(&*shown(&fits), fits.as_str());
    }
}
