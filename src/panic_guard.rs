//! Panic containment for user-owned values: destructors and panic payloads.
//!
//! User code runs in task bodies, subscriber callbacks — and in destructors of the values we
//! hold for users (task objects, error sources, futures, outcomes). A destructor that
//! panics inside an actor handler would take that actor down (docs/semantics.md#panics), so every
//! drop of a user value in an actor goes through [`drop_contained`]. A panic payload can itself
//! panic when dropped; after one more guarded attempt it is leaked, which is bounded and safe,
//! where another unwind would escape every boundary.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Drops `value` inside a panic boundary; returns the payload if its destructor panicked.
pub(crate) fn try_drop<T>(value: T) -> Result<(), Box<dyn Any + Send>> {
    catch_unwind(AssertUnwindSafe(move || drop(value)))
}

/// Drops `value`; returns the panic message if its destructor panicked.
pub(crate) fn drop_contained<T>(value: T) -> Option<String> {
    match try_drop(value) {
        Ok(()) => None,
        Err(payload) => {
            let message = panic_message(&*payload);
            dispose(payload);
            Some(message)
        }
    }
}

/// Drops `value`, containing a panic from its destructor; that panic's payload gets one more
/// guarded drop and is leaked if it panics too.
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(payload) = try_drop(value) {
        dispose(payload);
    }
}

/// Drops a panic payload whose own destructor might panic again; leaks it in that case.
pub(crate) fn dispose(payload: Box<dyn Any + Send>) {
    if let Err(again) = try_drop(payload) {
        std::mem::forget(again);
    }
}

/// The text of a panic payload: the `&str` or `String` given to `panic!`, or
/// `"non-string panic payload"` for `panic_any` with another type (docs/semantics.md#attempts).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("bomb");
        }
    }

    #[test]
    fn a_panicking_destructor_is_contained_and_named() {
        let silent = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        assert_eq!(drop_contained(Bomb), Some("bomb".to_owned()));
        assert_eq!(drop_contained(5_u8), None);
        // A payload that panics when dropped is leaked, not unwound.
        dispose(Box::new(Bomb));
        std::panic::set_hook(silent);
    }
}
