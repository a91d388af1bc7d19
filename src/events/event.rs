//! The [`Event`] record published by the runtime (docs/semantics.md#events).
//!
//! An event is a flat record: one [`EventKind`] plus optional fields, most of them unset for
//! any given kind. Keeping it flat (instead of one struct per kind) lets every subscriber,
//! the `OutputPort`, `pg` members and remote nodes share one type and one wire format.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::kind::{BackoffSource, EventKind};
use crate::identity::TaskId;
use crate::outcome::TaskOutcomeKind;
use crate::rejection::RejectionKind;

/// The next `seq` to hand out. Starts at 1 so that 0 never appears on an event.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

/// Past this value the counter is treated as exhausted. Checking half the range (instead of
/// exactly `u64::MAX`) keeps one `fetch_add` on the hot path and still panics on every later
/// call, because the counter cannot wrap back below the limit before another 2^63 events.
const SEQ_LIMIT: u64 = 1 << 63;

fn next_seq() -> u64 {
    // Relaxed: the counter only has to be unique and increasing; it publishes no other memory.
    let seq = NEXT_SEQ.fetch_add(1, Ordering::Relaxed);
    assert!(seq < SEQ_LIMIT, "event sequence exhausted");
    seq
}

/// Whole milliseconds of `d`, saturating at `u32::MAX` (about 49.7 days), as
/// docs/semantics.md#events requires for the `*_ms` fields.
fn saturating_ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// One observation published by the runtime (docs/semantics.md#events).
///
/// Events are best-effort: they can be dropped under load (the loss is counted and reported
/// by `SubscriberOverflow`) and they never drive or confirm runtime state; watched outcomes
/// and direct replies are the authoritative channels (docs/semantics.md#events).
///
/// Which fields are set depends on [`kind`](Self::kind); see [`EventKind`]. The builder
/// methods do no validation, so code outside the runtime (tests, bridges) can construct any
/// combination.
///
/// `Debug` prints only the fields that are set. The struct is `#[non_exhaustive]`: build it
/// with [`Event::new`] and the `with_*` methods.
#[derive(Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Event {
    /// Process-global construction counter: starts at 1, strictly increasing in construction
    /// order, never 0. Gaps are expected (not every constructed event is published), and the
    /// counter is shared by all supervisors in the process. Events from different publishers
    /// can be put back in construction order by sorting on `seq`.
    pub seq: u64,
    /// Wall-clock time at construction.
    pub at: SystemTime,
    /// The limit that was hit, in whole milliseconds, saturating at `u32::MAX` (about 49.7
    /// days): the attempt timeout on `AttemptTimedOut`, the stall timeout on
    /// `AttemptStalled`; `None` on every other kind (`AttemptStarting` does not carry the
    /// configured timeout: read it from the spec).
    pub timeout_ms: Option<u32>,
    /// Scheduled delay before the next attempt, in whole milliseconds, saturating at
    /// `u32::MAX` (about 49.7 days, so a longer delay reads as `u32::MAX`): set on
    /// `BackoffScheduled`.
    pub delay_ms: Option<u32>,
    /// How long the attempt ran, in whole milliseconds, saturating at `u32::MAX`.
    pub duration_ms: Option<u32>,
    /// Coalesced number of lost events, on `SubscriberOverflow` reports; the number of
    /// messages a stable reference dropped, on `MessagesUndelivered` reports (summed over
    /// a task's reports, the total).
    pub dropped: Option<u64>,
    /// Human-readable diagnostic text (on `ShutdownRequested` only for an auto shutdown:
    /// the rule and the task whose end fired it). Not a stable format: do not parse it.
    /// One exception: on `MessagesUndelivered` it is one of the stable labels
    /// `stash_full`, `task_ended`, `after_end` (see that kind), to match on.
    pub reason: Option<Arc<str>>,
    /// Terminal outcome kind, on `TaskFinished` and on rejections (`Rejected`).
    pub outcome_kind: Option<TaskOutcomeKind>,
    /// Why work was refused, on `TaskAddFailed` and `ControllerRejected`.
    pub rejection_kind: Option<RejectionKind>,
    /// 1-based attempt number, on attempt and backoff events only (not on `TaskFinished`).
    pub attempt: Option<u32>,
    /// Task name; the subscriber or component name on diagnostics; the slot name on
    /// controller events.
    pub task: Option<Arc<str>>,
    /// The task's id, the correlation key across all events of one submission.
    pub id: Option<TaskId>,
    /// The task's group ([`TaskGroup`](crate::TaskGroup) name), on every task event of a
    /// group member and on group events.
    #[serde(default)]
    pub group: Option<Arc<str>>,
    /// Exit code reported by a failing task, when it gave one.
    pub exit_code: Option<i32>,
    /// What happened.
    pub kind: EventKind,
    /// Whether a `BackoffScheduled` delay follows a success or a failure.
    pub backoff_source: Option<BackoffSource>,
    /// `true` on a `BackoffScheduled` whose delay the failure itself asked for
    /// ([`TaskError::with_retry_after`](crate::TaskError::with_retry_after)) instead of the
    /// backoff policy (`backoff_source` stays `Failure`); `false` otherwise. Absent from
    /// older records and from the wire when `false` (it decodes as `false`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retry_after: bool,
}

