//! The actor half of a plan, drawn from a third stream of the seed (see
//! [`draw`](super::draw)): which direct adds host a ractor actor with a stable reference
//! (`TaskSpec::actor(..).with_stable_ref(stash)`), and the sends through those references
//! inserted after the operations. It only marks and inserts, so the first two streams
//! draw exactly what they drew before, and a case without actors is the plan its seed
//! always had.

use super::{Body, Op, mix};

/// What the actor stream decides while the plan is drawn.
pub(super) struct ActorStream {
    rng: fastrand::Rng,
    /// Half the cases have actors.
    on: bool,
    /// The names of the actor tasks added so far: what sends name (another name's task
    /// may be a closure or none, and a send to it is skipped).
    hosted: Vec<usize>,
}

impl ActorStream {
    pub(super) fn new(seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(mix(seed ^ 0x6163_746f_7273));
        let on = rng.bool();
        ActorStream {
            rng,
            on,
            hosted: Vec::new(),
        }
    }

    /// Turns about half the direct adds whose body an actor can play into actor tasks,
    /// each with a stash of 1 to 3 messages (small, so that it overflows).
    pub(super) fn host(&mut self, op: &mut Op) {
        let (Op::Add { name, task, .. } | Op::AddAfter { name, task }) = op else {
            return;
        };
        if self.on && task.body.actor_can_play() && self.rng.bool() {
            task.actor = Some(self.rng.usize(1..=3));
            if !self.hosted.contains(name) {
                self.hosted.push(*name);
            }
        }
    }

    /// Once an actor task exists, a send after about one operation in two: a burst of
    /// casts, sometimes longer than any stash, half the time spread out, and a `call!`
    /// one time in three.
    pub(super) fn send(&mut self) -> Option<Op> {
        if self.hosted.is_empty() || self.rng.bool() {
            return None;
        }
        Some(Op::Send {
            name: *self.rng.choice(&self.hosted).expect("not empty"),
            casts: self.rng.u32(0..=5),
            call: self.rng.u32(0..3) == 0,
            spread: self.rng.bool(),
        })
    }
}

impl Body {
    /// Bodies a hosted actor plays too (`system_model/stable.rs`): each ends its incarnation
    /// the way the closure ends its attempt (a normal stop, a failure, a `fatal:` stop, or
    /// not until it is stopped). The others need a context, a panic or a blocked thread.
    pub fn actor_can_play(self) -> bool {
        matches!(
            self,
            Body::Instant
                | Body::Sleep(_)
                | Body::Flaky { .. }
                | Body::AlwaysFail { .. }
                | Body::Fatal
                | Body::Cooperative
                | Body::Exhausts
        )
    }
}
