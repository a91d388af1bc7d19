//! W6 reference: a bare idle ractor actor (unit message, unit state, no link), the cost the
//! issue's memory target is stated against ("≤ a bare idle ractor actor + 1 KiB").

use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::common::MemReading;

struct Idle;

impl Actor for Idle {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(())
    }
}

/// A parent that keeps its linked children (overrides the default, which would stop the
/// parent when a child ends).
struct Parent;

impl Actor for Parent {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        _event: ractor::SupervisionEvent,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        Ok(())
    }
}

/// As [`w6_child`], with every actor linked under one parent (as task actors are linked
/// under the registry): the difference is the cost of the link.
pub async fn w6_child_linked(actors: usize) -> MemReading {
    let (parent, _) = Actor::spawn(None, Parent, ()).await.expect("spawn parent");
    let (warm, _) = Actor::spawn_linked(None, Idle, (), parent.get_cell())
        .await
        .expect("spawn");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (base_rss_kb, _) = crate::common::proc_status_kb();
    let mut refs = Vec::with_capacity(actors);
    for _ in 0..actors {
        let (actor, _join) = Actor::spawn_linked(None, Idle, (), parent.get_cell())
            .await
            .expect("spawn");
        refs.push(actor);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_kb, hwm_kb) = crate::common::proc_status_kb();
    std::mem::forget(refs);
    std::mem::forget((warm, parent));
    MemReading {
        base_rss_kb,
        rss_kb,
        hwm_kb,
        tasks: actors as u64,
    }
}

/// Spawns `actors` idle actors and reads RSS before and after.
pub async fn w6_child(actors: usize) -> MemReading {
    // One actor first, so ractor's and tokio's one-time structures are in the baseline.
    let (warm, _) = Actor::spawn(None, Idle, ()).await.expect("spawn");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (base_rss_kb, _) = crate::common::proc_status_kb();
    let mut refs = Vec::with_capacity(actors);
    for _ in 0..actors {
        let (actor, _join) = Actor::spawn(None, Idle, ()).await.expect("spawn");
        refs.push(actor);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_kb, hwm_kb) = crate::common::proc_status_kb();
    std::mem::forget(refs);
    std::mem::forget(warm);
    MemReading {
        base_rss_kb,
        rss_kb,
        hwm_kb,
        tasks: actors as u64,
    }
}
