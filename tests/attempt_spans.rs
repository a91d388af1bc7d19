//! Feature `tracing`: one `taskvisor.attempt` span per attempt, entered around the body's
//! polls, so events in a task body have it as their parent span. A layer records the
//! fields of every span and the parent span of every event. The test runtime is
//! single-threaded, so the subscriber set with `set_default` sees every actor's work.
#![cfg(feature = "tracing")]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ractor_taskvisor::prelude::*;
use ractor_taskvisor::{GroupStrategy, TaskGroup};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

type Fields = BTreeMap<String, String>;

#[derive(Default)]
struct FieldMap(Fields);

impl Visit for FieldMap {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.to_string());
    }
}

/// An event emitted in a task body: its `marker` field and its parent span (name, fields).
#[derive(Debug, Clone)]
struct Seen {
    marker: String,
    parent: Option<(String, Fields)>,
}

#[derive(Clone, Default)]
struct Capture {
    spans: Arc<Mutex<HashMap<u64, (String, Fields)>>>,
    events: Arc<Mutex<Vec<Seen>>>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        let mut fields = FieldMap::default();
        attrs.record(&mut fields);
        let name = attrs.metadata().name().to_string();
        self.spans
            .lock()
            .unwrap()
            .insert(id.into_u64(), (name, fields.0));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            let mut more = FieldMap::default();
            values.record(&mut more);
            fields.extend(more.0);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = FieldMap::default();
        event.record(&mut fields);
        let Some(marker) = fields.0.remove("marker") else {
            return;
        };
        let parent = ctx.event_span(event).and_then(|span| {
            self.spans
                .lock()
                .unwrap()
                .get(&span.id().into_u64())
                .cloned()
        });
        self.events.lock().unwrap().push(Seen { marker, parent });
    }
}

/// A body that logs `marker=<name>/<attempt>` and fails its first `failures` attempts.
fn logging(name: &'static str, failures: u32) -> TaskRef {
    let calls = Arc::new(AtomicU32::new(0));
    TaskFn::arc(move |ctx: TaskContext| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            tokio::task::yield_now().await; // logged after a suspension too
            tracing::info!(marker = format!("{name}/{}", ctx.attempt()), "in the body");
            if n < failures {
                Err(TaskError::fail("again"))
            } else {
                Ok(())
            }
        }
    })
}

fn fields(pairs: &[(&str, String)]) -> Fields {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn events_in_a_task_body_have_the_attempt_span_as_parent() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let mut builder = Supervisor::builder(SupervisorConfig::default());
    #[cfg(feature = "controller")]
    {
        builder = builder.with_controller(ControllerConfig::default());
    }
    let handle = builder.build().serve().expect("serve");

    let plain = TaskSpec::restartable("plain", logging("plain", 1))
        .with_backoff(BackoffPolicy::constant(Duration::from_millis(5)));
    let (plain_id, waiter) = handle.add_and_watch(plain).await.expect("add");
    assert!(waiter.wait().await.expect("outcome").is_success());

    let group = TaskGroup::new("pipeline", GroupStrategy::OneForOne)
        .with_task(TaskSpec::once("member", logging("member", 0)));
    let mut members = handle.add_group_and_watch(group).await.expect("group");
    let member = members.remove(0);
    let member_id = member.id();
    assert!(member.wait().await.expect("outcome").is_success());

    let mut seen = vec![
        ("plain/1", "plain", plain_id, 1, None, None),
        ("plain/2", "plain", plain_id, 2, None, None),
        ("member/1", "member", member_id, 1, Some("pipeline"), None),
    ];
    #[cfg(feature = "controller")]
    {
        let task = TaskSpec::once("slotted", logging("slotted", 0));
        let spec = ControllerSpec::queue(task).with_slot("tenant-7");
        let (id, waiter) = handle.submit_and_watch(spec).await.expect("submit");
        assert!(waiter.wait().await.expect("outcome").is_success());
        seen.push(("slotted/1", "slotted", id, 1, None, Some("tenant-7")));
    }
    handle.shutdown().await.expect("shutdown");

    let events = capture.events.lock().unwrap().clone();
    assert_eq!(events.len(), seen.len(), "{events:?}");
    for (event, (marker, task, id, attempt, group, slot)) in events.iter().zip(seen) {
        assert_eq!(event.marker, marker);
        let mut expected = vec![
            ("task", task.to_string()),
            ("task_id", id.get().to_string()),
            ("attempt", attempt.to_string()),
        ];
        if let Some(group) = group {
            expected.push(("group", group.to_string()));
        }
        if let Some(slot) = slot {
            expected.push(("slot", slot.to_string()));
        }
        let (name, span_fields) = event.parent.clone().expect("an event in a span");
        assert_eq!(name, "taskvisor.attempt");
        assert_eq!(span_fields, fields(&expected), "{marker}");
    }
}

#[tokio::test]
async fn the_attempt_span_can_be_filtered_out_by_its_target() {
    // A subscriber that filters the span's target out: the attempt runs, no span exists.
    let capture = Capture::default();
    let filtered = capture
        .clone()
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.target() != "ractor_taskvisor::attempt"
        }));
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(filtered));
    let handle = Supervisor::new(SupervisorConfig::default(), Vec::new())
        .serve()
        .expect("serve");
    let (_, waiter) = handle
        .add_and_watch(TaskSpec::once("quiet", logging("quiet", 0)))
        .await
        .expect("add");
    assert!(waiter.wait().await.expect("outcome").is_success());
    handle.shutdown().await.expect("shutdown");
    let spans = capture.spans.lock().unwrap().clone();
    assert!(
        spans.values().all(|(name, _)| name != "taskvisor.attempt"),
        "{spans:?}"
    );
    let events = capture.events.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert!(
        events[0]
            .parent
            .as_ref()
            .is_none_or(|(name, _)| name != "taskvisor.attempt"),
        "{events:?}"
    );
}
