//! The handle's group operation: `add_group` (docs/semantics.md#groups), all-or-nothing like a
//! static batch.

use ractor::rpc::CallResult;

use super::commands::{command_permit, promise};
use super::runtime::Runtime;
use crate::error::RuntimeError;
use crate::group::TaskGroup;
use crate::identity::TaskId;
use crate::outcome::TaskWaiter;
use crate::registry::{AddRequest, GroupRequest, Internal, InternalKind, Mode, RegistryMessage};

/// Adds `group`: checks it, takes one command permit and one ownership unit per member
/// (waiting for them), publishes `TaskAddRequested` per member and hands the whole group
/// to the registry. Returns the member ids in start order, with waiters when `watch`.
pub(crate) async fn add_group(
    runtime: &Runtime,
    group: TaskGroup,
    watch: bool,
) -> Result<Vec<(TaskId, Option<TaskWaiter>)>, RuntimeError> {
    if runtime.admission_closed() {
        return Err(RuntimeError::ShuttingDown);
    }
    if let Some(problem) = group.problem() {
        return Err(RuntimeError::InvalidGroup {
            group: group.name().into(),
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
    for spec in specs {
        let id = TaskId::next();
        gate.announce_add(id, &spec, Some(&name));
        let (sender, waiter) = promise(id, watch);
        members.push(AddRequest {
            id,
            spec,
            outcome: sender,
            unit: units.as_mut().and_then(|all| all.split(1)),
            release: None,
            group: Some(name.clone()),
            held: None,
        });
        result.push((id, waiter));
    }
    let request = GroupRequest {
        name,
        strategy,
        intensity,
        members,
    };
    let reply = runtime
        .registry()
        .call(
            |port| {
                RegistryMessage::Internal(Internal(InternalKind::AddGroup(Box::new(request), port)))
            },
            None,
        )
        .await;
    drop(permit);
    match reply {
        Ok(CallResult::Success(Ok(()))) => Ok(result),
        Ok(CallResult::Success(Err(error))) => Err(error),
        _ => Err(RuntimeError::ShuttingDown),
    }
}
