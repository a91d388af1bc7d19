//! The console's pure model: what the screen shows, fed from snapshots and events, and the
//! view (sort, filter, selection) driven by keys. No I/O and no clock: every update takes
//! the console time `now` (time since the console started) from its caller.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use super::view::{SortKey, ViewState};
#[cfg(feature = "controller")]
use crate::controller::SlotView;
use crate::events::{BackoffSource, Event, EventKind, EventStats};
use crate::identity::TaskId;
use crate::registry::{TaskInfo, TaskState};

/// Seconds of restart and event history kept for the sparkline and the rate (one bucket per
/// second).
pub const HISTORY_SECS: usize = 60;
/// Recent events kept per task (the oldest go first).
pub const RECENT_EVENTS_PER_TASK: usize = 32;
/// Tasks whose recent events are kept at most; beyond it, tasks absent from the latest
/// snapshot are forgotten first.
pub const MAX_TRACKED_TASKS: usize = 4096;
/// The window, in whole seconds, over which [`ConsoleState::event_rate`] averages.
pub const RATE_WINDOW_SECS: u64 = 5;

/// A per-second counter over the last [`HISTORY_SECS`] seconds.
#[derive(Debug, Clone, Default)]
struct Series {
    /// The second (of console time) of the last bucket.
    head: u64,
    /// Counts, oldest first; the last one is the bucket of second `head`.
    counts: VecDeque<u64>,
}

impl Series {
    fn advance(&mut self, second: u64) {
        if self.counts.is_empty() {
            self.head = second;
            self.counts.push_back(0);
            return;
        }
        if second <= self.head {
            return;
        }
        let gap = second - self.head;
        if gap >= HISTORY_SECS as u64 {
            self.counts.clear();
            self.counts.push_back(0);
        } else {
            for _ in 0..gap {
                self.counts.push_back(0);
            }
        }
        while self.counts.len() > HISTORY_SECS {
            self.counts.pop_front();
        }
        self.head = second;
    }

    fn add(&mut self, second: u64, n: u64) {
        self.advance(second);
        // A late event (second < head) counts in its own bucket when it is still kept.
        let back = (self.head - second.min(self.head)) as usize;
        if back < self.counts.len() {
            let index = self.counts.len() - 1 - back;
            self.counts[index] += n;
        }
    }

    /// The last `HISTORY_SECS` buckets, oldest first, zero-padded at the front.
    fn history(&self) -> Vec<u64> {
        let mut out = vec![0; HISTORY_SECS - self.counts.len()];
        out.extend(self.counts.iter().copied());
        out
    }
}

/// What a remote event stream delivered to the console (see
/// [`ConsoleState::note_stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamCounts {
    /// Events that arrived over the stream, counted before the console's own buffer (so
    /// the ones it dropped are included).
    pub received: u64,
    /// Events the stream reported lost: its `Gap`s, the events that fell out of the serving
    /// node's replay buffer before the console fetched them.
    pub lost: u64,
}

/// One line of a task's recent events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentEvent {
    /// Console time at which the console received it.
    pub at: Duration,
    /// What happened.
    pub kind: EventKind,
    /// What the events panel calls it: [`Event::label`] (`scheduled` for a periodic
    /// task's next run, `backoff_scheduled` for a retry's wait).
    pub label: &'static str,
    /// The attempt number, on attempt and backoff events.
    pub attempt: Option<u32>,
    /// The event's reason; for a retry's backoff its delay (`"delay 250ms"`, with
    /// ` (retry_after)` when the failure chose it), for a scheduled run the time until it
    /// (`"in 1000ms"`); for `TaskFinished` the outcome label, then its reason.
    pub detail: Option<Arc<str>>,
}

