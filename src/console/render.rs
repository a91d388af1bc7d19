//! Drawing a [`ConsoleState`] with ratatui: pure, so the screen tests draw on a
//! `TestBackend` exactly what a terminal shows.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Sparkline, Table, TableState, Wrap};

use super::state::{ConsoleState, HISTORY_SECS};
use super::view::ViewState;
use crate::events::BackoffSource;
use crate::registry::{PauseReason, TaskInfo, TaskState};

/// The smallest terminal, in columns, the console lays out; narrower shows a message.
pub const MIN_WIDTH: u16 = 90;
/// The smallest terminal, in rows, the console lays out; shorter shows a message.
pub const MIN_HEIGHT: u16 = 20;

/// Height in rows of the bottom band (slots, event delivery, restart sparkline).
const BOTTOM_HEIGHT: u16 = 8;

/// Draws `state` as `view` asks into the whole frame.
///
/// Layout, top to bottom: a header line (title, task count, event rate, sort, filter), a
/// second header line with the notice when there is one ([`ConsoleState::notice`]), the
/// task table (with the selected task's recent events below it after Enter), a band
/// with the controller's slots, event delivery per subscriber (with a `stream` row once
/// [`ConsoleState::note_stream`] was called, as a remote console does) and the
/// restart-rate sparkline, and a line of keys. A frame smaller than [`MIN_WIDTH`] x
/// [`MIN_HEIGHT`] gets a centred "terminal too small" message instead.
pub fn render(frame: &mut Frame, state: &ConsoleState, view: &ViewState) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        render_too_small(frame, area);
        return;
    }
    let header_height = if state.notice().is_some() { 2 } else { 1 };
    let [header, main, bottom, footer] = Layout::vertical([
        Constraint::Length(header_height),
        Constraint::Min(5),
        Constraint::Length(BOTTOM_HEIGHT),
        Constraint::Length(1),
    ])
    .areas(area);
    render_header(frame, header, state, view);
    if view.show_events {
        let [table, events] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(main);
        render_table(frame, table, state, view);
        render_events(frame, events, state, view);
    } else {
        render_table(frame, main, state, view);
    }
    render_bottom(frame, bottom, state);
    render_footer(frame, footer, view);
}

fn render_too_small(frame: &mut Frame, area: Rect) {
    let text = vec![
        Line::from("terminal too small"),
        Line::from(format!(
            "need {MIN_WIDTH}x{MIN_HEIGHT}, have {}x{}",
            area.width, area.height
        )),
        Line::from("enlarge the window, or press q to quit"),
    ];
    let top = area.height.saturating_sub(3) / 2;
    let rect = Rect {
        y: area.y + top,
        height: area.height.saturating_sub(top).min(3),
        ..area
    };
    frame.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        rect,
    );
}

fn render_header(frame: &mut Frame, area: Rect, state: &ConsoleState, view: &ViewState) {
    let mut spans = vec![
        Span::styled(
            format!(" taskvisor console · {} ", state.title()),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(
            " tasks {} · events {:.1}/s · sort: {}",
            state.tasks().len(),
            state.event_rate(),
            view.sort.as_label()
        )),
    ];
    if !view.filter.is_empty() || view.editing_filter {
        spans.push(Span::raw(format!(" · filter: {}", view.filter)));
    }
    let mut lines = vec![Line::from(spans)];
    if let Some(notice) = state.notice() {
        lines.push(Line::from(Span::styled(
            format!(" ! {notice}"),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        )));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn render_footer(frame: &mut Frame, area: Rect, view: &ViewState) {
    let text = if view.editing_filter {
        format!(
            " filter by name: {}_   (Enter keep · Esc clear)",
            view.filter
        )
    } else if view.show_events {
        " q quit · s sort · / filter · ↑↓ select · Enter events · Esc close".to_owned()
    } else if !view.filter.is_empty() {
        " q quit · s sort · / filter · ↑↓ select · Enter events · Esc clear filter".to_owned()
    } else {
        " q quit · s sort · / filter · ↑↓ select · Enter events".to_owned()
    };
    frame.render_widget(
        Paragraph::new(text).style(Style::default().add_modifier(Modifier::DIM)),
        area,
    );
}

/// The prefix `TaskError::Fail`'s `Display` puts before every reason; the table's narrow
/// `last failure` column leaves it out (the events panel keeps the full text).
const FAIL_PREFIX: &str = "execution failed: ";

/// The `last failure` cell: one line, without [`FAIL_PREFIX`].
pub(crate) fn failure_cell(text: &str) -> String {
    text.strip_prefix(FAIL_PREFIX)
        .unwrap_or(text)
        .replace('\n', " ")
}

/// A short state label that fits the table's state column: a periodic task waiting for its
/// next run is `scheduled`, a retry after a failure `backoff`. A peer built before
/// [`TaskState::Scheduled`] reports both as `Backoff`: one whose latest `BackoffScheduled`
/// came after a success is `scheduled` too; one after a failure, or whose event the console
/// has not seen, `backoff`.
pub(crate) fn state_label(state: TaskState, backoff: Option<BackoffSource>) -> &'static str {
    match state {
        TaskState::WaitingForPermit => "permit_wait",
        TaskState::Running => "running",
        TaskState::Scheduled => "scheduled",
        TaskState::Backoff if backoff == Some(BackoffSource::Success) => "scheduled",
        TaskState::Backoff => "backoff",
        TaskState::Removing => "removing",
        TaskState::GroupRestarting => "group_restart",
        TaskState::Paused => "paused",
    }
}

/// The state column of a task row: [`state_label`], except that a task paused because it
/// ran out of retries reads `exhausted` (a dead-set entry waiting for an operator), not
/// `paused`.
pub(crate) fn row_state_label(info: &TaskInfo, backoff: Option<BackoffSource>) -> &'static str {
    match (&info.state, &info.pause_reason) {
        (TaskState::Paused, Some(PauseReason::Exhausted { .. })) => "exhausted",
        _ => state_label(info.state, backoff),
    }
}

