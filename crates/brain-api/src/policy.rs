//! Who may do what, decided in one place: the scope grants of a caller (a bearer token of
//! `brain serve`, or nobody in particular when no token is configured or the caller is the
//! local user) and the write policy of agents' writes (SPEC §2.1, §9). Adapters identify the
//! caller and pass it to a `Brain` method of this module (`remember_for`, `get_for`,
//! `set_status_for`, …); the method checks it against every scope it reads or writes and
//! every item it touches. REST, MCP over HTTP and MCP over stdio call the same methods, so a
//! rule cannot differ between them.
//!
//! Every valid token may read the `global` scope; anything else needs a grant: an exact scope
//! (`project/api`), a kind wildcard (`project/*`) or `*`. A write grant implies the read grant
//! of the same scopes, and a review grant the write grant.
//!
//! Under `write_policy = "draft"` agents' writes wait for review, and only a reviewer may
//! end the wait: approving an item, or changing, deprecating, superseding or archiving an
//! approved one, needs the review grant on its scope (an open caller — the local user, or a
//! server without tokens — reviews everything). A write token works on drafts only, so an
//! agent on another machine cannot approve its own writes or rewrite what a reviewer passed.

use std::sync::Arc;

use brain_core::{Item, ItemDraft, Scope, Status};
use brain_store::ItemFilter;

use crate::app::Brain;
use crate::error::{BrainError, BrainResult};

/// A scope pattern of a grant.
#[derive(Clone, Debug, PartialEq)]
enum ScopePattern {
    Any,
    /// `project/*`, `team/*`, `agent/*`.
    Kind(String),
    Exact(String),
}

impl ScopePattern {
    fn parse(text: &str, token: &str) -> BrainResult<ScopePattern> {
        let text = text.trim();
        if text == "*" {
            return Ok(ScopePattern::Any);
        }
        if let Some(kind) = text.strip_suffix("/*") {
            if matches!(kind, "project" | "team" | "agent") {
                return Ok(ScopePattern::Kind(kind.to_string()));
            }
        } else if let Ok(scope) = Scope::parse(text) {
            return Ok(ScopePattern::Exact(scope.to_string()));
        }
        Err(BrainError::Config {
            message: format!("[[serve.tokens]] {token:?}: invalid scope grant {text:?}"),
            hint: Some("use global, project/NAME, team/NAME, agent/NAME, project/*, team/*, agent/* or *".into()),
        })
    }

    fn matches(&self, scope: &str) -> bool {
        match self {
            ScopePattern::Any => true,
            ScopePattern::Kind(kind) => scope.split_once('/').is_some_and(|(prefix, _)| prefix == kind),
            ScopePattern::Exact(exact) => exact == scope,
        }
    }
}

/// The grants of one token: its name and the scopes it may read and write.
#[derive(Debug, PartialEq)]
pub struct Grants {
    pub name: String,
    read: Vec<ScopePattern>,
    write: Vec<ScopePattern>,
    review: Vec<ScopePattern>,
}

impl Grants {
    /// Parses the grants of token `name` (the syntax of `[[serve.tokens]]`).
    pub fn parse(name: &str, read: &[String], write: &[String], review: &[String]) -> BrainResult<Grants> {
        let parse = |list: &[String]| -> BrainResult<Vec<ScopePattern>> {
            list.iter().map(|text| ScopePattern::parse(text, name)).collect()
        };
        Ok(Grants { name: name.to_string(), read: parse(read)?, write: parse(write)?, review: parse(review)? })
    }
}

/// Who is calling: anyone (the local user, or a server without tokens), the local user's
/// agent over MCP stdio (`brain mcp`: every scope, but no review under the draft policy), or
/// the holder of a token with its grants.
#[derive(Clone, Debug)]
pub enum Caller {
    Open,
    Agent,
    Token(Arc<Grants>),
}

impl Caller {
    pub fn name(&self) -> &str {
        match self {
            Caller::Open => "anonymous",
            Caller::Agent => "agent",
            Caller::Token(grants) => &grants.name,
        }
    }

