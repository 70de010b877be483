//! The context assembler: plans of budgeted sections (SPEC §4).
//!
//! One engine ([`engine::assemble`]) takes a [`Plan`] — a total budget, an optional header
//! and footer, and ordered [`Section`]s, each with its entries (the selector's result), an
//! [`Order`], a renderer, a cap and a truncation rule — and returns the document, a
//! [`BudgetReport`] and the [`Overflow`] list. Unused budget of a section flows to the
//! next; a [`Source::Continue`] section gives an earlier section's leftovers a second
//! chance. The document never exceeds the budget under the given counter (see the engine
//! docs for how that holds for non-additive BPE counts).
//!
//! Profiles are plans, with no budget logic of their own:
//! - `brain` ([`brain_document`], SPEC §4.1): see [`brain`] for the plan table.
//! - `claude-md` ([`claude_md_summary`], [`upsert_managed_block`], SPEC §4.4).
//! - `session-start` (SPEC §4.2), to be added as a plan: budget
//!   `working_memory_budget_tokens`; sections `pins` (cap `pin_budget`, entries ranked by
//!   pin_priority, strength, id as one rank key or pre-sorted with `Order::AsGiven`),
//!   `skills` (cap `skills_budget`, name + description entries), `feed` (hot arcs and
//!   signals, critical first — [`feed`]'s ordering), `recall` (cap `recall_budget`, the
//!   top N recalled items; the `[1,3,5,4,2]` reordering is applied to the entries before
//!   the plan, with `Order::AsGiven`). Per SPEC "cap `min(budget, remaining)`" maps to
//!   `Section::cap` + `without_inflow()` where flow is not wanted. `max_chars` for the
//!   text form: assemble, then check characters the same way (or count with a character
//!   counter) — the engine's guarantee is per counter.
//! - `agent` (SPEC §4.3), to be added as a plan: budget 16,000; sections Identity and
//!   Instructions (one entry each, `Truncation::Never`, cap `usize::MAX`), Team Goals /
//!   Context / Rules (cap `usize::MAX`: "remaining budget"), Recent Activity (3000, one
//!   entry per daily file newest first, `### YYYY-MM-DD` in the text), Team Knowledge,
//!   Personal Memories, Knowledge Base (2000 each); every section `without_inflow()` and
//!   `with_truncation(AGENT_TRUNCATION_MARKER)` except the never-truncated files; headings
//!   `## <Label>`; memory entries render `- [<kind>] <content>`.

pub mod agent;
pub mod brain;
pub mod classify;
pub mod claude_md;
pub mod engine;
pub mod feed;
pub mod fixtures;
mod interner;
pub mod lean;
mod render;
pub mod session;

#[cfg(test)]
mod tests;

pub use brain::{
    ArchivedItems, BrainDocument, BrainOptions, DEFAULT_TOKEN_BUDGET, LayerBudgets, LayerItems, LayerTokens, Layers,
    TreeNode, TreeStates, brain_document, brain_hash, schema_tree, schema_tree_from_counts,
};
pub use classify::{ArchiveReason, ArchiveThresholds, Tier, score, tier};
pub use claude_md::{
    BLOCK_END, BLOCK_START, ClaudeMdOptions, ClaudeMdSummary, claude_md_summary, upsert_managed_block,
};
pub use engine::{
    Assembled, BudgetReport, Entry, Group, Label, Order, Overflow, Plan, Section, SectionBudget, Source, Truncation,
    assemble,
};
pub use feed::{Feed, FeedSignal, HotArc, InjectBlock};
pub use lean::{ItemMeta, LeanAssembly, MissingItems, brain_document_lean, claude_md_summary_lean, text_candidates};
pub use render::inert;
