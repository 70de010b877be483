//! Groups of sessions → arc files under `<clusters>/<YYYY-MM-DD>/<cluster_id>.md`.
//!
//! Arc identity is sticky: before naming a group, the arcs of the date folders around it are
//! read, and a group that shares sessions with an existing arc updates that arc (keeping its
//! `cluster_id` and path) instead of starting a new one; groups that share one arc are merged
//! into it. So re-running capture on the same transcripts rewrites the same files, and a
//! session that joins an arc later (the hook captured the first half) extends it rather than
//! duplicating it. Only a group with no known session gets a new id (SPEC §6.7).
//!
//! Writes are atomic; a file is written only when its text changes; an update is refused
//! when the file changed on disk while capture was working on it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use brain_core::Timestamp;
use brain_core::vault::{DEFAULT_MAX_BYTES, parse};
use serde::Serialize;

use super::arc::{self, ArcContent, Signals};
use super::cluster;
use super::store;
use super::transcript::SessionSummary;
use brain_api::error::{BrainError, BrainResult};

/// Days before a group's first session whose folders are searched for the arc it continues.
pub const LOOKBACK_DAYS: i64 = 7;
/// A new arc gets a `sibling` edge to each arc of its project created at most this long
/// before or after it…
pub const SIBLING_WINDOW_HOURS: i64 = 24;
/// …the nearest in time first (then by `cluster_id`), at most this many.
pub const MAX_SIBLINGS: usize = 5;

/// What happened to one arc.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArcAction {
    Created,
    Updated,
    Unchanged,
    Skipped,
}

impl ArcAction {
    pub fn as_str(self) -> &'static str {
        match self {
            ArcAction::Created => "created",
            ArcAction::Updated => "updated",
            ArcAction::Unchanged => "unchanged",
            ArcAction::Skipped => "skipped",
        }
    }
}

/// One arc written (or not) by a capture.
#[derive(Clone, Debug, Serialize)]
pub struct ArcOutcome {
    pub cluster_id: String,
    /// Relative to the clusters folder.
    pub path: String,
    pub action: ArcAction,
    /// Why an arc was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub sessions: usize,
    /// The agent hosts of the sessions capture has summaries of.
    pub hosts: Vec<String>,
    pub title: String,
    pub region: String,
    pub status: String,
    pub heat: u8,
}

/// An arc file found in the clusters folder.
struct ExistingArc {
    path: PathBuf,
    cluster_id: String,
    source_sessions: Vec<String>,
    project: String,
    created: Option<Timestamp>,
}

/// The arcs of some date folders, by the sessions they name.
#[derive(Default)]
struct ExistingArcs {
    arcs: Vec<ExistingArc>,
    by_session: HashMap<String, Vec<usize>>,
}

impl ExistingArcs {
    fn scan(clusters: &Path, first: jiff::civil::Date, last: jiff::civil::Date) -> ExistingArcs {
        let mut index = ExistingArcs::default();
        let mut date = first;
        while date <= last {
            index.scan_folder(&clusters.join(date.to_string()));
            let Ok(next) = date.tomorrow() else { break };
            date = next;
        }
        index
    }

    fn scan_folder(&mut self, folder: &Path) {
        let Ok(entries) = std::fs::read_dir(folder) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
                name.ends_with(".md") && !name.ends_with(".merged.md") && !name.starts_with(['_', '.'])
            })
            .collect();
        paths.sort();
        for path in paths {
            let Some(arc) = read_existing(&path) else {
                continue;
            };
            for session in &arc.source_sessions {
                self.by_session.entry(session.clone()).or_default().push(self.arcs.len());
            }
            self.arcs.push(arc);
        }
    }
}

fn read_existing(path: &Path) -> Option<ExistingArc> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() > DEFAULT_MAX_BYTES {
        return None;
    }
    let (doc, _) = parse("", &bytes, DEFAULT_MAX_BYTES);
    let frontmatter = doc.frontmatter?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let project = frontmatter
        .get("project")
        .and_then(|entry| entry.value.as_scalar())
        .map(|project| project.trim().to_string())
        .unwrap_or_default();
    Some(ExistingArc {
        path: path.to_path_buf(),
        created: frontmatter.created.map(brain_core::vault::Created::timestamp),
        cluster_id: frontmatter.cluster_id.unwrap_or(stem),
        source_sessions: frontmatter.source_sessions,
        project,
    })
}

