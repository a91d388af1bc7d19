//! Opening a registration's stable reference at admission
//! (docs/semantics.md#stable-references): the `pg` group it joins and where its drops are
//! reported (`MessagesUndelivered` events: the first drop of a burst at once, the rest in one
//! report, from the registration's events).

use std::sync::Arc;

use crate::events::{Event, EventKind, EventSink};
use crate::identity::TaskId;
use crate::task::{Loss, LossReport, OpenArgs, StableLink, TaskSpec};

/// Publishes a stable reference's drops as `MessagesUndelivered` events of its task.
struct EventReport {
    events: EventSink,
    id: TaskId,
    name: Arc<str>,
    group: Option<Arc<str>>,
}

impl LossReport for EventReport {
    fn report(&self, dropped: u64, loss: Loss) {
        self.events.publish(|| {
            let event = Event::new(EventKind::MessagesUndelivered)
                .with_id(self.id)
                .with_task(self.name.clone())
                .with_dropped(dropped)
                .with_reason(loss.as_label());
            match &self.group {
                Some(group) => event.with_group(group.clone()),
                None => event,
            }
        });
    }

    fn stopped_early(&self) {
        self.events.publish(|| {
            Event::new(EventKind::RuntimeFailure)
                .with_id(self.id)
                .with_task(self.name.clone())
                .with_reason(STOPPED_EARLY)
        });
    }
}

/// The `reason` of the `RuntimeFailure` event of a stable reference that stopped while its
/// task still ran.
const STOPPED_EARLY: &str = "stable reference stopped before its task ended \
    (stopped or killed from outside, e.g. an actor linked over it exited); sends to it are \
    refused, the task runs on";

/// The stable reference of `spec`'s registration `id`, when it asks for one
/// (`TaskSpec::with_stable_ref` on an actor task: admission refused it otherwise). Its
/// `pg` group is `"taskvisor.<supervisor>.stable.<task>"`. A proxy that cannot be spawned
/// (ractor refuses only a taken name, and it has none) is reported as a `RuntimeFailure`
/// and the registration goes on without one.
pub(crate) fn open(
    supervisor: &str,
    events: &EventSink,
    spec: &TaskSpec,
    id: TaskId,
    group: Option<&Arc<str>>,
) -> Option<StableLink> {
    let (opener, stash) = spec.stable_ref()?;
    let name = spec.name_arc().clone();
    let args = OpenArgs {
        stash,
        group: crate::task::stable_ref::group_name(supervisor, &name),
        report: Arc::new(EventReport {
            events: events.clone(),
            id,
            name: name.clone(),
            group: group.cloned(),
        }),
    };
    match opener(args) {
        Ok(link) => Some(link),
        Err(error) => {
            events.publish(|| {
                Event::new(EventKind::RuntimeFailure)
                    .with_id(id)
                    .with_task(name)
                    .with_reason(format!("stable reference not started: {error}"))
            });
            None
        }
    }
}
