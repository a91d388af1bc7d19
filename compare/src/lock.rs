//! The `lock` mode: what ractor 0.16.5's process-wide `TREE_MUTATION_LOCK` costs per actor.
//!
//! In ractor 0.16.5 (`src/actor/supervision.rs`) one static `std::sync::Mutex<()>` guards every
//! structural change of any supervision tree in the process:
//! - `SupervisionTree::link` — taken by `spawn_linked` (after `pre_start`) and `ActorCell::link`;
//! - `SupervisionTree::unlink` — taken at a linked actor's exit (`ActorLifecycleGuard::cleanup`
//!   unlinks the actor from its supervisor) and by `ActorCell::unlink`;
//! - `SupervisionTree::take_children` — taken at **every** actor's exit, linked or not
//!   (`cleanup` → `ActorCell::terminate` closes the child set under the lock).
//!
//! So an unlinked actor takes the lock once in its life and a linked one three times. This mode
//! runs the same churn both ways so the difference can be read off on 1, 2 or 4 workers
//! (`--workers`):
//! - `linked`: a parent actor spawns each child with `spawn_linked` and counts the children's
//!   `ActorTerminated` supervision events (the pattern every supervisor on ractor uses);
//! - `unlinked`: the parent spawns each child with plain `spawn`, giving it the parent's
//!   `ActorRef`; the child casts `Exited` to the parent from `post_stop` (manual monitoring:
//!   the same one notification per child, on the message port instead of the supervision port).
//!
//! Each child stops itself in `post_start`. Both variants run with one parent, and with one
//! parent per worker (so spawns and exits of different parents contend for the lock from
//! different threads). `linked − unlinked` per actor bounds what linking costs in total (two
//! more lock acquisitions, the child-set insert/remove, the supervision-port event instead of a
//! cast); the uncontended lock/unlock reference below gives the floor of the lock itself.
//! Contended waiting shows up in a profile as `futex::Mutex::lock_contended` under
//! `SupervisionTree::*` (BENCHMARKS.md has the `perf` recipe).

use std::sync::Mutex;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use crate::common::{N, median};

enum ParentMsg {
    /// Spawn this many children (linked or not) and reply once all of them have exited.
    Run(usize, bool, RpcReplyPort<()>),
    /// An unlinked child's exit notice.
    Exited,
}

struct Parent;

#[derive(Default)]
struct ParentState {
    remaining: usize,
    reply: Option<RpcReplyPort<()>>,
}

impl ParentState {
    fn one_exited(&mut self) {
        self.remaining -= 1;
        if self.remaining == 0
            && let Some(reply) = self.reply.take()
        {
            let _ = reply.send(());
        }
    }
}

struct Child;

impl Actor for Child {
    type Msg = ();
    /// The parent to notify on exit (unlinked variant), or none (linked variant).
    type State = Option<ActorRef<ParentMsg>>;
    type Arguments = Option<ActorRef<ParentMsg>>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        parent: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(parent)
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        myself.stop(None);
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        parent: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(parent) = parent {
            let _ = parent.cast(ParentMsg::Exited);
        }
        Ok(())
    }
}

impl Actor for Parent {
    type Msg = ParentMsg;
    type State = ParentState;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ParentState::default())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ParentMsg::Run(n, linked, reply) => {
                state.remaining = n;
                state.reply = Some(reply);
                for _ in 0..n {
                    if linked {
                        Actor::spawn_linked(None, Child, None, myself.get_cell()).await?;
                    } else {
                        Actor::spawn(None, Child, Some(myself.clone())).await?;
                    }
                }
            }
            ParentMsg::Exited => state.one_exited(),
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorTerminated(..) | SupervisionEvent::ActorFailed(..) = event {
            state.one_exited();
        }
        Ok(())
    }
}

