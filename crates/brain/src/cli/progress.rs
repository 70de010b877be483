//! Progress bars for long operations: drawn on stderr only when it is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use brain_api::error::BrainResult;
use brain_api::output::Out;

const COUNTED: &str = "{msg:>10} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})";

/// A bar of `total` steps (or a spinner when the total is unknown), hidden when stderr is
/// not a terminal so pipes and logs stay clean.
pub fn bar(total: Option<u64>, message: &str) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = if total.is_some() { COUNTED } else { "{msg:>10} {spinner} {pos} ({per_sec})" };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_string());
    bar
}

/// Shows `done` of `total` on `bar`: a spinner (total unknown when the bar was made) turns into
/// a counted bar the first time a total arrives, and the length follows a total that changes.
/// A total of 0 is one not known yet: only the position moves.
pub fn count(bar: &ProgressBar, done: u64, total: u64) {
    if total > 0 && bar.length() != Some(total) {
        if bar.length().is_none()
            && let Ok(style) = ProgressStyle::with_template(COUNTED)
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_length(total);
    }
    bar.set_position(done);
}

/// Clears `bar`, then prints the operation's report on stdout: as JSON with `--json`, through
/// `text` otherwise. An error is returned as it is, after the bar is gone; the report is handed
/// back for what the command adds on stderr.
pub fn finish<T: serde::Serialize>(
    bar: ProgressBar,
    result: BrainResult<T>,
    json: bool,
    text: impl FnOnce(&mut Out, &T),
) -> BrainResult<T> {
    bar.finish_and_clear();
    let report = result?;
    let mut out = Out::new();
    if json {
        out.json(&report);
    } else {
        text(&mut out, &report);
    }
    Ok(report)
}
