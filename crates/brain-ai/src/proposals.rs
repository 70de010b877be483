//! The answer the LLM must give: its JSON schema, its parse (the schema checked in code too,
//! since a server may ignore `strict`), and the rules every proposal passes before anything
//! is written. A rejected proposal is reported with its reason and never half-applied; the
//! rules are checked against the index as phase 1 left it.
//!
//! Rules: arcs are named by `cluster_id` and must be live (indexed, not a `*.merged.md`
//! tombstone); an edge joins two different arcs, is not already there (either way round is
//! a different edge, the same pair twice in one answer is not) and comes from a file the tick
//! may edit; a merge takes live arcs of one project into a live arc that is neither merged nor
//! merged into in this answer (no chains: an arc absorbed once is never a survivor, a survivor
//! is never absorbed); signals are named by their stable id, escalated only upwards, cleared
//! only when not resolved, changed once per tick; at most `max_changes_per_kind` changes of
//! each kind (the rest rejected as over the cap).
//!
//! Each answer replies to a prompt about one project (`prompt`), and may change that project
//! only: a merge's survivor, both ends of an edge and a signal's file must be of it — else
//! the proposal is refused as a change across projects, whatever the model was told. The
//! cap counts every answer of the tick.

use std::collections::{HashMap, HashSet};

use brain_core::Severity;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The most proposals of one kind an answer may hold (the schema's `maxItems`).
pub(crate) const MAX_ITEMS: usize = 100;
/// The longest `reason` kept (characters).
pub(crate) const MAX_REASON_CHARS: usize = 500;
/// The longest `intent` kept (characters).
pub(crate) const MAX_INTENT_CHARS: usize = 2000;

const EDGE_TYPES: [&str; 6] = ["parent", "child", "sibling", "unblocks", "supersedes", "related"];

/// The published schema of the answer (strict: every key required, nothing else allowed).
pub(crate) fn schema() -> Value {
    let reason = json!({"type": "string", "maxLength": MAX_REASON_CHARS});
    let id = json!({"type": "string", "maxLength": 200});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["edges", "merges", "signals", "intent", "health"],
        "properties": {
            "edges": {"type": "array", "maxItems": MAX_ITEMS, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["from", "to", "type", "reason"],
                "properties": {"from": id, "to": id, "type": {"type": "string", "enum": EDGE_TYPES}, "reason": reason},
            }},
            "merges": {"type": "array", "maxItems": MAX_ITEMS, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["into", "arcs", "reason"],
                "properties": {"into": id, "arcs": {"type": "array", "minItems": 1, "maxItems": 10, "items": id}, "reason": reason},
            }},
            "signals": {"type": "array", "maxItems": MAX_ITEMS, "items": {
                "type": "object", "additionalProperties": false,
                "required": ["signal", "action", "severity", "reason"],
                "properties": {
                    "signal": id,
                    "action": {"type": "string", "enum": ["escalate", "clear"]},
                    "severity": {"type": "string", "enum": ["warning", "critical", "nuclear", "resolved"]},
                    "reason": reason,
                },
            }},
            "intent": {"type": "string", "maxLength": MAX_INTENT_CHARS},
            "health": {
                "type": "object", "additionalProperties": false,
                "required": ["score", "reason"],
                "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}, "reason": reason},
            },
        },
    })
}

