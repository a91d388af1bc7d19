//! Screen tests on ratatui's `TestBackend` and unit tests of the console model. No real
//! terminal, no wall clock: every update gets an explicit console time.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::{
    BackoffSource, Event, EventKind, EventStats, SubscriberStats, TaskId, TaskInfo, TaskState,
};

/// The ids `#1..=#n`: the visible rows of a state whose tasks are 1..=n in id order.
pub(super) fn ids(n: u64) -> Vec<TaskId> {
    (1..=n).map(TaskId::fixed).collect()
}

pub(super) fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

pub(super) fn info(id: u64, name: &str, state: TaskState, attempt: u32, restarts: u32) -> TaskInfo {
    TaskInfo {
        id: TaskId::fixed(id),
        name: Arc::from(name),
        state,
        attempt,
        restarts,
        last_failure: None,
        group: None,
        next_run_in: None,
        pause_reason: None,
    }
}

pub(super) fn failed(mut info: TaskInfo, failure: &str) -> TaskInfo {
    info.last_failure = Some(Arc::from(failure));
    info
}

pub(super) fn grouped(mut info: TaskInfo, group: &str) -> TaskInfo {
    info.group = Some(Arc::from(group));
    info
}

pub(super) fn event(kind: EventKind, id: u64, name: &str) -> Event {
    Event::new(kind).with_id(TaskId::fixed(id)).with_task(name)
}

pub(super) fn restart(id: u64) -> Event {
    event(EventKind::BackoffScheduled, id, "t")
        .with_backoff_source(BackoffSource::Failure)
        .with_delay(Duration::from_millis(250))
}

/// Three tasks seen first at t=1s, the snapshot again at t=3s (flaky-sync moved to
/// backoff, heartbeat started its next attempt), the clock at t=5s.
pub(super) fn sample_state() -> ConsoleState {
    let mut state = ConsoleState::new("demo");
    state.apply_snapshot(
        secs(1.0),
        vec![
            info(1, "heartbeat", TaskState::Running, 4, 0),
            info(2, "flaky-sync", TaskState::Running, 1, 0),
            grouped(info(3, "ingest", TaskState::Running, 1, 0), "pipeline"),
        ],
    );
    state.apply_snapshot(
        secs(3.0),
        vec![
            info(1, "heartbeat", TaskState::Running, 5, 0),
            failed(
                info(2, "flaky-sync", TaskState::Backoff, 3, 2),
                "connection refused",
            ),
            grouped(info(3, "ingest", TaskState::Running, 1, 0), "pipeline"),
        ],
    );
    state.advance(secs(5.0));
    state
}

/// Draws `state` on a `width` x `height` test terminal; one string per screen row.
pub(super) fn screen(
    state: &ConsoleState,
    view: &ViewState,
    width: u16,
    height: u16,
) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render(frame, state, view)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
        })
        .collect()
}

pub(super) fn line_with<'a>(lines: &'a [String], needle: &str) -> &'a str {
    lines
        .iter()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", lines.join("\n")))
}

pub(super) fn row_index(lines: &[String], needle: &str) -> usize {
    lines
        .iter()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", lines.join("\n")))
}

#[test]
fn table_rows_show_every_column() {
    let state = sample_state();
    let lines = screen(&state, &ViewState::default(), 100, 28);
    let header = line_with(&lines, "last failure");
    for column in [
        "name", "id", "group", "state", "attempt", "restarts", "in state",
    ] {
        assert!(header.contains(column), "{column} missing from {header:?}");
    }
    let flaky = line_with(&lines, "flaky-sync");
    for cell in ["#2", "backoff", " 3 ", " 2 ", "2s", "connection refused"] {
        assert!(flaky.contains(cell), "{cell:?} missing from {flaky:?}");
    }
    let ingest = line_with(&lines, "ingest");
    assert!(ingest.contains("pipeline") && ingest.contains("running") && ingest.contains("4s"));
    assert!(line_with(&lines, "Tasks (3)").contains("Tasks (3)"));
    assert!(lines[0].contains("taskvisor console · demo") && lines[0].contains("tasks 3"));
}

