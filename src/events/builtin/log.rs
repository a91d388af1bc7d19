//! [`LogWriter`]: one line per lifecycle event on standard output.

use std::fmt::Write as _;
use std::io::Write as _;

use super::bounded;
use crate::events::{Event, Subscribe};

/// Prints one line per lifecycle event to standard output (feature `logging`).
///
/// A line starts with the event's `seq` and kind label, then the fields that are set as
/// `key=value` (`task`, `attempt`, `outcome`, `rejection`, `backoff`, `delay_ms`,
/// `timeout_ms`, `duration_ms`, `dropped`, `exit_code`, `reason`); text values are quoted
/// and escaped and cut at 4096 characters. Example:
///
/// ```text
/// [17] backoff_scheduled task="sync" attempt=1 backoff=failure delay_ms=100 reason="execution failed: boom"
/// ```
///
/// The format is for people, not a stable API: parse events through a subscriber instead.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogWriter;

impl LogWriter {
    /// The line printed for `event`, without the trailing newline.
    pub fn format(event: &Event) -> String {
        let mut line = format!("[{}] {}", event.seq, event.kind.as_label());
        if let Some(task) = &event.task {
            let _ = write!(line, " task={:?}", bounded(task));
        }
        if let Some(attempt) = event.attempt {
            let _ = write!(line, " attempt={attempt}");
        }
        if let Some(kind) = event.outcome_kind {
            let _ = write!(line, " outcome={}", kind.as_label());
        }
        if let Some(kind) = event.rejection_kind {
            let _ = write!(line, " rejection={}", kind.as_label());
        }
        if let Some(source) = event.backoff_source {
            let _ = write!(line, " backoff={}", source.as_label());
        }
        let numbers = [
            ("delay_ms", event.delay_ms.map(u64::from)),
            ("timeout_ms", event.timeout_ms.map(u64::from)),
            ("duration_ms", event.duration_ms.map(u64::from)),
            ("dropped", event.dropped),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                let _ = write!(line, " {key}={value}");
            }
        }
        if let Some(code) = event.exit_code {
            let _ = write!(line, " exit_code={code}");
        }
        if let Some(reason) = &event.reason {
            let _ = write!(line, " reason={:?}", bounded(reason));
        }
        line
    }
}

impl Subscribe for LogWriter {
    fn on_event(&self, event: &Event) {
        let mut line = Self::format(event);
        line.push('\n');
        // A closed stdout is not worth a panic in a logging callback.
        let _ = std::io::stdout().lock().write_all(line.as_bytes());
    }

    fn name(&self) -> &str {
        "LogWriter"
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::events::EventKind;

    #[test]
    fn a_line_has_seq_kind_and_set_fields_only() {
        let event = Event::new(EventKind::BackoffScheduled)
            .with_task("sync \"a\"")
            .with_attempt(2)
            .with_backoff_failure()
            .with_delay(Duration::from_millis(100))
            .with_reason("execution failed: boom");
        let line = LogWriter::format(&event);
        assert!(
            line.starts_with(&format!("[{}] backoff_scheduled", event.seq)),
            "{line}"
        );
        assert!(line.contains(r#" task="sync \"a\"""#), "{line}");
        assert!(
            line.contains(" attempt=2 backoff=failure delay_ms=100"),
            "{line}"
        );
        assert!(
            line.ends_with(r#" reason="execution failed: boom""#),
            "{line}"
        );
        assert!(!line.contains("exit_code"), "{line}");
    }

    #[test]
    fn long_text_is_truncated_with_a_marker() {
        let name = "x".repeat(5000);
        let line = LogWriter::format(&Event::new(EventKind::TaskAdded).with_task(name));
        assert!(line.contains("…[truncated]"));
        assert!(line.len() < 4200);
    }
}