/// Where a set of groups goes: an existing arc, or a new one.
struct Target {
    existing: Option<usize>,
    members: Vec<usize>,
}

/// Writes one arc per group of `sessions` (indices) into `clusters`.
pub fn write_groups(
    home: &Path,
    clusters: &Path,
    sessions: &[SessionSummary],
    groups: Vec<Vec<usize>>,
    now: Timestamp,
) -> BrainResult<Vec<ArcOutcome>> {
    let dates = sessions.iter().filter_map(|s| s.start).map(|t| t.to_zoned(jiff::tz::TimeZone::UTC).date());
    let (Some(first), Some(last)) = (dates.clone().min(), dates.max()) else {
        return Ok(Vec::new());
    };
    let first = first.checked_sub(jiff::Span::new().days(LOOKBACK_DAYS)).unwrap_or(first);
    // A day past the last: arcs created after a new one, within the sibling window.
    let last = last.tomorrow().unwrap_or(last);
    let index = ExistingArcs::scan(clusters, first, last);

    let mut by_arc: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut targets: Vec<Target> = Vec::new();
    for group in groups {
        let mut overlap: HashMap<usize, usize> = HashMap::new();
        for &member in &group {
            for &arc in index.by_session.get(&sessions[member].session_id).into_iter().flatten() {
                *overlap.entry(arc).or_default() += 1;
            }
        }
        let best = overlap.into_iter().max_by(|(a, count_a), (b, count_b)| {
            count_a.cmp(count_b).then_with(|| index.arcs[*b].cluster_id.cmp(&index.arcs[*a].cluster_id))
        });
        match best {
            Some((arc, _)) => by_arc.entry(arc).or_default().extend(group),
            None => targets.push(Target { existing: None, members: group }),
        }
    }
    targets.extend(by_arc.into_iter().map(|(arc, members)| Target { existing: Some(arc), members }));

    // The arcs a new arc may be a sibling of: the known ones and the other new ones.
    let new_arcs: Vec<Option<NewArc>> = targets
        .iter()
        .map(|target| if target.existing.is_none() { new_arc(sessions, &target.members) } else { None })
        .collect();
    let mut peers: Vec<(&str, &str, Timestamp)> = index
        .arcs
        .iter()
        .filter_map(|arc| Some((arc.cluster_id.as_str(), arc.project.as_str(), arc.created?)))
        .collect();
    peers.extend(new_arcs.iter().flatten().map(|arc| (arc.cluster_id.as_str(), arc.project.as_str(), arc.created)));

    let mut lookup = store::SessionLookup::new(home);
    let mut outcomes = Vec::with_capacity(targets.len());
    for (target, new) in targets.into_iter().zip(&new_arcs) {
        let siblings = new.as_ref().map(|arc| siblings(arc, &peers)).unwrap_or_default();
        outcomes.push(write_target(&mut lookup, clusters, sessions, &index, target, siblings, now)?);
    }
    outcomes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(outcomes)
}

/// What a new arc is known by before it is written.
struct NewArc {
    cluster_id: String,
    project: String,
    created: Timestamp,
}

/// The identity of the new arc of `members` (as [`write_target`] names it).
fn new_arc(sessions: &[SessionSummary], members: &[usize]) -> Option<NewArc> {
    let first = members
        .iter()
        .map(|&i| &sessions[i])
        .min_by(|a, b| a.start.cmp(&b.start).then_with(|| a.session_id.cmp(&b.session_id)))?;
    let created = first.start?;
    let mut ids: Vec<&str> = Vec::new();
    for &member in members {
        if !ids.contains(&sessions[member].session_id.as_str()) {
            ids.push(&sessions[member].session_id);
        }
    }
    let title = cluster::title_of(&first.first_prompt);
    Some(NewArc { cluster_id: cluster::cluster_id(created, &title, &ids), project: first.project.clone(), created })
}

