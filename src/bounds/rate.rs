//! [`CallBudget`]: how many calls may be in flight and how many may start per second
//! (pure).

use std::time::Duration;

use tokio::time::Instant;

/// The bounds of a [`CallBudget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallLimits {
    /// Calls admitted and not yet done, at most.
    pub(crate) in_flight: usize,
    /// Calls admitted per second, at most, on average; up to this many at once after a
    /// quiet second (the burst). 0 admits none.
    pub(crate) per_second: u32,
}

/// Why a call was not admitted, and when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `in_flight` calls are running; one may end at any moment.
    InFlight,
    /// The rate is used up; the next call is admitted after `retry_after`.
    Rate {
        /// How long until the next admission, at the earliest.
        retry_after: Duration,
    },
}

/// Admission of calls within [`CallLimits`]: a count of calls in flight and the generic
/// cell rate algorithm for the rate (a token bucket of `per_second` tokens refilled
/// continuously, kept as one instant: the earliest time the bucket is full again). Every
/// admitted call must be handed back with [`done`](Self::done).
#[derive(Debug)]
pub(crate) struct CallBudget {
    limits: CallLimits,
    in_flight: usize,
    /// The theoretical arrival time of the next call: the bucket is full from then on.
    full_at: Option<Instant>,
}

impl CallBudget {
    /// A budget with nothing admitted yet.
    pub(crate) fn new(limits: CallLimits) -> Self {
        CallBudget {
            limits,
            in_flight: 0,
            full_at: None,
        }
    }

    /// The time one call costs of the rate.
    fn spacing(&self) -> Option<Duration> {
        (self.limits.per_second > 0).then(|| Duration::from_secs(1) / self.limits.per_second)
    }

    /// Admits one call at `now`, or says why not.
    ///
    /// # Errors
    /// [`Refusal::InFlight`] when `in_flight` calls are running; [`Refusal::Rate`] when
    /// more than `per_second` would have started within a second (beyond the burst).
    pub(crate) fn admit(&mut self, now: Instant) -> Result<(), Refusal> {
        if self.in_flight >= self.limits.in_flight {
            return Err(Refusal::InFlight);
        }
        let Some(spacing) = self.spacing() else {
            return Err(Refusal::Rate {
                retry_after: Duration::from_secs(1),
            });
        };
        // A burst of `per_second` calls: the bucket's depth, in time.
        let depth = spacing * self.limits.per_second;
        let full_at = self.full_at.map_or(now, |at| at.max(now));
        let earliest = full_at.checked_sub(depth - spacing).unwrap_or(now);
        if now < earliest {
            return Err(Refusal::Rate {
                retry_after: earliest - now,
            });
        }
        self.full_at = Some(full_at + spacing);
        self.in_flight += 1;
        Ok(())
    }

    /// One admitted call ended.
    pub(crate) fn done(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// Calls admitted and not yet done.
    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn limits(in_flight: usize, per_second: u32) -> CallLimits {
        CallLimits {
            in_flight,
            per_second,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_the_rate_then_one_call_per_spacing() {
        let mut budget = CallBudget::new(limits(100, 10));
        let now = Instant::now();
        for _ in 0..10 {
            budget.admit(now).unwrap();
            budget.done();
        }
        let refused = budget.admit(now);
        assert_eq!(
            refused,
            Err(Refusal::Rate {
                retry_after: Duration::from_millis(100)
            })
        );
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(budget.admit(Instant::now()), Ok(()));
        assert!(budget.admit(Instant::now()).is_err());
        // A quiet second refills the whole burst.
        tokio::time::advance(Duration::from_secs(1)).await;
        budget.done();
        for _ in 0..10 {
            budget.admit(Instant::now()).unwrap();
            budget.done();
        }
        assert!(budget.admit(Instant::now()).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn calls_in_flight_are_bounded_until_one_is_done() {
        let mut budget = CallBudget::new(limits(2, 1_000));
        let now = Instant::now();
        budget.admit(now).unwrap();
        budget.admit(now).unwrap();
        assert_eq!(budget.admit(now), Err(Refusal::InFlight));
        budget.done();
        assert_eq!(budget.in_flight(), 1);
        assert_eq!(budget.admit(now), Ok(()));
    }

    #[test]
    fn a_zero_rate_admits_nothing() {
        let mut budget = CallBudget::new(limits(4, 0));
        assert!(matches!(
            budget.admit(Instant::now()),
            Err(Refusal::Rate { .. })
        ));
    }

    proptest! {
        /// However calls arrive, the `k` calls admitted after any admitted call span at
        /// least `(k - burst + 1)` spacings: at most `per_second` at once, and on average
        /// no more than `per_second` per second.
        #[test]
        fn admissions_never_outrun_the_rate(
            per_second in 1u32..20,
            gaps in proptest::collection::vec(0u64..300, 1..300),
        ) {
            let start = Instant::now();
            let mut budget = CallBudget::new(limits(usize::MAX, per_second));
            let spacing = Duration::from_secs(1) / per_second;
            let mut now = start;
            let mut admitted: Vec<Instant> = Vec::new();
            for gap in gaps {
                now += Duration::from_millis(gap);
                if budget.admit(now).is_ok() {
                    budget.done();
                    admitted.push(now);
                }
            }
            for (i, first) in admitted.iter().enumerate() {
                for (k, later) in admitted[i..].iter().enumerate() {
                    let beyond_burst = (k as u32 + 1).saturating_sub(per_second);
                    prop_assert!(*later - *first >= spacing * beyond_burst);
                }
            }
        }
    }
}
