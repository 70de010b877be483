//! The LLM's check of `brain hygiene`'s deterministic plan: it sees the planned actions (the
//! items' text redacted, as many as `prompt_max_tokens` allows) and gives each a verdict —
//! `confirm`, `reject` (the action is dropped) or `review` (a supersession becomes a review:
//! the items stay, a person decides). Actions it did not see or did not name stay as planned.
//! The answer passes the schema and the rules (only shown actions, one verdict each) before
//! anything changes; a failed call (no answer, garbage, a bound) leaves the plan as it was and
//! says why. Same provider, bounds, repair retry and rate-limit wait as the tick.

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::HygieneReport;
use crate::provider::Provider;
use crate::{Structured, Usage, ask, audit_answer, write_audit};
use brain_api::app::Brain;
use brain_core::keeper::text::{clip, one_line, redacted};

/// The schema's name (the tool an Anthropic model calls).
pub(crate) const SCHEMA_NAME: &str = "brain_hygiene_verdicts";
/// At most this many verdicts in an answer.
const MAX_VERDICTS: usize = 500;
const MAX_REASON_CHARS: usize = 300;

const INSTRUCTIONS: &str = "You review a maintenance plan for brain, a memory store of coding agents (decisions, \
conventions, bugs, lessons, todos). Deterministic code planned each action below; you confirm or correct it.

- supersede: the first item is superseded by the second (both are kept; the first stops being used). Confirm only \
when both say the same thing and the second is at least as complete and current.
- review: the item is put in the human review queue (it stays in use meanwhile).

Answer with ONE JSON document matching the schema brain_hygiene_verdicts and nothing else: verdicts, a list of \
{action, verdict, reason} where action is an id like h3 from the list, and verdict is confirm, reject (do nothing) \
or review (instead of superseding, let a person decide). Name only ids that appear below; leave out actions you \
have no opinion on.";

/// What the LLM's check did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AiCheck {
    pub provider: String,
    pub model: String,
    pub prompt_tokens: usize,
    pub prompt_max_tokens: usize,
    /// Actions in the prompt (of all planned).
    pub actions_shown: usize,
    #[serde(flatten)]
    pub usage: Usage,
    pub cost: f64,
    pub latency_ms: f64,
    pub confirmed: usize,
    pub dropped: usize,
    /// Supersessions the model turned into reviews.
    pub downgraded: usize,
    /// Verdicts refused by the rules, each with its reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejected_verdicts: Vec<String>,
    /// Why the check gave nothing (the plan stands as computed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
}

/// The answer.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    pub verdicts: Vec<Verdict>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Verdict {
    pub action: String,
    pub verdict: String,
    pub reason: String,
}

pub(crate) fn schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["verdicts"],
        "properties": {
            "verdicts": {"type": "array", "maxItems": MAX_VERDICTS, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["action", "verdict", "reason"],
                "properties": {
                    "action": {"type": "string", "maxLength": 20},
                    "verdict": {"type": "string", "enum": ["confirm", "reject", "review"]},
                    "reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
                },
            }},
        },
    })
}

pub(crate) fn parse(text: &str) -> Result<Answer, String> {
    let answer: Answer = serde_json::from_str(text).map_err(|err| format!("not the schema's JSON: {err}"))?;
    if answer.verdicts.len() > MAX_VERDICTS {
        return Err(format!("verdicts has {} entries (at most {MAX_VERDICTS})", answer.verdicts.len()));
    }
    if let Some(bad) = answer.verdicts.iter().find(|v| !["confirm", "reject", "review"].contains(&v.verdict.as_str())) {
        return Err(format!("verdict {:?} is not confirm, reject or review", bad.verdict));
    }
    Ok(answer)
}

/// The prompt: instructions, then one line per action while the budget allows.
fn prompt(brain: &Brain, report: &HygieneReport) -> (String, String, usize, usize) {
    let counter = brain.counter();
    let max_tokens = brain.config().ai.prompt_max_tokens;
    let system = INSTRUCTIONS.to_string();
    let mut used = counter.count(&system);
    let mut user = format!(
        "Now: {}\n\n## actions ({} planned)\n",
        brain_core::time::format_timestamp(brain.now()),
        report.actions.len()
    );
    used += counter.count(&user) + 30;
    let mut shown = 0;
    for action in &report.actions {
        let items: Vec<String> = action.brief.iter().map(|text| one_line(&redacted(text)).into_owned()).collect();
        let line = match action.action {
            "supersede" => format!(
                "- {} | supersede | {}: {} | superseded: {} | by: {}\n",
                action.id,
                action.rule,
                clip(&action.why, 120),
                items.first().map(String::as_str).unwrap_or("-"),
                items.get(1).map(String::as_str).unwrap_or("-"),
            ),
            _ => format!(
                "- {} | review | {}: {} | item: {}\n",
                action.id,
                action.rule,
                clip(&action.why, 120),
                items.first().map(String::as_str).unwrap_or("-")
            ),
        };
        let cost = counter.count(&line);
        if used + cost > max_tokens {
            break;
        }
        used += cost;
        user.push_str(&line);
        shown += 1;
    }
    user.push_str(&format!("\n({shown} of {} actions shown.)\n", report.actions.len()));
    let tokens = counter.count(&system) + counter.count(&user);
    (system, user, tokens, shown)
}

