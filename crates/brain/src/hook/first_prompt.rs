//! The working memory at a session's first prompt, for hosts that drop what their
//! session-start hook returns ([`hosts::working_memory_at_first_prompt`]: Qwen Code, whose
//! `SessionStart` does not run with `-p` and whose result is discarded where it does run).
//!
//! The prompt hook then gives what the session start would have given, before the task
//! recall, and remembers it as given, so the task recall and the refreshes that follow see
//! the session as any other.

use brain_api::app::SessionRequest;
use brain_api::error::BrainResult;
use brain_capture::Host;

use super::hosts::{self, SizeCap};
use super::state::SessionState;
use super::{RECALL_TOP, Started, given_ids};

/// The working memory for the first prompt of a session of `host` that was not given it yet,
/// within two thirds of `cap` (the rest is the task recall's), followed by a blank line; empty
/// for every other host and prompt.
pub(super) fn working_memory(
    host: Host,
    started: &mut Started,
    state: &mut SessionState,
    cap: SizeCap,
) -> BrainResult<String> {
    if !hosts::working_memory_at_first_prompt(host) || state.brain_hash.is_some() {
        return Ok(String::new());
    }
    let generation = started.brain()?.generation()?;
    let share = match cap {
        SizeCap::Chars(chars) => SizeCap::Chars(chars * 2 / 3),
        SizeCap::Bytes(bytes) => SizeCap::Bytes(bytes * 2 / 3),
    };
    let request = SessionRequest { top: RECALL_TOP, ..SessionRequest::default() };
    let start = started.working_memory(request, share.less("\n\n"))?;
    state.generation = Some(generation);
    state.brain_hash = Some(start.brain_hash.clone());
    state.give(given_ids(&start));
    Ok(format!("{}\n\n", start.text))
}