#[test]
fn sort_key_orders_the_rows() {
    let state = sample_state();
    let mut view = ViewState::default();
    let by_id = screen(&state, &view, 100, 28);
    assert!(row_index(&by_id, "heartbeat") < row_index(&by_id, "flaky-sync"));
    assert!(row_index(&by_id, "flaky-sync") < row_index(&by_id, "ingest"));

    view.on_key(KeyCode::Char('s'), &ids(3));
    assert_eq!(view.sort, SortKey::Name);
    let by_name = screen(&state, &view, 100, 28);
    assert!(by_name[0].contains("sort: name"));
    assert!(row_index(&by_name, "flaky-sync") < row_index(&by_name, "heartbeat"));
    assert!(row_index(&by_name, "heartbeat") < row_index(&by_name, "ingest"));

    view.sort = SortKey::Restarts;
    let by_restarts = screen(&state, &view, 100, 28);
    assert!(row_index(&by_restarts, "flaky-sync") < row_index(&by_restarts, "heartbeat"));

    // Longest in its state first: ingest since 1s; heartbeat (a new attempt) and
    // flaky-sync (a new state) since 3s, ties by id.
    view.sort = SortKey::TimeInState;
    let by_time = screen(&state, &view, 100, 28);
    assert!(row_index(&by_time, "ingest") < row_index(&by_time, "heartbeat"));
    assert!(row_index(&by_time, "heartbeat") < row_index(&by_time, "flaky-sync"));
}

#[test]
fn filter_keeps_matching_names_only() {
    let state = sample_state();
    let mut view = ViewState::default();
    for key in [KeyCode::Char('/'), KeyCode::Char('S'), KeyCode::Char('y')] {
        view.on_key(key, &ids(3));
    }
    assert!(view.editing_filter);
    let typing = screen(&state, &view, 100, 28);
    assert!(
        typing[27].contains("filter by name: Sy_"),
        "{:?}",
        typing[27]
    );
    view.on_key(KeyCode::Enter, &ids(3));
    assert!(!view.editing_filter);
    assert_eq!(view.filter, "Sy");

    let lines = screen(&state, &view, 100, 28);
    assert!(lines[0].contains("filter: Sy"));
    assert!(
        line_with(&lines, "Tasks (1 of 3)").contains("flaky")
            || lines.iter().any(|l| l.contains("flaky-sync"))
    );
    assert!(!lines.iter().any(|line| line.contains("heartbeat")));
    assert!(!lines.iter().any(|line| line.contains("ingest")));

    view.filter = "nothing-like-it".into();
    let none = screen(&state, &view, 100, 28);
    line_with(&none, "no task matches the filter");

    // Esc while typing clears the filter.
    view.on_key(KeyCode::Char('/'), &[]);
    view.on_key(KeyCode::Esc, &[]);
    assert_eq!(view.filter, "");
    assert_eq!(state.visible_rows(&view).len(), 3);
}

#[test]
fn enter_shows_the_selected_tasks_recent_events() {
    let mut state = sample_state();
    state.record_event(
        secs(2.0),
        &event(EventKind::AttemptStarting, 2, "flaky-sync").with_attempt(1),
    );
    state.record_event(
        secs(2.5),
        &event(EventKind::AttemptFailed, 2, "flaky-sync")
            .with_attempt(1)
            .with_reason("connection refused"),
    );
    state.record_event(
        secs(2.5),
        &event(EventKind::BackoffScheduled, 2, "flaky-sync")
            .with_attempt(1)
            .with_backoff_failure()
            .with_delay(Duration::from_millis(250)),
    );
    state.record_event(
        secs(2.6),
        &event(EventKind::AttemptStarting, 1, "heartbeat").with_attempt(5),
    );
    let mut view = ViewState::default();
    view.on_key(KeyCode::Down, &ids(3)); // cursor on flaky-sync (id order)
    view.on_key(KeyCode::Enter, &ids(3));
    assert!(view.show_events);
    let lines = screen(&state, &view, 100, 28);
    assert!(line_with(&lines, "> flaky-sync").contains("> flaky-sync"));
    line_with(&lines, "Events of flaky-sync #2");
    line_with(&lines, "2.0s attempt_starting #1");
    line_with(&lines, "2.5s attempt_failed #1 connection refused");
    line_with(&lines, "backoff_scheduled #1 delay 250ms");
    // The heartbeat's event is not in flaky-sync's panel.
    assert!(!lines.iter().any(|line| line.contains("#5")));

    view.on_key(KeyCode::Esc, &ids(3));
    let closed = screen(&state, &view, 120, 28);
    assert!(!closed.iter().any(|line| line.contains("Events of")));
}

