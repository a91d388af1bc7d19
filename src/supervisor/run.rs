//! The static `run*` entry points' single-shot run, shared by `run`, `run_until` and
//! `run_with_os_signals`: claim, pre-checks that do not consume the claim, commit,
//! all-or-nothing batch, then wait for natural completion, a trigger, or another shutdown.
//!
//! Named "run", not "lifecycle": that word is for the registration life-cycle machine
//! (`registry/lifecycle.rs`).

use std::future::Future;
use std::sync::atomic::Ordering;

use futures_util::FutureExt;
use ractor::rpc::CallResult;

use super::Supervisor;
use super::commands::call;
use super::owner::Owned;
use super::shutdown;
use super::trigger::Trigger;
use crate::error::RuntimeError;

use crate::identity::TaskId;
use crate::registry::{AddRequest, InternalKind, Mode, check_task_name};
use crate::task::TaskSpec;

const FREE: u8 = 0;
const CLAIMED: u8 = 1;
const COMMITTED: u8 = 2;

/// Runs the static batch `tasks` once; `trigger` completing requests a graceful shutdown.
pub(super) async fn run_static<F>(
    supervisor: &Supervisor,
    tasks: Vec<TaskSpec>,
    trigger: Option<F>,
) -> Result<(), RuntimeError>
where
    F: Future<Output = ()>,
{
    if supervisor
        .run_claim
        .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(RuntimeError::AlreadyRunning);
    }
    let release = || supervisor.run_claim.store(FREE, Ordering::Release);
    let commit = || supervisor.run_claim.store(COMMITTED, Ordering::Release);

    // The one name rule (docs/semantics.md#names), before anything is counted.
    if let Some(error) = tasks.iter().find_map(|spec| check_task_name(spec).err()) {
        release();
        return Err(error);
    }
    if let Some(limit) = supervisor.config.max_registered_tasks()
        && tasks.len() > limit.get()
    {
        release();
        return Err(RuntimeError::ResourceLimitReached {
            resource: "registered_tasks",
            limit: limit.get(),
        });
    }
    if let Some(capacity) = supervisor.config.ownership_capacity()
        && tasks.len() > capacity.get().saturating_sub(supervisor.subscribers.len())
    {
        release();
        return Err(RuntimeError::ResourceLimitReached {
            resource: "owned_user_lifetimes",
            limit: capacity.get(),
        });
    }
    let runtime = match supervisor.runtime() {
        Ok(runtime) => runtime,
        Err(error) => {
            release();
            return Err(error);
        }
    };
    if runtime.stopping().cell().installed() {
        commit();
        return shutdown::join(&runtime, Trigger::Requested).await;
    }
    let mut trigger = trigger.map(Box::pin);
    if let Some(pending) = trigger.as_mut()
        && pending.as_mut().now_or_never().is_some()
    {
        commit();
        return shutdown::join(&runtime, Trigger::Requested).await;
    }

    // Ownership for the whole batch, fail-fast, before the claim is committed.
    let gate = runtime.shared().gate();
    let mut units = match tasks.len() {
        0 => None,
        n => match gate.units(Mode::Check, n).await {
            Ok(units) => units,
            Err(error) => {
                release();
                return Err(error);
            }
        },
    };
    commit();
    let _owned = Owned::new(runtime.clone(), supervisor.lease.clone());

    if !tasks.is_empty() {
        let mut requests = Vec::with_capacity(tasks.len());
        for spec in tasks {
            let id = TaskId::next();
            let unit = units.as_mut().and_then(|all| all.split(1));
            gate.announce_add(id, &spec, None);
            requests.push(AddRequest::unwatched(id, spec, unit));
        }
        call(&runtime, |port| {
            InternalKind::AddBatch(requests, port).into()
        })
        .await??;
    }

    let empty = runtime
        .registry()
        .call(|port| InternalKind::WaitEmpty(port).into(), None);
    let triggered = async {
        match trigger.as_mut() {
            Some(pending) => pending.as_mut().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = runtime.stopping().shutdown_started().cancelled() => shutdown::join(&runtime, Trigger::Requested).await,
        () = triggered => shutdown::join(&runtime, Trigger::Requested).await,
        reply = empty => match reply {
            Ok(CallResult::Success(())) => shutdown::join(&runtime, Trigger::Natural).await,
            _ => Err(RuntimeError::ShuttingDown),
        },
    }
}
