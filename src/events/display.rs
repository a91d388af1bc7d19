//! How an [`Event`] reads to a person: [`Event::label`] and its `Display` line, which
//! `LogWriter`, the console and any program that prints an event share (issue 33 item 6:
//! a periodic task's next run reads "scheduled", never like a failure's backoff).

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use super::event::Event;
use super::kind::{BackoffSource, EventKind};

/// Label of a `BackoffScheduled` after a success: a periodic (or `Always`) task's next
/// run, not a retry.
pub(crate) const SCHEDULED_LABEL: &str = "scheduled";

/// Longest name or reason the `Display` line (and the built-in subscribers) prints, in
/// characters; longer text is cut and marked, so one pathological task name cannot flood a
/// log.
const MAX_TEXT: usize = 4096;

/// `text` cut to [`MAX_TEXT`] characters, with a `…[truncated]` marker when cut.
pub(crate) fn bounded(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(MAX_TEXT) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}…[truncated]", &text[..cut])),
    }
}

impl Event {
    /// The label a person reads for this event: the kind's stable label
    /// ([`EventKind::as_label`]), except that a `BackoffScheduled` after a success (a
    /// periodic or `Always` task waiting for its next run, `backoff_source` =
    /// [`BackoffSource::Success`]) reads `"scheduled"`. The kind and `backoff_source` keep
    /// the reference's shape; only what is shown changes (docs/semantics.md#events).
    pub fn label(&self) -> &'static str {
        match (self.kind, self.backoff_source) {
            (EventKind::BackoffScheduled, Some(BackoffSource::Success)) => SCHEDULED_LABEL,
            (kind, _) => kind.as_label(),
        }
    }
}

/// One line for people: [`label`](Event::label), then the fields that are set as
/// `key=value` (`task`, `attempt`, `outcome`, `rejection`, `backoff`, `delay_ms`,
/// `timeout_ms`, `duration_ms`, `dropped`, `exit_code`, `reason`); text values are quoted,
/// escaped and cut at 4096 characters. `backoff=failure` marks a retry's backoff; a run
/// after a success has the label `scheduled` and no `backoff` key. Examples:
///
/// ```text
/// backoff_scheduled task="sync" attempt=1 backoff=failure delay_ms=100 reason="execution failed: boom"
/// scheduled task="tick" attempt=3 delay_ms=1000
/// ```
///
/// Not a stable format: parse events through a subscriber's fields instead.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::from(self.label());
        if let Some(task) = &self.task {
            let _ = write!(line, " task={:?}", bounded(task));
        }
        if let Some(attempt) = self.attempt {
            let _ = write!(line, " attempt={attempt}");
        }
        if let Some(kind) = self.outcome_kind {
            let _ = write!(line, " outcome={}", kind.as_label());
        }
        if let Some(kind) = self.rejection_kind {
            let _ = write!(line, " rejection={}", kind.as_label());
        }
        if self.backoff_source == Some(BackoffSource::Failure) {
            line.push_str(" backoff=failure");
        }
        let numbers = [
            ("delay_ms", self.delay_ms.map(u64::from)),
            ("timeout_ms", self.timeout_ms.map(u64::from)),
            ("duration_ms", self.duration_ms.map(u64::from)),
            ("dropped", self.dropped),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                let _ = write!(line, " {key}={value}");
            }
        }
        if let Some(code) = self.exit_code {
            let _ = write!(line, " exit_code={code}");
        }
        if let Some(reason) = &self.reason {
            let _ = write!(line, " reason={:?}", bounded(reason));
        }
        f.write_str(&line)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn backoff(source: BackoffSource) -> Event {
        Event::new(EventKind::BackoffScheduled)
            .with_task("tick")
            .with_attempt(3)
            .with_backoff_source(source)
            .with_delay(Duration::from_millis(1000))
    }

    #[test]
    fn a_run_after_a_success_reads_scheduled_and_a_retry_reads_as_a_backoff() {
        let scheduled = backoff(BackoffSource::Success);
        assert_eq!(scheduled.label(), "scheduled");
        assert_eq!(
            scheduled.to_string(),
            r#"scheduled task="tick" attempt=3 delay_ms=1000"#
        );
        let retry = backoff(BackoffSource::Failure);
        assert_eq!(retry.label(), "backoff_scheduled");
        assert_eq!(
            retry.to_string(),
            r#"backoff_scheduled task="tick" attempt=3 backoff=failure delay_ms=1000"#
        );
        // The kind and its stable label keep the reference's shape.
        assert_eq!(scheduled.kind.as_label(), "backoff_scheduled");
        assert_eq!(Event::new(EventKind::TaskAdded).label(), "task_added");
    }

    #[test]
    fn long_text_is_cut_and_marked() {
        let name = "n".repeat(MAX_TEXT + 10);
        let line = Event::new(EventKind::TaskAdded).with_task(name).to_string();
        assert!(
            line.ends_with("…[truncated]\""),
            "{}",
            &line[line.len() - 40..]
        );
        assert!(line.len() < MAX_TEXT + 64);
    }
}
