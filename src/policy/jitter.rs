//! [`JitterPolicy`]: randomization of backoff delays (docs/semantics.md#retries).
//!
//! All arithmetic is done on `u128` nanoseconds so sub-millisecond delays keep
//! their precision and `Duration::MAX` cannot overflow (docs/semantics.md#retries).

use std::time::Duration;

use serde::{Deserialize, Serialize};

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Converts nanoseconds back to a `Duration`, saturating at `Duration::MAX`.
pub(super) fn duration_from_nanos(nanos: u128) -> Duration {
    let secs = nanos / NANOS_PER_SEC;
    // The remainder of a division by 10^9 always fits in u32.
    let subsec = u32::try_from(nanos % NANOS_PER_SEC).unwrap_or(0);
    match u64::try_from(secs) {
        Ok(secs) => Duration::new(secs, subsec),
        Err(_) => Duration::MAX,
    }
}

/// Uniform draw in `[low, high]` nanoseconds (inclusive on both ends).
fn uniform_nanos(low: u128, high: u128) -> u128 {
    if high <= low {
        low
    } else {
        fastrand::u128(low..=high)
    }
}

/// How a backoff delay is randomized so that many tasks failing together do
/// not retry in lock-step (docs/semantics.md#retries).
///
/// `Full` and `Equal` are the "full jitter" and "equal jitter" schemes of
/// AWS, "Exponential Backoff And Jitter" (Marc Brooker, 2015).
/// `RandomizedBand` draws between the policy's first delay and three times
/// the current base (see [`apply_randomized_band`](Self::apply_randomized_band)),
/// so it may exceed the base.
///
/// The default is [`None`](Self::None), as in the reference; note that
/// [`BackoffPolicy::default()`](crate::policy::BackoffPolicy::default) uses
/// [`Equal`](Self::Equal) (docs/semantics.md#retries).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum JitterPolicy {
    /// No randomization: the delay is exactly the base.
    #[default]
    None,
    /// Uniform in `[0, base]` (AWS "full jitter").
    Full,
    /// `base/2 + uniform[0, base − base/2]`, i.e. uniform in `[base/2, base]`
    /// (AWS "equal jitter").
    Equal,
    /// Uniform in `[min(first, max), min(3 × base, max)]`; needs the policy's
    /// bounds, so the context-free [`apply`](JitterPolicy::apply) treats it
    /// like [`Full`](Self::Full).
    RandomizedBand,
}

impl JitterPolicy {
    /// Randomizes `delay` (the base) according to this policy and returns the
    /// resulting delay, never more than `delay`.
    ///
    /// - `None` → `delay`; `Full` and `RandomizedBand` → uniform in
    ///   `[0, delay]`; `Equal` → uniform in `[delay/2, delay]`.
    /// - Computed in nanoseconds: zero stays zero, `Duration::MAX` is safe.
    #[must_use]
    pub fn apply(&self, delay: Duration) -> Duration {
        let base = delay.as_nanos();
        let nanos = match self {
            Self::None => base,
            Self::Full | Self::RandomizedBand => uniform_nanos(0, base),
            Self::Equal => {
                let half = base / 2;
                half + uniform_nanos(0, base - half)
            }
        };
        duration_from_nanos(nanos)
    }

