//! The handle's group operation: `add_group` (docs/semantics.md#groups), all-or-nothing like a
//! static batch, and its builders [`AddGroupOperation`] and, after `.started()`,
//! [`StartedAddGroupOperation`] (docs/semantics.md#start-results).

use futures_util::future::try_join_all;

use super::commands::{call, command_permit, promise, started_result};
use super::owner::Owned;
use super::runtime::Runtime;
use crate::error::RuntimeError;
use crate::group::TaskGroup;
use crate::identity::TaskId;
use crate::outcome::TaskWaiter;
use crate::registry::{AddRequest, GroupRequest, Internal, InternalKind, Mode, RegistryMessage};
use crate::task::StartPromise;

super::operations::into_future! {
    AddGroupOperation => Result<Vec<TaskId>, RuntimeError>,
    StartedAddGroupOperation => Result<Vec<TaskId>, RuntimeError>,
}

/// Builder returned by [`SupervisorHandle::add_group`](crate::SupervisorHandle::add_group).
/// Awaits to `Result<Vec<TaskId>, RuntimeError>`: the member ids in member order, once the
/// registry admitted the group (its members may not have started yet). It is `IntoFuture`,
/// not a `Future`: `.await` it, or call `.execute()` where a `Future` is needed.
///
/// # Errors
/// As [`SupervisorHandle::add_group`](crate::SupervisorHandle::add_group).
#[must_use = "an add does nothing until awaited or executed"]
pub struct AddGroupOperation {
    owned: Owned,
    group: TaskGroup,
}

/// [`AddGroupOperation`] after `.started()`: awaits to `Result<Vec<TaskId>, RuntimeError>`
/// once every member's first attempt started (for an actor task, its actor's `pre_start`
/// returned `Ok`; for a closure task, its body was first polled), or to the first start
/// error as it comes (docs/semantics.md#start-results). Members start in order, 64 at a
/// time, and a member waiting for a `max_concurrent` permit starts only when it gets one:
/// the wait has no bound of its own.
///
/// There is no `remove_on_failure` here (OTP's rule for one child, not for a group whose
/// members are admitted all-or-nothing and restart together): a member whose actor does
/// not start follows its restart policy and its group's strategy.
///
/// # Errors
/// Those of [`SupervisorHandle::add_group`](crate::SupervisorHandle::add_group), then:
/// - [`RuntimeError::StartFailed`]: a member's actor did not start (its first `pre_start`
///   returned an error or panicked); the group keeps running;
/// - [`RuntimeError::EndedBeforeStart`]: a member ended before it started (removed,
///   cancelled, the group or the supervisor stopped);
/// - [`RuntimeError::ShuttingDown`]: the registry went away.
#[must_use = "an add does nothing until awaited or executed"]
pub struct StartedAddGroupOperation {
    inner: AddGroupOperation,
}

impl AddGroupOperation {
    pub(crate) fn new(owned: Owned, group: TaskGroup) -> Self {
        AddGroupOperation { owned, group }
    }

    /// Resolve once every member started instead of once the group was admitted.
    pub fn started(self) -> StartedAddGroupOperation {
        StartedAddGroupOperation { inner: self }
    }

    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<Vec<TaskId>, RuntimeError> {
        let added = add_group(self.owned.runtime(), self.group, false, false).await?;
        Ok(added.members.into_iter().map(|(id, _)| id).collect())
    }
}

impl StartedAddGroupOperation {
    /// Runs the operation. Same as awaiting the builder.
    pub async fn execute(self) -> Result<Vec<TaskId>, RuntimeError> {
        let AddGroupOperation { owned, group } = self.inner;
        let added = add_group(owned.runtime(), group, false, true).await?;
        // A pending start keeps nothing alive (as `StartedAddOperation`).
        drop(owned);
        try_join_all(added.started.into_iter().map(started_result)).await?;
        Ok(added.members.into_iter().map(|(id, _)| id).collect())
    }
}

/// An admitted group: the member ids in start order, with waiters when watched, and the
/// receivers of their start promises when asked.
pub(crate) struct AddedGroup {
    pub(crate) members: Vec<(TaskId, Option<TaskWaiter>)>,
    started: Vec<tokio::sync::oneshot::Receiver<crate::task::Started>>,
}

/// Adds `group`: checks it, takes one command permit and one ownership unit per member
/// (waiting for them), publishes `TaskAddRequested` per member and hands the whole group
/// to the registry. Returns the member ids in start order, with waiters when `watch` and
/// start receivers when `started`.
pub(crate) async fn add_group(
    runtime: &Runtime,
    group: TaskGroup,
    watch: bool,
    started: bool,
) -> Result<AddedGroup, RuntimeError> {
    if runtime.admission_closed() {
        return Err(RuntimeError::ShuttingDown);
    }
    if let Some(problem) = group.problem() {
        return Err(RuntimeError::InvalidGroup {
            group: crate::name::shown(group.name()),
            reason: problem.into(),
        });
    }
    let TaskGroup {
        name,
        strategy,
        members: specs,
        intensity,
    } = group;
    let permit = command_permit(runtime, false).await?;
    let gate = runtime.shared().gate();
    let mut units = gate
        .units(Mode::Wait { fail_fast: false }, specs.len())
        .await?;
    let mut members = Vec::with_capacity(specs.len());
    let mut result = Vec::with_capacity(specs.len());
    let mut receivers = Vec::with_capacity(if started { specs.len() } else { 0 });
    for spec in specs {
        let id = TaskId::next();
        gate.announce_add(id, &spec, Some(&name));
        let (sender, waiter) = promise(id, watch);
        let start = started.then(|| {
            let name = spec.name_arc().clone();
            let (start, receiver) = StartPromise::channel(id, name, spec.hosts_actor(), false);
            receivers.push(receiver);
            start
        });
        members.push(AddRequest {
            id,
            spec,
            outcome: sender,
            unit: units.as_mut().and_then(|all| all.split(1)),
            release: None,
            group: Some(name.clone()),
            held: None,
            start,
        });
        result.push((id, waiter));
    }
    let request = GroupRequest {
        name,
        strategy,
        intensity,
        members,
    };
    let reply = call(runtime, |port| {
        RegistryMessage::Internal(Internal(InternalKind::AddGroup(Box::new(request), port)))
    })
    .await;
    drop(permit);
    match reply {
        Ok(Ok(())) => Ok(AddedGroup {
            members: result,
            started: receivers,
        }),
        Ok(Err(error)) | Err(error) => Err(error),
    }
}