impl Event {
    /// A new event of `kind`, stamped with the next `seq` and the current wall-clock time;
    /// every other field is `None`.
    ///
    /// # Panics
    /// Only when the process-global sequence is exhausted (after 2^63 − 1 events, which is
    /// not reachable in practice).
    #[must_use]
    pub fn new(kind: EventKind) -> Self {
        Self {
            seq: next_seq(),
            at: SystemTime::now(),
            timeout_ms: None,
            delay_ms: None,
            duration_ms: None,
            dropped: None,
            reason: None,
            outcome_kind: None,
            rejection_kind: None,
            attempt: None,
            task: None,
            id: None,
            group: None,
            exit_code: None,
            kind,
            backoff_source: None,
            retry_after: false,
        }
    }

    /// A `SubscriberOverflow` report: `task` = `subscriber` (a subscriber name, or
    /// `subscriber_listener` for the relay), `reason` = `full`, `closed` or `lagged(N)`
    /// (docs/semantics.md#event-loss). Add the loss count with
    /// [`with_dropped`](Self::with_dropped).
    #[must_use]
    pub fn subscriber_overflow(
        subscriber: impl Into<Arc<str>>,
        reason: impl Into<Arc<str>>,
    ) -> Self {
        Self::new(EventKind::SubscriberOverflow)
            .with_task(subscriber)
            .with_reason(reason)
    }

    /// A `SubscriberPanicked` report: `task` = `subscriber` name, `reason` = the panic
    /// message `info` (docs/semantics.md#events, #subscribers).
    #[must_use]
    pub fn subscriber_panicked(subscriber: impl Into<Arc<str>>, info: impl Into<Arc<str>>) -> Self {
        Self::new(EventKind::SubscriberPanicked)
            .with_task(subscriber)
            .with_reason(info)
    }

    /// A `RuntimeFailure` report: `task` = the failing `component` (for example `registry`
    /// or `subscriber_dispatch`), `reason` = what went wrong (docs/semantics.md#events).
    #[must_use]
    pub fn runtime_failure(component: impl Into<Arc<str>>, reason: impl Into<Arc<str>>) -> Self {
        Self::new(EventKind::RuntimeFailure)
            .with_task(component)
            .with_reason(reason)
    }

    /// Sets `reason` (diagnostic text).
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<Arc<str>>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets `outcome_kind`.
    #[must_use]
    pub fn with_outcome_kind(mut self, kind: TaskOutcomeKind) -> Self {
        self.outcome_kind = Some(kind);
        self
    }

    /// Sets `rejection_kind` and also `outcome_kind = Rejected`, because every rejection is
    /// a `Rejected` outcome (docs/semantics.md#events).
    #[must_use]
    pub fn with_rejection_kind(mut self, kind: RejectionKind) -> Self {
        self.rejection_kind = Some(kind);
        self.outcome_kind = Some(TaskOutcomeKind::Rejected);
        self
    }

    /// Sets `task` (task name, subscriber/component name, or slot name).
    #[must_use]
    pub fn with_task(mut self, task: impl Into<Arc<str>>) -> Self {
        self.task = Some(task.into());
        self
    }

    /// Sets `group` (the task's group name).
    #[must_use]
    pub fn with_group(mut self, group: impl Into<Arc<str>>) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Sets `id`.
    #[must_use]
    pub fn with_id(mut self, id: TaskId) -> Self {
        self.id = Some(id);
        self
    }