#[test]
fn a_periodic_tasks_next_run_reads_scheduled_in_the_events_panel() {
    let mut state = sample_state();
    state.record_event(
        secs(2.0),
        &event(EventKind::BackoffScheduled, 1, "heartbeat")
            .with_attempt(4)
            .with_backoff_success()
            .with_delay(Duration::from_millis(1000)),
    );
    let mut view = ViewState::default();
    view.on_key(KeyCode::Enter, &ids(3)); // cursor on heartbeat (id order)
    let lines = screen(&state, &view, 100, 28);
    line_with(&lines, "Events of heartbeat #1");
    line_with(&lines, "2.0s scheduled #4 in 1000ms");
    assert!(!lines.iter().any(|line| line.contains("backoff_scheduled")));
}

#[test]
fn a_too_small_terminal_gets_a_message() {
    let state = sample_state();
    let lines = screen(&state, &ViewState::default(), 40, 10);
    line_with(&lines, "terminal too small");
    line_with(&lines, "need 90x20, have 40x10");
    assert!(!lines.iter().any(|line| line.contains("flaky-sync")));
    // One column short is still too small; the minimum itself lays out.
    let narrow = screen(&state, &ViewState::default(), MIN_WIDTH - 1, MIN_HEIGHT);
    line_with(&narrow, "terminal too small");
    let exact = screen(&state, &ViewState::default(), MIN_WIDTH, MIN_HEIGHT);
    line_with(&exact, "flaky-sync");
}

#[test]
fn delivery_panel_shows_loss_per_subscriber() {
    let mut state = sample_state();
    state.apply_stats(EventStats {
        published: 120,
        bus_dropped: 4,
        subscribers: vec![SubscriberStats {
            name: Arc::from("audit"),
            delivered: 109,
            dropped: 7,
            panicked: 0,
            drained: None,
        }],
        ..EventStats::default()
    });
    state.note_console_dropped(2);
    let lines = screen(&state, &ViewState::default(), 100, 28);
    let audit = line_with(&lines, "audit");
    assert!(audit.contains("109") && audit.contains(" 7 "), "{audit:?}");
    let bus = line_with(&lines, "bus ");
    assert!(bus.contains("120") && bus.contains(" 4 "), "{bus:?}");
    assert!(line_with(&lines, "│console").contains(" 2 "));
    line_with(&lines, "lost");
}

#[cfg(feature = "controller")]
#[test]
fn slots_panel_shows_queue_depth() {
    use crate::controller::{SlotStatusKind, SlotView};
    let mut state = sample_state();
    let lines = screen(&state, &ViewState::default(), 100, 28);
    line_with(&lines, "no controller");
    state.apply_slots(vec![
        SlotView {
            slot: Arc::from("tenant-a"),
            status: SlotStatusKind::Running,
            owner_id: Some(TaskId::fixed(9)),
            queue_depth: 3,
            status_for: Duration::from_secs(2),
            paused: false,
        },
        SlotView {
            slot: Arc::from("tenant-b"),
            status: SlotStatusKind::Idle,
            owner_id: None,
            queue_depth: 0,
            status_for: Duration::ZERO,
            paused: false,
        },
    ]);
    let lines = screen(&state, &ViewState::default(), 100, 28);
    let a = line_with(&lines, "tenant-a");
    assert!(
        a.contains("running") && a.contains("#9") && a.contains(" 3 "),
        "{a:?}"
    );
    let b = line_with(&lines, "tenant-b");
    assert!(
        b.contains("idle") && b.contains(" - ") && b.contains(" 0 "),
        "{b:?}"
    );
    line_with(&lines, "queue");
}