    /// Draws a delay within a band, for [`RandomizedBand`](Self::RandomizedBand);
    /// other policies return `self.apply(min(lower, max))`.
    ///
    /// For `RandomizedBand` the band is `[min(lower, max), min(3 × upper_seed, max)]`
    /// (the multiplication saturates); if the upper end is not above the lower
    /// end the lower end is returned. The backoff policy passes its `first`
    /// delay as `lower` and the current base as `upper_seed`, so the band starts
    /// at the first delay and grows with the base (docs/semantics.md#retries).
    /// The result never exceeds `max`.
    #[must_use]
    pub fn apply_randomized_band(
        &self,
        lower: Duration,
        upper_seed: Duration,
        max: Duration,
    ) -> Duration {
        let low = lower.min(max);
        match self {
            Self::RandomizedBand => {
                let high = upper_seed.as_nanos().saturating_mul(3).min(max.as_nanos());
                duration_from_nanos(uniform_nanos(low.as_nanos(), high))
            }
            other => other.apply(low),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: usize = 2_000;

    #[test]
    fn default_is_none() {
        assert_eq!(JitterPolicy::default(), JitterPolicy::None);
    }

    #[test]
    fn none_is_exact() {
        let d = Duration::from_nanos(123_456_789);
        assert_eq!(JitterPolicy::None.apply(d), d);
    }

    #[test]
    fn full_stays_in_zero_to_base() {
        let base = Duration::from_millis(100);
        let mut saw_low_half = false;
        for _ in 0..DRAWS {
            let d = JitterPolicy::Full.apply(base);
            assert!(d <= base);
            saw_low_half |= d < base / 2;
        }
        assert!(saw_low_half, "full jitter never drew below base/2");
    }

    #[test]
    fn equal_stays_in_half_to_base() {
        let base = Duration::from_millis(100);
        for _ in 0..DRAWS {
            let d = JitterPolicy::Equal.apply(base);
            assert!(d >= base / 2 && d <= base, "{d:?}");
        }
        // Odd nanosecond counts: the upper end is still the base itself.
        let odd = Duration::from_nanos(3);
        for _ in 0..DRAWS {
            let d = JitterPolicy::Equal.apply(odd);
            assert!(d >= Duration::from_nanos(1) && d <= odd);
        }
    }

    #[test]
    fn randomized_band_apply_acts_like_full() {
        let base = Duration::from_millis(10);
        for _ in 0..DRAWS {
            assert!(JitterPolicy::RandomizedBand.apply(base) <= base);
        }
    }

    #[test]
    fn zero_stays_zero() {
        for j in [
            JitterPolicy::None,
            JitterPolicy::Full,
            JitterPolicy::Equal,
            JitterPolicy::RandomizedBand,
        ] {
            assert_eq!(j.apply(Duration::ZERO), Duration::ZERO);
        }
    }

    #[test]
    fn sub_millisecond_precision_is_kept() {
        let base = Duration::from_micros(700);
        for _ in 0..DRAWS {
            let d = JitterPolicy::Equal.apply(base);
            assert!(d >= Duration::from_micros(350) && d <= base);
        }
    }

    #[test]
    fn duration_max_is_safe() {
        for j in [
            JitterPolicy::None,
            JitterPolicy::Full,
            JitterPolicy::Equal,
            JitterPolicy::RandomizedBand,
        ] {
            assert!(j.apply(Duration::MAX) <= Duration::MAX);
            let d = j.apply_randomized_band(Duration::MAX, Duration::MAX, Duration::MAX);
            assert!(d <= Duration::MAX);
        }
        assert_eq!(JitterPolicy::None.apply(Duration::MAX), Duration::MAX);
        assert_eq!(
            JitterPolicy::RandomizedBand.apply_randomized_band(
                Duration::MAX,
                Duration::MAX,
                Duration::MAX
            ),
            Duration::MAX
        );
    }

    #[test]
    fn band_stays_in_lower_to_upper() {
        let lower = Duration::from_millis(100);
        let seed = Duration::from_millis(400);
        let max = Duration::from_secs(30);
        let upper = Duration::from_millis(1_200);
        let mut saw_above_seed = false;
        for _ in 0..DRAWS {
            let d = JitterPolicy::RandomizedBand.apply_randomized_band(lower, seed, max);
            assert!(d >= lower && d <= upper, "{d:?}");
            saw_above_seed |= d > seed;
        }
        assert!(saw_above_seed, "band never exceeded its seed");
    }

    #[test]
    fn band_upper_is_capped_by_max_and_collapses_to_lower() {
        let max = Duration::from_millis(150);
        for _ in 0..DRAWS {
            let d = JitterPolicy::RandomizedBand.apply_randomized_band(
                Duration::from_millis(100),
                Duration::from_millis(100),
                max,
            );
            assert!(d >= Duration::from_millis(100) && d <= max);
        }
        // Upper ≤ lower ⇒ lower.
        let d = JitterPolicy::RandomizedBand.apply_randomized_band(
            Duration::from_millis(100),
            Duration::from_millis(10),
            max,
        );
        assert_eq!(d, Duration::from_millis(100));
        // Lower above max is capped to max.
        let d = JitterPolicy::RandomizedBand.apply_randomized_band(
            Duration::from_secs(1),
            Duration::from_secs(1),
            max,
        );
        assert_eq!(d, max);
    }

    #[test]
    fn non_band_policies_apply_to_capped_lower() {
        let max = Duration::from_millis(50);
        assert_eq!(
            JitterPolicy::None.apply_randomized_band(
                Duration::from_millis(80),
                Duration::ZERO,
                max
            ),
            max
        );
        for _ in 0..DRAWS {
            let d = JitterPolicy::Equal.apply_randomized_band(
                Duration::from_millis(40),
                Duration::from_secs(9),
                max,
            );
            assert!(d >= Duration::from_millis(20) && d <= Duration::from_millis(40));
        }
    }

    #[test]
    fn nanos_round_trip() {
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::new(5, 999_999_999),
            Duration::MAX,
        ] {
            assert_eq!(duration_from_nanos(d.as_nanos()), d);
        }
        assert_eq!(duration_from_nanos(u128::MAX), Duration::MAX);
    }
}
