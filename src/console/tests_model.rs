//! Screen and model tests of the selection, the time in state across attempts and
//! epochs, the state and failure cells, the sparkline title and the footer (the first
//! screen tests are in `tests.rs`, whose helpers these use).

use crossterm::event::KeyCode;

use super::tests::{event, failed, ids, info, line_with, row_index, sample_state, screen, secs};
use super::*;
use crate::events::{BackoffSource, EventKind, EventStats};
use crate::identity::TaskId;
use crate::registry::TaskState;

#[test]
fn a_new_attempt_starts_the_time_in_state_again() {
    let mut state = ConsoleState::new("t");
    // A periodic task seen in backoff at every snapshot, one run further each time.
    state.apply_snapshot(secs(1.0), vec![info(1, "tick", TaskState::Backoff, 3, 0)]);
    state.apply_snapshot(secs(30.0), vec![info(1, "tick", TaskState::Backoff, 3, 0)]);
    assert_eq!(state.tasks()[0].time_in_state(state.now()), secs(29.0));
    state.apply_snapshot(secs(41.0), vec![info(1, "tick", TaskState::Backoff, 4, 0)]);
    assert_eq!(state.tasks()[0].since, secs(41.0));
    state.advance(secs(42.5));
    let lines = screen(&state, &ViewState::default(), 100, 28);
    assert!(line_with(&lines, "tick").contains(" 1s "), "{lines:?}");
}

#[test]
fn a_restarted_supervisor_resets_times_events_and_counters() {
    let mut state = sample_state();
    state.record_event(
        secs(4.0),
        &event(EventKind::AttemptStarting, 2, "flaky-sync").with_attempt(3),
    );
    state.note_console_dropped(5);
    state.note_stream(40, 2);
    assert_eq!(state.epoch(), None);
    state.advance(secs(50.0));
    state.note_restarted(7);
    assert_eq!(state.epoch(), Some(7));
    // Rows carried by id into the new epoch do not keep the old incarnation's times.
    state.apply_snapshot(
        secs(51.0),
        vec![
            info(1, "heartbeat", TaskState::Running, 5, 0),
            info(2, "flaky-sync", TaskState::Running, 1, 0),
        ],
    );
    let times: Vec<_> = state
        .tasks()
        .iter()
        .map(|row| row.time_in_state(state.now()))
        .collect();
    assert_eq!(times, [secs(1.0), Duration::ZERO]);
    assert!(state.recent_events(TaskId::fixed(2)).is_empty());
    assert_eq!((state.events_seen(), state.console_dropped()), (0, 0));
    assert_eq!(state.stream(), Some(StreamCounts::default()));
}

#[test]
fn a_queried_epoch_is_recorded_first_and_resets_the_state_only_when_it_changes() {
    let mut state = sample_state();
    state.note_console_dropped(5);
    // The first epoch a refresh meets is recorded without forgetting anything.
    state.note_epoch(7);
    assert_eq!(state.epoch(), Some(7));
    assert_eq!(state.console_dropped(), 5);
    // The same epoch again, from a refresh or from the stream's `Restarted`, is no restart.
    state.note_epoch(7);
    state.note_restarted(7);
    assert_eq!(state.console_dropped(), 5);
    // Another epoch is a restart, whoever reports it first; the other report is a no-op.
    state.note_epoch(8);
    assert_eq!((state.epoch(), state.console_dropped()), (Some(8), 0));
    state.note_console_dropped(2);
    state.note_restarted(8);
    assert_eq!(state.console_dropped(), 2);
}

#[test]
fn the_cursor_stays_on_its_task_across_churn_and_sorting() {
    let mut state = sample_state();
    let mut view = ViewState::default();
    // On ingest (#3), the third row by id.
    for _ in 0..2 {
        view.on_key(KeyCode::Down, &state.visible_ids(&view));
    }
    assert_eq!(view.selected, Some(TaskId::fixed(3)));
    view.on_key(KeyCode::Enter, &state.visible_ids(&view));
    // Churn: heartbeat (#1) goes, a new task (#0 sorts first) comes.
    state.apply_snapshot(
        secs(6.0),
        vec![
            info(0, "alpha", TaskState::Running, 1, 0),
            info(2, "flaky-sync", TaskState::Backoff, 3, 2),
            info(3, "ingest", TaskState::Running, 1, 0),
            info(4, "zeta", TaskState::Running, 1, 0),
        ],
    );
    view.follow(&state.visible_ids(&view));
    let lines = screen(&state, &view, 100, 28);
    line_with(&lines, "> ingest");
    line_with(&lines, "Events of ingest #3");
    // Sorting by name moves the row; the cursor goes with it.
    view.on_key(KeyCode::Char('s'), &state.visible_ids(&view));
    view.follow(&state.visible_ids(&view));
    let lines = screen(&state, &view, 100, 28);
    line_with(&lines, "> ingest");
    assert!(row_index(&lines, "flaky-sync") < row_index(&lines, "ingest"));
    assert_eq!(view.cursor, 2);
    // The selected task goes: the row nearest to where it was is selected, and the
    // events panel follows it.
    state.apply_snapshot(
        secs(7.0),
        vec![
            info(0, "alpha", TaskState::Running, 1, 0),
            info(2, "flaky-sync", TaskState::Backoff, 3, 2),
            info(4, "zeta", TaskState::Running, 1, 0),
        ],
    );
    view.follow(&state.visible_ids(&view));
    assert_eq!(view.selected, Some(TaskId::fixed(4)));
    let lines = screen(&state, &view, 100, 28);
    line_with(&lines, "> zeta");
    line_with(&lines, "Events of zeta #4");
}

