//! `add(spec).watch().started()` in the system model (docs/semantics.md#start-results).
//!
//! The answer can come long after the operation (a task waits for a permit, a backoff or
//! an end), so the call runs in the background and the case goes on; `ends.rs` waits for
//! every call by the case's deadline. Its invariant: the call resolves (once: it is one
//! future), `Ok` only if an attempt of the task ran (its body was polled, or its actor's
//! `pre_start` ran), never `StartFailed` (the model's actors never fail their
//! `pre_start`), and `EndedBeforeStart`
//! only for a task none of whose attempts ran. The work is counted as taken in from the
//! start, so it holds its name until its waiter answers (no check assumes it settled).

use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ractor_taskvisor::prelude::*;
use tokio::task::JoinHandle;

use super::probe::Work;

/// What one background `started()` call found: a violation, if any, and its coverage label.
pub struct StartVerdict {
    pub violation: Option<String>,
    pub covered: String,
}

/// Runs `handle.add(spec).watch().started()` for `work` in the background; once started,
/// its waiter resolves the work as any watched add's does.
pub fn spawn_started(
    handle: SupervisorHandle,
    spec: TaskSpec,
    work: Arc<Work>,
) -> JoinHandle<StartVerdict> {
    work.accepted.store(true, Ordering::SeqCst);
    // The call alone holds a share of the ownership, and only until the task is accepted:
    // a pending start must not keep the supervisor from its last-owner drop.
    let call = handle.add(spec).watch().started().into_future();
    drop(handle);
    tokio::spawn(async move {
        let answer = call.await;
        let covered = match &answer {
            Ok(_) => "started -> Ok".to_owned(),
            Err(error) => format!("started -> {}", error.as_label()),
        };
        let mut violation = judge_error(&work, &answer);
        if let Ok(waiter) = answer {
            let _ = work.id.set(waiter.id());
            work.watched.store(true, Ordering::SeqCst);
            let outcome = waiter.wait().await;
            // The body's first poll comes right after the start is told: count its
            // attempts once it ended. Only a force-abort can drop it before that poll.
            let aborted = matches!(&outcome, Ok(o) if o.kind() == TaskOutcomeKind::ForceAborted);
            if work.attempts() == 0 && !aborted {
                violation = Some(format!(
                    "{}: started() answered Ok, but its body never ran (outcome {outcome:?})",
                    work.label
                ));
            }
            work.resolve(outcome);
        }
        StartVerdict { violation, covered }
    })
}

/// The invariant of an error answer (see the module documentation).
fn judge_error(work: &Work, answer: &Result<TaskWaiter, RuntimeError>) -> Option<String> {
    let attempts = work.attempts();
    let wrong = match answer {
        Ok(_) => false,
        Err(RuntimeError::StartFailed { .. }) => true,
        Err(RuntimeError::EndedBeforeStart { .. }) => attempts > 0,
        Err(_) => false,
    };
    wrong.then(|| {
        format!(
            "{}: started() answered {answer:?} after {attempts} attempt(s) of its body",
            work.label
        )
    })
}
