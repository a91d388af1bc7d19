//! A slot whose owner the registry refused is free when the refusal is delivered.
//! (Found by the system model, `tests/system_model.rs`.)
//!
//! A slot whose owner the registry refused must be free by the time that owner's waiter
//! answers `Rejected`, exactly as a slot whose owner finished is free by the time its
//! waiter answers (release before outcome). Found as seed 10984640684202113865 under
//! heavy starvation (`SYSTEM_MODEL_THREADS=24`, a 1 ms task destructor).
//!
//! The registry used to answer the refused owner's waiter first, then drop the refused
//! spec (the user's task object), then reply to the controller's add; only that reply told
//! the controller the slot was free. Now the registration's release hook hears of the
//! refusal before the waiter does. A task object that takes 50 ms to drop holds the
//! registry there, so the next submission, sent as soon as the waiter answered, reaches
//! the controller while the slot still counts as admitting.
#![cfg(feature = "controller")]

use std::time::Duration;

use ractor_taskvisor::prelude::*;

/// Blocks its thread for 50 ms when dropped, like a user value that closes a file or a
/// connection in its destructor.
struct SlowDrop;

impl Drop for SlowDrop {
    fn drop(&mut self) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A task that succeeds at once and whose task object is slow to drop.
fn slow_to_drop() -> TaskRef {
    let slow = SlowDrop;
    TaskFn::arc(move |_ctx| {
        let _ = &slow;
        async { Ok(()) }
    })
}

fn cooperative() -> TaskRef {
    TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    })
}

fn instant() -> TaskRef {
    TaskFn::arc(|_ctx| async { Ok(()) })
}

async fn outcome(waiter: TaskWaiter) -> TaskOutcome {
    tokio::time::timeout(Duration::from_secs(5), waiter.wait())
        .await
        .expect("the waiter answers")
        .expect("an outcome")
}

/// A supervisor whose controller tracks one slot at most and queues nothing, with a
/// direct task holding the name `taken`.
async fn one_slot_controller() -> SupervisorHandle {
    let controller = ControllerConfig::try_new(1, 0).expect("valid");
    let handle = Supervisor::builder(SupervisorConfig::default())
        .with_controller(controller)
        .build()
        .serve()
        .expect("serve");
    handle
        .add(TaskSpec::once("taken", cooperative()))
        .await
        .expect("the direct task is added");
    handle
}

/// The registry refuses the owner of slot `a` (its name is taken); right after its
/// waiter answered, a submission to another slot must not hit the slot limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_whose_owner_was_refused_is_free_when_the_refusal_is_delivered() {
    let handle = one_slot_controller().await;
    let refused = ControllerSpec::queue(TaskSpec::once("taken", slow_to_drop())).with_slot("a");
    let (_, waiter) = handle.submit_and_watch(refused).await.expect("intake");
    let first = outcome(waiter).await;
    assert!(
        matches!(
            first,
            TaskOutcome::Rejected {
                kind: RejectionKind::AlreadyExists,
                ..
            }
        ),
        "{first:?}"
    );

    let next = ControllerSpec::queue(TaskSpec::once("next", instant())).with_slot("b");
    let (_, waiter) = handle.submit_and_watch(next).await.expect("intake");
    let second = outcome(waiter).await;
    assert!(
        second.is_success(),
        "slot a was still counted after its owner's refusal was delivered: {second:?}"
    );
    handle.shutdown().await.expect("clean shutdown");
}

/// Same race on the same slot: a `Queue` submission (no queue room) right after the
/// refused owner's waiter answered must find the slot idle, not busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_slot_is_idle_when_its_refused_owner_is_answered() {
    let handle = one_slot_controller().await;
    let refused = ControllerSpec::queue(TaskSpec::once("taken", slow_to_drop())).with_slot("a");
    let (_, waiter) = handle.submit_and_watch(refused).await.expect("intake");
    let first = outcome(waiter).await;
    assert!(matches!(first, TaskOutcome::Rejected { .. }), "{first:?}");

    let next = ControllerSpec::queue(TaskSpec::once("next", instant())).with_slot("a");
    let (_, waiter) = handle.submit_and_watch(next).await.expect("intake");
    let second = outcome(waiter).await;
    assert!(
        second.is_success(),
        "slot a was still busy after its owner's refusal was delivered: {second:?}"
    );
    handle.shutdown().await.expect("clean shutdown");
}
