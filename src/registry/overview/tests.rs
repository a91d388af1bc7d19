//! The task page's order and cut: every order is total (ties by id), and a page cut by
//! selection equals the same slice of the fully sorted list.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;

use super::{MAX_TASK_PAGE, TaskFilter, TaskSort};
use crate::identity::TaskId;
use crate::registry::info::{TaskInfo, TaskState};

fn info(id: u64, name: &str, state: TaskState, attempt: u32, next: Option<u64>) -> TaskInfo {
    TaskInfo {
        id: TaskId::from_raw(id),
        name: Arc::from(name),
        state,
        attempt,
        restarts: attempt.saturating_sub(1),
        last_failure: None,
        group: None,
        next_run_in: next.map(Duration::from_millis),
        pause_reason: None,
        undelivered: 0,
    }
}

fn ids(page: &[TaskInfo]) -> Vec<u64> {
    page.iter().map(|info| info.id.get()).collect()
}

#[test]
fn next_run_puts_records_without_one_last_ascending_and_first_descending() {
    let all = vec![
        info(1, "a", TaskState::Running, 1, None),
        info(2, "b", TaskState::Backoff, 2, Some(500)),
        info(3, "c", TaskState::Scheduled, 1, Some(100)),
    ];
    let up = TaskFilter::new(10).with_sort(TaskSort::NextRun, false);
    assert_eq!(ids(&up.page_of(all.clone()).tasks), [3, 2, 1]);
    let down = TaskFilter::new(10).with_sort(TaskSort::NextRun, true);
    assert_eq!(ids(&down.page_of(all).tasks), [1, 2, 3]);
}

#[test]
fn equal_keys_go_by_id_and_offset_pages_do_not_overlap() {
    let all: Vec<TaskInfo> = (1..=10)
        .rev()
        .map(|id| info(id, "same", TaskState::Running, 1, None))
        .collect();
    let first = TaskFilter::new(4)
        .with_sort(TaskSort::Name, false)
        .page_of(all.clone());
    let second = TaskFilter::new(4)
        .with_sort(TaskSort::Name, false)
        .with_offset(4)
        .page_of(all.clone());
    assert_eq!(ids(&first.tasks), [1, 2, 3, 4]);
    assert_eq!(ids(&second.tasks), [5, 6, 7, 8]);
    assert_eq!((first.matched, first.next), (10, None));
    // By id ascending, `next` still names the last id of a page with more after it.
    let by_id = TaskFilter::new(4).with_offset(4).page_of(all);
    assert_eq!(by_id.next, Some(TaskId::from_raw(8)));
}

#[test]
fn an_offset_past_the_end_gives_an_empty_page_and_the_count() {
    let all = vec![info(1, "a", TaskState::Running, 1, None)];
    let page = TaskFilter::new(5).with_offset(7).page_of(all);
    assert!(page.tasks.is_empty());
    assert_eq!((page.matched, page.next), (1, None));
}

fn any_state() -> impl Strategy<Value = TaskState> {
    prop_oneof![
        Just(TaskState::Running),
        Just(TaskState::Backoff),
        Just(TaskState::Paused),
        Just(TaskState::Scheduled),
    ]
}

fn any_sort() -> impl Strategy<Value = TaskSort> {
    (0..TaskSort::ALL.len()).prop_map(|i| TaskSort::ALL[i])
}

proptest! {
    #[test]
    fn a_page_is_the_slice_of_the_fully_sorted_list(
        records in prop::collection::vec(
            ("[a-c]{0,2}", any_state(), 0u32..4, prop::option::of(0u64..5)),
            0..60,
        ),
        sort in any_sort(),
        descending: bool,
        offset in 0usize..70,
        limit in 0usize..30,
        after in prop::option::of(0u64..60),
    ) {
        let all: Vec<TaskInfo> = records
            .iter()
            .enumerate()
            .map(|(i, (name, state, attempt, next))| info(i as u64 + 1, name, *state, *attempt, *next))
            .collect();
        let mut filter = TaskFilter::new(limit).with_sort(sort, descending).with_offset(offset);
        if let Some(after) = after {
            filter = filter.with_after(TaskId::from_raw(after));
        }
        let mut expected: Vec<TaskInfo> = all
            .iter()
            .filter(|info| after.is_none_or(|after| info.id.get() > after))
            .cloned()
            .collect();
        expected.sort_by(|a, b| filter.compare(a, b));
        let expected: Vec<u64> = ids(&expected).into_iter().skip(offset).take(limit.min(MAX_TASK_PAGE)).collect();
        // Shuffled input: the page must not depend on the registry's iteration order.
        let mut shuffled = all.clone();
        shuffled.reverse();
        let page = filter.page_of(shuffled);
        prop_assert_eq!(ids(&page.tasks), expected);
        prop_assert_eq!(page.matched, all.len());
    }
}