/// Issue 22 item 13: a paused slot's status is never cut, at a narrow or a wide width.
#[cfg(feature = "controller")]
#[test]
fn a_paused_slot_shows_paused_in_full_at_any_width() {
    use crate::controller::{SlotStatusKind, SlotView};
    let mut state = sample_state();
    let slot = |name: &str, status| SlotView {
        slot: Arc::from(name),
        status,
        owner_id: Some(TaskId::fixed(9)),
        queue_depth: 2,
        status_for: Duration::from_secs(2),
        paused: true,
    };
    state.apply_slots(vec![
        slot("tenant-a", SlotStatusKind::Running),
        slot("tenant-b", SlotStatusKind::Terminating),
    ]);
    for width in [90, 120, 200] {
        let lines = screen(&state, &ViewState::default(), width, 28);
        // The slot name may be cut at a narrow width; the status never is.
        assert!(
            line_with(&lines, "tena").contains("paused·run "),
            "width {width}"
        );
        let term = lines.iter().filter(|l| l.contains("paused·term ")).count();
        assert_eq!(term, 1, "width {width}: {lines:?}");
    }
}

#[test]
fn restart_sparkline_title_counts_the_window() {
    let mut state = sample_state();
    for at in [1.5, 2.2, 2.8, 4.1] {
        state.record_event(secs(at), &restart(2));
    }
    let lines = screen(&state, &ViewState::default(), 100, 28);
    line_with(&lines, "restarts/s · last 30s");
}

#[test]
fn restart_history_buckets_per_second() {
    let mut state = ConsoleState::new("t");
    for at in [0.5, 1.2, 1.7, 3.1] {
        state.record_event(secs(at), &restart(1));
    }
    // A success backoff and other kinds are not restarts.
    state.record_event(
        secs(3.2),
        &event(EventKind::BackoffScheduled, 1, "t").with_backoff_source(BackoffSource::Success),
    );
    state.record_event(secs(3.3), &event(EventKind::AttemptFailed, 1, "t"));
    let history = state.restart_history();
    assert_eq!(history.len(), HISTORY_SECS);
    assert_eq!(&history[HISTORY_SECS - 4..], &[1, 2, 0, 1]);
    assert_eq!(history.iter().sum::<u64>(), 4);

    // Time passing with no restart shifts the buckets left.
    state.advance(secs(5.0));
    assert_eq!(
        &state.restart_history()[HISTORY_SECS - 6..],
        &[1, 2, 0, 1, 0, 0]
    );

    // A late event lands in its own (still kept) second.
    state.record_event(secs(2.4), &restart(1));
    assert_eq!(
        &state.restart_history()[HISTORY_SECS - 6..],
        &[1, 2, 1, 1, 0, 0]
    );

    // After more than HISTORY_SECS without an update, the old buckets are gone.
    state.advance(secs(200.0));
    assert_eq!(state.restart_history().iter().sum::<u64>(), 0);
    state.record_event(secs(200.5), &restart(1));
    assert_eq!(state.restart_history()[HISTORY_SECS - 1], 1);
}

