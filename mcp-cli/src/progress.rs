//! A progress bar driven by the server's progress notifications, on a
//! terminal only.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_client::protocol::types::ProgressNotificationParams;

/// The bar of the call in flight, shared with the elicitation prompts
/// (which hide it while a person types).
#[derive(Clone, Default)]
pub(crate) struct Progress {
    /// `None` when stderr is not a terminal: nothing is drawn.
    bar: Option<Arc<Mutex<Option<ProgressBar>>>>,
}

impl Progress {
    /// A progress display; draws only when `enabled` (stderr is a terminal).
    pub(crate) fn new(enabled: bool) -> Self {
        Progress {
            bar: enabled.then(Default::default),
        }
    }

    fn slot(&self) -> Option<MutexGuard<'_, Option<ProgressBar>>> {
        self.bar
            .as_ref()
            .map(|b| b.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Shows one progress notification: a bar when the total is known, a
    /// spinner otherwise. The bar appears at the first notification.
    pub(crate) fn update(&self, p: &ProgressNotificationParams) {
        let Some(mut slot) = self.slot() else { return };
        let bar = slot.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        let progress = p.progress.as_f64().unwrap_or(0.0);
        match p.total.as_ref().and_then(|t| t.as_f64()) {
            Some(total) if total > 0.0 => {
                // Fractions are shown in thousandths of the total.
                let (pos, len) = scaled(progress, total);
                bar.set_style(bar_style());
                bar.set_length(len);
                bar.set_position(pos);
            }
            _ => {
                bar.set_style(spinner_style());
                bar.set_position(progress.max(0.0) as u64);
            }
        }
        if let Some(message) = &p.message {
            bar.set_message(message.clone());
        }
    }

    /// Stops drawing and clears the bar (at the end of a call).
    pub(crate) fn clear(&self) {
        if let Some(mut slot) = self.slot()
            && let Some(bar) = slot.take()
        {
            bar.finish_and_clear();
        }
    }

    /// Hides the bar while `f` runs (a prompt), then shows it again.
    pub(crate) fn hidden<T>(&self, f: impl FnOnce() -> T) -> T {
        let bar = self.slot().and_then(|s| s.clone());
        if let Some(bar) = &bar {
            bar.disable_steady_tick();
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        let out = f();
        if let Some(bar) = &bar {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        out
    }
}

fn scaled(progress: f64, total: f64) -> (u64, u64) {
    if progress.fract() == 0.0 && total.fract() == 0.0 {
        (progress.max(0.0) as u64, total as u64)
    } else {
        ((progress / total * 1000.0).clamp(0.0, 1000.0) as u64, 1000)
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent:>3}% {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {pos} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

#[cfg(test)]
mod tests {
    use super::scaled;

    #[test]
    fn whole_numbers_are_kept_and_fractions_scaled() {
        assert_eq!(scaled(2.0, 3.0), (2, 3));
        assert_eq!(scaled(0.5, 1.0), (500, 1000));
        assert_eq!(scaled(7.0, 2.5), (1000, 1000));
    }
}
