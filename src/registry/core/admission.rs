//! Admission (docs/semantics.md#admission): what decides whether a registration is accepted.
//!
//! In order: the registry is open; the spec is admissible as given (no zero stall timeout,
//! a ractor name only for tasks that host an actor, and
//! free in the process); the task name is free (not registered, not reserved by a
//! force-aborted attempt still running); the registered-task limit has room (reaping
//! attempts count). A static batch is all-or-nothing. A refused request's watcher resolves
//! `Rejected` and its user values are dropped under the panic guard.

use std::sync::Arc;

use super::commit;
use super::state::State;
use crate::error::RuntimeError;
use crate::events::{Event, EventKind, RejectionKind};
use crate::identity::TaskId;
use crate::outcome::TaskOutcome;
use crate::panic_guard::drop_contained;
use crate::policy::RestartPolicy;
use crate::registry::lifecycle::Input;
use crate::registry::messages::{AddRequest, GroupRequest, Stage};
use crate::task::{Resolved, TaskSpec};

/// Reason text of a registration refused by a closed registry.
const CLOSED_REASON: &str = "supervisor is shutting down";
/// Reason text of a group whose name is in use.
const GROUP_EXISTS_REASON: &str = "a group with this name is registered";
/// Reason text for a rejected duplicate name (docs/semantics.md#outcomes).
const EXISTS_REASON: &str = "a registered task already uses this name";
/// Reason text for the non-conflicting items of a rejected static batch
/// (docs/semantics.md#outcomes).
const BATCH_REASON: &str = "another item rejected the all-or-nothing batch";
/// Reason text of `with_actor_name` on a task without a hosted actor.
const NOT_AN_ACTOR_TASK: &str =
    "with_actor_name needs a task that hosts a ractor actor (TaskSpec::actor)";

/// Reason text of `with_stable_ref` on a task without a hosted actor.
const STABLE_REF_NOT_AN_ACTOR_TASK: &str =
    "with_stable_ref needs a task that hosts a ractor actor (TaskSpec::actor)";

/// Reason text of a zero stall timeout (given or inherited).
const ZERO_STALL_TIMEOUT: &str =
    "stall timeout must be greater than zero (a zero watchdog stalls every attempt at once)";

/// Why a spec cannot be admitted as given: the rejection kind for its watcher and event,
/// the reason text, and the caller's error.
fn spec_refusal(
    state: &State,
    spec: &TaskSpec,
    resolved: &Resolved,
) -> Option<(RejectionKind, Arc<str>, RuntimeError)> {
    let invalid = |text: &str| {
        let reason: Arc<str> = text.into();
        let error = RuntimeError::InvalidTaskSpec {
            name: spec.name_arc().clone(),
            reason: reason.clone(),
        };
        Some((RejectionKind::AdmissionFailed, reason, error))
    };
    if resolved.stall_timeout == Some(std::time::Duration::ZERO) {
        return invalid(ZERO_STALL_TIMEOUT);
    }
    if spec.stable_ref_stash().is_some() && !spec.hosts_actor() {
        return invalid(STABLE_REF_NOT_AN_ACTOR_TASK);
    }
    let actor_name = spec.actor_name_arc()?;
    if !spec.hosts_actor() {
        return invalid(NOT_AN_ACTOR_TASK);
    }
    let taken = state.entries.actor_name_taken(actor_name)
        || ractor::registry::where_is(actor_name).is_some();
    taken.then(|| {
        let error = RuntimeError::ActorNameTaken {
            name: actor_name.clone(),
        };
        let reason: Arc<str> = error.to_string().into();
        (RejectionKind::AlreadyExists, reason, error)
    })
}

/// Why a single registration is refused: the watcher's rejection kind and reason, and
/// the caller's error; `announce` is false only for a closed registry (no `TaskAddFailed`).
struct Refusal {
    kind: RejectionKind,
    reason: Arc<str>,
    error: RuntimeError,
    announce: bool,
}