/// One row of the task table: the latest snapshot of a task and when it entered its state.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// The task as the latest snapshot reported it.
    pub info: TaskInfo,
    /// Console time of the first snapshot that showed the task in its current state *and*
    /// its current attempt (`info.state`, `info.attempt`): a state change or a new attempt
    /// (a retry, or a periodic task's next run) starts it again, and so does a restart of
    /// the supervisor ([`ConsoleState::note_restarted`]). An approximation to within one
    /// refresh: a change is noticed at the snapshot that shows it, so a state entered and
    /// left between two snapshots is never seen.
    pub since: Duration,
}

impl TaskRow {
    /// How long, at console time `now`, it has been in its current state and attempt (the
    /// table's `in state` column): `now - since`, zero if `now` is earlier.
    pub fn time_in_state(&self, now: Duration) -> Duration {
        now.saturating_sub(self.since)
    }
}

/// Everything the console shows, built from snapshots and events; pure and cheap to clone.
///
/// Feed it with [`apply_snapshot`](Self::apply_snapshot), `apply_slots` (feature
/// `controller`), [`apply_stats`](Self::apply_stats) and
/// [`record_event`](Self::record_event); draw it with [`render`](super::render). Memory is
/// bounded: [`HISTORY_SECS`] buckets, [`RECENT_EVENTS_PER_TASK`] events for each of at most
/// [`MAX_TRACKED_TASKS`] tasks, and one row per task of the latest snapshot.
#[derive(Debug, Clone, Default)]
pub struct ConsoleState {
    title: Arc<str>,
    now: Duration,
    tasks: Vec<TaskRow>,
    #[cfg(feature = "controller")]
    slots: Option<Vec<SlotView>>,
    stats: EventStats,
    restarts: Series,
    events: Series,
    recent: HashMap<TaskId, VecDeque<RecentEvent>>,
    /// The source of each task's latest `BackoffScheduled` (bounded with `recent`).
    backoff: HashMap<TaskId, BackoffSource>,
    events_seen: u64,
    console_dropped: u64,
    stream: Option<StreamCounts>,
    notice: Option<Arc<str>>,
    /// The epoch of the latest [`ConsoleState::note_restarted`] or
    /// [`ConsoleState::note_epoch`].
    epoch: Option<u64>,
    /// The remote stream said the supervisor stopped gracefully, and has not said it is
    /// back since.
    remote_stopped: bool,
}

impl ConsoleState {
    /// An empty state whose header shows `title` (e.g. the supervisor's name).
    ///
    /// The console clock, the `now` of every method that takes one, is any monotonic
    /// `Duration` of the caller's choice, e.g. the time since the screen started; a value
    /// earlier than one already given is treated as that one.
    pub fn new(title: impl Into<Arc<str>>) -> Self {
        Self {
            title: title.into(),
            ..Self::default()
        }
    }

    /// The header title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The latest console time given to any update.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Moves the console clock to `now` (ignored if earlier), closing the buckets of the
    /// seconds that passed with no event.
    pub fn advance(&mut self, now: Duration) {
        if now > self.now {
            self.now = now;
        }
        let second = self.now.as_secs();
        self.restarts.advance(second);
        self.events.advance(second);
    }

    /// Replaces the task table with `tasks` (a `handle.snapshot()`), keeping the time in
    /// state ([`TaskRow::since`]) of each task whose state and attempt number did not
    /// change.
    pub fn apply_snapshot(&mut self, now: Duration, tasks: Vec<TaskInfo>) {
        self.advance(now);
        let previous: HashMap<TaskId, (TaskState, u32, Duration)> = self
            .tasks
            .iter()
            .map(|row| (row.info.id, (row.info.state, row.info.attempt, row.since)))
            .collect();
        self.tasks = tasks
            .into_iter()
            .map(|info| {
                let since = match previous.get(&info.id) {
                    Some((state, attempt, since))
                        if *state == info.state && *attempt == info.attempt =>
                    {
                        *since
                    }
                    _ => self.now,
                };
                TaskRow { info, since }
            })
            .collect();
        if self.recent.len() > MAX_TRACKED_TASKS {
            let live: std::collections::HashSet<TaskId> =
                self.tasks.iter().map(|row| row.info.id).collect();
            self.recent.retain(|id, _| live.contains(id));
        }
        if self.backoff.len() > MAX_TRACKED_TASKS {
            let live: std::collections::HashSet<TaskId> =
                self.tasks.iter().map(|row| row.info.id).collect();
            self.backoff.retain(|id, _| live.contains(id));
        }
    }