#[test]
fn event_rate_averages_complete_seconds() {
    let mut state = ConsoleState::new("t");
    assert_eq!(state.event_rate(), 0.0);
    state.record_event(secs(0.1), &event(EventKind::TaskAdded, 1, "t"));
    // Before one second completed there is no rate.
    assert_eq!(state.event_rate(), 0.0);
    // 10 events in each of seconds 0..=6.
    let mut state = ConsoleState::new("t");
    for second in 0..7 {
        for i in 0..10 {
            let at = second as f64 + i as f64 / 20.0;
            state.record_event(secs(at), &event(EventKind::AttemptStarting, 1, "t"));
        }
    }
    // At 6.5s the current second (6) is open; the window is seconds 1..=5.
    state.advance(secs(6.5));
    assert_eq!(state.event_rate(), 10.0);
    assert_eq!(state.events_seen(), 70);
    // Three quiet seconds later: seconds 4..=8 hold 10+10+10+0+0 = 30 → 6/s.
    state.advance(secs(9.0));
    assert_eq!(state.event_rate(), 6.0);
    // Right after start, the window is the seconds that passed: 2 complete seconds.
    let mut young = ConsoleState::new("t");
    for at in [0.2, 0.4, 1.1, 1.3, 1.5, 1.7] {
        young.record_event(secs(at), &event(EventKind::AttemptStarting, 1, "t"));
    }
    young.advance(secs(2.2));
    assert_eq!(young.event_rate(), 3.0);
    let lines = screen(&young, &ViewState::default(), 100, 28);
    assert!(lines[0].contains("events 3.0/s"), "{:?}", lines[0]);
}

#[test]
fn time_in_state_survives_snapshots_until_the_state_changes() {
    let mut state = ConsoleState::new("t");
    state.apply_snapshot(secs(1.0), vec![info(1, "a", TaskState::Running, 1, 0)]);
    state.apply_snapshot(secs(4.0), vec![info(1, "a", TaskState::Running, 1, 0)]);
    assert_eq!(state.tasks()[0].time_in_state(state.now()), secs(3.0));
    state.apply_snapshot(secs(6.0), vec![info(1, "a", TaskState::Backoff, 1, 1)]);
    assert_eq!(state.tasks()[0].time_in_state(state.now()), Duration::ZERO);
    state.advance(secs(130.0));
    let lines = screen(&state, &ViewState::default(), 100, 28);
    assert!(line_with(&lines, "backoff").contains("2m04s"));
    // A task absent from the next snapshot leaves the table.
    state.apply_snapshot(secs(131.0), Vec::new());
    assert!(state.tasks().is_empty());
    line_with(
        &screen(&state, &ViewState::default(), 100, 28),
        "no tasks registered",
    );
}

#[test]
fn recent_events_ring_is_bounded() {
    let mut state = ConsoleState::new("t");
    for n in 0..(RECENT_EVENTS_PER_TASK as u32 + 10) {
        state.record_event(
            secs(f64::from(n) / 100.0),
            &event(EventKind::AttemptStarting, 1, "t").with_attempt(n),
        );
    }
    let recent = state.recent_events(TaskId::fixed(1));
    assert_eq!(recent.len(), RECENT_EVENTS_PER_TASK);
    assert_eq!(recent[0].attempt, Some(10));
    assert_eq!(
        recent.last().unwrap().attempt,
        Some(RECENT_EVENTS_PER_TASK as u32 + 9)
    );
    assert!(state.recent_events(TaskId::fixed(2)).is_empty());
    // Events without an id (diagnostics) count in the rate only.
    state.record_event(secs(0.5), &Event::runtime_failure("relay", "boom"));
    assert_eq!(state.events_seen(), RECENT_EVENTS_PER_TASK as u64 + 11);
}

#[test]
fn format_duration_units() {
    assert_eq!(render::format_duration(secs(0.4)), "0s");
    assert_eq!(render::format_duration(secs(59.9)), "59s");
    assert_eq!(render::format_duration(secs(61.0)), "1m01s");
    assert_eq!(render::format_duration(secs(7322.0)), "2h02m");
}

