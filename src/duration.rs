//! The one rule for durations a user hands in: every public setter clamps its `Duration`
//! to [`MAX_DURATION`] (30 years, "never" for a process), so that `Instant + duration` can
//! not overflow anywhere in the runtime, whatever the caller passed (`Duration::MAX`
//! included). Values that are meaningless rather than too large (a zero stall timeout, a
//! zero group intensity period) are refused with a typed error where they are set or
//! admitted, never here.

use std::time::Duration;

/// The longest duration a setting keeps: 30 years of 365 days.
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// `min(d, MAX_DURATION)`, usable in `const fn` (where `Ord` on `Duration` is not).
pub(crate) const fn clamp(d: Duration) -> Duration {
    let max_secs = MAX_DURATION.as_secs();
    if d.as_secs() > max_secs || (d.as_secs() == max_secs && d.subsec_nanos() > 0) {
        MAX_DURATION
    } else {
        d
    }
}

/// `from + after`, saturating at `from + MAX_DURATION` (a deadline that never comes), for
/// durations that did not pass through a setter (a public enum's field, a sum of two). On
/// a platform whose clock cannot represent that, the furthest representable half-step.
pub(crate) fn deadline(from: tokio::time::Instant, after: Duration) -> tokio::time::Instant {
    let mut after = clamp(after);
    loop {
        match from.checked_add(after) {
            Some(at) => return at,
            None => after /= 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_only_what_is_too_long() {
        assert_eq!(clamp(Duration::ZERO), Duration::ZERO);
        assert_eq!(clamp(Duration::from_nanos(1)), Duration::from_nanos(1));
        assert_eq!(clamp(MAX_DURATION), MAX_DURATION);
        assert_eq!(clamp(MAX_DURATION + Duration::from_nanos(1)), MAX_DURATION);
        assert_eq!(clamp(Duration::MAX), MAX_DURATION);
    }
}