    /// The supervisor was served again (its node restarted): a remote stream's
    /// `WatchItem::Restarted { epoch }`. Task ids start again in a new epoch, so what the
    /// console knew per task is dropped: every row's time in state starts at the latest
    /// console time, the recent events and backoff sources are forgotten, and the
    /// console's own counters (the `console` and `stream` rows of the event delivery
    /// panel) start from zero, as the supervisor's `bus` counters do. The restart and
    /// event-rate histories are kept (they are the console's own timeline). The epoch
    /// already noted is a no-op: the stream and [`note_epoch`](Self::note_epoch) may both
    /// report one restart.
    pub fn note_restarted(&mut self, epoch: u64) {
        if self.epoch == Some(epoch) {
            return;
        }
        self.epoch = Some(epoch);
        let now = self.now;
        for row in &mut self.tasks {
            row.since = now;
        }
        self.recent.clear();
        self.backoff.clear();
        self.events_seen = 0;
        self.console_dropped = 0;
        if let Some(stream) = &mut self.stream {
            *stream = StreamCounts::default();
        }
    }

    /// The epoch the supervisor's stream sequence has now, as a query answered it (the
    /// remote `stream_stats`, which [`refresh_remote`](super::refresh_remote) asks after
    /// each snapshot): the first one is recorded as it is; another one is a restart, as
    /// [`note_restarted`](Self::note_restarted).
    pub fn note_epoch(&mut self, epoch: u64) {
        match self.epoch {
            None => self.epoch = Some(epoch),
            Some(_) => self.note_restarted(epoch),
        }
    }

    /// The supervisor's epoch as the console knows it: from the latest
    /// [`note_restarted`](Self::note_restarted) or [`note_epoch`](Self::note_epoch);
    /// `None` before any (a local supervisor has none).
    pub fn epoch(&self) -> Option<u64> {
        self.epoch
    }

    /// Records what a remote stream said about the link: `true` after it reported a
    /// graceful shutdown (`Disconnected { reason: Stopped }`), `false` once it reported
    /// the supervisor reachable again. While set, a snapshot that fails because the node
    /// is gone or serves no such supervisor shows `supervisor stopped; waiting for it to
    /// come back` instead of `connection lost`.
    pub fn note_remote_stopped(&mut self, stopped: bool) {
        self.remote_stopped = stopped;
    }

    /// Whether the remote stream's latest link notice was a graceful shutdown (see
    /// [`note_remote_stopped`](Self::note_remote_stopped)).
    pub fn remote_stopped(&self) -> bool {
        self.remote_stopped
    }

    /// The source of task `id`'s latest `BackoffScheduled` event: `Success` while a
    /// periodic (or `Always`) task waits for its next run, `Failure` for a retry backoff;
    /// `None` when the console has seen none for it.
    pub fn backoff_source(&self, id: TaskId) -> Option<BackoffSource> {
        self.backoff.get(&id).copied()
    }

    /// Replaces the slot list with a controller snapshot's slots.
    #[cfg(feature = "controller")]
    pub fn apply_slots(&mut self, slots: Vec<SlotView>) {
        self.slots = Some(slots);
    }

    /// The slots of the latest controller snapshot; `None` when none was applied (no
    /// controller).
    #[cfg(feature = "controller")]
    pub fn slots(&self) -> Option<&[SlotView]> {
        self.slots.as_deref()
    }

    /// Replaces the event counters with `stats` (a `handle.event_stats()`).
    pub fn apply_stats(&mut self, stats: EventStats) {
        self.stats = stats;
    }

    /// The latest event counters.
    pub fn stats(&self) -> &EventStats {
        &self.stats
    }

