//! [`BackoffPolicy`] and [`BackoffError`]: the wait before a retry (docs/semantics.md#retries).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::jitter::{JitterPolicy, duration_from_nanos};
use crate::duration::clamp;

/// Cap used by [`BackoffPolicy::constant`] and [`BackoffPolicy::exponential`]
/// when the given delay is smaller (docs/semantics.md#retries): 30 s.
const DEFAULT_MAX: Duration = Duration::from_secs(30);

/// Safety floor for a non-zero base (docs/semantics.md#retries): 1 ms, so a sub-millisecond
/// or fully-jittered delay cannot turn retries into a busy loop.
const SAFETY_FLOOR: Duration = Duration::from_millis(1);

/// Why [`BackoffPolicy::new`] rejected its arguments (docs/semantics.md#retries).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BackoffError {
    /// The growth factor was NaN, infinite or below 1.0 (the value given).
    /// A factor below 1.0 would shrink delays as failures accumulate.
    #[error("backoff factor must be finite and >= 1.0, got {0}")]
    #[non_exhaustive]
    InvalidFactor(f64),
    /// The first delay was larger than the cap.
    #[error("backoff first delay {first:?} exceeds max {max:?}")]
    #[non_exhaustive]
    FirstExceedsMax {
        /// The first delay given.
        first: Duration,
        /// The cap given.
        max: Duration,
    },
}

/// Delay before a retry after a failure: exponential growth from `first` by
/// `factor`, capped at `max`, randomized by `jitter`, raised to `floor`
/// (docs/semantics.md#retries).
///
/// Invariants kept by every constructor and builder: `factor` is finite and
/// ≥ 1.0, `first ≤ max`, `floor ≤ max`. Deserialization validates the same
/// way (through [`new`](Self::new) and [`with_floor`](Self::with_floor)).
///
/// The default is 200 ms × 2.0 capped at 30 s with [`JitterPolicy::Equal`] and
/// no floor, so the first retry waits between 100 ms and 200 ms (docs/semantics.md#retries).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawBackoffPolicy")]
pub struct BackoffPolicy {
    first: Duration,
    max: Duration,
    factor: f64,
    jitter: JitterPolicy,
    floor: Duration,
}

/// Unvalidated field set that deserialization goes through.
#[derive(Deserialize)]
struct RawBackoffPolicy {
    first: Duration,
    max: Duration,
    factor: f64,
    jitter: JitterPolicy,
    #[serde(default)]
    floor: Duration,
}

impl TryFrom<RawBackoffPolicy> for BackoffPolicy {
    type Error = BackoffError;

    fn try_from(raw: RawBackoffPolicy) -> Result<Self, Self::Error> {
        Ok(Self::new(raw.first, raw.max, raw.factor, raw.jitter)?.with_floor(raw.floor))
    }
}

impl Default for BackoffPolicy {
    fn default() -> Self {
        Self {
            first: Duration::from_millis(200),
            max: DEFAULT_MAX,
            factor: 2.0,
            jitter: JitterPolicy::Equal,
            floor: Duration::ZERO,
        }
    }
}

impl BackoffPolicy {
    /// Builds a policy from its parts, with no floor.
    ///
    /// # Errors
    /// - [`BackoffError::InvalidFactor`] if `factor` is NaN, infinite or < 1.0.
    /// - [`BackoffError::FirstExceedsMax`] if `first > max`.
    pub fn new(
        first: Duration,
        max: Duration,
        factor: f64,
        jitter: JitterPolicy,
    ) -> Result<Self, BackoffError> {
        if !factor.is_finite() || factor < 1.0 {
            return Err(BackoffError::InvalidFactor(factor));
        }
        if first > max {
            return Err(BackoffError::FirstExceedsMax { first, max });
        }
        let (first, max) = (clamp(first), clamp(max));
        Ok(Self {
            first,
            max,
            factor,
            jitter,
            floor: Duration::ZERO,
        })
    }

    /// The same `delay` before every retry: factor 1.0, no jitter, no floor,
    /// `max = max(delay, 30 s)` so a long constant delay is not cut (docs/semantics.md#retries).
    #[must_use]
    pub fn constant(delay: Duration) -> Self {
        let delay = clamp(delay);
        Self {
            first: delay,
            max: delay.max(DEFAULT_MAX),
            factor: 1.0,
            jitter: JitterPolicy::None,
            floor: Duration::ZERO,
        }
    }

    /// Doubling delays from `first`: factor 2.0, no jitter, no floor,
    /// `max = max(first, 30 s)` (docs/semantics.md#retries).
    #[must_use]
    pub fn exponential(first: Duration) -> Self {
        let first = clamp(first);
        Self {
            first,
            max: first.max(DEFAULT_MAX),
            factor: 2.0,
            jitter: JitterPolicy::None,
            floor: Duration::ZERO,
        }
    }

