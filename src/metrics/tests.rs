use super::values::{OUTCOMES, REJECTIONS, outcome_index, outcome_label, rejection_index};
use super::*;

#[test]
fn outcome_labels_drop_the_prefix() {
    let labels: Vec<_> = OUTCOMES.iter().map(|k| outcome_label(*k)).collect();
    assert_eq!(
        labels,
        [
            "completed",
            "failed",
            "fatal",
            "canceled",
            "force_aborted",
            "panicked",
            "ignored"
        ]
    );
}

#[test]
fn indexes_cover_every_kind() {
    for (i, kind) in OUTCOMES.iter().enumerate() {
        assert_eq!(outcome_index(*kind), Some(i));
    }
    for (i, kind) in REJECTIONS.iter().enumerate() {
        assert_eq!(rejection_index(*kind), i);
    }
}

#[test]
fn slot_labels_are_deduplicated() {
    let config = MetricsConfig::default()
        .with_slot_label("a")
        .with_slot_label("a");
    assert_eq!(config.slot_labels().len(), 1);
    assert!(!MetricsConfig::disabled().is_enabled());
}