    /// Counts `event`, received at console time `now`: into the event rate, into the
    /// restart history when it schedules a retry after a failure (`BackoffScheduled` with
    /// [`BackoffSource::Failure`]), and into its task's recent events when it has an id.
    pub fn record_event(&mut self, now: Duration, event: &Event) {
        self.advance(now);
        let second = now.as_secs();
        self.events_seen += 1;
        self.events.add(second, 1);
        if event.kind == EventKind::BackoffScheduled
            && event.backoff_source == Some(BackoffSource::Failure)
        {
            self.restarts.add(second, 1);
        }
        let Some(id) = event.id else { return };
        if event.kind == EventKind::BackoffScheduled
            && let Some(source) = event.backoff_source
            && (self.backoff.contains_key(&id) || self.backoff.len() < MAX_TRACKED_TASKS)
        {
            self.backoff.insert(id, source);
        }
        if !self.recent.contains_key(&id) && self.recent.len() >= MAX_TRACKED_TASKS {
            let live: std::collections::HashSet<TaskId> =
                self.tasks.iter().map(|row| row.info.id).collect();
            self.recent.retain(|id, _| live.contains(id));
            if self.recent.len() >= MAX_TRACKED_TASKS {
                return;
            }
        }
        let detail = match (event.kind, event.delay_ms) {
            (EventKind::BackoffScheduled, Some(ms))
                if event.backoff_source == Some(BackoffSource::Success) =>
            {
                Some(Arc::from(format!("in {ms}ms")))
            }
            (EventKind::BackoffScheduled, Some(ms)) if event.retry_after => {
                Some(Arc::from(format!("delay {ms}ms (retry_after)")))
            }
            (EventKind::BackoffScheduled, Some(ms)) => Some(Arc::from(format!("delay {ms}ms"))),
            // The outcome's own label first: an ignored task (no reason) reads as such.
            (EventKind::TaskFinished, _) => match (event.outcome_kind, &event.reason) {
                (Some(kind), Some(reason)) => {
                    Some(Arc::from(format!("{}: {reason}", kind.as_label())))
                }
                (Some(kind), None) => Some(Arc::from(kind.as_label())),
                (None, reason) => reason.clone(),
            },
            _ => event.reason.clone(),
        };
        let ring = self.recent.entry(id).or_default();
        if ring.len() == RECENT_EVENTS_PER_TASK {
            ring.pop_front();
        }
        ring.push_back(RecentEvent {
            at: now,
            kind: event.kind,
            label: event.label(),
            attempt: event.attempt,
            detail,
        });
    }

    /// Sets or clears the warning shown in the header (e.g. `"supervisor stopped"`).
    pub fn set_notice(&mut self, notice: Option<Arc<str>>) {
        self.notice = notice;
    }

    /// The header warning, if any.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// Counts `n` events the console itself could not keep (its bounded buffer was full).
    pub fn note_console_dropped(&mut self, n: u64) {
        self.console_dropped += n;
    }

    /// Events the console's own bounded buffer dropped.
    pub fn console_dropped(&self) -> u64 {
        self.console_dropped
    }

    /// Adds `received` events that arrived over a remote event stream and `lost` events it
    /// reported lost (gaps) to the totals: pass what came since the last call, not running
    /// totals. The first call, even with zeros, adds the `stream` row to the event
    /// delivery panel; a local console never makes it.
    pub fn note_stream(&mut self, received: u64, lost: u64) {
        let counts = self.stream.get_or_insert_with(StreamCounts::default);
        counts.received += received;
        counts.lost += lost;
    }

    /// The remote stream's totals; `None` until [`note_stream`](Self::note_stream) was
    /// called (a local console).
    pub fn stream(&self) -> Option<StreamCounts> {
        self.stream
    }

    /// Events recorded since the console started, or since the supervisor's last restart
    /// ([`note_restarted`](Self::note_restarted)): the `console` row, not comparable with
    /// the `bus` row's count since the supervisor started.
    pub fn events_seen(&self) -> u64 {
        self.events_seen
    }

