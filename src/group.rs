//! Task groups: Erlang/OTP restart strategies over an ordered set of tasks, each member
//! keeping its own restart policy, backoff, retry limit and timeouts.
//!
//! Build a [`TaskGroup`] and add it with
//! [`SupervisorHandle::add_group`](crate::SupervisorHandle::add_group). The rules are in
//! `docs/semantics.md#groups`; the registry carries them out (see `ARCHITECTURE.md`).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::task::TaskSpec;

/// Which members restart when one member's attempt ends and its own restart policy
/// restarts it (the strategies of the Erlang/OTP `supervisor` manual, "Restart Strategy").
/// Serialized by variant name (`"OneForAll"`), as [`TaskState`](crate::TaskState) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum GroupStrategy {
    /// Only that member restarts, after its own backoff (OTP `one_for_one`). The default.
    #[default]
    OneForOne,
    /// Every other member still running is stopped, one at a time in reverse start order;
    /// then all of them restart in start order (OTP `one_for_all`). Pick it when the members
    /// only work together, e.g. stages of a pipeline joined by channels.
    OneForAll,
    /// The member and every member started after it are stopped in reverse start order and
    /// restarted in start order; members started before it keep running (OTP
    /// `rest_for_one`). Pick it when later members depend on earlier ones, not the reverse.
    RestForOne,
}

impl GroupStrategy {
    /// Stable snake_case label, e.g. `"one_for_all"`.
    pub const fn as_label(self) -> &'static str {
        match self {
            GroupStrategy::OneForOne => "one_for_one",
            GroupStrategy::OneForAll => "one_for_all",
            GroupStrategy::RestForOne => "rest_for_one",
        }
    }
}

/// An ordered group of tasks supervised under one [`GroupStrategy`].
///
/// Members start in the order they were added, are stopped in reverse order, and restart
/// in start order. Each member is an ordinary registration: it keeps its own [`TaskId`],
/// name, restart policy, backoff and retry limit, and its watcher gets its own outcome.
///
/// ```
/// use std::time::Duration;
/// use ractor_taskvisor::{GroupStrategy, TaskFn, TaskGroup, TaskSpec};
///
/// let stage = TaskFn::arc(|ctx| async move {
///     ctx.cancelled().await;
///     Ok(())
/// });
/// let group = TaskGroup::new("pipeline", GroupStrategy::OneForAll)
///     .with_task(TaskSpec::restartable("reader", stage.clone()))
///     .with_task(TaskSpec::restartable("writer", stage))
///     .with_restart_intensity(5, Duration::from_secs(10));
/// assert_eq!(group.members().len(), 2);
/// ```
///
/// [`TaskId`]: crate::TaskId
#[derive(Debug)]
pub struct TaskGroup {
    pub(crate) name: Arc<str>,
    pub(crate) strategy: GroupStrategy,
    pub(crate) members: Vec<TaskSpec>,
    pub(crate) intensity: Option<(u32, Duration)>,
}

impl TaskGroup {
    /// An empty group named `name` (the name appears in every member's
    /// [`TaskInfo::group`](crate::TaskInfo::group) and events). A group needs at least one
    /// member to be admitted.
    pub fn new(name: impl Into<Arc<str>>, strategy: GroupStrategy) -> Self {
        TaskGroup {
            name: name.into(),
            strategy,
            members: Vec::new(),
            intensity: None,
        }
    }

    /// Appends a member; members start in the order they are added.
    #[must_use]
    pub fn with_task(mut self, spec: TaskSpec) -> Self {
        self.members.push(spec);
        self
    }

    /// Limits group restarts: up to `max_restarts` restarts within any `period` are
    /// allowed, the next one exceeds the limit (the OTP `intensity`/`period` rule). Every
    /// restart the strategy performs counts once, whichever member triggered it (for
    /// `OneForOne`, each member restart). When the limit is exceeded, every member still
    /// registered ends `Failed` with a reason naming the group's intensity, and
    /// [`EventKind::GroupRestartIntensityExceeded`](crate::EventKind::GroupRestartIntensityExceeded)
    /// is published; the supervisor keeps running. `max_restarts = 0` makes the first
    /// restart exceed it. A zero `period` is refused at admission
    /// ([`RuntimeError::InvalidGroup`](crate::RuntimeError::InvalidGroup)). Off by default.
    #[must_use]
    pub fn with_restart_intensity(mut self, max_restarts: u32, period: Duration) -> Self {
        self.intensity = Some((max_restarts, crate::duration::clamp(period)));
        self
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The group's strategy.
    pub fn strategy(&self) -> GroupStrategy {
        self.strategy
    }

    /// The members, in start order.
    pub fn members(&self) -> &[TaskSpec] {
        &self.members
    }

    /// The group restart intensity `(max_restarts, period)`, when set.
    pub fn restart_intensity(&self) -> Option<(u32, Duration)> {
        self.intensity
    }

    /// What is wrong with the group as given, if anything: no member, two members with one
    /// name, or a zero intensity period.
    pub(crate) fn problem(&self) -> Option<String> {
        if let Some(reason) = crate::name::problem(self.name()) {
            return Some(format!("group name: {reason}"));
        }
        if self.members.is_empty() {
            return Some("a group needs at least one member".to_owned());
        }
        if let Some((member, reason)) = self
            .members
            .iter()
            .find_map(|m| crate::name::problem(m.name()).map(|reason| (m.name(), reason)))
        {
            let member = crate::name::shown(member);
            return Some(format!("member name '{member}': {reason}"));
        }
        let mut seen = std::collections::HashSet::with_capacity(self.members.len());
        if let Some(twice) = self.members.iter().find(|m| !seen.insert(m.name())) {
            return Some(format!("two members are named '{}'", twice.name()));
        }
        if let Some((_, period)) = self.intensity
            && period.is_zero()
        {
            return Some("the restart intensity period must be greater than zero".to_owned());
        }
        None
    }
}