/// The `cluster_id`s a new arc links to as siblings: arcs of its project (a project is
/// required) created within [`SIBLING_WINDOW_HOURS`] of it, nearest first, then by id; itself
/// and repeats left out; at most [`MAX_SIBLINGS`].
fn siblings(arc: &NewArc, peers: &[(&str, &str, Timestamp)]) -> Vec<String> {
    if arc.project.is_empty() {
        return Vec::new();
    }
    let mut near: Vec<(i64, &str)> = peers
        .iter()
        .filter(|(id, project, _)| *project == arc.project && *id != arc.cluster_id)
        .map(|(id, _, created)| ((created.as_second() - arc.created.as_second()).abs(), *id))
        .filter(|(distance, _)| *distance <= SIBLING_WINDOW_HOURS * 3600)
        .collect();
    near.sort_unstable();
    let mut chosen: Vec<String> = Vec::new();
    for (_, id) in near {
        if chosen.len() == MAX_SIBLINGS {
            break;
        }
        if !chosen.iter().any(|known| known == id) {
            chosen.push(id.to_string());
        }
    }
    chosen
}

fn write_target(
    lookup: &mut store::SessionLookup<'_>,
    clusters: &Path,
    sessions: &[SessionSummary],
    index: &ExistingArcs,
    target: Target,
    siblings: Vec<String>,
    now: Timestamp,
) -> BrainResult<ArcOutcome> {
    let mut members: Vec<&SessionSummary> = target.members.iter().map(|&i| &sessions[i]).collect();
    members.sort_by(|a, b| a.start.cmp(&b.start).then_with(|| a.session_id.cmp(&b.session_id)));
    let existing = target.existing.map(|i| &index.arcs[i]);

    // Every session of the arc: the existing arc's, in its order, then the new ones.
    let mut source_sessions: Vec<String> = existing.map(|arc| arc.source_sessions.clone()).unwrap_or_default();
    let mut seen: HashSet<String> = source_sessions.iter().cloned().collect();
    for member in &members {
        if seen.insert(member.session_id.clone()) {
            source_sessions.push(member.session_id.clone());
        }
    }
    // Summaries of the arc's other sessions come from the capture store.
    let member_ids: HashSet<&str> = members.iter().map(|s| s.session_id.as_str()).collect();
    let mut stored: Vec<SessionSummary> = Vec::new();
    let missing: Vec<&String> = source_sessions.iter().filter(|id| !member_ids.contains(id.as_str())).collect();
    if !missing.is_empty() {
        let mut shards: Vec<String> =
            members.iter().map(|s| store::shard_of(s.host, Path::new(&s.transcript))).collect();
        shards.dedup();
        stored.extend(missing.into_iter().filter_map(|id| lookup.get(id, &shards)).map(|state| state.summary));
    }
    let mut known: Vec<&SessionSummary> = members.iter().copied().chain(stored.iter()).collect();
    known.sort_by(|a, b| a.start.cmp(&b.start).then_with(|| a.session_id.cmp(&b.session_id)));

    let Some(first) = known.first().copied() else {
        return Err(BrainError::internal("an arc without sessions"));
    };
    let created = first.start.unwrap_or(now);
    let last_end = known.iter().filter_map(|s| s.end).max().unwrap_or(created);
    let title = cluster::title_of(&first.first_prompt);
    let (cluster_id, path) = match existing {
        Some(arc) => (arc.cluster_id.clone(), arc.path.clone()),
        None => {
            let ids: Vec<&str> = source_sessions.iter().map(String::as_str).collect();
            let id = cluster::cluster_id(created, &title, &ids);
            let path = clusters.join(cluster::date_of(created)).join(format!("{id}.md"));
            (id, path)
        }
    };
    let signals = Signals {
        errors: known.iter().map(|s| u64::from(s.error_markers)).sum(),
        joy: known.iter().map(|s| u64::from(s.joy_markers)).sum(),
        tools: known.iter().map(|s| u64::from(s.tool_calls)).sum(),
    };
    let status = cluster::status_of(last_end, now);
    let region = cluster::region_of(&known);
    let heat = cluster::heat_of(created, now, signals.tools, source_sessions.len(), signals.joy, status == "active");
    let branch = first.git_branch.clone();
    let content = ArcContent {
        cluster_id,
        title,
        region,
        status,
        heat,
        created,
        project: first.project.clone(),
        branch,
        source_sessions,
        sessions: known,
        signals,
        siblings,
    };
    let relative = path.strip_prefix(clusters).unwrap_or(&path).to_string_lossy().into_owned();
    let mut outcome = ArcOutcome {
        cluster_id: content.cluster_id.clone(),
        path: relative,
        action: ArcAction::Created,
        reason: None,
        sessions: content.source_sessions.len(),
        hosts: arc::hosts_of(&content.sessions).iter().map(|host| host.to_string()).collect(),
        title: content.title.clone(),
        region: content.region.to_string(),
        status: content.status.to_string(),
        heat: content.heat,
    };
    let write_error = |err: std::io::Error| BrainError::internal(format!("cannot write arc {}: {err}", path.display()));

    // Stamped before reading: an edit after this point is noticed before the rename.
    let stamp = file_stamp(&path);
    let before = match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(BrainError::internal(format!("cannot read arc {}: {err}", path.display()))),
    };
    let Some(before) = before else {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(write_error)?;
        }
        store::write_atomic(&path, arc::render_new(&content).as_bytes(), false).map_err(write_error)?;
        return Ok(outcome);
    };
    let skip = |mut outcome: ArcOutcome, reason: String| {
        outcome.action = ArcAction::Skipped;
        outcome.reason = Some(reason);
        Ok(outcome)
    };
    let Ok(text) = String::from_utf8(before) else {
        return skip(outcome, "the file is not valid UTF-8; not updated".into());
    };
    let (doc, _) = parse("", text.as_bytes(), DEFAULT_MAX_BYTES);
    if let Some(frontmatter) = &doc.frontmatter {
        outcome.title = frontmatter.title.clone().unwrap_or(outcome.title);
        outcome.region = frontmatter.region.map_or(outcome.region, |r| r.as_str().to_string());
        outcome.heat = frontmatter.heat.unwrap_or(outcome.heat);
    }
    let updated = match arc::update(&text, &doc, &content) {
        Ok(updated) => updated,
        Err(why) => return skip(outcome, format!("{why}; not updated")),
    };
    if let Some(status) = doc.frontmatter.as_ref().and_then(|fm| fm.status)
        && !arc::capture_owns_status(status)
    {
        outcome.status = status.as_str().to_string();
    }
    if updated == text {
        outcome.action = ArcAction::Unchanged;
        return Ok(outcome);
    }
    if file_stamp(&path) != stamp {
        return skip(outcome, "the file changed while capture was updating it; run capture again".into());
    }
    store::write_atomic(&path, updated.as_bytes(), true).map_err(write_error)?;
    outcome.action = ArcAction::Updated;
    Ok(outcome)
}