fn state_style(state: TaskState) -> Style {
    let color = match state {
        TaskState::Running => Color::Green,
        TaskState::Backoff | TaskState::GroupRestarting => Color::Yellow,
        TaskState::Removing => Color::Red,
        TaskState::WaitingForPermit | TaskState::Paused | TaskState::Scheduled => Color::Cyan,
    };
    Style::default().fg(color)
}

/// `42s`, `3m04s`, `2h05m`.
pub(crate) fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

fn render_table(frame: &mut Frame, area: Rect, state: &ConsoleState, view: &ViewState) {
    let rows = state.visible_rows(view);
    let title = if rows.len() == state.tasks().len() {
        format!(" Tasks ({}) ", rows.len())
    } else {
        format!(" Tasks ({} of {}) ", rows.len(), state.tasks().len())
    };
    let block = Block::bordered().title(title);
    if rows.is_empty() {
        let text = if state.tasks().is_empty() {
            "no tasks registered"
        } else {
            "no task matches the filter"
        };
        frame.render_widget(Paragraph::new(text).block(block), area);
        return;
    }
    let now = state.now();
    let header = Row::new([
        "name",
        "id",
        "group",
        "state",
        "attempt",
        "restarts",
        "in state",
        "last failure",
    ])
    .style(Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let body: Vec<Row> = rows
        .iter()
        .map(|row| {
            let info = &row.info;
            Row::new([
                Cell::from(info.name.to_string()),
                Cell::from(info.id.to_string()),
                Cell::from(info.group.as_deref().unwrap_or("-").to_owned()),
                Cell::from(row_state_label(info, state.backoff_source(info.id)))
                    .style(state_style(info.state)),
                Cell::from(info.attempt.to_string()),
                Cell::from(info.restarts.to_string()),
                Cell::from(format_duration(row.time_in_state(now))),
                Cell::from(
                    info.last_failure
                        .as_deref()
                        .map_or_else(|| "-".to_owned(), failure_cell),
                ),
            ])
        })
        .collect();
    let widths = [
        Constraint::Min(18),
        Constraint::Length(5),
        Constraint::Length(9),
        Constraint::Length(13),
        Constraint::Length(7),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Fill(1),
    ];
    let table = Table::new(body, widths)
        .header(header)
        .block(block)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut table_state = TableState::default();
    table_state.select(state.selected_index(view));
    frame.render_stateful_widget(table, area, &mut table_state);
}

fn render_events(frame: &mut Frame, area: Rect, state: &ConsoleState, view: &ViewState) {
    let Some(row) = state.selected_row(view) else {
        frame.render_widget(
            Paragraph::new("no task selected").block(Block::bordered().title(" Events ")),
            area,
        );
        return;
    };
    let title = format!(" Events of {} {} ", row.info.name, row.info.id);
    let events = state.recent_events(row.info.id);
    let inner_height = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line> = if events.is_empty() {
        vec![Line::from("no events seen yet")]
    } else {
        let skip = events.len().saturating_sub(inner_height);
        events[skip..]
            .iter()
            .map(|event| {
                let attempt = event.attempt.map(|n| format!(" #{n}")).unwrap_or_default();
                let detail = event
                    .detail
                    .as_deref()
                    .map(|text| format!(" {}", text.replace('\n', " ")))
                    .unwrap_or_default();
                Line::from(format!(
                    "{:>7.1}s {}{attempt}{detail}",
                    event.at.as_secs_f64(),
                    event.label
                ))
            })
            .collect()
    };
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        area,
    );
}

