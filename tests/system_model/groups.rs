//! Task groups in a run: `add_group_and_watch` of a drawn group and the group commands on
//! a drawn group name, each answer judged against what the case has seen
//! (docs/semantics.md#groups, docs/semantics.md#group-commands).
//!
//! A group name `g<n>` has incarnations: each accepted add is one, and a later add of the
//! name is only accepted once the earlier incarnation was forgotten (all its members
//! ended). The group commands act on the latest one.

use std::sync::Arc;
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use tokio::time::Instant;

use super::super::plan::{GROUPS, Group, GroupCommand, SLACK, Strategy};
use super::super::probe::{Origin, Work, task_spec};
use super::Case;

/// One `add_group` of the case: its members' work in member order, taken in or not.
pub struct GroupAdd {
    pub group: usize,
    pub members: Vec<Arc<Work>>,
    pub accepted: bool,
}

/// The name of group `group`; `GROUPS` is a name no add uses.
pub fn group_name(group: usize) -> String {
    if group < GROUPS {
        format!("g{group}")
    } else {
        "gx".into()
    }
}

/// The name of member `member` of group `group`, used by nothing else.
pub fn member_name(group: usize, member: usize) -> String {
    format!("g{group}.m{member}")
}

fn strategy(strategy: Strategy) -> GroupStrategy {
    match strategy {
        Strategy::OneForOne => GroupStrategy::OneForOne,
        Strategy::OneForAll => GroupStrategy::OneForAll,
        Strategy::RestForOne => GroupStrategy::RestForOne,
    }
}

fn in_group(work: &Work, group: usize) -> bool {
    matches!(work.origin, Origin::Group { group: g, .. } if g == group)
}

/// An error's variant name, for the trace and the coverage.
fn variant<E: std::fmt::Debug>(error: &E) -> String {
    format!("{error:?}")
        .split([' ', '{', '('])
        .next()
        .unwrap_or("")
        .to_owned()
}