/// The answer, as parsed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub edges: Vec<EdgeProposal>,
    pub merges: Vec<MergeProposal>,
    pub signals: Vec<SignalProposal>,
    pub intent: String,
    pub health: HealthProposal,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeProposal {
    pub from: String,
    pub to: String,
    #[serde(rename = "type")]
    pub edge_type: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeProposal {
    /// The surviving arc.
    pub into: String,
    /// The arcs merged into it (each leaves a tombstone pointing at `into`).
    pub arcs: Vec<String>,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalProposal {
    /// The signal's stable id (`mem_v…`).
    pub signal: String,
    /// `escalate` or `clear`.
    pub action: String,
    /// The new severity (`resolved` for a clearance).
    pub severity: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthProposal {
    pub score: i64,
    pub reason: String,
}

/// Parses an answer and checks what the schema says (types, enums, sizes). An error is what
/// the repair retry tells the model.
pub(crate) fn parse(text: &str) -> Result<Answer, String> {
    let answer: Answer = serde_json::from_str(text).map_err(|err| format!("not the schema's JSON: {err}"))?;
    for (name, len) in
        [("edges", answer.edges.len()), ("merges", answer.merges.len()), ("signals", answer.signals.len())]
    {
        if len > MAX_ITEMS {
            return Err(format!("{name} has {len} entries (at most {MAX_ITEMS})"));
        }
    }
    if let Some(edge) = answer.edges.iter().find(|edge| !EDGE_TYPES.contains(&edge.edge_type.as_str())) {
        return Err(format!("edge type {:?} is not one of {}", edge.edge_type, EDGE_TYPES.join(", ")));
    }
    if let Some(signal) = answer.signals.iter().find(|s| !["escalate", "clear"].contains(&s.action.as_str())) {
        return Err(format!("signal action {:?} is not escalate or clear", signal.action));
    }
    if let Some(merge) = answer.merges.iter().find(|merge| merge.arcs.is_empty() || merge.arcs.len() > 10) {
        return Err(format!("merge into {:?} lists {} arcs (1 to 10)", merge.into, merge.arcs.len()));
    }
    if !(0..=10).contains(&answer.health.score) {
        return Err(format!("health score {} is outside 0 to 10", answer.health.score));
    }
    if answer.intent.chars().count() > MAX_INTENT_CHARS {
        return Err(format!("intent is longer than {MAX_INTENT_CHARS} characters"));
    }
    Ok(answer)
}

/// A live arc as the rules see it.
#[derive(Clone, Debug)]
pub(crate) struct ArcFacts<'a> {
    pub relpath: &'a str,
    pub project: &'a str,
    /// Targets of its edges, as indexed.
    pub edges: &'a [String],
    /// The tick may not edit the file (binary, oversized, not UTF-8).
    pub readonly: bool,
}

/// An indexed signal as the rules see it.
#[derive(Clone, Debug)]
pub(crate) struct SignalFacts<'a> {
    pub relpath: &'a str,
    /// The project of its file (empty: none).
    pub project: &'a str,
    pub severity: Severity,
    pub readonly: bool,
}

/// What the rules check against.
#[derive(Debug, Default)]
pub(crate) struct Facts<'a> {
    pub arcs: HashMap<&'a str, ArcFacts<'a>>,
    /// `cluster_id`s of `*.merged.md` tombstones.
    pub tombstones: HashSet<String>,
    pub signals: HashMap<&'a str, SignalFacts<'a>>,
}

/// A change of a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SignalChange {
    Escalate(Severity),
    Clear,
}

/// The accepted proposals, in answer order, with their index in [`Checked::outcomes`].
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub edges: Vec<(usize, EdgeProposal)>,
    pub merges: Vec<(usize, MergeProposal)>,
    pub signals: Vec<(usize, SignalProposal, SignalChange)>,
    /// Each answer's intent, by the project its prompt was about.
    pub intents: Vec<(String, String)>,
    /// Each answer's health score and reason, by project.
    pub health: Vec<(String, u8, String)>,
}

/// One proposal and what became of it.
#[derive(Clone, Debug, Serialize)]
pub struct ProposalOutcome {
    /// `edge`, `merge` or `signal`.
    pub kind: &'static str,
    /// The project whose prompt it answered (empty: the arcs without a project).
    pub project: String,
    /// The proposal in one line (ids only; reasons are the model's words, redacted).
    pub proposal: String,
    pub reason: String,
    /// `accepted` → `applied` → `verified`, or `rejected` (by the rules), `would apply`
    /// (dry run) or `failed` (the write or the verification did not go through).
    pub status: String,
    /// Why it was rejected or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The rules' verdict on an answer.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub plan: Plan,
    pub outcomes: Vec<ProposalOutcome>,
}