/// Asks the configured LLM about the plan and applies its verdicts to the plan (nothing is
/// written to the store here). Does nothing when no LLM is configured.
pub(crate) fn check(brain: &Brain, report: &mut HygieneReport, dry_run: bool) {
    let config = &brain.config().ai;
    let provider = match Provider::from_config(config, &|name| std::env::var(name).ok()) {
        Ok(Some(provider)) => provider,
        Ok(None) => return,
        Err(message) => {
            report.ai = Some(AiCheck {
                provider: config.provider.clone(),
                model: config.model.clone(),
                error: Some(message),
                ..AiCheck::default()
            });
            return;
        }
    };
    let (system, user, tokens, shown) = prompt(brain, report);
    let mut check = AiCheck {
        provider: provider.name().into(),
        model: provider.model().into(),
        prompt_tokens: tokens,
        prompt_max_tokens: config.prompt_max_tokens,
        actions_shown: shown,
        ..AiCheck::default()
    };
    let started = Instant::now();
    let schema = schema();
    let question =
        Structured { name: SCHEMA_NAME, system: &system, user: &user, prompt_tokens: tokens, schema: &schema };
    let asked = ask(config, brain.counter(), &provider, &question, &parse, &mut check.usage);
    check.latency_ms = (started.elapsed().as_secs_f64() * 1e6).round() / 1000.0;
    check.cost = config.cost(check.usage.tokens_in, check.usage.tokens_out);
    let raw = match asked {
        Ok((answer, raw)) => {
            apply_verdicts(&answer, report, shown, &mut check);
            raw
        }
        Err((message, raw)) => {
            check.error = Some(message);
            raw
        }
    };
    if !dry_run {
        #[derive(Serialize)]
        struct Record<'a> {
            timestamp: String,
            #[serde(flatten)]
            check: &'a AiCheck,
            prompt_sha256: String,
            answer: String,
        }
        let record = Record {
            timestamp: brain_core::time::format_timestamp(brain.now()),
            check: &check,
            prompt_sha256: brain_api::fsio::sha256_hex(format!("{system}\n\n{user}").as_bytes()),
            answer: audit_answer(&raw),
        };
        check.audit = write_audit(brain, "hygiene", &record);
    }
    report.ai = Some(check);
}

/// The rules: a verdict names an action that was shown, at most once; then confirm notes it,
/// reject drops it, review turns a supersession into a review of the superseded item.
fn apply_verdicts(answer: &Answer, report: &mut HygieneReport, shown: usize, check: &mut AiCheck) {
    let index: HashMap<String, usize> =
        report.actions.iter().take(shown).enumerate().map(|(i, action)| (action.id.clone(), i)).collect();
    let mut judged = vec![false; shown];
    for verdict in &answer.verdicts {
        let reason = clip(&one_line(&redacted(&verdict.reason)), MAX_REASON_CHARS).into_owned();
        let Some(&at) = index.get(verdict.action.trim()) else {
            check.rejected_verdicts.push(format!("{}: no such action was shown", clip(&one_line(&verdict.action), 20)));
            continue;
        };
        if std::mem::replace(&mut judged[at], true) {
            check.rejected_verdicts.push(format!("{}: a second verdict (the first counts)", verdict.action));
            continue;
        }
        let action = &mut report.actions[at];
        match (verdict.verdict.as_str(), action.action) {
            ("reject", _) => {
                action.status = "dropped".into();
                action.note = Some(format!("dropped by the model: {reason}"));
                check.dropped += 1;
            }
            ("review", "supersede") => {
                action.action = "review";
                action.into = None;
                action.into_version = None;
                action.note = Some(format!("the model asks for a review instead: {reason}"));
                check.downgraded += 1;
            }
            _ => {
                action.note = Some(format!("confirmed by the model: {reason}"));
                check.confirmed += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hygiene::Action;

    fn action(id: &str, kind: &'static str) -> Action {
        Action {
            id: id.into(),
            action: kind,
            rule: if kind == "supersede" { "near-duplicate" } else { "stale" },
            item: format!("mem_{id}"),
            item_version: 1,
            title: "t".into(),
            into: (kind == "supersede").then(|| "mem_new".into()),
            into_version: (kind == "supersede").then_some(1),
            similarity: None,
            why: "w".into(),
            status: "planned".into(),
            note: None,
            brief: vec!["x".into()],
        }
    }

    #[test]
    fn verdicts_name_shown_actions_once_and_change_only_the_plan() {
        let mut report = HygieneReport {
            actions: vec![
                action("h1", "supersede"),
                action("h2", "supersede"),
                action("h3", "review"),
                action("h4", "review"),
            ],
            ..HygieneReport::default()
        };
        let verdict = |action: &str, verdict: &str| Verdict {
            action: action.into(),
            verdict: verdict.into(),
            reason: "because".into(),
        };
        let answer = Answer {
            verdicts: vec![
                verdict("h1", "review"),
                verdict("h2", "reject"),
                verdict("h2", "confirm"),
                verdict("h3", "confirm"),
                verdict("h4", "reject"),
                verdict("h99", "reject"),
            ],
        };
        let mut check = AiCheck::default();
        // h4 was not shown (the budget stopped at three).
        apply_verdicts(&answer, &mut report, 3, &mut check);
        let got: Vec<(&str, &str)> = report.actions.iter().map(|a| (a.action, a.status.as_str())).collect();
        assert_eq!(
            got,
            [("review", "planned"), ("supersede", "dropped"), ("review", "planned"), ("review", "planned")]
        );
        assert_eq!(report.actions[0].into, None);
        assert_eq!((check.confirmed, check.dropped, check.downgraded), (1, 1, 1));
        assert_eq!(
            check.rejected_verdicts,
            [
                "h2: a second verdict (the first counts)",
                "h4: no such action was shown",
                "h99: no such action was shown"
            ]
        );
        assert!(
            parse(r#"{"verdicts":[{"action":"h1","verdict":"merge","reason":""}]}"#).unwrap_err().contains("merge")
        );
        assert!(parse(r#"{"verdicts":[],"extra":1}"#).is_err());
    }
}