impl Case<'_> {
    /// The members of the latest incarnation of group `group` (none if it never was
    /// taken in).
    fn incarnation(&self, group: usize) -> Vec<Arc<Work>> {
        self.groups
            .iter()
            .rev()
            .find(|add| add.group == group && add.accepted)
            .map(|add| add.members.clone())
            .unwrap_or_default()
    }

    /// The longest a group's stop can take at a shutdown: its members stop one at a time,
    /// each with its own window (`cap`ped after an owner drop) from its turn.
    pub(super) fn group_stops(&self, cap: Duration) -> Duration {
        let grace = self.plan.config.grace;
        self.groups
            .iter()
            .filter(|add| add.accepted)
            .map(|add| {
                add.members
                    .iter()
                    .map(|w| w.task.shutdown_timeout.unwrap_or(grace).min(cap))
                    .sum::<Duration>()
            })
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// `add_group_and_watch` of `spec` as group `g<group>`. Before any end it is refused
    /// only while an earlier incarnation may still be registered (`InvalidGroup`, or
    /// `TaskAlreadyExists` for a member's name), or for the registered-task limit while
    /// earlier work is unsettled or the group alone is over it.
    pub(super) async fn add_group(&mut self, index: usize, group: usize, spec: Group, after: bool) {
        if after {
            self.await_earlier(|w| in_group(w, group)).await;
        }
        let name = group_name(group);
        let intensity = spec.intensity.is_some();
        let members: Vec<Arc<Work>> = spec
            .members()
            .iter()
            .enumerate()
            .map(|(member, task)| {
                let origin = Origin::Group {
                    group,
                    member,
                    strategy: spec.strategy,
                    intensity,
                };
                let task_name: Arc<str> = member_name(group, member).into();
                Work::new(
                    format!("#{index} {task_name} {:?}", task.body),
                    *task,
                    origin,
                    task_name,
                )
            })
            .collect();
        // Judged against what was settled before this add was sent.
        let group_free = self
            .works
            .iter()
            .filter(|w| in_group(w, group))
            .all(|w| w.settled());
        let registry_idle = self.all_settled() && !self.controller_in_flight;
        let fits = self
            .plan
            .config
            .max_registered
            .is_none_or(|limit| spec.size <= limit);
        self.works.extend(members.iter().cloned());
        let mut task_group = TaskGroup::new(name.clone(), strategy(spec.strategy));
        for work in &members {
            let member =
                task_spec(&self.probe, work).with_backoff(BackoffPolicy::constant(spec.backoff));
            task_group = task_group.with_task(member);
        }
        if let Some((max, period)) = spec.intensity {
            task_group = task_group.with_restart_intensity(max, period);
        }
        let what = format!(
            "#{index} add_group {name} {:?} of {}{}{}",
            spec.strategy,
            spec.size,
            spec.intensity
                .map_or(String::new(), |(max, period)| format!(
                    " intensity {max} in {period:?}"
                )),
            if after {
                " (after its earlier members)"
            } else {
                ""
            },
        );
        let answer = self.handle().clone().add_group_and_watch(task_group).await;
        match answer {
            Ok(waiters) => {
                let ids: Vec<TaskId> = waiters.iter().map(|w| w.id()).collect();
                self.log(format!("{what} -> Ok({ids:?})"));
                self.covered(format!("add_group -> Ok ({:?})", spec.strategy));
                if intensity {
                    self.covered("add_group -> Ok (with an intensity)");
                }
                if self.refusing {
                    self.violation(format!("{what}: accepted after admission closed"));
                }
                if waiters.len() != members.len() {
                    self.violation(format!(
                        "{what}: {} waiters for {} members",
                        waiters.len(),
                        members.len()
                    ));
                }
                for (work, waiter) in members.iter().zip(waiters) {
                    let id = waiter.id();
                    self.take_in(work, id, Some(waiter));
                }
                self.groups.push(GroupAdd {
                    group,
                    members,
                    accepted: true,
                });
            }
            Err(error) => {
                self.log(format!("{what} -> Err({error:?})"));
                self.covered(format!("add_group -> {}", variant(&error)));
                let allowed = if self.refusing {
                    matches!(error, RuntimeError::ShuttingDown)
                } else if self.ended() {
                    true
                } else {
                    match &error {
                        RuntimeError::InvalidGroup { .. }
                        | RuntimeError::TaskAlreadyExists { .. } => !group_free,
                        RuntimeError::ResourceLimitReached { .. } => !registry_idle || !fits,
                        _ => false,
                    }
                };
                if !allowed {
                    self.violation(format!(
                        "{what}: refused with {error:?} (group free: {group_free}, registry \
                         idle: {registry_idle}, fits the limit: {fits}, admission closed: {})",
                        self.refusing
                    ));
                }
                self.groups.push(GroupAdd {
                    group,
                    members,
                    accepted: false,
                });
            }
        }
    }

    /// A group command on `g<group>` (or the unknown `gx`), judged by
    /// [`judge_group`](Self::judge_group).
    pub(super) async fn group_command(
        &mut self,
        index: usize,
        group: usize,
        command: GroupCommand,
    ) {
        let name = group_name(group);
        let members = self.incarnation(group);
        let settled = members.iter().filter(|w| w.settled()).count();
        let handle = self.handle().clone();
        let answer = match command {
            GroupCommand::Pause => handle.pause_group(name.clone()).await,
            GroupCommand::Resume => handle.resume_group(name.clone()).await,
            GroupCommand::Cancel => handle.cancel_group(name.clone()).await,
            GroupCommand::Remove => handle.remove_group(name.clone()).await,
            GroupCommand::RestartNow => handle.restart_group_now(name.clone()).await,
        };
        let verb = match command {
            GroupCommand::Pause => "pause_group",
            GroupCommand::Resume => "resume_group",
            GroupCommand::Cancel => "cancel_group",
            GroupCommand::Remove => "remove_group",
            GroupCommand::RestartNow => "restart_group_now",
        };
        let what = format!("#{index} {verb} {name}");
        self.log(format!("{what} -> {answer:?}"));
        let result = match &answer {
            Ok(change) if change.changed > 0 => "Ok (changed some)".to_owned(),
            Ok(_) => "Ok (changed none)".to_owned(),
            Err(error) => variant(error),
        };
        self.covered(format!("{verb} -> {result}"));
        if let Some(problem) = self.judge_group(command, &answer, &members, settled).await {
            self.violation(format!("{what}: {problem} (answered {answer:?})"));
        }
    }

    /// What is wrong with a group command's answer, if anything. `members`: the latest
    /// incarnation of the group (empty if none); `settled`: how many of them had settled
    /// when the command was sent.
    /// - Once admission is closed: `ShuttingDown`, nothing else.
    /// - `Ok`: the counts add up to the members of the incarnation; `ended` counts at least
    ///   the settled ones; never for a group that was never taken in or whose members had
    ///   all settled (it is forgotten with its last member). After `cancel_group` that
    ///   found no member claimed by another removal, every member has ended.
    /// - `GroupNotFound`: the group was never taken in, or every member of it ended (each
    ///   waiter answers within the slack).
    /// - `ShuttingDown` only once the run is ending.
    async fn judge_group(
        &mut self,
        command: GroupCommand,
        answer: &Result<GroupChange, RuntimeError>,
        members: &[Arc<Work>],
        settled: usize,
    ) -> Option<String> {
        if self.refusing {
            return (!matches!(answer, Err(RuntimeError::ShuttingDown)))
                .then(|| "answered after admission closed".into());
        }
        match answer {
            Ok(change) => {
                if members.is_empty() {
                    return Some("a group that was never taken in answered Ok".into());
                }
                let counted = change.changed + change.unchanged + change.ended;
                if counted != members.len() {
                    return Some(format!(
                        "counted {counted} members, the group has {}",
                        members.len()
                    ));
                }
                if change.ended < settled {
                    return Some(format!(
                        "counted {} ended, but {settled} had settled before",
                        change.ended
                    ));
                }
                if settled == members.len() && !self.ended() {
                    return Some(
                        "every member had settled: the group is forgotten (GroupNotFound)".into(),
                    );
                }
                if command == GroupCommand::Cancel && change.unchanged == 0 && !self.ended() {
                    return self.unended_after(members, "cancel_group answered").await;
                }
                None
            }
            Err(RuntimeError::GroupNotFound { .. }) => {
                if members.is_empty() {
                    return None;
                }
                self.covered("group command -> GroupNotFound for an ended group");
                self.unended_after(members, "GroupNotFound").await
            }
            Err(RuntimeError::ShuttingDown) if self.ended() => None,
            Err(_) => Some("an answer the state does not allow".into()),
        }
    }

    /// The members whose waiter has not answered within the slack after `what`, as a
    /// problem; `None` when every one answered.
    async fn unended_after(&self, members: &[Arc<Work>], what: &str) -> Option<String> {
        let deadline = Instant::now() + SLACK;
        for work in members {
            work.resolved_within(deadline.saturating_duration_since(Instant::now()))
                .await;
        }
        let open: Vec<&str> = members
            .iter()
            .filter(|w| !w.answered())
            .map(|w| w.label.as_str())
            .collect();
        (!open.is_empty()).then(|| format!("{what}, but no outcome within {SLACK:?} for {open:?}"))
    }
}