fn rank(severity: Severity) -> u8 {
    match severity {
        Severity::Resolved => 0,
        Severity::Info => 1,
        Severity::Warning => 2,
        Severity::Critical => 3,
        Severity::Nuclear => 4,
    }
}

fn clean(text: &str, max_chars: usize) -> String {
    let text = brain_core::keeper::text::redacted(text);
    brain_core::keeper::text::clip(&brain_core::keeper::text::one_line(&text), max_chars).into_owned()
}

/// Checks every proposal of `answer`, the reply to the prompt about `project`, against
/// `facts`, adding its outcomes and accepted proposals to `checked` (which holds those of the
/// tick's earlier answers); at most `cap` of each kind are accepted in the whole tick.
pub(crate) fn check(checked: &mut Checked, answer: &Answer, facts: &Facts<'_>, project: &str, cap: usize) {
    let unknown = |id: &str| {
        if facts.tombstones.contains(id) {
            format!("{id} is already merged into another arc (a tombstone)")
        } else {
            format!("no live arc has the id {id}")
        }
    };
    let across = |what: &str, other: &str| -> String {
        format!(
            "{what} belongs to {}, not to {} whose prompt this answer replied to (changes across projects are refused)",
            super::prompt::project_label(other),
            super::prompt::project_label(project)
        )
    };
    let outcome = |kind: &'static str, proposal: String, reason: &str, verdict: Result<(), String>| {
        outcome(kind, project, proposal, reason, verdict)
    };

    // Merges first: edges and signals of an arc merged away in this tick are refused.
    let mut absorbed: HashSet<&str> = HashSet::new();
    let mut survivors: HashSet<&str> = HashSet::new();
    for merge in &answer.merges {
        let proposal = format!("merge {} into {}", merge.arcs.join(", "), merge.into);
        let verdict = (|| {
            let into = facts.arcs.get(merge.into.as_str()).ok_or_else(|| unknown(&merge.into))?;
            if into.project != project {
                return Err(across(&merge.into, into.project));
            }
            if absorbed.contains(merge.into.as_str()) {
                return Err(format!("{} is merged into another arc in this answer (no chains)", merge.into));
            }
            let mut seen: HashSet<&str> = HashSet::new();
            for id in &merge.arcs {
                let arc = facts.arcs.get(id.as_str()).ok_or_else(|| unknown(id))?;
                if *id == merge.into {
                    return Err(format!("{id} cannot be merged into itself"));
                }
                if !seen.insert(id) || absorbed.contains(id.as_str()) {
                    return Err(format!("{id} is merged twice"));
                }
                if survivors.contains(id.as_str()) {
                    return Err(format!("{id} absorbs other arcs in this answer (no chains)"));
                }
                if arc.project != into.project {
                    return Err(format!("{id} and {} belong to different projects", merge.into));
                }
                if arc.readonly {
                    return Err(format!("{} cannot be edited (binary, oversized or not UTF-8)", arc.relpath));
                }
            }
            if checked.plan.merges.len() >= cap {
                return Err(format!("over the cap of {cap} merges per tick"));
            }
            Ok(())
        })();
        let index = checked.outcomes.len();
        if verdict.is_ok() {
            survivors.insert(merge.into.as_str());
            absorbed.extend(merge.arcs.iter().map(String::as_str));
            checked.plan.merges.push((index, merge.clone()));
        }
        checked.outcomes.push(outcome("merge", proposal, &merge.reason, verdict));
    }

    let mut planned_edges: HashSet<(&str, &str)> = HashSet::new();
    for edge in &answer.edges {
        let proposal = format!("edge {} -[{}]-> {}", edge.from, edge.edge_type, edge.to);
        let verdict = (|| {
            let from = facts.arcs.get(edge.from.as_str()).ok_or_else(|| unknown(&edge.from))?;
            let to = facts.arcs.get(edge.to.as_str()).ok_or_else(|| unknown(&edge.to))?;
            if edge.from == edge.to {
                return Err("an edge from an arc to itself".to_string());
            }
            for (id, arc) in [(&edge.from, from), (&edge.to, to)] {
                if arc.project != project {
                    return Err(across(id, arc.project));
                }
            }
            for id in [&edge.from, &edge.to] {
                if absorbed.contains(id.as_str()) {
                    return Err(format!("{id} is merged away in this tick"));
                }
            }
            if from.edges.contains(&edge.to) || planned_edges.contains(&(edge.from.as_str(), edge.to.as_str())) {
                return Err(format!("{} already has an edge to {}", edge.from, edge.to));
            }
            if from.readonly {
                return Err(format!("{} cannot be edited (binary, oversized or not UTF-8)", from.relpath));
            }
            if checked.plan.edges.len() >= cap {
                return Err(format!("over the cap of {cap} edges per tick"));
            }
            Ok(())
        })();
        let index = checked.outcomes.len();
        if verdict.is_ok() {
            planned_edges.insert((edge.from.as_str(), edge.to.as_str()));
            checked.plan.edges.push((index, edge.clone()));
        }
        checked.outcomes.push(outcome("edge", proposal, &edge.reason, verdict));
    }

    let absorbed_files: HashSet<&str> =
        absorbed.iter().filter_map(|id| facts.arcs.get(*id)).map(|arc| arc.relpath).collect();
    let mut changed_signals: HashSet<&str> = HashSet::new();
    for signal in &answer.signals {
        let proposal = format!("{} signal {} ({})", signal.action, signal.signal, signal.severity);
        let verdict = (|| {
            let facts_of = facts
                .signals
                .get(signal.signal.as_str())
                .ok_or_else(|| format!("no signal has the id {}", signal.signal))?;
            if facts_of.project != project {
                return Err(across(&format!("the file {} of {}", facts_of.relpath, signal.signal), facts_of.project));
            }
            if absorbed_files.contains(facts_of.relpath) {
                return Err(format!("its file {} is merged away in this tick", facts_of.relpath));
            }
            if !changed_signals.insert(signal.signal.as_str()) {
                return Err(format!("{} is changed twice", signal.signal));
            }
            if facts_of.readonly {
                return Err(format!("{} cannot be edited (binary, oversized or not UTF-8)", facts_of.relpath));
            }
            let change = match signal.action.as_str() {
                "clear" => {
                    if facts_of.severity == Severity::Resolved {
                        return Err("it is already resolved".to_string());
                    }
                    SignalChange::Clear
                }
                _ => {
                    let to: Severity = signal
                        .severity
                        .parse()
                        .ok()
                        .filter(|to| matches!(to, Severity::Warning | Severity::Critical | Severity::Nuclear))
                        .ok_or_else(|| format!("cannot escalate to {:?}", signal.severity))?;
                    if rank(to) <= rank(facts_of.severity) {
                        return Err(format!(
                            "{} is not above its severity {}",
                            signal.severity,
                            facts_of.severity.as_str()
                        ));
                    }
                    SignalChange::Escalate(to)
                }
            };
            if checked.plan.signals.len() >= cap {
                return Err(format!("over the cap of {cap} signal changes per tick"));
            }
            Ok(change)
        })();
        let index = checked.outcomes.len();
        let status = verdict.as_ref().map(|_| ()).map_err(Clone::clone);
        if let Ok(change) = verdict {
            checked.plan.signals.push((index, signal.clone(), change));
        } else {
            changed_signals.remove(signal.signal.as_str());
        }
        checked.outcomes.push(outcome("signal", proposal, &signal.reason, status));
    }

    let intent = clean(&answer.intent, MAX_INTENT_CHARS);
    if !intent.is_empty() {
        checked.plan.intents.push((project.to_string(), intent));
    }
    if let Some(score) = u8::try_from(answer.health.score).ok().filter(|score| *score <= 10) {
        checked.plan.health.push((project.to_string(), score, clean(&answer.health.reason, MAX_REASON_CHARS)));
    }
}

