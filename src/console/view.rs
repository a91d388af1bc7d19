//! What the user chose to see: the sort column, the name filter, the selected task and
//! the events panel, driven by keys. Pure: no I/O, no clock.

use crossterm::event::KeyCode;

use super::action::Action;
use crate::identity::TaskId;

/// The column the task table is sorted by; `s` cycles through them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Ascending task id (registration order).
    #[default]
    Id,
    /// Ascending name.
    Name,
    /// Ascending state label.
    State,
    /// Most restarts first.
    Restarts,
    /// Longest time in its state first.
    TimeInState,
}

impl SortKey {
    /// The next key in the `s` cycle.
    pub const fn next(self) -> Self {
        match self {
            Self::Id => Self::Name,
            Self::Name => Self::State,
            Self::State => Self::Restarts,
            Self::Restarts => Self::TimeInState,
            Self::TimeInState => Self::Id,
        }
    }

    /// The label shown in the header, e.g. `"restarts"`.
    pub const fn as_label(self) -> &'static str {
        match self {
            Self::Id => "id",
            Self::Name => "name",
            Self::State => "state",
            Self::Restarts => "restarts",
            Self::TimeInState => "time in state",
        }
    }
}

/// What the user chose to see: sort, filter, the selected task, the events panel. Changed
/// by [`on_key`](Self::on_key), and by [`follow`](Self::follow) when the rows change.
///
/// The cursor stays on a task, not on a row position: across snapshots that add or remove
/// other tasks, and across sorting, [`selected`](Self::selected) keeps naming the same
/// task; when that task is no longer shown (it was removed, or the filter hides it),
/// [`follow`](Self::follow) moves the cursor to the row nearest to where it was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewState {
    /// The table's sort column.
    pub sort: SortKey,
    /// Name filter (case-insensitive substring); empty shows every task.
    pub filter: String,
    /// True while the filter is being typed (after `/`, until Enter or Esc).
    pub editing_filter: bool,
    /// The task the cursor is on; `None` before any row was shown (the first row is then
    /// the cursor's).
    pub selected: Option<TaskId>,
    /// The cursor's position among the visible rows when it was last moved or followed:
    /// where the nearest row is looked for when the selected task disappears.
    pub cursor: usize,
    /// Whether the selected task's recent events are shown.
    pub show_events: bool,
    /// Set by `q`: the console should exit.
    pub quit: bool,
    /// An action that ends work (`c`, `C`, `X`), on this task, waiting for `y`; any
    /// other key drops it.
    pub confirming: Option<(Action, TaskId)>,
    /// An action to carry out now, on this task: taken (once) by the event loop, which
    /// never repeats it on its own.
    pub requested: Option<(Action, TaskId)>,
}

impl ViewState {
    /// Keeps the cursor on its task among `visible` (the visible rows' ids, in order,
    /// [`ConsoleState::visible_ids`](super::ConsoleState::visible_ids)): when the selected
    /// task is among them, [`cursor`](Self::cursor) becomes its position; when it is not,
    /// the row at the cursor's old position (or the last row) becomes the selected one.
    /// With no visible row the selection is kept (it comes back with its task).
    pub fn follow(&mut self, visible: &[TaskId]) {
        let Some(last) = visible.len().checked_sub(1) else {
            return;
        };
        match self
            .selected
            .and_then(|id| visible.iter().position(|row| *row == id))
        {
            Some(at) => self.cursor = at,
            None => {
                self.cursor = self.cursor.min(last);
                self.selected = Some(visible[self.cursor]);
            }
        }
    }

    /// Applies one key press. `visible` is the ids of the visible rows, in order (see
    /// [`follow`](Self::follow)), which the cursor moves through.
    ///
    /// Keys: `q` quit; `s` next sort column (the cursor stays on its task); `/` type a
    /// filter (characters append, Backspace deletes, Enter keeps it, Esc clears it);
    /// Up/Down or `k`/`j` move the cursor; Enter shows or hides the selected task's
    /// events; Esc hides them, or, with no events panel open, clears a kept filter.
    /// Actions on the selected task ([`Action`]): `p` pause, `r` resume, `n` restart now,
    /// `c` cancel; on its group: `P`, `R`, `N`, `C` cancel, `X` remove. A cancel or a
    /// removal waits for `y` ([`confirming`](Self::confirming)); any other key drops it.
    pub fn on_key(&mut self, key: KeyCode, visible: &[TaskId]) {
        self.follow(visible);
        if let Some(pending) = self.confirming.take() {
            if key == KeyCode::Char('y') {
                self.requested = Some(pending);
            }
            return;
        }
        if self.editing_filter {
            match key {
                KeyCode::Char(c) => self.filter.push(c),
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Enter => self.editing_filter = false,
                KeyCode::Esc => {
                    self.filter.clear();
                    self.editing_filter = false;
                }
                _ => {}
            }
            return;
        }
        match key {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('s') => self.sort = self.sort.next(),
            KeyCode::Char('/') => self.editing_filter = true,
            KeyCode::Down | KeyCode::Char('j') => self.move_to(visible, self.cursor + 1),
            KeyCode::Up | KeyCode::Char('k') => {
                self.move_to(visible, self.cursor.saturating_sub(1));
            }
            KeyCode::Enter => self.show_events = !self.show_events,
            KeyCode::Esc if self.show_events => self.show_events = false,
            KeyCode::Esc => self.filter.clear(),
            KeyCode::Char(c) => {
                if let (Some(action), Some(id)) = (Action::from_key(c), self.selected) {
                    if action.ends_work() {
                        self.confirming = Some((action, id));
                    } else {
                        self.requested = Some((action, id));
                    }
                }
            }
            _ => {}
        }
    }

    /// Puts the cursor on row `at` of `visible` (clamped to the last row).
    fn move_to(&mut self, visible: &[TaskId], at: usize) {
        if let Some(last) = visible.len().checked_sub(1) {
            self.cursor = at.min(last);
            self.selected = Some(visible[self.cursor]);
        }
    }
}
