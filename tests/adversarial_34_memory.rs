//! Trial of issue 34 item 3's fix: parked waiters a caller can abandon. Live heap bytes
//! are counted by this binary's allocator (a byte total the process keeps, not RSS); one
//! test per binary so nothing else allocates meanwhile.
#![cfg(feature = "controller")]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

use common::{ms, stubborn};
use ractor_taskvisor::RegistryMessage;
use ractor_taskvisor::prelude::*;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const N: usize = 50_000;

/// Sends `N` copies of `command` as messages and abandons each (drops its reply), then
/// waits until the registry handled them all; returns the live heap growth.
async fn abandoned(handle: &SupervisorHandle, command: Command) -> isize {
    let registry = handle.registry_actor();
    let before = LIVE.load(Ordering::Relaxed);
    for _ in 0..N {
        let (port, reply) = tokio::sync::oneshot::channel();
        registry
            .send_message(RegistryMessage::Exec(command.clone(), port.into()))
            .unwrap();
        drop(reply);
    }
    // Handled after every message above (one mailbox, in order).
    let _ = handle.task_info("m").await;
    tokio::time::sleep(ms(100)).await;
    LIVE.load(Ordering::Relaxed) - before
}

/// A group `g` of one member `m` that ignores cancellation, in a one-hour stop window
/// (claimed by a first cancel); then `N` abandoned `cancel` of `m` (pruned, issue 34
/// item 3) and `N` abandoned `cancel_group` of `g`: both must keep about the live waiters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_group_cancels_are_pruned_like_task_cancels() {
    let handle = Supervisor::builder(
        SupervisorConfig::default()
            .with_grace(Duration::from_secs(3_600))
            .with_registry_queue_capacity(std::num::NonZeroUsize::new(1 << 20).unwrap()),
    )
    .with_controller(ControllerConfig::default())
    .build()
    .serve()
    .unwrap();
    let group =
        TaskGroup::new("g", GroupStrategy::OneForOne).with_task(TaskSpec::once("m", stubborn()));
    handle.add_group(group).await.unwrap();
    tokio::time::sleep(ms(50)).await;
    // The first cancel claims it: from then on it sits in its stop window.
    let task = abandoned(&handle, Command::Cancel("m".into())).await;
    assert!(handle.task_info("m").await.is_some(), "still registered");
    let group = abandoned(&handle, Command::CancelGroup("g".into())).await;
    println!(
        "ATTACK parked: {N} abandoned cancels +{} KiB; {N} abandoned group cancels +{} KiB",
        task / 1024,
        group / 1024
    );
    let _ = handle.force_shutdown().await;
    assert!(task < 1 << 20, "task cancels kept {task} bytes");
    assert!(group < 1 << 20, "group cancels kept {group} bytes");
}