fn outcome(
    kind: &'static str,
    project: &str,
    proposal: String,
    reason: &str,
    verdict: Result<(), String>,
) -> ProposalOutcome {
    let (status, why) = match verdict {
        Ok(()) => ("accepted".to_string(), None),
        Err(why) => ("rejected".to_string(), Some(why)),
    };
    ProposalOutcome {
        kind,
        project: project.to_string(),
        proposal,
        reason: clean(reason, MAX_REASON_CHARS),
        status,
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts<'static> {
        let arc = |relpath: &'static str, project: &'static str, edges: &[&str]| ArcFacts {
            relpath,
            project,
            edges: Box::leak(edges.iter().map(|e| e.to_string()).collect::<Vec<_>>().into_boxed_slice()),
            readonly: false,
        };
        let mut facts = Facts::default();
        facts.arcs.insert("a", arc("a.md", "p", &["b"]));
        facts.arcs.insert("b", arc("b.md", "p", &[]));
        facts.arcs.insert("c", arc("c.md", "p", &[]));
        facts.arcs.insert("d", arc("d.md", "q", &[]));
        facts.tombstones.insert("t".into());
        facts.signals.insert(
            "mem_vsig",
            SignalFacts { relpath: "b.md", project: "p", severity: Severity::Warning, readonly: false },
        );
        facts.signals.insert(
            "mem_vother",
            SignalFacts { relpath: "d.md", project: "q", severity: Severity::Warning, readonly: false },
        );
        facts
    }

    fn statuses(checked: &Checked) -> Vec<(String, String)> {
        checked
            .outcomes
            .iter()
            .map(|o| (o.proposal.clone(), o.why.clone().unwrap_or_else(|| o.status.clone())))
            .collect()
    }

    fn edge(from: &str, to: &str) -> EdgeProposal {
        EdgeProposal { from: from.into(), to: to.into(), edge_type: "related".into(), reason: "r".into() }
    }

    fn merge(into: &str, arcs: &[&str]) -> MergeProposal {
        MergeProposal { into: into.into(), arcs: arcs.iter().map(|a| a.to_string()).collect(), reason: "dup".into() }
    }

    #[test]
    fn nonsense_is_rejected_with_its_reason_and_the_rest_accepted() {
        let answer = Answer {
            edges: vec![
                edge("a", "zzz"),
                edge("c", "c"),
                edge("a", "b"),
                edge("b", "c"),
                edge("b", "c"),
                edge("c", "a"),
            ],
            merges: vec![
                merge("t", &["b"]),
                merge("c", &["b"]),
                merge("a", &["c"]),
                merge("b", &["b"]),
                merge("a", &["d"]),
            ],
            signals: vec![
                SignalProposal {
                    signal: "mem_vnope".into(),
                    action: "clear".into(),
                    severity: "resolved".into(),
                    reason: String::new(),
                },
                SignalProposal {
                    signal: "mem_vsig".into(),
                    action: "escalate".into(),
                    severity: "critical".into(),
                    reason: String::new(),
                },
            ],
            intent: "ship it".into(),
            health: HealthProposal { score: 7, reason: "ok".into() },
        };
        let mut checked = Checked::default();
        check(&mut checked, &answer, &facts(), "p", 10);
        let got = statuses(&checked);
        let want: Vec<(&str, &str)> = vec![
            ("merge b into t", "t is already merged into another arc (a tombstone)"),
            ("merge b into c", "accepted"),
            ("merge c into a", "c absorbs other arcs in this answer (no chains)"),
            ("merge b into b", "b is merged into another arc in this answer (no chains)"),
            ("merge d into a", "d and a belong to different projects"),
            ("edge a -[related]-> zzz", "no live arc has the id zzz"),
            ("edge c -[related]-> c", "an edge from an arc to itself"),
            ("edge a -[related]-> b", "b is merged away in this tick"),
            ("edge b -[related]-> c", "b is merged away in this tick"),
            ("edge b -[related]-> c", "b is merged away in this tick"),
            ("edge c -[related]-> a", "accepted"),
            ("clear signal mem_vnope (resolved)", "no signal has the id mem_vnope"),
            ("escalate signal mem_vsig (critical)", "its file b.md is merged away in this tick"),
        ];
        let got: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(got, want);
        assert_eq!((checked.plan.edges.len(), checked.plan.merges.len(), checked.plan.signals.len()), (1, 1, 0));
        assert_eq!(checked.plan.health, [("p".to_string(), 7, "ok".to_string())]);
    }

    #[test]
    fn an_answer_about_one_project_cannot_change_another() {
        let clear = |signal: &str| SignalProposal {
            signal: signal.into(),
            action: "clear".into(),
            severity: "resolved".into(),
            reason: String::new(),
        };
        let answer = Answer {
            edges: vec![edge("c", "d"), edge("d", "c"), edge("b", "c")],
            merges: vec![merge("d", &["a"])],
            signals: vec![clear("mem_vother"), clear("mem_vsig")],
            ..Answer::default()
        };
        let mut checked = Checked::default();
        check(&mut checked, &answer, &facts(), "p", 10);
        let across = "not to project p whose prompt this answer replied to (changes across projects are refused)";
        let got = statuses(&checked);
        let got: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            got,
            [
                ("merge a into d", format!("d belongs to project q, {across}").as_str()),
                ("edge c -[related]-> d", format!("d belongs to project q, {across}").as_str()),
                ("edge d -[related]-> c", format!("d belongs to project q, {across}").as_str()),
                ("edge b -[related]-> c", "accepted"),
                (
                    "clear signal mem_vother (resolved)",
                    format!("the file d.md of mem_vother belongs to project q, {across}").as_str()
                ),
                ("clear signal mem_vsig (resolved)", "accepted"),
            ]
        );
        // The same answer to the prompt about q: only q's signal may change.
        let mut checked = Checked::default();
        check(&mut checked, &Answer { signals: answer.signals.clone(), ..Answer::default() }, &facts(), "q", 10);
        let statuses: Vec<&str> = checked.outcomes.iter().map(|o| o.status.as_str()).collect();
        assert_eq!(statuses, ["accepted", "rejected"]);
        assert!(checked.outcomes.iter().all(|o| o.project == "q"));
    }

    #[test]
    fn duplicates_downgrades_and_the_cap_are_rejected() {
        let sig = |severity: &str| SignalProposal {
            signal: "mem_vsig".into(),
            action: "escalate".into(),
            severity: severity.into(),
            reason: String::new(),
        };
        let answer = Answer {
            edges: vec![edge("a", "b"), edge("b", "a"), edge("b", "a"), edge("c", "a"), edge("a", "c")],
            signals: vec![sig("info"), sig("warning"), sig("nuclear"), sig("critical")],
            ..Answer::default()
        };
        let mut checked = Checked::default();
        check(&mut checked, &answer, &facts(), "p", 2);
        let got = statuses(&checked);
        let got: Vec<&str> = got.iter().map(|(_, why)| why.as_str()).collect();
        assert_eq!(
            got,
            [
                "a already has an edge to b",
                "accepted",
                "b already has an edge to a",
                "accepted",
                "over the cap of 2 edges per tick",
                "cannot escalate to \"info\"",
                "warning is not above its severity warning",
                "accepted",
                "mem_vsig is changed twice",
            ]
        );
    }

    #[test]
    fn the_parse_checks_what_the_schema_says() {
        let good = r#"{"edges":[],"merges":[],"signals":[],"intent":"x","health":{"score":3,"reason":"r"}}"#;
        assert_eq!(parse(good).unwrap().health.score, 3);
        for (bad, says) in [
            ("{\"edges\":[", "not the schema's JSON"),
            (
                r#"{"edges":[],"merges":[],"signals":[],"intent":"x","health":{"score":11,"reason":"r"}}"#,
                "outside 0 to 10",
            ),
            (
                r#"{"edges":[],"merges":[],"signals":[],"intent":"x","health":{"score":1,"reason":"r"},"extra":1}"#,
                "unknown field",
            ),
            (
                r#"{"edges":[{"from":"a","to":"b","type":"likes","reason":""}],"merges":[],"signals":[],"intent":"","health":{"score":1,"reason":""}}"#,
                "edge type",
            ),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