    /// Sets the cap. Never fails: `first` and the floor are lowered to `max`
    /// if they exceed it, so the invariants hold (docs/semantics.md#retries).
    #[must_use]
    pub fn with_max(mut self, max: Duration) -> Self {
        let max = clamp(max);
        self.max = max;
        self.first = self.first.min(max);
        self.floor = self.floor.min(max);
        self
    }

    /// Sets the jitter policy.
    #[must_use]
    pub fn with_jitter(mut self, jitter: JitterPolicy) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets a minimum delay applied after jitter, clamped to `max` (docs/semantics.md#retries).
    #[must_use]
    pub fn with_floor(mut self, floor: Duration) -> Self {
        self.floor = floor.min(self.max);
        self
    }

    /// Delay before the first retry of a failure streak.
    #[must_use]
    pub fn first(&self) -> Duration {
        self.first
    }

    /// Upper bound of every delay.
    #[must_use]
    pub fn max(&self) -> Duration {
        self.max
    }

    /// Growth factor per retry (finite, ≥ 1.0).
    #[must_use]
    pub fn factor(&self) -> f64 {
        self.factor
    }

    /// Randomization applied to the base delay.
    #[must_use]
    pub fn jitter(&self) -> JitterPolicy {
        self.jitter
    }

    /// Minimum delay after jitter (≤ `max`; zero when unset).
    #[must_use]
    pub fn floor(&self) -> Duration {
        self.floor
    }

    /// The un-jittered delay for `retry_index`: `min(first × factor^n, max)`,
    /// zero when `first` is zero (docs/semantics.md#retries).
    // Growth is computed in f64 on purpose: precision loss only matters for
    // delays far beyond any cap in practice, and the exact shortcut below
    // covers factor 1.0; `== 1.0` is an exact test by design.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::float_cmp
    )]
    fn base_delay(&self, retry_index: u32) -> Duration {
        if self.first.is_zero() {
            return Duration::ZERO;
        }
        // Exact shortcut: float maths on huge durations would lose precision.
        if retry_index == 0 || self.factor == 1.0 {
            return self.first.min(self.max);
        }
        // Exponents above i32::MAX are clamped; the result is `max` anyway.
        let n = i32::try_from(retry_index).unwrap_or(i32::MAX);
        let scaled = self.first.as_nanos() as f64 * self.factor.powi(n);
        let max_nanos = self.max.as_nanos();
        // NaN, ∞ and anything at or above the cap become the cap.
        if !scaled.is_finite() || scaled >= max_nanos as f64 {
            return self.max;
        }
        // `as` saturates; the `min` absorbs float rounding around the cap.
        duration_from_nanos((scaled as u128).min(max_nanos))
    }

    /// The delay to wait before retry number `retry_index` of a failure
    /// streak (0 = after the first failure). Never panics; never exceeds
    /// [`max`](Self::max). Steps (docs/semantics.md#retries):
    ///
    /// 1. `base` = 0 if `first` is zero, else `min(first × factor^n, max)`
    ///    (n clamped to `i32::MAX`; overflow or non-representable ⇒ `max`).
    /// 2. For [`JitterPolicy::RandomizedBand`], a uniform draw in
    ///    `[min(first, max), min(3 × base, max)]` (upper ≤ lower ⇒ lower);
    ///    otherwise `jitter.apply(base)`.
    /// 3. Raised to the user floor.
    /// 4. If `base` is non-zero, raised to `min(1 ms, max)`: the safety floor
    ///    never pushes a delay above the cap, and a zero `first` disables only
    ///    this floor (the user floor still applies).
    ///
    /// All arithmetic is on nanoseconds; `Duration::MAX` is safe.
    #[must_use]
    pub fn delay_for_retry(&self, retry_index: u32) -> Duration {
        let base = self.base_delay(retry_index);
        let raw = match self.jitter {
            JitterPolicy::RandomizedBand => self
                .jitter
                .apply_randomized_band(self.first, base, self.max),
            other => other.apply(base),
        };
        let mut delay = raw.max(self.floor);
        if !base.is_zero() {
            delay = delay.max(SAFETY_FLOOR.min(self.max));
        }
        delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn default_values() {
        let p = BackoffPolicy::default();
        assert_eq!(p.first(), ms(200));
        assert_eq!(p.max(), Duration::from_secs(30));
        assert_eq!(p.factor(), 2.0);
        assert_eq!(p.jitter(), JitterPolicy::Equal);
        assert_eq!(p.floor(), Duration::ZERO);
        for _ in 0..500 {
            let d = p.delay_for_retry(0);
            assert!(d >= ms(100) && d <= ms(200), "{d:?}");
        }
    }

    #[test]
    fn exponential_doubles_and_caps_at_30s() {
        let p = BackoffPolicy::exponential(ms(100));
        assert_eq!(p.delay_for_retry(0), ms(100));
        assert_eq!(p.delay_for_retry(1), ms(200));
        assert_eq!(p.delay_for_retry(2), ms(400));
        assert_eq!(p.delay_for_retry(3), ms(800));
        assert_eq!(p.delay_for_retry(20), Duration::from_secs(30));
        assert_eq!(p.delay_for_retry(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn with_max_caps() {
        let p = BackoffPolicy::exponential(ms(100)).with_max(Duration::from_secs(10));
        assert_eq!(p.delay_for_retry(6), Duration::from_millis(6_400));
        assert_eq!(p.delay_for_retry(7), Duration::from_secs(10));
        assert_eq!(p.delay_for_retry(40), Duration::from_secs(10));
    }

    #[test]
    fn constant_delays() {
        let p = BackoffPolicy::constant(ms(500));
        for i in [0, 1, 2, 10, 1_000, u32::MAX] {
            assert_eq!(p.delay_for_retry(i), ms(500));
        }
        let long = BackoffPolicy::constant(Duration::from_secs(60));
        assert_eq!(long.max(), Duration::from_secs(60));
        assert_eq!(long.delay_for_retry(3), Duration::from_secs(60));
        let exp = BackoffPolicy::exponential(Duration::from_secs(60));
        assert_eq!(exp.delay_for_retry(0), Duration::from_secs(60));
        assert_eq!(exp.delay_for_retry(5), Duration::from_secs(60));
    }

    #[test]
    fn with_max_lowers_first() {
        let p = BackoffPolicy::constant(Duration::from_secs(10)).with_max(Duration::from_secs(5));
        assert_eq!(p.first(), Duration::from_secs(5));
        assert_eq!(p.delay_for_retry(0), Duration::from_secs(5));
    }

    #[test]
    fn sub_millisecond_full_jitter_is_exactly_one_ms() {
        let p = BackoffPolicy::constant(Duration::from_micros(300)).with_jitter(JitterPolicy::Full);
        for i in 0..200 {
            assert_eq!(p.delay_for_retry(i), ms(1));
        }
    }

    #[test]
    fn safety_floor_is_capped_by_max() {
        let us500 = Duration::from_micros(500);
        let p = BackoffPolicy::new(us500, us500, 1.0, JitterPolicy::Full).unwrap();
        for i in 0..200 {
            assert_eq!(p.delay_for_retry(i), us500);
        }
    }

    #[test]
    fn zero_first_disables_only_the_safety_floor() {
        let p = BackoffPolicy::new(
            Duration::ZERO,
            Duration::from_secs(1),
            2.0,
            JitterPolicy::None,
        )
        .unwrap();
        for i in [0, 1, 5, 100, u32::MAX] {
            assert_eq!(p.delay_for_retry(i), Duration::ZERO);
        }
        let banded = p.with_jitter(JitterPolicy::RandomizedBand);
        assert_eq!(banded.delay_for_retry(3), Duration::ZERO);
        let floored = p.with_floor(ms(50));
        assert_eq!(floored.delay_for_retry(0), ms(50));
    }

    #[test]
    fn duration_max_does_not_panic() {
        let p = BackoffPolicy::new(
            Duration::MAX,
            Duration::MAX,
            1.0,
            JitterPolicy::RandomizedBand,
        )
        .unwrap();
        // Clamped to 30 years, "never" (src/duration.rs), so no deadline overflows.
        let never = crate::duration::MAX_DURATION;
        assert_eq!(p.delay_for_retry(0), never);
        assert_eq!(p.delay_for_retry(u32::MAX), never);
        let grow = BackoffPolicy::new(
            Duration::from_secs(1),
            Duration::MAX,
            2.0,
            JitterPolicy::None,
        )
        .unwrap();
        assert_eq!(grow.delay_for_retry(u32::MAX), never);
        assert_eq!(grow.delay_for_retry(10), Duration::from_secs(1_024));
    }

    #[test]
    fn randomized_band_range() {
        let p = BackoffPolicy::exponential(ms(100)).with_jitter(JitterPolicy::RandomizedBand);
        for _ in 0..500 {
            // index 2: base 400 ms ⇒ band [100 ms, 1200 ms]
            let d = p.delay_for_retry(2);
            assert!(d >= ms(100) && d <= ms(1_200), "{d:?}");
            // index 20: base 30 s ⇒ band [100 ms, 30 s]
            assert!(p.delay_for_retry(20) <= Duration::from_secs(30));
        }
    }

    #[test]
    fn validation_errors() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5, 0.0, -1.0] {
            let err = BackoffPolicy::new(ms(1), ms(2), bad, JitterPolicy::None).unwrap_err();
            match err {
                BackoffError::InvalidFactor(f) => {
                    assert!(f.is_nan() && bad.is_nan() || f == bad);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            BackoffPolicy::new(ms(5), ms(1), 2.0, JitterPolicy::None),
            Err(BackoffError::FirstExceedsMax {
                first: ms(5),
                max: ms(1)
            })
        );
        assert!(BackoffPolicy::new(ms(5), ms(5), 1.0, JitterPolicy::None).is_ok());
        assert_eq!(
            BackoffError::InvalidFactor(0.5).to_string(),
            "backoff factor must be finite and >= 1.0, got 0.5"
        );
        assert_eq!(
            BackoffError::FirstExceedsMax {
                first: ms(5),
                max: ms(1)
            }
            .to_string(),
            "backoff first delay 5ms exceeds max 1ms"
        );
    }

    #[test]
    fn floor_and_max_clamping() {
        let p = BackoffPolicy::constant(ms(100)).with_floor(Duration::from_secs(60));
        assert_eq!(p.floor(), Duration::from_secs(30));
        let p = p.with_max(Duration::from_secs(2));
        assert_eq!(p.floor(), Duration::from_secs(2));
        assert_eq!(p.first(), ms(100));
        assert_eq!(p.delay_for_retry(0), Duration::from_secs(2));

        let jittered = BackoffPolicy::constant(ms(100))
            .with_jitter(JitterPolicy::Full)
            .with_floor(ms(80));
        for i in 0..300 {
            let d = jittered.delay_for_retry(i);
            assert!(d >= ms(80) && d <= ms(100));
        }
    }

    #[test]
    fn deserialization_validates() {
        let raw = |factor, first, max, floor| RawBackoffPolicy {
            first,
            max,
            factor,
            jitter: JitterPolicy::Full,
            floor,
        };
        assert!(matches!(
            BackoffPolicy::try_from(raw(f64::NAN, ms(1), ms(2), ms(0))),
            Err(BackoffError::InvalidFactor(_))
        ));
        assert!(matches!(
            BackoffPolicy::try_from(raw(2.0, ms(3), ms(2), ms(0))),
            Err(BackoffError::FirstExceedsMax { .. })
        ));
        let ok = BackoffPolicy::try_from(raw(2.0, ms(1), ms(2), ms(9))).unwrap();
        assert_eq!(ok.floor(), ms(2));
    }

    fn jitter_strategy() -> impl Strategy<Value = JitterPolicy> {
        prop_oneof![
            Just(JitterPolicy::None),
            Just(JitterPolicy::Full),
            Just(JitterPolicy::Equal),
            Just(JitterPolicy::RandomizedBand),
        ]
    }

    fn duration_strategy() -> impl Strategy<Value = Duration> {
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0u64..5_000_000).prop_map(Duration::from_nanos),
            (0u64..100_000).prop_map(Duration::from_millis),
            (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        ]
    }

    fn factor_strategy() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(1.0),
            Just(2.0),
            1.0f64..10.0,
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::MAX),
        ]
    }

    proptest! {
        #[test]
        fn delay_for_retry_is_bounded(
            first in duration_strategy(),
            max in duration_strategy(),
            factor in factor_strategy(),
            jitter in jitter_strategy(),
            floor in duration_strategy(),
            cap in proptest::option::of(duration_strategy()),
            index in prop_oneof![0u32..64, any::<u32>()],
        ) {
            // Arbitrary input either builds a policy or yields a typed error.
            let Ok(policy) = BackoffPolicy::new(first, max, factor, jitter) else {
                prop_assert!(!factor.is_finite() || factor < 1.0 || first > max);
                return Ok(());
            };
            let mut policy = policy.with_floor(floor);
            if let Some(cap) = cap {
                policy = policy.with_max(cap);
            }
            prop_assert!(policy.first() <= policy.max());
            prop_assert!(policy.floor() <= policy.max());
            let d = policy.delay_for_retry(index);
            prop_assert!(d <= policy.max());
            prop_assert!(d >= policy.floor());
            if !policy.first().is_zero() {
                prop_assert!(d >= SAFETY_FLOOR.min(policy.max()));
            }
            if jitter == JitterPolicy::None && !policy.first().is_zero() {
                prop_assert!(d >= policy.first().max(policy.floor()));
            }
        }
    }
}
