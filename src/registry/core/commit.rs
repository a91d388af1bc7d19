//! The terminal commit of a registration and what follows from it: the order of outcome
//! delivery (docs/semantics.md#outcomes), the name reservation a force-aborted attempt
//! leaves behind until it physically exits, the auto-shutdown rule, and the end of the
//! shutdown wait once nothing is registered.

use std::sync::Arc;

use ractor::ActorId;

use super::state::State;
use super::state::entry::{CancelWaiter, EntryTimer, Parts, Reaping};
use crate::events::{Event, EventKind};
use crate::identity::TaskId;
use crate::outcome::{OutcomePromise, TaskOutcome};
use crate::panic_guard::drop_contained;
use crate::registry::decision::Finish;
use crate::registry::messages::{Stage, Timer};
use crate::registry::shell::Shell;

/// Delivers `outcome` to `promise`, or to nobody without one: the one place the registry
/// sends an outcome (a terminal commit's, and an admission's `Rejected`). An outcome nobody
/// receives is dropped here, under the panic guard (its error source is user code); the
/// destructor's panic text is returned.
/// Reason text of a force-aborted registration's `TaskFinished` event
/// (docs/semantics.md#outcomes).
const FORCE_ABORT_REASON: &str = "task did not stop within grace; force-aborted";

pub(super) fn deliver(promise: Option<OutcomePromise>, outcome: TaskOutcome) -> Option<String> {
    let undelivered = match promise {
        Some(promise) => promise.resolve(outcome).err(),
        None => Some(outcome),
    };
    undelivered.and_then(drop_contained)
}

/// The terminal commit of docs/semantics.md#outcomes (the machine's `Commit`): membership
/// ends, `TaskFinished`, watched outcome, `TaskRemoved`, cancel callers released,
/// empty-waiters woken. `reap`: the killed attempt actor still exists and stays reserved.
pub(super) fn finish(
    state: &mut State,
    shell: &mut impl Shell,
    id: TaskId,
    finish: Finish,
    reap: bool,
) {
    let Some(entry) = state.entries.remove(id) else {
        return;
    };
    let Parts {
        shared,
        life,
        outcome: promise,
        actor,
        waiters,
        unit,
        mut release,
        timers,
    } = entry.into_parts();
    let name = shared.name.clone();
    let significant = life.policy().significant;
    // An ignored task declined to start (OTP `ignore`): like an end on request, it is no
    // longer active but never fires the auto-shutdown rule.
    let on_request = life.ended_on_request() || matches!(finish.outcome, TaskOutcome::Ignored);
    state.names.release(&name, id);
    for timer in timers {
        shell.cancel(&match timer {
            EntryTimer::Removal => Timer::ForceAbort(id),
            EntryTimer::Retry => Timer::Retry(id),
        });
    }
    // Only a force-abort finishes while the actor still exists: it stays reserved until
    // its termination event arrives (invariant 3).
    let mut unit = Some(unit);
    if reap
        && let Some(actor) = actor.map(|actor| actor.id())
        && state.entries.detach(&actor).is_some()
    {
        shared.observe.attempt_aborted();
        let mut reserved = release.take();
        if let Some(hook) = reserved.as_mut() {
            hook(Stage::Committed);
        }
        let reaping = Reaping {
            release: reserved,
            _unit: unit.take().flatten(),
        };
        state.names.reserve(actor, name.clone(), reaping);
    }
    let Finish {
        outcome,
        event_reason,
    } = finish;
    state.settings.observer.outcome(outcome.kind());
    state.events().publish(|| {
        let mut event = shared
            .event(EventKind::TaskFinished)
            .with_outcome_kind(outcome.kind());
        let reason: Option<Arc<str>> = match &outcome {
            TaskOutcome::Failed { reason, .. } | TaskOutcome::Fatal { reason, .. } => {
                Some(reason.clone())
            }
            TaskOutcome::ForceAborted => Some(FORCE_ABORT_REASON.into()),
            _ => event_reason.clone(),
        };
        if let Some(reason) = reason {
            event = event.with_reason(reason);
        }
        if let TaskOutcome::Failed {
            exit_code: Some(code),
            ..
        }
        | TaskOutcome::Fatal {
            exit_code: Some(code),
            ..
        } = &outcome
        {
            event = event.with_exit_code(*code);
        }
        event
    });
    // The stable reference ends with the registration, before its watchers learn the
    // outcome: what it still stashed is dropped (counted), and its stop reason names the
    // outcome (docs/semantics.md#stable-references).
    if let Some(stable) = &shared.stable {
        stable.close(format!("task ended: {outcome}"));
    }
    // A controller slot is freed before the outcome is sent: its `Released` is then in
    // the controller's mailbox before the watcher can learn the outcome and submit to
    // the same slot again. (A force-aborted attempt that is still running moved its hook
    // to its reservation above: the slot waits for the physical exit.)
    if let Some(mut release) = release.take() {
        release(Stage::Exited);
    }
    // Later watchers get copies (they share the error source); an outcome nobody
    // receives is dropped here: its error source is user code.
    let (cancel, watchers) = waiters.into_lists();
    let mut panics = Vec::new();
    for watcher in watchers {
        panics.extend(deliver(Some(watcher), outcome.clone()));
    }
    // A `started()` still waiting learns of the end (its name is free already).
    if let Some(start) = &shared.start {
        start.ended(&outcome);
    }
    panics.extend(deliver(promise, outcome));
    state
        .events()
        .publish(|| shared.event(EventKind::TaskRemoved));
    // Cancel callers learn of the commit by a value: a channel that merely closes means
    // the registry itself went away before committing.
    for waiter in cancel {
        match waiter {
            CancelWaiter::Handle(tx) => {
                let _ = tx.send(());
            }
            CancelWaiter::Message {
                respond, claimed, ..
            } => {
                respond.respond(Ok(crate::registry::CommandReply::Cancel(claimed)));
            }
        }
    }
    if significant {
        // Ended on request it is no longer active, but only an end of its own triggers
        // the rule (OTP: `terminate_child` never triggers `auto_shutdown`): with
        // `AllSignificant`, the last significant task still active ending by itself does.
        if let Some(signal) = state.significant_ended(on_request) {
            let rule = state.settings.auto_shutdown.as_label();
            let reason = format!("auto shutdown ({rule}): task {name} ended");
            let _ = signal.send(reason.into());
        }
    }
    // The entry's record may hold the last reference to the user's task object.
    panics.extend(drop_contained((shared, life, unit, release)));
    for panic in panics {
        state.events().publish(|| {
            Event::runtime_failure("task_destructor", format!("task_drop_panicked: {panic}"))
                .with_id(id)
                .with_task(name.clone())
        });
    }
    state.after_membership_change(shell);
}

/// Releases the reservation of a force-aborted attempt that has physically exited.
pub(super) fn reaped(state: &mut State, shell: &mut impl Shell, actor: ActorId) -> bool {
    let Some(Reaping { release, .. }) = state.names.reaped(&actor) else {
        return false;
    };
    // Its permit, held until now (every attempt actor holds one under a limit).
    state.permits.release();
    if let Some(mut release) = release {
        release(Stage::Exited);
    }
    state.after_membership_change(shell);
    true
}
