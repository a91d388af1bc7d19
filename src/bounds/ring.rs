//! [`ByteRing`]: a newest-retaining buffer bounded by an item count and a byte total
//! (pure).

use std::collections::VecDeque;

/// A FIFO of items, each with the size in bytes its owner charges for it, that keeps the
/// newest ones: at most `max_items` items and at most `max_bytes` bytes in total. Pushing
/// evicts the oldest until both bounds hold. An item larger than `max_bytes` by itself is
/// not kept and evicts everything, so what the ring holds is always the newest unbroken
/// run of what was pushed (a reader that numbers the items can name what fell out as one
/// range). The sizes are the owner's measure (for example an encoded size); the ring
/// trusts them and keeps their exact sum.
#[derive(Debug)]
pub(crate) struct ByteRing<T> {
    items: VecDeque<(T, usize)>,
    bytes: usize,
    max_items: usize,
    max_bytes: usize,
}

impl<T> ByteRing<T> {
    /// An empty ring of at most `max_items` items and `max_bytes` bytes.
    pub(crate) fn new(max_items: usize, max_bytes: usize) -> Self {
        ByteRing {
            items: VecDeque::new(),
            bytes: 0,
            max_items,
            max_bytes,
        }
    }

    /// Keeps `item`, charged `size` bytes, evicting the oldest items until both bounds
    /// hold. Returns how many items left the ring (the oldest ones, and `item` itself when
    /// it could not be kept: larger than `max_bytes`, or `max_items` is 0).
    pub(crate) fn push(&mut self, item: T, size: usize) -> usize {
        if self.max_items == 0 || size > self.max_bytes {
            let evicted = self.items.len() + 1;
            self.items.clear();
            self.bytes = 0;
            return evicted;
        }
        let mut evicted = 0;
        while self.items.len() >= self.max_items || self.bytes + size > self.max_bytes {
            self.pop_front();
            evicted += 1;
        }
        self.items.push_back((item, size));
        self.bytes += size;
        evicted
    }

    /// Changes the bounds, evicting the oldest items until both hold; returns how many
    /// left.
    pub(crate) fn set_limits(&mut self, max_items: usize, max_bytes: usize) -> usize {
        self.max_items = max_items;
        self.max_bytes = max_bytes;
        let mut evicted = 0;
        while self.items.len() > max_items || self.bytes > max_bytes {
            self.pop_front();
            evicted += 1;
        }
        evicted
    }

    fn pop_front(&mut self) {
        if let Some((_, size)) = self.items.pop_front() {
            self.bytes -= size;
        }
    }

    /// Items held now.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The sum of the held items' sizes, in bytes (at most `max_bytes`).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bound on items.
    pub(crate) fn max_items(&self) -> usize {
        self.max_items
    }

    /// The bound on bytes.
    pub(crate) fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The oldest item held.
    pub(crate) fn front(&self) -> Option<&T> {
        self.items.front().map(|(item, _)| item)
    }

    /// The held items, oldest first, with their sizes.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&T, usize)> {
        self.items.iter().map(|(item, size)| (item, *size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_oldest_go_first_when_either_bound_is_reached() {
        let mut ring = ByteRing::new(3, 10);
        assert_eq!(ring.push(1, 4), 0);
        assert_eq!(ring.push(2, 4), 0);
        // 12 bytes would not fit: the oldest goes.
        assert_eq!(ring.push(3, 4), 1);
        assert_eq!(ring.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(ring.bytes(), 8);
        assert_eq!(ring.push(4, 1), 0);
        // A fourth item: the count bound.
        assert_eq!(ring.push(5, 1), 1);
        assert_eq!(ring.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [3, 4, 5]);
    }

    #[test]
    fn an_item_larger_than_the_budget_is_not_kept_and_clears_the_ring() {
        let mut ring = ByteRing::new(10, 10);
        ring.push(1, 3);
        ring.push(2, 3);
        assert_eq!(ring.push(3, 11), 3);
        assert_eq!((ring.len(), ring.bytes()), (0, 0));
        assert_eq!(ring.front(), None);
    }

    #[test]
    fn lowering_the_limits_evicts_the_oldest() {
        let mut ring = ByteRing::new(10, 100);
        for i in 0..5 {
            ring.push(i, 10);
        }
        assert_eq!(ring.set_limits(10, 25), 3);
        assert_eq!(ring.front(), Some(&3));
        assert_eq!(ring.set_limits(1, 25), 1);
        assert_eq!(
            (ring.len(), ring.bytes(), ring.max_items(), ring.max_bytes()),
            (1, 10, 1, 25)
        );
    }

    proptest! {
        #[test]
        fn the_ring_holds_the_newest_run_within_both_bounds(
            max_items in 0usize..8,
            max_bytes in 0usize..64,
            sizes in proptest::collection::vec(0usize..40, 0..64),
        ) {
            let mut ring = ByteRing::new(max_items, max_bytes);
            let mut left = 0;
            for (index, size) in sizes.iter().enumerate() {
                left += ring.push(index, *size);
                prop_assert!(ring.len() <= max_items);
                prop_assert!(ring.bytes() <= max_bytes);
                let held: Vec<usize> = ring.iter().map(|(i, _)| *i).collect();
                prop_assert_eq!(ring.bytes(), held.iter().map(|i| sizes[*i]).sum::<usize>());
                // The newest unbroken run: consecutive indices ending at the last push.
                if let Some(first) = held.first() {
                    prop_assert_eq!(held.clone(), (*first..=index).collect::<Vec<_>>());
                }
                prop_assert_eq!(left + held.len(), index + 1);
            }
        }
    }
}