/// `n` children over `parents` parents (each parent spawns its share concurrently with the
/// others); ns per child from the first `Run` until the last parent saw its last exit.
async fn churn(n: usize, parents: usize, linked: bool) -> f64 {
    let mut refs = Vec::with_capacity(parents);
    for _ in 0..parents {
        let (parent, _) = Actor::spawn(None, Parent, ()).await.expect("spawn parent");
        // Warm each parent with a small run.
        ractor::call!(parent, ParentMsg::Run, 8, linked).expect("warm run");
        refs.push(parent);
    }
    let share = n / parents;
    let start = Instant::now();
    let runs: Vec<_> = refs
        .iter()
        .map(|p| {
            let p = p.clone();
            tokio::spawn(async move { ractor::call!(p, ParentMsg::Run, share, linked) })
        })
        .collect();
    for run in runs {
        run.await.expect("join").expect("run");
    }
    let elapsed = start.elapsed();
    for p in refs {
        p.stop(None);
    }
    elapsed.as_nanos() as f64 / (share * parents) as f64
}

/// Uncontended lock + unlock of a static `std::sync::Mutex<()>` (the kind of lock ractor
/// uses), ns per pair: the floor of one acquisition.
fn uncontended_lock_ns() -> f64 {
    static M: Mutex<()> = Mutex::new(());
    const PAIRS: u32 = 2_000_000;
    let start = Instant::now();
    for _ in 0..PAIRS {
        drop(std::hint::black_box(M.lock().expect("lock")));
    }
    start.elapsed().as_nanos() as f64 / f64::from(PAIRS)
}

pub fn run(reps: usize, markdown: bool) {
    let workers = crate::workers();
    let rt = crate::runtime();
    println!(
        "lock mode: {N} short-lived children per run, {reps} repetitions (+1 warm-up round), {workers} tokio workers; load average before: {}",
        crate::load_average()
    );
    let mut parent_counts = vec![1];
    if workers > 1 {
        parent_counts.push(workers);
    }
    let mut variants: Vec<(usize, bool)> = Vec::new();
    for &p in &parent_counts {
        variants.push((p, true));
        variants.push((p, false));
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 0..reps + 1 {
        let mut order: Vec<usize> = (0..variants.len()).collect();
        order.rotate_left(round % variants.len());
        for i in order {
            let (parents, linked) = variants[i];
            let v = crate::on_worker(&rt, churn(N, parents, linked));
            std::thread::sleep(std::time::Duration::from_millis(20));
            if round > 0 {
                samples[i].push(v);
            }
        }
    }
    let lock_ns = median(&(0..5).map(|_| uncontended_lock_ns()).collect::<Vec<_>>());
    let header = [
        "variant",
        "parents",
        "ns/actor",
        "min",
        "max",
        "lock acquisitions/actor",
    ];
    let mut rows = Vec::new();
    for (i, (parents, linked)) in variants.iter().enumerate() {
        let s = &samples[i];
        let min = s.iter().copied().fold(f64::INFINITY, f64::min);
        let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        rows.push(vec![
            if *linked { "linked" } else { "unlinked" }.to_owned(),
            parents.to_string(),
            format!("{:.0}", median(s)),
            format!("{min:.0}"),
            format!("{max:.0}"),
            if *linked { "3" } else { "1" }.to_owned(),
        ]);
    }
    crate::render_table_with(&header, &rows, 1..6, markdown);
    println!();
    for (k, &p) in parent_counts.iter().enumerate() {
        let linked = median(&samples[2 * k]);
        let unlinked = median(&samples[2 * k + 1]);
        println!(
            "{p} parent(s): linked − unlinked = {:.0} ns/actor ({:+.1} %), of which the two extra uncontended lock pairs are ≈ {:.0} ns",
            linked - unlinked,
            (linked - unlinked) / unlinked * 100.0,
            2.0 * lock_ns
        );
    }
    println!(
        "uncontended std Mutex lock+unlock: {lock_ns:.1} ns; load average after: {}",
        crate::load_average()
    );
}