/// The first rule a single registration breaks, in the order of docs/semantics.md#admission, if
/// any.
fn refusal(state: &State, spec: &TaskSpec, resolved: &Resolved) -> Option<Refusal> {
    if state.closing.closed() {
        return Some(Refusal {
            kind: RejectionKind::ControllerShuttingDown,
            reason: CLOSED_REASON.into(),
            error: RuntimeError::ShuttingDown,
            announce: false,
        });
    }
    if let Some((kind, reason, error)) = spec_refusal(state, spec, resolved) {
        return Some(Refusal {
            kind,
            reason,
            error,
            announce: true,
        });
    }
    if state.names.taken(spec.name()) {
        return Some(Refusal {
            kind: RejectionKind::AlreadyExists,
            reason: EXISTS_REASON.into(),
            error: RuntimeError::TaskAlreadyExists {
                name: spec.name_arc().clone(),
            },
            announce: true,
        });
    }
    if let Err(limit) = state.check_limit(1) {
        return Some(Refusal {
            kind: RejectionKind::ResourceLimit,
            reason: format!("registered task limit reached: {limit}").into(),
            error: RuntimeError::ResourceLimitReached {
                resource: "registered_tasks",
                limit,
            },
            announce: true,
        });
    }
    None
}

/// What asks to be admitted.
pub(super) enum Admission {
    /// One registration (`add`, a controller hand-off, `Add` sent as a message).
    One(Box<AddRequest>),
    /// A static batch, all-or-nothing (`run`).
    Batch(Vec<AddRequest>),
    /// A group, all-or-nothing, its members in start order.
    Group(Box<GroupRequest>),
}

/// The one door into admission: admits `admission` and returns the accepted ids in start
/// order, or the caller's error (every refused watcher is told `Rejected`). The caller
/// replies, then starts the accepted registrations.
pub(super) fn admit(state: &mut State, admission: Admission) -> Result<Vec<TaskId>, RuntimeError> {
    match admission {
        Admission::One(request) => {
            let id = request.id;
            admit_one(state, *request).map(|()| vec![id])
        }
        Admission::Batch(requests) => {
            let ids = requests.iter().map(|r| r.id).collect();
            admit_batch(state, requests).map(|()| ids)
        }
        Admission::Group(request) => admit_group(state, *request),
    }
}

/// Admission of one registration (docs/semantics.md#admission): open registry, admissible spec,
/// free name, then the registered-task limit.
fn admit_one(state: &mut State, request: AddRequest) -> Result<(), RuntimeError> {
    let resolved = request.spec.resolved(&state.settings.defaults);
    let Some(refused) = refusal(state, &request.spec, &resolved) else {
        state.insert(request, resolved);
        return Ok(());
    };
    if let Some(start) = &request.start {
        start.refused(refused.error.clone());
    }
    refuse(
        state,
        request,
        refused.kind,
        refused.reason,
        refused.announce,
    );
    Err(refused.error)
}

/// Refuses one request: its release hook hears `Refused` first (a controller slot is then
/// free before the watcher can resubmit, as for a release), `TaskAddFailed` is published
/// and the rejection counted when `announce` (docs/semantics.md#outcomes), the watcher gets
/// `Rejected { kind, reason }`, and the refused user
/// values are dropped under the panic guard (a spec may hold the last reference to the
/// user's task object).
fn refuse(
    state: &State,
    request: AddRequest,
    kind: RejectionKind,
    reason: Arc<str>,
    announce: bool,
) {
    let AddRequest {
        id,
        spec,
        outcome,
        unit,
        mut release,
        group,
        held: _,
        start,
    } = request;
    if let Some(hook) = release.as_mut() {
        hook(Stage::Refused);
    }
    if announce {
        // A closed registry publishes nothing and counts no rejection: only the waiter is
        // told why.
        state.settings.observer.rejected(kind);
        state.events().publish(|| {
            let event = Event::new(EventKind::TaskAddFailed)
                .with_id(id)
                .with_task(spec.name())
                .with_rejection_kind(kind)
                .with_reason(reason.clone());
            match &group {
                Some(group) => event.with_group(group.clone()),
                None => event,
            }
        });
    }
    drop(commit::deliver(
        outcome,
        TaskOutcome::rejected(kind, reason),
    ));
    // An open start promise left here says `ShuttingDown` (`admit_one` told it the
    // precise error first).
    drop_contained((spec, unit, release, start));
}

