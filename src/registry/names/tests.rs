//! The name index on its own, no actor: claim → force-abort → reaping → physical exit →
//! reuse, counted reservations, unknown exits, and the reaping count the limit charges.

use super::*;

fn actor(n: u64) -> ActorId {
    ActorId::Local(n)
}

fn id() -> TaskId {
    TaskId::next()
}

#[test]
fn a_force_aborted_name_is_refused_until_its_attempt_exits() {
    let mut names: Names<&str> = Names::new();
    let first = id();
    names.register("job".into(), first);
    assert!(names.taken("job"));
    assert_eq!(names.id("job"), Some(first));

    // Claimed and force-aborted: the commit ends the registration, the actor still exists.
    names.release("job", first);
    names.reserve(actor(1), "job".into(), "unit");
    assert_eq!(
        names.id("job"),
        None,
        "a reservation resolves to no registration"
    );
    assert!(names.taken("job"), "reuse is refused while reserved");
    assert!(names.reserved("job"));
    assert_eq!(names.reaping_len(), 1);

    // The physical exit gives back what the attempt held and frees the name.
    assert_eq!(names.reaped(&actor(1)), Some("unit"));
    assert!(!names.taken("job"));
    assert!(!names.reserved("job"));
    assert_eq!(names.reaping_len(), 0);

    let second = id();
    names.register("job".into(), second);
    assert_eq!(names.id("job"), Some(second));
}

#[test]
fn a_normal_end_frees_the_name_at_once() {
    let mut names: Names<()> = Names::new();
    let first = id();
    names.register("job".into(), first);
    names.release("job", first);
    assert!(!names.taken("job"));
    assert_eq!(names.reaping_len(), 0);
}

#[test]
fn a_release_by_another_id_keeps_the_mapping() {
    let mut names: Names<()> = Names::new();
    let owner = id();
    names.register("job".into(), owner);
    names.release("job", id());
    assert_eq!(names.id("job"), Some(owner));
}

#[test]
fn two_reaping_attempts_holding_one_name_are_counted() {
    let mut names: Names<u32> = Names::new();
    for (n, held) in [(1, 10), (2, 20)] {
        let registration = id();
        names.register("job".into(), registration);
        names.release("job", registration);
        names.reserve(actor(n), "job".into(), held);
    }
    assert_eq!(names.reaping_len(), 2);
    let mut listed: Vec<&Arc<str>> = names.reaping_names().collect();
    listed.sort();
    assert_eq!(listed, [&Arc::<str>::from("job"); 2]);

    // Either exit first: the name stays reserved until the last one.
    assert_eq!(names.reaped(&actor(2)), Some(20));
    assert!(names.taken("job"), "still reserved by the other attempt");
    assert_eq!(names.reaping_len(), 1);
    assert_eq!(names.reaped(&actor(1)), Some(10));
    assert!(!names.taken("job"));
}

#[test]
fn a_reaped_exit_of_an_unknown_actor_changes_nothing() {
    let mut names: Names<()> = Names::new();
    let registration = id();
    names.register("job".into(), registration);
    names.release("job", registration);
    names.reserve(actor(1), "job".into(), ());

    assert_eq!(names.reaped(&actor(7)), None);
    assert!(names.taken("job"));
    assert_eq!(names.reaping_len(), 1);
    // A second exit of the same actor is unknown by then.
    assert_eq!(names.reaped(&actor(1)), Some(()));
    assert_eq!(names.reaped(&actor(1)), None);
    assert_eq!(names.reaping_len(), 0);
}

#[test]
fn the_reaping_count_covers_every_reaping_attempt_until_its_exit() {
    let mut names: Names<()> = Names::new();
    let live = id();
    names.register("live".into(), live);
    for n in 0..3 {
        let registration = id();
        let name: Arc<str> = format!("gone-{n}").into();
        names.register(name.clone(), registration);
        names.release(&name, registration);
        names.reserve(actor(n), name, ());
    }
    // The limit charges registrations plus these.
    assert_eq!(names.reaping_len(), 3);
    assert_eq!(names.reaping_names().count(), 3);
    names.reaped(&actor(0));
    assert_eq!(names.reaping_len(), 2);
    assert!(names.taken("live") && !names.taken("gone-0") && names.taken("gone-1"));
}