    /// Sets `timeout_ms` from `timeout`, in whole milliseconds saturating at `u32::MAX`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout_ms = Some(saturating_ms(timeout));
        self
    }

    /// Sets `delay_ms` from `delay`, in whole milliseconds saturating at `u32::MAX`.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay_ms = Some(saturating_ms(delay));
        self
    }

    /// Sets `duration_ms` from `duration`, in whole milliseconds saturating at `u32::MAX`.
    #[must_use]
    pub fn with_duration(mut self, duration: Duration) -> Self {
        self.duration_ms = Some(saturating_ms(duration));
        self
    }

    /// Sets `dropped` (number of lost events).
    #[must_use]
    pub fn with_dropped(mut self, dropped: u64) -> Self {
        self.dropped = Some(dropped);
        self
    }

    /// Sets `attempt` (1-based).
    #[must_use]
    pub fn with_attempt(mut self, attempt: u32) -> Self {
        self.attempt = Some(attempt);
        self
    }

    /// Sets `exit_code`.
    #[must_use]
    pub fn with_exit_code(mut self, code: i32) -> Self {
        self.exit_code = Some(code);
        self
    }

    /// Sets `backoff_source`.
    #[must_use]
    pub fn with_backoff_source(mut self, source: BackoffSource) -> Self {
        self.backoff_source = Some(source);
        self
    }

    /// Sets `backoff_source = Success`.
    #[must_use]
    pub fn with_backoff_success(self) -> Self {
        self.with_backoff_source(BackoffSource::Success)
    }

    /// Sets `backoff_source = Failure`.
    #[must_use]
    pub fn with_backoff_failure(self) -> Self {
        self.with_backoff_source(BackoffSource::Failure)
    }

    /// Sets `retry_after = true`: the `BackoffScheduled` delay came from the failure's
    /// [`TaskError::with_retry_after`](crate::TaskError::with_retry_after).
    #[must_use]
    pub fn with_retry_after(mut self) -> Self {
        self.retry_after = true;
        self
    }

    /// True for `SubscriberOverflow`, `SubscriberPanicked` and `RuntimeFailure`: events about
    /// the event machinery itself, whose loss is never counted or re-reported
    /// (docs/semantics.md#event-loss). See [`EventKind::is_internal_diagnostic`].
    pub fn is_internal_diagnostic(&self) -> bool {
        self.kind.is_internal_diagnostic()
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Event");
        s.field("seq", &self.seq)
            .field("kind", &self.kind)
            .field("at", &self.at);
        // Most fields are unset for any given kind; printing `None` for all of them would
        // bury the few that matter.
        macro_rules! set_fields {
            ($($name:ident),*) => {
                $(if let Some(value) = &self.$name {
                    s.field(stringify!($name), value);
                })*
            };
        }
        set_fields!(
            id,
            task,
            group,
            attempt,
            outcome_kind,
            rejection_kind,
            backoff_source,
            timeout_ms,
            delay_ms,
            duration_ms,
            dropped,
            exit_code,
            reason
        );
        if self.retry_after {
            s.field("retry_after", &true);
        }
        s.finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn seq_starts_above_zero_and_increases_in_construction_order() {
        let a = Event::new(EventKind::TaskAdded);
        let b = Event::new(EventKind::TaskAdded);
        assert!(a.seq >= 1);
        assert!(b.seq > a.seq);
    }

    #[test]
    fn seq_is_unique_across_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..1000)
                        .map(|_| Event::new(EventKind::TaskAdded).seq)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn new_sets_only_seq_at_and_kind() {
        let before = SystemTime::now();
        let e = Event::new(EventKind::ShutdownRequested);
        assert_eq!(e.kind, EventKind::ShutdownRequested);
        assert!(e.at >= before);
        assert_eq!(
            format!("{e:?}"),
            format!(
                "Event {{ seq: {}, kind: ShutdownRequested, at: {:?} }}",
                e.seq, e.at
            )
        );
    }

    #[test]
    fn millisecond_fields_are_whole_and_saturate_at_u32_max() {
        let e = Event::new(EventKind::AttemptTimedOut)
            .with_timeout(Duration::from_micros(1_999))
            .with_delay(Duration::from_secs(u64::MAX))
            .with_duration(Duration::from_millis(u64::from(u32::MAX) + 1));
        assert_eq!(e.timeout_ms, Some(1));
        assert_eq!(e.delay_ms, Some(u32::MAX));
        assert_eq!(e.duration_ms, Some(u32::MAX));
        let exact = Event::new(EventKind::AttemptTimedOut)
            .with_duration(Duration::from_millis(u64::from(u32::MAX)));
        assert_eq!(exact.duration_ms, Some(u32::MAX));
    }

    #[test]
    fn rejection_kind_implies_rejected_outcome() {
        let e = Event::new(EventKind::TaskAddFailed).with_rejection_kind(RejectionKind::SlotBusy);
        assert_eq!(e.rejection_kind, Some(RejectionKind::SlotBusy));
        assert_eq!(e.outcome_kind, Some(TaskOutcomeKind::Rejected));
    }

    #[test]
    fn backoff_shortcuts_set_the_source() {
        let s = Event::new(EventKind::BackoffScheduled).with_backoff_success();
        let f = Event::new(EventKind::BackoffScheduled).with_backoff_failure();
        assert_eq!(s.backoff_source, Some(BackoffSource::Success));
        assert_eq!(f.backoff_source, Some(BackoffSource::Failure));
    }

    #[test]
    fn factories_fill_kind_task_and_reason() {
        let o = Event::subscriber_overflow("sub", "full").with_dropped(3);
        assert_eq!(o.kind, EventKind::SubscriberOverflow);
        assert_eq!(o.task.as_deref(), Some("sub"));
        assert_eq!(o.reason.as_deref(), Some("full"));
        assert_eq!(o.dropped, Some(3));
        assert!(o.is_internal_diagnostic());

        let p = Event::subscriber_panicked("sub", "boom");
        assert_eq!(p.kind, EventKind::SubscriberPanicked);
        assert_eq!(p.task.as_deref(), Some("sub"));
        assert_eq!(p.reason.as_deref(), Some("boom"));
        assert!(p.is_internal_diagnostic());

        let r = Event::runtime_failure("registry", "gone");
        assert_eq!(r.kind, EventKind::RuntimeFailure);
        assert_eq!(r.task.as_deref(), Some("registry"));
        assert_eq!(r.reason.as_deref(), Some("gone"));
        assert!(r.is_internal_diagnostic());

        assert!(!Event::new(EventKind::TaskFinished).is_internal_diagnostic());
    }

    /// An event with every optional field set, shared with other modules' tests.
    pub(crate) fn every_field_set() -> Event {
        Event::new(EventKind::BackoffScheduled)
            .with_timeout(Duration::from_millis(10))
            .with_delay(Duration::from_millis(20))
            .with_duration(Duration::from_millis(30))
            .with_dropped(7)
            .with_reason("retry \"quoted\" ✓")
            .with_rejection_kind(RejectionKind::QueueFull)
            .with_outcome_kind(TaskOutcomeKind::Failed)
            .with_attempt(4)
            .with_task("worker")
            .with_id(TaskId::next())
            .with_exit_code(-2)
            .with_backoff_failure()
            .with_retry_after()
    }

    #[test]
    fn debug_prints_every_set_field() {
        let e = every_field_set();
        let text = format!("{e:?}");
        for name in [
            "seq",
            "kind",
            "at",
            "id",
            "task",
            "attempt",
            "outcome_kind",
            "rejection_kind",
            "backoff_source",
            "timeout_ms",
            "delay_ms",
            "duration_ms",
            "dropped",
            "exit_code",
            "reason",
            "retry_after",
        ] {
            assert!(
                text.contains(&format!("{name}: ")),
                "{name} missing: {text}"
            );
        }
    }

    #[test]
    fn serde_round_trip_keeps_every_field() {
        let e = every_field_set();
        let json = serde_json::to_string(&e).unwrap();
        let back: Event = serde_json::from_str(&json).unwrap();
        assert_eq!(format!("{back:?}"), format!("{e:?}"));
        assert_eq!(back.seq, e.seq);
        assert_eq!(back.at, e.at);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["kind"], "backoff_scheduled");
        assert_eq!(value["backoff_source"], "failure");
        assert_eq!(value["retry_after"], true);
        assert!(back.retry_after);
        assert_eq!(value["rejection_kind"], "queue_full");
        assert_eq!(value["id"], e.id.unwrap().get());
    }

    #[test]
    fn deserializing_missing_optional_fields_gives_none() {
        let e = Event::new(EventKind::TaskAdded);
        let mut value = serde_json::to_value(&e).unwrap();
        let obj = value.as_object_mut().unwrap();
        obj.retain(|k, _| matches!(k.as_str(), "seq" | "at" | "kind"));
        let back: Event = serde_json::from_value(value).unwrap();
        assert_eq!(format!("{back:?}"), format!("{e:?}"));
        assert!(!back.retry_after);
    }
}