    /// The caller as a refusal names it.
    fn describe(&self) -> String {
        match self {
            Caller::Open => "anyone".into(),
            Caller::Agent => "an agent over MCP stdio".into(),
            Caller::Token(grants) => format!("token {:?}", grants.name),
        }
    }

    /// The local user or their agent: the whole store is theirs to see (its folders, every
    /// scope listed at once).
    pub fn is_local(&self) -> bool {
        matches!(self, Caller::Open | Caller::Agent)
    }

    pub fn can_read(&self, scope: &Scope) -> bool {
        match self {
            Caller::Open | Caller::Agent => true,
            Caller::Token(grants) => {
                let scope = scope.to_string();
                scope == "global"
                    || grants
                        .read
                        .iter()
                        .chain(&grants.write)
                        .chain(&grants.review)
                        .any(|pattern| pattern.matches(&scope))
            }
        }
    }

    pub fn can_write(&self, scope: &Scope) -> bool {
        match self {
            Caller::Open | Caller::Agent => true,
            Caller::Token(grants) => {
                let scope = scope.to_string();
                grants.write.iter().chain(&grants.review).any(|pattern| pattern.matches(&scope))
            }
        }
    }

    /// Whether the caller may end the review of items of `scope` (see the module's text).
    pub fn can_review(&self, scope: &Scope) -> bool {
        match self {
            Caller::Open => true,
            Caller::Agent => false,
            Caller::Token(grants) => {
                let scope = scope.to_string();
                grants.review.iter().any(|pattern| pattern.matches(&scope))
            }
        }
    }

    pub fn require_read(&self, scope: &Scope) -> BrainResult<()> {
        if self.can_read(scope) {
            return Ok(());
        }
        Err(BrainError::Forbidden { message: format!("token {:?} may not read {scope}", self.name()) })
    }

    pub fn require_write(&self, scope: &Scope) -> BrainResult<()> {
        if self.can_write(scope) {
            return Ok(());
        }
        Err(BrainError::Forbidden { message: format!("token {:?} may not write {scope}", self.name()) })
    }

    /// The write check, and the review check ([`ReviewRule`]) when the item is approved or the
    /// change approves it (`approves`): a guard for `Brain`'s guarded updates, run inside the
    /// transaction on the item as stored (and on the changed item), so an id of another scope
    /// is refused whatever the request says.
    fn change_guard(&self, rule: ReviewRule, approves: bool) -> impl Fn(&Item) -> BrainResult<()> + Send + 'static {
        let caller = self.clone();
        move |item: &Item| {
            caller.require_write(&item.scope)?;
            if (approves || item.status == Status::Approved) && rule.needed(&caller, &item.scope) {
                return Err(BrainError::Forbidden {
                    message: format!(
                        "{} may not {} items of {}{}: that is a reviewer's (the review grant of a token, or `brain \
                         approve`)",
                        caller.describe(),
                        if approves { "approve" } else { "change approved" },
                        item.scope,
                        rule.why(&caller, &item.scope)
                    ),
                });
            }
            Ok(())
        }
    }

    /// The read check as a guard.
    pub fn read_guard(&self) -> impl Fn(&Item) -> BrainResult<()> + Send + 'static {
        let caller = self.clone();
        move |item: &Item| caller.require_read(&item.scope)
    }
}

/// When ending a review (approving, changing an approved item, writing into the vault) needs
/// a reviewer: under `write_policy = "draft"` always; for the agent over MCP stdio also
/// outside its project under any policy — its approved writes stay in its project, so a
/// page it read cannot make it raise a signal in `global` or rewrite another project.
#[derive(Clone)]
struct ReviewRule {
    draft_policy: bool,
    project: Scope,
}

impl ReviewRule {
    fn needed(&self, caller: &Caller, scope: &Scope) -> bool {
        !caller.can_review(scope) && (self.draft_policy || (matches!(caller, Caller::Agent) && *scope != self.project))
    }

    /// The refusal's reason, after the scope.
    fn why(&self, caller: &Caller, scope: &Scope) -> String {
        if matches!(caller, Caller::Agent) && *scope != self.project {
            format!(" (an agent's approved writes stay in {})", self.project)
        } else {
            " under write_policy = \"draft\"".to_string()
        }
    }
}

