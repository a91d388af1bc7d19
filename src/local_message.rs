//! [`local_message!`](crate::local_message): the `ractor::Message` impls an application's
//! own actors need when this crate's `cluster` feature is on, and nothing when it is off.
//!
//! ractor implements `Message` for every `Any + Send` type through a blanket impl, except
//! when its `cluster` feature is on: then each message type needs an explicit
//! `impl ractor::Message for T {}` (or `BytesConvertable` for remotable ones). Our `cluster`
//! feature turns ractor's on for the whole build, so an application that enables it gets
//! an error for each of its message types, and an explicit impl written by hand clashes
//! with the blanket impl when the feature is off again. This macro is selected when this
//! crate is compiled, so it writes the impl exactly when it is needed.

/// Declares message types of your own actors as local-only ractor messages, correctly with
/// and without this crate's `cluster` feature.
///
/// With `cluster` off it expands to nothing (ractor's blanket impl applies); with `cluster`
/// on it expands to `impl ractor::Message for T {}` for each type (local-only: never sent
/// to another node). Remotable types implement ractor's `BytesConvertable` instead.
///
/// If ractor's own `cluster` feature is turned on by something other than this crate's
/// feature, write the impls yourself.
///
/// ```
/// enum DashboardMsg {
///     Refresh,
/// }
/// ractor_taskvisor::local_message!(DashboardMsg);
///
/// struct Dashboard;
/// impl ractor::Actor for Dashboard {
///     type Msg = DashboardMsg;
///     type State = ();
///     type Arguments = ();
///     async fn pre_start(
///         &self,
///         _me: ractor::ActorRef<DashboardMsg>,
///         _: (),
///     ) -> Result<(), ractor::ActorProcessingErr> {
///         Ok(())
///     }
/// }
/// ```
#[macro_export]
macro_rules! local_message {
    ($($message:ty),+ $(,)?) => {
        $( $crate::__local_message_impl!($message); )+
    };
}

/// Without [`local_message!`], a message type of the application's own does not compile
/// once this crate's `cluster` feature is on: E0277, "the trait bound `RootMsg: Message` is
/// not satisfied", with the help "the trait `BytesConvertable` is not implemented for
/// `RootMsg`" (docs/guide/cluster.md#your-own-message-types shows the whole text). This
/// doctest pins that error; it exists only under `cluster` (without it the blanket impl
/// applies and the code compiles).
///
/// ```compile_fail,E0277
/// enum RootMsg {
///     Report,
/// }
///
/// struct Root;
/// impl ractor::Actor for Root {
///     type Msg = RootMsg;
///     type State = ();
///     type Arguments = ();
///     async fn pre_start(
///         &self,
///         _me: ractor::ActorRef<RootMsg>,
///         _: (),
///     ) -> Result<(), ractor::ActorProcessingErr> {
///         Ok(())
///     }
/// }
/// ```
#[cfg(all(doctest, feature = "cluster"))]
pub struct WithoutLocalMessage;

#[cfg(feature = "cluster")]
#[doc(hidden)]
#[macro_export]
macro_rules! __local_message_impl {
    ($message:ty) => {
        impl $crate::__private::ractor::Message for $message {}
    };
}

#[cfg(not(feature = "cluster"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __local_message_impl {
    ($message:ty) => {};
}
