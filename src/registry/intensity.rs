//! Restart intensity (Erlang/OTP `intensity` and `period`), as small pure structs stepped
//! with the clock passed in: [`Window`] for one task or one group, [`Meltdown`] for the
//! whole supervisor (exceeding it once starts the shutdown).

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// The OTP restart intensity window: more than `max_restarts` restarts within `period`
/// (wall time) is exceeded.
#[derive(Debug)]
pub(crate) struct Window {
    max_restarts: u32,
    period: Duration,
    /// When the recent restarts happened, oldest first.
    log: VecDeque<Instant>,
}

impl Window {
    /// A window for `(max_restarts, period)`, or none without a limit.
    pub(crate) fn new(limit: Option<(u32, Duration)>) -> Option<Self> {
        let (max_restarts, period) = limit?;
        let log = VecDeque::new();
        Some(Window {
            max_restarts,
            period,
            log,
        })
    }

    /// Records a restart at `now`; true when more than `max_restarts` fall in the window.
    pub(crate) fn exceeded(&mut self, now: Instant) -> bool {
        self.log.push_back(now);
        while self
            .log
            .front()
            .is_some_and(|oldest| now.duration_since(*oldest) >= self.period)
        {
            self.log.pop_front();
        }
        self.log.len() > self.max_restarts as usize
    }
}

/// The supervisor-wide restart intensity, shared by every registration's step; the flag
/// is set the first time it is exceeded, so the shutdown starts once.
#[derive(Debug)]
pub(crate) struct Meltdown(Option<Window>, bool);

impl Meltdown {
    /// The supervisor's `(max_restarts, period)`, or no limit.
    pub(crate) fn new(limit: Option<(u32, Duration)>) -> Self {
        Meltdown(Window::new(limit), false)
    }

    /// The supervisor's `(max_restarts, period)`, if limited.
    pub(crate) fn limit(&self) -> Option<(u32, Duration)> {
        self.0.as_ref().map(|w| (w.max_restarts, w.period))
    }

    /// Records a failure restart at `now`; true only the first time it exceeds the limit.
    pub(crate) fn record(&mut self, now: Instant) -> bool {
        let exceeded = self.0.as_mut().is_some_and(|w| w.exceeded(now));
        let first = exceeded && !self.1;
        self.1 |= exceeded;
        first
    }
}
