//! What a session is handed: the brain document and its `CLAUDE.md` block, the session
//! start (pins, the vault feed, signals, skills and recalled items within their budgets) and
//! the options and budgets both take from config. Methods of [`Brain`], apart from `app`
//! because they read the vault feed and the signals, which read items through `Brain`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use brain_core::assemble::session::{
    LowConfidenceAlert, Recalled, SessionBudgets, SessionInput, SessionStart, SkillEntry, session_start,
};
use brain_core::assemble::{
    ArchiveThresholds, BrainDocument, BrainOptions, ClaudeMdSummary, Feed, LeanAssembly, MissingItems,
    upsert_managed_block,
};
use brain_core::{Item, Status};
use brain_store::{Access, ItemFilter};

use crate::app::{Brain, BudgetOverrides, InjectOutcome, SESSION_CONFIG_FILE, SessionRequest};
use crate::error::{BrainError, BrainResult};
use crate::fsio::write_atomically;
use crate::read_cache::{RecallCandidate, SessionParts};

/// Candidates considered for recall before scoring.
const RECALL_CANDIDATES: usize = 50;
/// Items the project's sessions used lately, added to a recall without words.
const RECENTLY_USED: usize = 20;

impl Brain {
    /// Brain document options: config, then the caller's overrides. A total budget given
    /// alone rescales the layers unless config pins them.
    pub fn brain_options(&self, overrides: &BudgetOverrides) -> BrainOptions {
        let config = &self.config.brain;
        BrainOptions {
            token_budget: overrides.token_budget.unwrap_or(config.token_budget),
            layer0: overrides.layer0.or(config.layer0),
            layer1: overrides.layer1.or(config.layer1),
            layer2: overrides.layer2.or(config.layer2),
            thresholds: ArchiveThresholds {
                low_confidence: config.low_confidence,
                low_confidence_age_days: config.low_confidence_days,
                implementation_age_days: config.implementation_max_days,
                fixed_bug_age_days: config.fixed_bug_max_days,
            },
            title: format!("Project Brain: {}", self.project),
            ..BrainOptions::default()
        }
    }

    /// The vault feed of the project (hot arcs, signals, inject blocks). Empty until a vault
    /// is indexed.
    pub fn feed(&self) -> Feed {
        // One indexed read of the feed state the last scan or tick stored; no vault walk.
        crate::feed_index::indexed_feed(self)
    }

    /// The layered brain document (SPEC §4.1).
    pub fn brain_document(&self, options: &BrainOptions) -> BrainResult<BrainDocument> {
        let feed = self.feed();
        self.lean_assembly(options, options.include_tree, |lean, full| {
            lean.brain_document(full, &self.counter, options, &feed)
        })
    }

    /// The claude-md summary (SPEC §4.4) with the inject blocks meant for `target`.
    pub fn claude_md(&self, options: &BrainOptions, target: &str) -> BrainResult<ClaudeMdSummary> {
        let feed = self.feed();
        let injects: Vec<_> = feed.injects.into_iter().filter(|block| block.targets(target)).collect();
        self.lean_assembly(options, false, |lean, full| lean.claude_md_summary(full, &self.counter, options, &injects))
    }