/// Size and modification time: enough to notice a concurrent edit.
fn file_stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.len(), metadata.modified().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arc(id: &str, project: &str, created: &str) -> NewArc {
        NewArc { cluster_id: id.into(), project: project.into(), created: created.parse().unwrap() }
    }

    #[test]
    fn siblings_are_the_nearest_arcs_of_the_project_within_the_window_once_each_and_bounded() {
        let at = |text: &str| text.parse::<Timestamp>().unwrap();
        let me = arc("me", "api", "2026-11-21T12:00:00Z");
        let mut peers: Vec<(&str, &str, Timestamp)> = vec![
            ("me", "api", at("2026-11-21T12:00:00Z")),
            ("far", "api", at("2026-11-22T12:00:01Z")),
            ("web", "web", at("2026-11-21T12:00:00Z")),
            ("b-hour", "api", at("2026-11-21T11:00:00Z")),
            ("a-hour", "api", at("2026-11-21T13:00:00Z")),
            ("a-hour", "api", at("2026-11-21T13:00:00Z")),
            ("edge", "api", at("2026-11-20T12:00:00Z")),
        ];
        assert_eq!(siblings(&me, &peers), ["a-hour", "b-hour", "edge"]);
        for (n, id) in ["p1", "p2", "p3", "p4", "p5", "p6"].into_iter().enumerate() {
            peers.push((id, "api", at(&format!("2026-11-21T12:0{n}:30Z"))));
        }
        assert_eq!(siblings(&me, &peers), ["p1", "p2", "p3", "p4", "p5"]);
        assert!(siblings(&arc("x", "", "2026-11-21T12:00:00Z"), &[("y", "", at("2026-11-21T12:00:00Z"))]).is_empty());
    }
}