fn render_bottom(frame: &mut Frame, area: Rect, state: &ConsoleState) {
    let [slots, delivery, sparkline] = Layout::horizontal([
        Constraint::Percentage(36),
        Constraint::Percentage(32),
        Constraint::Percentage(32),
    ])
    .areas(area);
    render_slots(frame, slots, state);
    render_delivery(frame, delivery, state);
    render_sparkline(frame, sparkline, state);
}

#[cfg(feature = "controller")]
fn render_slots(frame: &mut Frame, area: Rect, state: &ConsoleState) {
    let block = Block::bordered().title(" Slots ");
    let Some(slots) = state.slots() else {
        frame.render_widget(Paragraph::new("no controller").block(block), area);
        return;
    };
    if slots.is_empty() {
        frame.render_widget(Paragraph::new("no slot in use").block(block), area);
        return;
    }
    let rows: Vec<Row> = slots
        .iter()
        .map(|slot| {
            let status = slot_status(slot.status, slot.paused);
            Row::new([
                slot.slot.to_string(),
                status,
                slot.owner_id
                    .map_or_else(|| "-".to_owned(), |id| id.to_string()),
                slot.queue_depth.to_string(),
            ])
        })
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(11),
            Constraint::Length(6),
            Constraint::Length(5),
        ],
    )
    .header(
        Row::new(["slot", "status", "owner", "queue"])
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(block);
    frame.render_widget(table, area);
}

/// A slot's status cell. It fits the 11-column status field whole, so a paused slot (the
/// state that matters in a maintenance window) is never cut: paused ones lead with
/// `paused` and abbreviate what the slot is doing (`paused·run`, `paused·term`).
#[cfg(feature = "controller")]
fn slot_status(status: crate::controller::SlotStatusKind, paused: bool) -> String {
    use crate::controller::SlotStatusKind;
    if !paused {
        return status.as_label().to_owned();
    }
    let doing = match status {
        SlotStatusKind::Idle => "idle",
        SlotStatusKind::Admitting => "adm",
        SlotStatusKind::Running => "run",
        SlotStatusKind::Terminating => "term",
    };
    format!("paused·{doing}")
}

#[cfg(not(feature = "controller"))]
fn render_slots(frame: &mut Frame, area: Rect, _state: &ConsoleState) {
    frame.render_widget(
        Paragraph::new("built without the controller feature")
            .block(Block::bordered().title(" Slots ")),
        area,
    );
}

fn render_delivery(frame: &mut Frame, area: Rect, state: &ConsoleState) {
    let stats = state.stats();
    let mut rows = vec![
        Row::new([
            "bus".to_owned(),
            stats.published.to_string(),
            stats.bus_dropped.to_string(),
        ]),
        Row::new([
            "console".to_owned(),
            state.events_seen().to_string(),
            state.console_dropped().to_string(),
        ]),
    ];
    if let Some(stream) = state.stream() {
        rows.push(Row::new([
            "stream".to_owned(),
            stream.received.to_string(),
            stream.lost.to_string(),
        ]));
    }
    rows.extend(stats.subscribers.iter().map(|sub| {
        Row::new([
            sub.name.to_string(),
            sub.delivered.to_string(),
            sub.dropped.to_string(),
        ])
    }));
    let table = Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(7),
        ],
    )
    .header(
        Row::new(["subscriber", "delivered", "lost"])
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(Block::bordered().title(" Event delivery "));
    frame.render_widget(table, area);
}

fn render_sparkline(frame: &mut Frame, area: Rect, state: &ConsoleState) {
    let history = state.restart_history();
    let inner = usize::from(area.width.saturating_sub(2)).min(HISTORY_SECS);
    let shown = &history[history.len() - inner..];
    let max = shown.iter().copied().max().unwrap_or(0);
    let total: u64 = shown.iter().sum();
    let title = sparkline_title(shown.len(), total, max, area.width.saturating_sub(2));
    let sparkline = Sparkline::default()
        .data(shown)
        .max(max.max(1))
        .style(Style::default().fg(Color::Yellow))
        .block(Block::bordered().title(title));
    frame.render_widget(sparkline, area);
}

/// The sparkline's title for `seconds` shown (as many of the last [`HISTORY_SECS`] as fit
/// the panel), with the window's total and peak when that fits in `room` columns:
/// ` restarts/s · last 36s: 5 · max 2 `, else ` restarts/s · last 36s `.
pub(crate) fn sparkline_title(seconds: usize, total: u64, max: u64, room: u16) -> String {
    let full = format!(" restarts/s · last {seconds}s: {total} · max {max} ");
    if full.chars().count() <= usize::from(room) {
        full
    } else {
        format!(" restarts/s · last {seconds}s ")
    }
}
