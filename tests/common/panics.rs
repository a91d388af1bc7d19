//! Panics that tests trigger on purpose, kept out of the test output.
//!
//! Shared by the `common` and `event_support` helper modules. Printing a panic (with
//! `RUST_BACKTRACE` set, a symbolized backtrace) can take longer than a short grace period
//! on a loaded machine, so a test whose task panics on purpose must silence it, or the
//! panicking attempt may still be printing when the grace runs out.

use std::sync::Once;

/// Marker contained in every panic message a test triggers on purpose.
pub const EXPECTED_PANIC: &str = "(expected test panic)";

/// A value whose destructor panics (unless the thread is already unwinding, to avoid an
/// abort).
pub struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("bomb exploded while dropped {EXPECTED_PANIC}");
        }
    }
}

/// Installs (once per test binary) a panic hook that keeps panics triggered on purpose
/// (message containing [`EXPECTED_PANIC`], or a [`Bomb`] payload) quiet and forwards every
/// other panic, such as a failed assertion, to the default hook.
pub fn silence_expected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let expected = payload
                .downcast_ref::<&str>()
                .is_some_and(|s| s.contains(EXPECTED_PANIC))
                || payload
                    .downcast_ref::<String>()
                    .is_some_and(|s| s.contains(EXPECTED_PANIC))
                || payload.is::<Bomb>();
            if !expected {
                default(info);
            }
        }));
    });
}
