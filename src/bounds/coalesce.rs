//! [`Coalescer`]: one report per key per interval, with a count of the rest (pure).

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

/// What to do with one occurrence (see [`Coalescer::offer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    /// Report it now. `earlier` occurrences of its window's previous interval were folded
    /// and not reported yet: say so in this report.
    Report {
        /// Folded occurrences of the key's previous interval.
        earlier: u64,
    },
    /// Do not report it: it is counted, and the count comes with the key's next report or
    /// from [`Coalescer::flush`].
    Folded,
}

/// The folded occurrences of one window that ended, from [`Coalescer::flush`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tally<K> {
    /// The key, or `None` for the overflow window (keys beyond the table's capacity).
    pub(crate) key: Option<K>,
    /// Occurrences folded in that window (at least 1).
    pub(crate) folded: u64,
}

#[derive(Debug, Clone, Copy)]
struct Window {
    opened: Instant,
    folded: u64,
}

/// Turns occurrences of keys into at most one report per key per `interval`, counting the
/// rest: the first occurrence of a key opens a window of `interval` and is reported; the
/// others within it are folded. A window's folded count is handed out once, by the key's
/// next report or by [`flush`](Self::flush) once the window ended, so every occurrence is
/// accounted for exactly once.
///
/// The table holds at most `capacity` windows. A key that finds it full shares one overflow
/// window with every other such key (keyed `None` in a [`Tally`]): a caller that invents a
/// new key per occurrence gets at most `capacity + 1` reports per interval, and the table's
/// memory does not grow with the keys it is shown.
#[derive(Debug)]
pub(crate) struct Coalescer<K> {
    interval: Duration,
    capacity: usize,
    windows: HashMap<K, Window>,
    overflow: Option<Window>,
}

impl<K: Hash + Eq + Clone> Coalescer<K> {
    /// At most one report per key per `interval`, over at most `capacity` keys at a time.
    pub(crate) fn new(interval: Duration, capacity: usize) -> Self {
        Coalescer {
            interval,
            capacity,
            windows: HashMap::new(),
            overflow: None,
        }
    }

    /// One occurrence of `key` at `now`: report it or fold it.
    pub(crate) fn offer(&mut self, key: K, now: Instant) -> Offer {
        let interval = self.interval;
        if let Some(window) = self.windows.get_mut(&key) {
            return Self::step(window, now, interval);
        }
        if self.windows.len() < self.capacity {
            self.windows.insert(key, Window::open(now));
            return Offer::Report { earlier: 0 };
        }
        match &mut self.overflow {
            Some(window) => Self::step(window, now, interval),
            None => {
                self.overflow = Some(Window::open(now));
                Offer::Report { earlier: 0 }
            }
        }
    }

    fn step(window: &mut Window, now: Instant, interval: Duration) -> Offer {
        if now < window.opened + interval {
            window.folded += 1;
            return Offer::Folded;
        }
        let earlier = window.folded;
        *window = Window::open(now);
        Offer::Report { earlier }
    }

    /// Ends every window whose interval is over at `now`: returns the folded counts not
    /// handed out yet (only those above 0) and frees their places in the table.
    pub(crate) fn flush(&mut self, now: Instant) -> Vec<Tally<K>> {
        let interval = self.interval;
        let ended = |window: &Window| now >= window.opened + interval;
        let mut tallies = Vec::new();
        self.windows.retain(|key, window| {
            if !ended(window) {
                return true;
            }
            if window.folded > 0 {
                tallies.push(Tally {
                    key: Some(key.clone()),
                    folded: window.folded,
                });
            }
            false
        });
        if let Some(window) = self.overflow.filter(ended) {
            if window.folded > 0 {
                tallies.push(Tally {
                    key: None,
                    folded: window.folded,
                });
            }
            self.overflow = None;
        }
        tallies
    }

    /// Windows open now (at most `capacity`, the overflow window not counted).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.windows.len()
    }
}

impl Window {
    fn open(now: Instant) -> Self {
        Window {
            opened: now,
            folded: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[tokio::test(start_paused = true)]
    async fn one_report_per_key_per_interval_with_the_rest_counted() {
        let mut coalescer = Coalescer::new(SECOND, 8);
        let now = Instant::now();
        assert_eq!(coalescer.offer("a", now), Offer::Report { earlier: 0 });
        assert_eq!(coalescer.offer("a", now), Offer::Folded);
        assert_eq!(coalescer.offer("b", now), Offer::Report { earlier: 0 });
        tokio::time::advance(Duration::from_millis(999)).await;
        assert_eq!(coalescer.offer("a", Instant::now()), Offer::Folded);
        assert!(coalescer.flush(Instant::now()).is_empty());
        tokio::time::advance(Duration::from_millis(1)).await;
        // The next interval's first report carries the two folded ones.
        assert_eq!(
            coalescer.offer("a", Instant::now()),
            Offer::Report { earlier: 2 }
        );
        assert_eq!(coalescer.offer("a", Instant::now()), Offer::Folded);
        tokio::time::advance(SECOND).await;
        let tallies = coalescer.flush(Instant::now());
        assert_eq!(
            tallies,
            [Tally {
                key: Some("a"),
                folded: 1
            }]
        );
        // "b" had nothing folded; both windows are gone.
        assert_eq!(coalescer.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn keys_beyond_the_table_share_one_overflow_window() {
        let mut coalescer = Coalescer::new(SECOND, 2);
        let now = Instant::now();
        let reports = (0..1_000)
            .filter(|key| matches!(coalescer.offer(*key, now), Offer::Report { .. }))
            .count();
        // Two keys of the table, one of the overflow.
        assert_eq!(reports, 3);
        assert_eq!(coalescer.len(), 2);
        tokio::time::advance(SECOND).await;
        let tallies = coalescer.flush(Instant::now());
        assert_eq!(
            tallies,
            [Tally {
                key: None,
                folded: 997
            }]
        );
        assert_eq!(
            coalescer.offer(5, Instant::now()),
            Offer::Report { earlier: 0 }
        );
    }

    proptest! {
        /// Every occurrence is reported or counted exactly once, no key is reported twice
        /// in one interval, and the table stays within its capacity.
        #[test]
        fn every_occurrence_is_accounted_for_once(
            steps in proptest::collection::vec((0u8..6, 0u64..1_500, any::<bool>()), 1..200),
            capacity in 0usize..4,
        ) {
            let start = Instant::now();
            let mut coalescer = Coalescer::new(SECOND, capacity);
            let mut now = start;
            let (mut offered, mut reported, mut counted) = (0u64, 0u64, 0u64);
            let mut last_report: HashMap<u8, Instant> = HashMap::new();
            for (key, advance_ms, flush) in steps {
                now += Duration::from_millis(advance_ms);
                offered += 1;
                match coalescer.offer(key, now) {
                    Offer::Report { earlier } => {
                        reported += 1;
                        counted += earlier;
                        if coalescer.windows.contains_key(&key)
                            && let Some(at) = last_report.insert(key, now)
                        {
                            prop_assert!(now >= at + SECOND);
                        }
                    }
                    Offer::Folded => {}
                }
                prop_assert!(coalescer.len() <= capacity);
                if flush {
                    let tallies = coalescer.flush(now);
                    for tally in &tallies {
                        if let Some(key) = tally.key {
                            last_report.remove(&key);
                        }
                    }
                    counted += tallies.iter().map(|t| t.folded).sum::<u64>();
                }
            }
            counted += coalescer
                .flush(now + SECOND)
                .iter()
                .map(|t| t.folded)
                .sum::<u64>();
            prop_assert_eq!(reported + counted, offered);
        }
    }
}
