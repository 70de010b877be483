//! Progress bars for long operations: drawn on stderr only when it is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `total` steps (or a spinner when the total is unknown), hidden when stderr is
/// not a terminal so pipes and logs stay clean.
pub fn bar(total: Option<u64>, message: &str) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = if total.is_some() {
        "{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})"
    } else {
        "{msg:>10} {spinner} {pos} ({per_sec})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_string());
    bar
}