/// Checks the scope grants of a token about to be stored (the syntax of `[[serve.tokens]]`).
pub fn check_grants(name: &str, read: &[String], write: &[String], review: &[String]) -> BrainResult<()> {
    Grants::parse(name, read, write, review).map(|_| ())
}

impl Brain {
    /// The status an agent's new item gets: the configured `write_policy`. A draft may ask
    /// for `draft` (stricter); under `write_policy = "draft"` it may not ask for `approved`,
    /// and no agent write lands deprecated, superseded or archived.
    fn agent_status(&self, caller: &Caller, scope: &Scope, requested: Option<&str>) -> BrainResult<Status> {
        // The agent over MCP stdio writes drafts outside its project (see [`ReviewRule`]).
        let policy = if self.review_rule().needed(caller, scope) { Status::Draft } else { self.config.write_policy };
        let Some(text) = requested else { return Ok(policy) };
        let status: Status = text.trim().parse().map_err(|err: String| BrainError::user(err))?;
        match status {
            Status::Draft => Ok(Status::Draft),
            Status::Approved if policy == Status::Approved => Ok(Status::Approved),
            // A reviewer's own item needs no second look.
            Status::Approved if matches!(caller, Caller::Token(_)) && caller.can_review(scope) => Ok(Status::Approved),
            Status::Approved => Err(BrainError::Forbidden {
                message: "the write policy makes agents' new items drafts (write_policy = \"draft\"): \
                          write it without status, then approve it (a token needs the review grant to)"
                    .into(),
            }),
            other => Err(BrainError::user(format!("a new item cannot be {other}: write it as draft or approved"))),
        }
    }

    /// An agent's new item (MCP `brain_remember`, `POST /api/v2/items`): its scope (default
    /// the current project) must be writable by `caller`, its status follows the write policy
    /// (`agent_status`), and it is redacted and validated like every write.
    pub fn remember_for(&self, caller: &Caller, mut draft: ItemDraft, source: &str) -> BrainResult<Item> {
        let scope = match draft.scope.as_deref() {
            Some(text) => Scope::parse(text.trim()).map_err(|err| BrainError::user(format!("invalid scope: {err}")))?,
            None => self.project_scope(),
        };
        caller.require_write(&scope)?;
        refuse_vault_source(draft.source.as_deref())?;
        refuse_store_owned(&draft, true)?;
        draft.scope = Some(scope.to_string());
        draft.status = Some(self.agent_status(caller, &scope, draft.status.as_deref())?.to_string());
        self.remember(draft, source)
    }

    /// One item, if `caller` may read its scope.
    pub fn get_for(&self, caller: &Caller, id: &str) -> BrainResult<Item> {
        let item = self.get(id)?;
        caller.require_read(&item.scope)?;
        Ok(item)
    }

    /// `edit_guarded` with `caller`'s write grant on the item, before and after the change
    /// (a draft may not move an item into a scope the caller cannot write).
    pub fn edit_for(
        &self,
        caller: &Caller,
        id: &str,
        draft: &ItemDraft,
        expected_version: Option<u64>,
    ) -> BrainResult<Item> {
        refuse_vault_source(draft.source.as_deref())?;
        refuse_store_owned(draft, false)?;
        let approves =
            draft.status.as_deref().and_then(|status| status.trim().parse::<Status>().ok()) == Some(Status::Approved);
        self.edit_guarded(id, draft, expected_version, &caller.change_guard(self.review_rule(), approves))
    }

    fn draft_policy(&self) -> bool {
        self.config.write_policy == Status::Draft
    }

    fn review_rule(&self) -> ReviewRule {
        ReviewRule { draft_policy: self.draft_policy(), project: self.project_scope() }
    }