/// All-or-nothing admission of a static batch (docs/semantics.md#admission).
pub(super) fn admit_batch(
    state: &mut State,
    requests: Vec<AddRequest>,
) -> Result<(), RuntimeError> {
    if state.closing.closed() {
        for request in requests {
            let reason = CLOSED_REASON.into();
            refuse(
                state,
                request,
                RejectionKind::ControllerShuttingDown,
                reason,
                false,
            );
        }
        return Err(RuntimeError::ShuttingDown);
    }
    // A spec that cannot be admitted as given (or repeats an earlier item's ractor name)
    // rejects the whole batch.
    let defaults = &state.settings.defaults;
    let resolved: Vec<Resolved> = requests.iter().map(|r| r.spec.resolved(defaults)).collect();
    let mut actor_names = std::collections::HashSet::new();
    let refusals: Vec<Option<(RejectionKind, Arc<str>, RuntimeError)>> = requests
        .iter()
        .zip(&resolved)
        .map(|(r, resolved)| {
            spec_refusal(state, &r.spec, resolved).or_else(|| {
                let name = r.spec.actor_name_arc()?;
                (!actor_names.insert(name.clone())).then(|| {
                    let error = RuntimeError::ActorNameTaken { name: name.clone() };
                    let reason: Arc<str> = error.to_string().into();
                    (RejectionKind::AlreadyExists, reason, error)
                })
            })
        })
        .collect();
    if let Some((_, _, first)) = refusals.iter().flatten().next() {
        let error = first.clone();
        reject_batch(state, requests, |i| match &refusals[i] {
            Some((kind, reason, _)) => (*kind, reason.clone()),
            None => (RejectionKind::BatchRejected, BATCH_REASON.into()),
        });
        return Err(error);
    }
    // A name conflicts if it is taken, or if an earlier item of the batch already used it.
    let mut seen = std::collections::HashSet::with_capacity(requests.len());
    let conflicts: Vec<bool> = requests
        .iter()
        .map(|r| state.names.taken(r.spec.name()) || !seen.insert(r.spec.name().to_owned()))
        .collect();
    if let Some(first) = conflicts.iter().position(|c| *c) {
        let name: Arc<str> = requests[first].spec.name().into();
        reject_batch(state, requests, |i| {
            if conflicts[i] {
                (RejectionKind::AlreadyExists, EXISTS_REASON.into())
            } else {
                (RejectionKind::BatchRejected, BATCH_REASON.into())
            }
        });
        return Err(RuntimeError::TaskAlreadyExists { name });
    }
    if let Err(limit) = state.check_limit(requests.len()) {
        let current = state.charged();
        let reason: Arc<str> = format!(
            "registered task limit reached: {}/{limit}",
            current + requests.len()
        )
        .into();
        reject_batch(state, requests, |_| {
            (RejectionKind::ResourceLimit, reason.clone())
        });
        return Err(RuntimeError::ResourceLimitReached {
            resource: "registered_tasks",
            limit,
        });
    }
    for (request, resolved) in requests.into_iter().zip(resolved) {
        state.insert(request, resolved);
    }
    Ok(())
}

/// Refuses every request of a batch: item `i` gets `why(i)` as its rejection kind and
/// reason; the refused user values are dropped under the panic guard.
fn reject_batch(
    state: &mut State,
    requests: Vec<AddRequest>,
    why: impl Fn(usize) -> (RejectionKind, Arc<str>),
) {
    for (i, request) in requests.into_iter().enumerate() {
        let (kind, reason) = why(i);
        refuse(state, request, kind, reason, true);
    }
}

/// Admits a group all-or-nothing: the registry is open, the group name is free, and every
/// member passes the static batch rules. Returns the member ids in start order.
fn admit_group(state: &mut State, request: GroupRequest) -> Result<Vec<TaskId>, RuntimeError> {
    let GroupRequest {
        name,
        strategy,
        intensity,
        members,
    } = request;
    if !state.closing.closed() && state.groups.name_taken(&name) {
        let reason: Arc<str> = GROUP_EXISTS_REASON.into();
        reject_batch(state, members, |_| {
            (RejectionKind::AlreadyExists, reason.clone())
        });
        return Err(RuntimeError::InvalidGroup {
            group: name,
            reason: GROUP_EXISTS_REASON.into(),
        });
    }
    let ids: Vec<TaskId> = members.iter().map(|m| m.id).collect();
    admit_batch(state, members)?;
    let restartable = ids
        .iter()
        .map(|id| state.entry(*id).map(|e| e.life.policy().restart))
        .map(|policy| !matches!(policy, Some(RestartPolicy::Never) | None))
        .collect();
    let key = state
        .groups
        .birth(name, strategy, intensity, ids.clone(), restartable);
    // Each member's machine joins its group (no effect to carry out: nothing runs yet).
    let now = state.now();
    for (index, id) in ids.iter().enumerate() {
        if let Some((entry, intensity, _)) = state.entry_parts(*id) {
            drop(
                entry
                    .life
                    .step(Input::Join { group: key, index }, intensity, now),
            );
        }
    }
    Ok(ids)
}