#[test]
fn a_periodic_wait_shows_scheduled_and_a_retry_backoff() {
    let mut state = ConsoleState::new("t");
    state.apply_snapshot(
        secs(1.0),
        vec![
            info(1, "tick", TaskState::Backoff, 2, 0),
            info(2, "flaky", TaskState::Backoff, 2, 1),
            info(3, "unseen", TaskState::Backoff, 1, 0),
            info(4, "queued", TaskState::WaitingForPermit, 0, 0),
            info(5, "cron", TaskState::Scheduled, 7, 0),
        ],
    );
    state.record_event(
        secs(1.0),
        &event(EventKind::BackoffScheduled, 1, "tick").with_backoff_source(BackoffSource::Success),
    );
    state.record_event(
        secs(1.0),
        &event(EventKind::BackoffScheduled, 2, "flaky").with_backoff_source(BackoffSource::Failure),
    );
    let lines = screen(&state, &ViewState::default(), 100, 28);
    // `Scheduled` from the snapshot; a peer built before it sends `Backoff`, told apart by
    // the `BackoffScheduled` event's source.
    assert!(line_with(&lines, "cron").contains("scheduled"));
    assert!(line_with(&lines, "tick").contains("scheduled"));
    assert!(line_with(&lines, "flaky").contains("backoff"));
    assert!(line_with(&lines, "unseen").contains("backoff"));
    assert!(line_with(&lines, "queued").contains("permit_wait"));
}

#[test]
fn the_failure_column_leaves_out_the_generic_prefix() {
    let mut state = ConsoleState::new("t");
    state.apply_snapshot(
        secs(1.0),
        vec![
            failed(
                info(1, "sync", TaskState::Backoff, 2, 1),
                "execution failed: connection refused",
            ),
            failed(
                info(2, "warm", TaskState::Backoff, 2, 1),
                "timed out after 2s",
            ),
        ],
    );
    state.record_event(
        secs(1.0),
        &event(EventKind::AttemptFailed, 1, "sync")
            .with_attempt(2)
            .with_reason("execution failed: connection refused"),
    );
    let mut view = ViewState::default();
    view.on_key(KeyCode::Enter, &state.visible_ids(&view));
    let lines = screen(&state, &view, 100, 28);
    let row = line_with(&lines, "> sync");
    assert!(row.contains("connection refused") && !row.contains("execution failed"));
    assert!(line_with(&lines, "warm").contains("timed out after 2s"));
    // The events panel keeps the full text.
    line_with(
        &lines,
        "attempt_failed #2 execution failed: connection refused",
    );
}

#[test]
fn the_sparkline_title_says_the_window_shown_even_at_the_minimum_width() {
    let mut state = sample_state();
    for at in [1.5, 2.2, 4.1] {
        state.record_event(secs(at), &tests::restart(2));
    }
    // 90 columns: a 29-column panel shows 27 seconds, and its title is whole.
    let lines = screen(&state, &ViewState::default(), MIN_WIDTH, 28);
    line_with(&lines, "┌ restarts/s · last 27s ────┐");
    // Wide enough, the window's total and peak are in the title too.
    let lines = screen(&state, &ViewState::default(), 160, 28);
    let title = line_with(&lines, "restarts/s · last ");
    assert!(title.contains("s: 3 · max 1 ─"), "{title:?}");
    assert_eq!(
        render::sparkline_title(60, 3, 1, 20),
        " restarts/s · last 60s "
    );
}