    /// Restarts per second over the last [`HISTORY_SECS`] seconds, oldest first (the last
    /// entry is the current, still open second).
    pub fn restart_history(&self) -> Vec<u64> {
        self.restarts.history()
    }

    /// Events per second over the last [`HISTORY_SECS`] seconds, oldest first.
    pub fn event_history(&self) -> Vec<u64> {
        self.events.history()
    }

    /// Events per second, averaged over the [`RATE_WINDOW_SECS`] complete seconds before
    /// the current one (fewer right after start; 0.0 before one second passed).
    pub fn event_rate(&self) -> f64 {
        let history = self.events.history();
        let complete = &history[..history.len() - 1];
        let window = (RATE_WINDOW_SECS as usize)
            .min(self.now.as_secs() as usize)
            .min(complete.len());
        if window == 0 {
            return 0.0;
        }
        let sum: u64 = complete[complete.len() - window..].iter().sum();
        sum as f64 / window as f64
    }

    /// Every task of the latest snapshot, in snapshot order.
    pub fn tasks(&self) -> &[TaskRow] {
        &self.tasks
    }

    /// The recent events of task `id`, oldest first (empty when none was seen).
    pub fn recent_events(&self, id: TaskId) -> Vec<RecentEvent> {
        self.recent
            .get(&id)
            .map(|ring| ring.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The rows `view` shows: tasks whose name contains the filter (case-insensitive),
    /// in the view's sort order (ties by id).
    pub fn visible_rows(&self, view: &ViewState) -> Vec<&TaskRow> {
        let needle = view.filter.to_lowercase();
        let mut rows: Vec<&TaskRow> = self
            .tasks
            .iter()
            .filter(|row| needle.is_empty() || row.info.name.to_lowercase().contains(&needle))
            .collect();
        let now = self.now;
        match view.sort {
            SortKey::Id => rows.sort_by_key(|row| row.info.id),
            SortKey::Name => rows.sort_by(|a, b| {
                a.info
                    .name
                    .cmp(&b.info.name)
                    .then(a.info.id.cmp(&b.info.id))
            }),
            SortKey::State => rows.sort_by(|a, b| {
                a.info
                    .state
                    .as_label()
                    .cmp(b.info.state.as_label())
                    .then(a.info.id.cmp(&b.info.id))
            }),
            SortKey::Restarts => rows.sort_by(|a, b| {
                b.info
                    .restarts
                    .cmp(&a.info.restarts)
                    .then(a.info.id.cmp(&b.info.id))
            }),
            SortKey::TimeInState => rows.sort_by(|a, b| {
                b.time_in_state(now)
                    .cmp(&a.time_in_state(now))
                    .then(a.info.id.cmp(&b.info.id))
            }),
        }
        rows
    }

    /// The ids of the rows `view` shows, in its order (what [`ViewState::on_key`] and
    /// [`ViewState::follow`] take).
    pub fn visible_ids(&self, view: &ViewState) -> Vec<TaskId> {
        self.visible_rows(view)
            .iter()
            .map(|row| row.info.id)
            .collect()
    }

    /// The position of the cursor among the rows `view` shows: the row of
    /// [`ViewState::selected`] when it is visible, else the row nearest to where the
    /// cursor was ([`ViewState::cursor`], clamped); `None` when no row is visible.
    pub fn selected_index(&self, view: &ViewState) -> Option<usize> {
        let ids = self.visible_ids(view);
        let last = ids.len().checked_sub(1)?;
        Some(
            view.selected
                .and_then(|id| ids.iter().position(|row| *row == id))
                .unwrap_or(view.cursor.min(last)),
        )
    }

    /// The task the view's cursor is on ([`selected_index`](Self::selected_index)), if
    /// any row is visible.
    pub fn selected_row(&self, view: &ViewState) -> Option<&TaskRow> {
        let index = self.selected_index(view)?;
        Some(self.visible_rows(view)[index])
    }
}