    /// Assembles over every item of the scopes a session sees (global + project, any
    /// status: drafts and archived items count in the tree and the archive) without
    /// loading them all in full: the metas of all, then full items only for what the
    /// assembly renders (see `brain_core::assemble::lean`). One read transaction, so the
    /// metas and the full items come from the same snapshot; one pass over the metas, kept
    /// across the rounds.
    fn lean_assembly<T>(
        &self,
        options: &BrainOptions,
        with_tree: bool,
        assemble: impl Fn(&LeanAssembly<'_>, &HashMap<usize, Item>) -> Result<T, MissingItems>,
    ) -> BrainResult<T> {
        let scopes = self.visible_scopes();
        let assembled = self.store.read(|read| {
            let metas = read.list_metas(&scopes)?;
            let lean = LeanAssembly::new(&metas, self.now, options, with_tree);
            let mut full: HashMap<usize, Item> = HashMap::new();
            let mut wanted = lean.text_candidates(options);
            loop {
                let positions: HashMap<&str, usize> =
                    wanted.iter().map(|&index| (metas[index].id.as_str(), index)).collect();
                let ids: Vec<&str> = positions.keys().copied().collect();
                for item in read.get_many(&ids)? {
                    if let Some(&index) = positions.get(item.id.as_str()) {
                        full.insert(index, item);
                    }
                }
                // The snapshot holds every listed item; one not found would be asked for again
                // and again.
                if let Some(&lost) = wanted.iter().find(|index| !full.contains_key(index)) {
                    return Ok(Err(metas[lost].id.clone()));
                }
                match assemble(&lean, &full) {
                    Ok(assembled) => return Ok(Ok(assembled)),
                    // Never any of `full`: each round fetches more, so the loop ends.
                    Err(MissingItems(missing)) => wanted = missing,
                }
            }
        })?;
        assembled.map_err(|id| BrainError::internal(format!("item {id} was listed but could not be read")))
    }

    /// Writes the managed block into `path` (created when missing), preserving every byte
    /// outside the block, atomically; a second run with the same state writes nothing.
    pub fn inject(&self, path: &Path, options: &BrainOptions) -> BrainResult<InjectOutcome> {
        let target = path.file_name().and_then(|name| name.to_str()).unwrap_or("CLAUDE.md");
        let summary = self.claude_md(options, target)?;
        let existing = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                BrainError::user(format!("{} is not valid UTF-8; refusing to rewrite it", path.display()))
            })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(err) => return Err(BrainError::user(format!("cannot read {}: {err}", path.display()))),
        };
        let updated = upsert_managed_block(&existing, &summary.document);
        let outcome = InjectOutcome {
            path: path.display().to_string(),
            changed: updated != existing,
            tokens: summary.token_estimate,
        };
        if outcome.changed {
            write_atomically(path, updated.as_bytes())?;
        }
        Ok(outcome)
    }

    /// The session-start budgets from `<home>/config.json`, created with the defaults when
    /// missing (the one file reading configuration may write, SPEC §4.2). A corrupt file
    /// falls back to the defaults with a warning on stderr.
    pub fn session_budgets(&self) -> SessionBudgets {
        let path = self.home.join(SESSION_CONFIG_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|err| {
                eprintln!("warning: {} is invalid ({err}); using the default budgets", path.display());
                SessionBudgets::default()
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let defaults = SessionBudgets::default();
                let text = serde_json::to_string_pretty(&defaults).unwrap_or_default() + "\n";
                if let Err(err) = write_atomically(&path, text.as_bytes()) {
                    eprintln!("warning: cannot create {}: {err}", path.display());
                }
                defaults
            }
            Err(err) => {
                eprintln!("warning: cannot read {} ({err}); using the default budgets", path.display());
                SessionBudgets::default()
            }
        }
    }

    /// The working memory for a session start (SPEC §4.2): pins, the skills index, the vault
    /// feed and recalled items within the budgets, plus review and confidence alerts.
    /// Returned items are reinforced, without ever waiting on another writer.
    pub fn session_start(&self, request: &SessionRequest) -> BrainResult<SessionStart> {
        let mut budgets = self.session_budgets();
        if let Some(total) = request.token_budget {
            let configured = budgets.working_memory_budget_tokens.max(1);
            let scale = |part: usize| part.saturating_mul(total) / configured;
            budgets = SessionBudgets {
                working_memory_budget_tokens: total,
                pin_budget_tokens: scale(budgets.pin_budget_tokens),
                skills_index_budget_tokens: scale(budgets.skills_index_budget_tokens),
                recall_budget_tokens: scale(budgets.recall_budget_tokens),
            };
        }
        let now = self.now;
        let query =
            [request.topics.as_deref(), request.task.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
        // The store's reads, kept by a server between changes: the stamp is read first, so
        // whatever is read after it (or was kept at the same stamp) includes every write
        // committed before this session start began, through any process.
        let (parts, candidates) = match &self.reads {
            Some(cache) => {
                let stamp = self.store.read_stamp()?;
                let parts = cache.session(stamp, &self.project, now.as_second(), || self.session_parts())?;
                let candidates = cache.recall(stamp, &self.project, &query, || self.recall_candidates(&query))?;
                (parts, candidates)
            }
            None => (Arc::new(self.session_parts()?), Arc::new(self.recall_candidates(&query)?)),
        };
        // Signals reach a session start as signals (`parts.signals`: the active ones, in a
        // share of the budget of their own), never a second time as ordinary memories; a
        // resolved or stale one is history, not context.
        // What sessions did with an item moves its score (`crate::usage`): within bounds,
        // and only for tasks like those it was given for.
        let mut scored: Vec<(&Item, f64, &str, &brain_core::usage::Learned)> = candidates
            .iter()
            .filter(|(item, _, _, _)| !item.pinned && item.kind != brain_core::Kind::Signal)
            .map(|(item, relevance, matched, learned)| {
                (item, crate::recall::recall_score(item, *relevance, now) * learned.factor, matched.as_str(), learned)
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
        scored.truncate(request.top.max(1));
        let recalled: Vec<Recalled<'_>> = scored
            .iter()
            .map(|(item, score, matched, learned)| {
                let mut why = crate::recall::why(item, matched, now);
                if !learned.why.is_empty() {
                    why.push_str("; ");
                    why.push_str(&learned.why);
                }
                Recalled { item, score: *score, why }
            })
            .collect();
        let skills: Vec<SkillEntry> = crate::skills::list(&self.home)
            .into_iter()
            .map(|skill| SkillEntry { name: skill.name, description: skill.description })
            .collect();
        let pins = &parts.pins;
        let input = SessionInput {
            project: &self.project,
            memory_count: parts.memory_count,
            pins: pins.iter().collect(),
            skills: &skills,
            feed: &parts.feed,
            signals: &parts.signals,
            recalled,
            due_for_review: parts.due_for_review,
            low_confidence_alerts: parts.low_confidence_alerts.clone(),
        };
        let payload = fit_bytes(request, |max_chars| session_start(&input, &self.counter, &budgets, max_chars, 50));
        // Being returned is recorded (count, time) but reinforces nothing: an item's strength
        // keeps decaying until a session uses it (`crate::usage`). Bookkeeping never blocks a
        // session start.
        let returned: Vec<Access> = pins
            .iter()
            .filter(|item| payload.pinned.iter().any(|p| p.id == item.id))
            .chain(
                scored
                    .iter()
                    .map(|(item, _, _, _)| *item)
                    .filter(|item| payload.context_recall.iter().any(|r| r.id == item.id)),
            )
            .map(|item| Access { id: item.id.clone(), strength: Some(crate::recall::effective_strength(item, now)) })
            .collect();
        if self.record_reads {
            crate::access_log::append(&self.home, &returned, now);
        }
        if crate::access_log::is_large(&self.home) {
            self.fold_access_log();
        }
        Ok(payload)
    }

    /// What a session start reads besides its recall (see `SessionParts`).
    fn session_parts(&self) -> BrainResult<SessionParts> {
        let now = self.now;
        let approved = self.approved_filter();
        let pins: Vec<Item> = self
            .store
            .list(&approved(ItemFilter { pinned: Some(true), ..ItemFilter::default() }))?
            .into_iter()
            .filter(|item| !item.is_expired(now))
            .collect();
        // One read of the stored vault feed gives its hot arcs and its signals; the signal
        // items are one filtered read (the one signal model: `crate::signals`).
        let (feed, vault_signals) = crate::feed_index::indexed_session_feed(self);
        let signals =
            crate::signals::merge(crate::signals::item_signals(self, Some(self.visible_scopes()))?, vault_signals);
        let memory_count = self.store.count(&approved(ItemFilter::default()))?;
        let due_for_review =
            self.store.count(&approved(ItemFilter { review_due_by: Some(now), ..ItemFilter::default() }))? as usize;
        let low_confidence_alerts = self
            .store
            .list(&approved(ItemFilter {
                min_access_count: Some(3),
                confidence_below: Some(0.5),
                limit: Some(10),
                ..ItemFilter::default()
            }))?
            .into_iter()
            .map(|item| LowConfidenceAlert {
                id: item.id,
                title: item.title,
                confidence: item.confidence,
                access_count: item.access_count,
            })
            .collect();
        Ok(SessionParts { pins, feed, signals, memory_count, due_for_review, low_confidence_alerts })
    }

    /// Approved items of the session's scopes, and whatever else `extra` asks.
    fn approved_filter(&self) -> impl Fn(ItemFilter) -> ItemFilter {
        let scopes = Some(self.visible_scopes());
        move |extra: ItemFilter| ItemFilter { scopes: scopes.clone(), statuses: vec![Status::Approved], ..extra }
    }

    /// The recall candidates of a session start for `query` (its topics and task): the
    /// lexical search's best, or without words the project's recent items.
    fn recall_candidates(&self, query: &str) -> BrainResult<Vec<RecallCandidate>> {
        let candidate_filter =
            self.approved_filter()(ItemFilter { limit: Some(RECALL_CANDIDATES), ..ItemFilter::default() });
        let parsed = brain_core::search::Query::parse(query);
        if parsed.is_empty() {
            // No words: the project's most relevant recent items, and those its sessions used
            // lately (learning from use: `crate::usage`).
            let mut items = self.store.list(&candidate_filter)?;
            if self.learns_from_use() {
                let scopes = self.visible_scopes();
                for id in self.store.recently_used(&self.project, RECENTLY_USED)? {
                    if items.iter().any(|item| item.id == id) {
                        continue;
                    }
                    if let Some(item) = self.store.get(&id)?
                        && item.status == Status::Approved
                        && scopes.contains(&item.scope)
                        && !item.is_expired(self.now)
                    {
                        items.push(item);
                    }
                }
            }
            let learned = self.learned_for(items.iter(), query)?;
            return Ok(items
                .into_iter()
                .zip(learned)
                .map(|(item, learned)| (item, 0.0, String::new(), learned))
                .collect());
        }
        // An item matched only by the task's generic words ("fix", "bug") or a schema key is
        // noise in a session's budget: fewer items are better than those.
        let hits: Vec<crate::search::Hit> =
            crate::search::lexical(&self.store, &parsed, &candidate_filter, RECALL_CANDIDATES)?
                .into_iter()
                .filter(|hit| !hit.generic_only)
                .collect();
        let best = hits.iter().map(|hit| hit.score).fold(0.0_f64, f64::max);
        let learned = self.learned_for(hits.iter().map(|hit| &hit.item), query)?;
        Ok(hits
            .into_iter()
            .zip(learned)
            .map(|(hit, learned)| (hit.item, if best > 0.0 { hit.score / best } else { 0.0 }, hit.why, learned))
            .collect())
    }
}

/// The session start `assemble` gives for `request`'s character cap, narrowed until its text
/// fits `request.max_bytes` (multi-byte text under a byte cap). Assembling is pure: the reads
/// before it and the reinforcement after it happen once, whatever the passes.
fn fit_bytes(request: &SessionRequest, assemble: impl Fn(Option<usize>) -> SessionStart) -> SessionStart {
    let mut max_chars = request.max_chars.or(request.max_bytes);
    loop {
        let start = assemble(max_chars);
        let (Some(max_bytes), Some(chars)) = (request.max_bytes, max_chars) else { return start };
        if start.text.len() <= max_bytes || chars == 0 {
            return start;
        }
        let scaled = (chars as u128 * max_bytes as u128 / start.text.len() as u128) as usize;
        max_chars = Some(scaled.min(chars - 1));
    }
}
