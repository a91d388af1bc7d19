//! [`MetricsConfig`]: how one supervisor records metrics (on or off, its own recorder or the
//! global one, which slots get a series of their own).

use std::sync::Arc;

use metrics::Recorder;

/// How one supervisor records metrics; set with
/// [`SupervisorBuilder::with_metrics`](crate::SupervisorBuilder::with_metrics).
///
/// The default records to the global recorder (the one installed with
/// `metrics::set_global_recorder`, or by an exporter's `install`), with no per-slot labels.
///
/// ```
/// use ractor_taskvisor::metrics::MetricsConfig;
/// let config = MetricsConfig::default()
///     .with_slot_label("tenant-1")
///     .with_slot_label("tenant-2");
/// assert!(config.is_enabled());
/// assert_eq!(config.slot_labels().len(), 2);
/// ```
#[derive(Clone)]
pub struct MetricsConfig {
    pub(super) enabled: bool,
    pub(super) recorder: Option<Arc<dyn Recorder + Send + Sync>>,
    pub(super) slots: Vec<Arc<str>>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: true,
            recorder: None,
            slots: Vec::new(),
        }
    }
}

impl std::fmt::Debug for MetricsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsConfig")
            .field("enabled", &self.enabled)
            .field("own_recorder", &self.recorder.is_some())
            .field("slots", &self.slots)
            .finish()
    }
}

impl MetricsConfig {
    /// Records nothing for this supervisor (the hooks then cost one branch each).
    pub fn disabled() -> Self {
        MetricsConfig {
            enabled: false,
            ..Self::default()
        }
    }

    /// Records to `recorder` instead of the global recorder (for a supervisor of its own
    /// exporter, or a test with `metrics-util`'s `DebuggingRecorder`).
    pub fn with_recorder(mut self, recorder: impl Recorder + Send + Sync + 'static) -> Self {
        self.recorder = Some(Arc::new(recorder));
        self
    }

    /// Gives the slot `slot` its own `slot="<slot>"` series of
    /// `taskvisor_slot_queue_depth`; slots not listed are summed into
    /// `slot="_other"`. List a bounded set of keys (e.g. your tenants' tiers), not keys
    /// that churn. Listing a key twice has no further effect.
    pub fn with_slot_label(mut self, slot: impl Into<Arc<str>>) -> Self {
        let slot = slot.into();
        if !self.slots.contains(&slot) {
            self.slots.push(slot);
        }
        self
    }

    /// False for [`MetricsConfig::disabled`].
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The slots listed with [`MetricsConfig::with_slot_label`], in the order given.
    pub fn slot_labels(&self) -> &[Arc<str>] {
        &self.slots
    }
}