    /// Whether `caller` may write a block into the vault for `scope` (MCP `brain_mark`, `POST
    /// /api/v2/markers`): the write grant, and under `write_policy = "draft"` the review
    /// grant, since what the vault holds is approved by construction.
    pub fn authorize_mark_for(&self, caller: &Caller, scope: &Scope) -> BrainResult<()> {
        caller.require_write(scope)?;
        let rule = self.review_rule();
        if !rule.needed(caller, scope) {
            return Ok(());
        }
        let message = if matches!(caller, Caller::Agent) && *scope != rule.project {
            format!(
                "an agent over MCP writes vault blocks to arcs of {} only, not {scope} (the vault's items are \
                 approved; `brain mark` is the user's)",
                rule.project
            )
        } else {
            format!(
                "{} may not write blocks for {scope} into the vault under write_policy = \"draft\" (the vault's \
                 items are approved): that is a reviewer's (the review grant of a token)",
                caller.describe()
            )
        };
        Err(BrainError::Forbidden { message })
    }

    /// Whether `caller` may push a change into `scope` by sync: the write grant, and under
    /// `write_policy = "draft"` the review grant (a push carries statuses as sent).
    pub fn may_push_for(&self, caller: &Caller, scope: &Scope) -> bool {
        caller.can_write(scope) && !self.review_rule().needed(caller, scope)
    }

    /// A status change (approve, deprecate) of an item `caller` may write.
    pub fn set_status_for(
        &self,
        caller: &Caller,
        id: &str,
        status: Status,
        expected_version: Option<u64>,
    ) -> BrainResult<Item> {
        let guard = caller.change_guard(self.review_rule(), status == Status::Approved);
        self.set_status_guarded(id, status, expected_version, &guard)
    }

    /// Archives (or with `hard` erases) an item `caller` may write.
    pub fn forget_for(
        &self,
        caller: &Caller,
        id: &str,
        hard: bool,
        expected_version: Option<u64>,
    ) -> BrainResult<Option<Item>> {
        self.forget_guarded(id, hard, expected_version, &caller.change_guard(self.review_rule(), false))
    }

    /// Marks `old` superseded by `new`: both items change, so `caller` needs the write grant
    /// on both (checked in the transaction, on the items as stored).
    pub fn supersede_for(&self, caller: &Caller, old_id: &str, new_id: &str) -> BrainResult<(Item, Item)> {
        self.supersede_guarded(old_id, new_id, None, None, &caller.change_guard(self.review_rule(), false))
    }

    /// The scopes a session of `caller` sees: global and the current project, those it may read.
    pub fn readable_scopes_for(&self, caller: &Caller) -> Vec<Scope> {
        self.visible_scopes().into_iter().filter(|scope| caller.can_read(scope)).collect()
    }

    /// The filter of agents' searches: approved items of the scopes `caller` may read.
    pub fn agent_search_filter_for(&self, caller: &Caller) -> ItemFilter {
        ItemFilter {
            scopes: Some(self.readable_scopes_for(caller)),
            statuses: vec![Status::Approved],
            ..ItemFilter::default()
        }
    }

    /// Items matching `filter`, each of whose scopes `caller` must be able to read (a filter
    /// without scopes means every scope, which only an open caller may list).
    pub fn list_for(&self, caller: &Caller, filter: &ItemFilter) -> BrainResult<Vec<Item>> {
        self.require_filter_readable(caller, filter)?;
        self.list(filter)
    }

    /// How many items match `filter`, under the same rule as `list_for`.
    pub fn count_for(&self, caller: &Caller, filter: &ItemFilter) -> BrainResult<u64> {
        self.require_filter_readable(caller, filter)?;
        self.count(filter)
    }

    fn require_filter_readable(&self, caller: &Caller, filter: &ItemFilter) -> BrainResult<()> {
        match (&filter.scopes, caller) {
            (None, Caller::Open | Caller::Agent) => Ok(()),
            (None, Caller::Token(grants)) => Err(BrainError::Forbidden {
                message: format!("token {:?} may not list every scope: name the scopes", grants.name),
            }),
            (Some(scopes), _) => scopes.iter().try_for_each(|scope| caller.require_read(scope)),
        }
    }

    /// The layered brain document of the current project, for a caller who may read it.
    pub fn brain_document_for(
        &self,
        caller: &Caller,
        options: &brain_core::assemble::BrainOptions,
    ) -> BrainResult<brain_core::assemble::BrainDocument> {
        caller.require_read(&self.project_scope())?;
        self.brain_document(options)
    }

