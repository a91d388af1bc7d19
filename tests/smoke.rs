use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ractor_taskvisor::prelude::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smoke() {
    let supervisor = Supervisor::new(SupervisorConfig::default(), Vec::new());
    let handle = supervisor.serve().unwrap();
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("ok", TaskFn::arc(|_| async { Ok(()) })))
        .await
        .unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));

    let count = Arc::new(AtomicU32::new(0));
    let c = count.clone();
    let flaky = TaskFn::arc(move |_| {
        let c = c.clone();
        async move {
            if c.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(TaskError::fail("boom"))
            } else {
                Ok(())
            }
        }
    });
    let spec = TaskSpec::restartable("flaky", flaky)
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(1)));
    let (_id, waiter) = handle.add_and_watch(spec).await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Completed
    ));
    assert_eq!(count.load(Ordering::SeqCst), 3);

    let resident = TaskFn::arc(|ctx: TaskContext| async move {
        ctx.cancelled().await;
        Ok(())
    });
    let (_id, waiter) = handle
        .add_and_watch(TaskSpec::once("resident", resident))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        handle.alive_snapshot().await,
        vec![Arc::<str>::from("resident")]
    );
    handle.clone().shutdown().await.unwrap();
    assert!(matches!(
        waiter.wait().await.unwrap(),
        TaskOutcome::Canceled
    ));
    assert!(matches!(
        handle
            .add(TaskSpec::once("late", TaskFn::arc(|_| async { Ok(()) })))
            .await,
        Err(RuntimeError::ShuttingDown)
    ));
}