#[tokio::test]
async fn refresh_reads_a_running_supervisor() {
    use crate::config::SupervisorConfig;
    use crate::supervisor::Supervisor;
    use crate::task::{TaskFn, TaskSpec};
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
        .serve()
        .unwrap();
    let forever = TaskFn::arc(|ctx: crate::TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    let id = handle.add(TaskSpec::once("worker", forever)).await.unwrap();
    let mut state = ConsoleState::new(handle.name().to_owned());
    let report = refresh(&mut state, &handle, secs(1.0)).await;
    assert!(report.snapshot);
    assert_eq!(state.tasks().len(), 1);
    assert_eq!(state.tasks()[0].info.id, id);
    assert_eq!(&*state.tasks()[0].info.name, "worker");
    // `Supervisor::new` has no controller: no slot list.
    #[cfg(feature = "controller")]
    assert!(state.slots().is_none());
    assert_eq!(state.notice(), None);
    let watcher = handle.clone();
    handle.shutdown().await.unwrap();
    // Once the registry actor is gone the last table stays on screen, with a notice.
    let registry = watcher.registry_actor();
    for _ in 0..400 {
        if matches!(
            registry.get_status(),
            ractor::ActorStatus::Stopping | ractor::ActorStatus::Stopped
        ) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let report = refresh(&mut state, &watcher, secs(2.0)).await;
    assert!(!report.snapshot);
    assert_eq!(state.tasks().len(), 1);
    let lines = screen(&state, &ViewState::default(), 100, 28);
    assert!(lines[1].contains("! supervisor stopped"), "{:?}", lines[1]);
    line_with(&lines, "worker");
}

/// The README's capture: `cargo test --features console readme_capture -- --nocapture`.
#[test]
fn readme_capture() {
    let mut state = sample_state();
    state.apply_snapshot(
        secs(9.0),
        vec![
            info(1, "heartbeat", TaskState::Running, 9, 0),
            failed(
                info(2, "flaky-sync", TaskState::Backoff, 4, 3),
                "connection refused",
            ),
            grouped(info(3, "ingest", TaskState::Running, 1, 0), "pipeline"),
            grouped(
                failed(
                    info(4, "transform", TaskState::GroupRestarting, 2, 1),
                    "bad record",
                ),
                "pipeline",
            ),
            info(5, "report-7", TaskState::Running, 1, 0),
        ],
    );
    for (at, attempt) in [(2.0, 1), (4.5, 2), (7.6, 3)] {
        let flaky = |kind| event(kind, 2, "flaky-sync").with_attempt(attempt);
        state.record_event(secs(at - 0.5), &flaky(EventKind::AttemptStarting));
        state.record_event(
            secs(at),
            &flaky(EventKind::AttemptFailed).with_reason("connection refused"),
        );
        state.record_event(
            secs(at),
            &flaky(EventKind::BackoffScheduled)
                .with_backoff_failure()
                .with_delay(Duration::from_millis(500)),
        );
    }
    state.record_event(
        secs(8.1),
        &event(EventKind::AttemptStarting, 2, "flaky-sync").with_attempt(4),
    );
    for at in [8.2, 8.9] {
        state.record_event(secs(at), &restart(4));
    }
    state.apply_stats(EventStats {
        published: 412,
        subscribers: vec![SubscriberStats {
            name: Arc::from("audit-log"),
            delivered: 409,
            dropped: 3,
            panicked: 0,
            drained: None,
        }],
        ..EventStats::default()
    });
    #[cfg(feature = "controller")]
    state.apply_slots(vec![crate::SlotView {
        slot: Arc::from("tenant-a"),
        status: crate::SlotStatusKind::Running,
        owner_id: Some(TaskId::fixed(5)),
        queue_depth: 2,
        status_for: Duration::from_secs(1),
        paused: false,
    }]);
    state.advance(secs(9.4));
    let mut view = ViewState::default();
    view.on_key(KeyCode::Down, &ids(5));
    view.on_key(KeyCode::Enter, &ids(5));
    let lines = screen(&state, &view, 100, 30);
    println!("{}", lines.join("\n"));
    line_with(&lines, "Events of flaky-sync #2");
    line_with(&lines, "group_restart");
    // The README shows this screen (with the controller's slot panel).
    #[cfg(feature = "controller")]
    {
        let readme = include_str!("../../README.md");
        let block = readme
            .split("<!-- console-capture -->\n```text\n")
            .nth(1)
            .and_then(|rest| rest.split("\n```").next())
            .expect("README.md has the console capture block");
        let rendered: Vec<&str> = lines.iter().map(|line| line.trim_end()).collect();
        assert_eq!(
            block.lines().collect::<Vec<_>>(),
            rendered,
            "README.md's console capture is stale: paste this test's output"
        );
    }
}
