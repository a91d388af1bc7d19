//! [`LogWriter`]: one line per lifecycle event on standard output.

use std::io::Write as _;

use crate::events::{Event, Subscribe};

/// Prints one line per lifecycle event to standard output (feature `logging`).
///
/// A line is the event's `seq` in brackets and then its `Display` line
/// ([`Event::label`], then the fields that are set as `key=value`; text cut at 4096
/// characters). A periodic task's next run reads `scheduled`, a retry's wait
/// `backoff_scheduled … backoff=failure`. Example:
///
/// ```text
/// [17] backoff_scheduled task="sync" attempt=1 backoff=failure delay_ms=100 reason="execution failed: boom"
/// [18] scheduled task="tick" attempt=4 delay_ms=1000
/// ```
///
/// The format is for people, not a stable API: parse events through a subscriber instead.
#[derive(Debug, Default, Clone, Copy)]
pub struct LogWriter;

impl LogWriter {
    /// The line printed for `event`, without the trailing newline.
    pub fn format(event: &Event) -> String {
        format!("[{}] {event}", event.seq)
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
    fn a_periodic_tasks_next_run_reads_scheduled() {
        let event = Event::new(EventKind::BackoffScheduled)
            .with_task("tick")
            .with_attempt(4)
            .with_backoff_success()
            .with_delay(Duration::from_secs(1));
        assert_eq!(
            LogWriter::format(&event),
            format!(
                r#"[{}] scheduled task="tick" attempt=4 delay_ms=1000"#,
                event.seq
            )
        );
    }

    #[test]
    fn long_text_is_truncated_with_a_marker() {
        let name = "x".repeat(5000);
        let line = LogWriter::format(&Event::new(EventKind::TaskAdded).with_task(name));
        assert!(line.contains("…[truncated]"));
        assert!(line.len() < 4200);
    }
}