#[test]
fn esc_clears_a_kept_filter_when_no_events_panel_is_open() {
    let state = sample_state();
    let mut view = ViewState::default();
    for key in [KeyCode::Char('/'), KeyCode::Char('i'), KeyCode::Enter] {
        view.on_key(key, &state.visible_ids(&view));
    }
    assert_eq!(view.filter, "i");
    let lines = screen(&state, &view, 100, 28);
    assert!(lines[27].contains("Esc clear filter"), "{:?}", lines[27]);
    // With the events panel open, Esc closes it first and keeps the filter.
    view.on_key(KeyCode::Enter, &state.visible_ids(&view));
    let lines = screen(&state, &view, 100, 28);
    assert!(lines[27].contains("Esc close"), "{:?}", lines[27]);
    view.on_key(KeyCode::Esc, &state.visible_ids(&view));
    assert_eq!((view.show_events, view.filter.as_str()), (false, "i"));
    view.on_key(KeyCode::Esc, &state.visible_ids(&view));
    assert_eq!(view.filter, "");
    assert_eq!(state.visible_rows(&view).len(), 3);
    let lines = screen(&state, &view, 100, 28);
    assert!(!lines[27].contains("Esc"), "{:?}", lines[27]);
}

#[test]
fn restart_counters_stay_comparable_with_the_bus() {
    let mut state = ConsoleState::new("t");
    state.apply_stats(EventStats {
        published: 3,
        ..EventStats::default()
    });
    for n in 0..10 {
        state.record_event(secs(f64::from(n)), &event(EventKind::TaskAdded, 1, "t"));
    }
    state.note_restarted(2);
    state.record_event(secs(11.0), &event(EventKind::TaskAdded, 1, "t"));
    let lines = screen(&state, &ViewState::default(), 100, 28);
    let console = line_with(&lines, "│console");
    assert!(console.contains(" 1 "), "{console:?}");
}

#[test]
fn keys_move_the_cursor_within_the_rows_and_quit() {
    let mut view = ViewState::default();
    view.on_key(KeyCode::Up, &ids(3));
    assert_eq!((view.selected, view.cursor), (Some(TaskId::fixed(1)), 0));
    for _ in 0..5 {
        view.on_key(KeyCode::Char('j'), &ids(3));
    }
    assert_eq!((view.selected, view.cursor), (Some(TaskId::fixed(3)), 2));
    view.on_key(KeyCode::Char('k'), &ids(3));
    assert_eq!(view.selected, Some(TaskId::fixed(2)));
    // Fewer rows (a filter hides the selected task): the nearest row is selected.
    view.on_key(KeyCode::Char('x'), &ids(1));
    assert_eq!((view.selected, view.cursor), (Some(TaskId::fixed(1)), 0));
    for _ in 0..5 {
        view.on_key(KeyCode::Char('s'), &ids(3));
    }
    assert_eq!(view.sort, SortKey::Id);
    // `q` inside the filter is text, outside it quits.
    view.on_key(KeyCode::Char('/'), &ids(3));
    view.on_key(KeyCode::Char('q'), &ids(3));
    assert!(!view.quit);
    assert_eq!(view.filter, "q");
    view.on_key(KeyCode::Enter, &ids(3));
    view.on_key(KeyCode::Char('q'), &ids(3));
    assert!(view.quit);
}

#[test]
fn a_task_paused_by_exhaustion_reads_exhausted_and_an_ignored_end_its_own_label() {
    let mut state = ConsoleState::new("t");
    let mut dead = info(1, "dead", TaskState::Paused, 3, 2);
    dead.pause_reason = Some(crate::registry::PauseReason::Exhausted {
        last_error: "retry limit reached".into(),
    });
    let mut held = info(2, "held", TaskState::Paused, 1, 0);
    held.pause_reason = Some(crate::registry::PauseReason::Requested);
    state.apply_snapshot(secs(1.0), vec![dead, held]);
    let lines = screen(&state, &ViewState::default(), 100, 28);
    assert!(line_with(&lines, "dead").contains("exhausted"), "{lines:?}");
    assert!(line_with(&lines, "held").contains("paused"), "{lines:?}");

    state.record_event(
        secs(2.0),
        &event(EventKind::TaskFinished, 2, "held")
            .with_outcome_kind(crate::outcome::TaskOutcomeKind::Ignored),
    );
    state.record_event(
        secs(2.0),
        &event(EventKind::BackoffScheduled, 1, "dead")
            .with_backoff_source(BackoffSource::Failure)
            .with_delay(std::time::Duration::from_secs(3))
            .with_retry_after(),
    );
    let ignored = state.recent_events(TaskId::fixed(2));
    assert_eq!(
        ignored.last().and_then(|e| e.detail.as_deref()),
        Some("outcome_ignored")
    );
    let directed = state.recent_events(TaskId::fixed(1));
    assert_eq!(
        directed.last().and_then(|e| e.detail.as_deref()),
        Some("delay 3000ms (retry_after)")
    );
}