    /// The working memory of the current project (`session_start`), for a caller who may
    /// read the project.
    pub fn session_start_for(
        &self,
        caller: &Caller,
        request: &crate::app::SessionRequest,
    ) -> BrainResult<brain_core::assemble::session::SessionStart> {
        caller.require_read(&self.project_scope())?;
        self.session_start(request)
    }
}

/// The fields the store keeps for itself: an item's id, its use bookkeeping, its counters
/// and its version. An API caller that set them made an item "recently used" for good, or
/// pushed a version past the largest sync carries, which stopped every client's sync for
/// good (a hostile review). Refused, naming the field; `brain import` keeps them, for the
/// user's own exports.
pub fn refuse_store_owned(draft: &ItemDraft, new: bool) -> BrainResult<()> {
    refuse_fields(&[
        ("id", new && draft.id.is_some()),
        ("last_accessed_at", draft.last_accessed_at.is_some()),
        ("access_count", draft.access_count.is_some()),
        ("review_count", draft.review_count.is_some()),
        ("tokens", draft.tokens.is_some()),
        ("version", draft.version.is_some()),
    ])
}

/// The clock's fields of a draft (`created_at`, `updated_at`, `review_due_at`), refused
/// where a write may not name its clock (a server on the wall clock: see `?now=`): a write
/// dated 9999 came first in every newest-first list, and a signal dated so never went stale.
pub fn refuse_dated(draft: &ItemDraft) -> BrainResult<()> {
    refuse_fields(&[
        ("created_at", draft.created_at.is_some()),
        ("updated_at", draft.updated_at.is_some()),
        ("review_due_at", draft.review_due_at.is_some()),
    ])
}

fn refuse_fields(set: &[(&str, bool)]) -> BrainResult<()> {
    match set.iter().find(|(_, given)| *given) {
        Some((field, _)) => Err(BrainError::user(format!(
            "{field} is kept by the store and cannot be set by this write: leave it out (an edit's version goes \
             in If-Match)"
        ))),
        None => Ok(()),
    }
}

/// A source of `vault:…` marks an item the vault indexer derived from a file: read-only
/// everywhere but in that file. An agent's write (API, MCP, a sync push) that named one made
/// an item nobody could edit, deprecate or unpin — a pinned one was first in every session
/// start for good. Only the indexer writes such sources.
pub fn refuse_vault_source(source: Option<&str>) -> BrainResult<()> {
    match source {
        Some(source) if source.trim_start().starts_with("vault:") => Err(BrainError::user(format!(
            "source {:?} is reserved for items brain derives from the vault",
            brain_core::keeper::text::clip(source, 80)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(read: &[&str], write: &[&str]) -> Caller {
        let list = |items: &[&str]| items.iter().map(|item| item.to_string()).collect::<Vec<_>>();
        Caller::Token(Arc::new(Grants::parse("t", &list(read), &list(write), &[]).unwrap()))
    }

    #[test]
    fn grants_match_exact_scopes_kinds_and_everything() {
        let api = Scope::parse("project/api").unwrap();
        let web = Scope::parse("project/web").unwrap();
        let team = Scope::parse("team/core").unwrap();
        let a = caller(&["project/api"], &[]);
        assert!(a.can_read(&api) && !a.can_read(&web) && a.can_read(&Scope::Global));
        assert!(!a.can_write(&api) && !a.can_write(&Scope::Global));
        let b = caller(&[], &["project/*"]);
        assert!(b.can_write(&api) && b.can_write(&web) && b.can_read(&web) && !b.can_write(&team));
        assert!(!b.can_write(&Scope::Global));
        let c = caller(&["*"], &["*"]);
        assert!(c.can_write(&team) && c.can_write(&Scope::Global));
        assert!(Caller::Open.can_write(&team));
    }

    #[test]
    fn bad_grants_are_config_errors() {
        let err = Grants::parse("a", &["project/../x".into()], &[], &[]).unwrap_err();
        assert!(err.to_string().contains("invalid scope grant"), "{err}");
        assert!(Grants::parse("a", &[], &["team/".into()], &[]).is_err());
        assert!(Grants::parse("a", &[], &[], &["nope/*".into()]).is_err());
    }
}
