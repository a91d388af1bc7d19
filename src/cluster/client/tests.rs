use super::*;

#[test]
fn defaults_and_floors() {
    let options = RemoteOptions::default();
    assert_eq!(options.suspect_after, Duration::from_secs(3));
    assert_eq!(options.fetch_wait, Duration::from_secs(1));
    assert!(options.node_name.starts_with("node-"));
    let options = options
        .with_suspect_after(Duration::ZERO)
        .with_fetch_wait(Duration::ZERO)
        .with_event_capacity(0);
    assert_eq!(options.suspect_after, Duration::from_millis(100));
    assert_eq!(options.fetch_wait, Duration::from_millis(10));
    assert_eq!(options.event_capacity, 1);
    assert_eq!(
        super::super::link::heartbeat_interval(Duration::from_secs(3)),
        Duration::from_millis(375)
    );
    assert_eq!(
        DisconnectReason::Silent.to_string(),
        "silent: no heartbeat answered within suspect_after"
    );
}
