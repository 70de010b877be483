//! The one assembly engine: a [`Plan`] of budgeted sections in, a document, its budget
//! report and its overflow list out (SPEC §4). Profiles only build plans.
//!
//! How "never over budget" is kept, under any counter:
//! 1. The document is a concatenation of *pieces*: the header, section headings, group
//!    headings, entries and the footer, each carrying its own separators. A piece is
//!    counted whole, separators included, when it is placed.
//! 2. A section places pieces while the sum of their counts stays within its budget;
//!    section budgets never add up to more than what remains of the total.
//! 3. Sums of piece counts are exact upper bounds only for sub-additive counters (the
//!    heuristic). BPE counts are not additive, so the engine finally counts the real,
//!    composed document; if it is ever over, it drops placed entries from the end of the
//!    assembly order (binary search on how many to keep, every candidate recounted whole),
//!    then the footer, then the header. The empty document always fits.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::tokens::{TokenCounter, fit_prefix};

/// Renders the entry with the given key (the caller's index) to its text, without a
/// trailing newline. Called lazily, only for entries the engine considers placing.
pub type Renderer<'a> = Box<dyn Fn(usize) -> String + 'a>;

/// Names the group (sub-heading) an entry is shown under. Called lazily like [`Renderer`].
pub type Grouper<'a> = Box<dyn Fn(usize) -> Group + 'a>;

/// After this many consecutive entries that do not fit, a section stops looking: bounded
/// work on huge stores once a section is (nearly) full. What is not looked at is reported
/// as over budget like everything else that did not fit.
pub const MAX_CONSECUTIVE_MISSES: usize = 32;

/// A truncated entry keeps at least this many tokens besides the marker; smaller room is
/// left unused rather than filled with a stub.
pub const MIN_TRUNCATED_TOKENS: usize = 8;

/// How an entry is named in the overflow list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label<'a> {
    /// An item id (`overflow[].id`).
    Id(&'a str),
    /// Anything else: a brief line, a feed entry, a file (`overflow[].name`).
    Name(&'a str),
}

impl<'a> Label<'a> {
    pub fn as_str(&self) -> &'a str {
        match self {
            Label::Id(text) | Label::Name(text) => text,
        }
    }
}

/// One candidate of a section. The engine never looks inside it: `key` goes back to the
/// section's renderer and grouper.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    pub label: Label<'a>,
    /// The caller's index of the entry (into its own data).
    pub key: usize,
    /// With [`Order::ByRank`]: higher first, ties by label, then key.
    pub rank: f64,
    /// A rough estimate of the entry's cost in tokens (0 when unknown), e.g. an item's
    /// stored `tokens`. An entry estimated at more than [`ESTIMATE_SLACK`] times the room
    /// left is skipped (counted as a miss) without being rendered, unless it is a
    /// candidate for truncation: this keeps a nearly full section cheap on huge stores.
    /// The slack absorbs estimates made under another counter.
    pub estimate: usize,
}

/// See [`Entry::estimate`].
pub const ESTIMATE_SLACK: usize = 4;

impl<'a> Entry<'a> {
    /// An entry without an estimate.
    pub fn new(label: Label<'a>, key: usize, rank: f64) -> Entry<'a> {
        Entry { label, key, rank, estimate: 0 }
    }
}

/// How a section's entries are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// In the order given.
    AsGiven,
    /// By `rank` descending, ties by label then key. Lazy: a heap is built in O(n) and
    /// only as many entries are popped as are considered, so 100k candidates cost little.
    ByRank,
}

/// A group (sub-heading) inside a section. Groups are shown in `(order, heading)` order;
/// entries inside a group in the order they were selected.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Group {
    pub order: u32,
    /// The heading line, e.g. `### Key Decisions`; empty for no heading.
    pub heading: String,
}

/// Where a section's entries come from.
pub enum Source<'a> {
    /// Selected candidates with their order, renderer and optional grouping.
    Entries { entries: Vec<Entry<'a>>, order: Order, render: Renderer<'a>, group: Option<Grouper<'a>> },
    /// The leftovers of an earlier `Entries` section (by plan index): entries it skipped or
    /// never reached get a second chance with this section's budget. They are shown in the
    /// earlier section's place, merged into its groups in selection order.
    Continue(usize),
}

/// How an entry that alone exceeds its section is handled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Truncation {
    /// Whole entries only: an entry that does not fit is dropped.
    Never,
    /// An entry that alone exceeds the section is cut to the room left, with this marker.
    WithMarker(Cow<'static, str>),
}

/// One budgeted section of a plan.
pub struct Section<'a> {
    /// The name in the budget report and overflow list.
    pub name: String,
    /// The heading line (e.g. `## Active Knowledge`), shown only when an entry is placed.
    pub heading: Option<String>,
    /// The section's own budget in tokens; with `accepts_unused`, unused budget of earlier
    /// sections adds to it. Always capped by what remains of the total.
    pub cap: usize,
    /// Whether unused budget of earlier sections flows into this one (SPEC §4: yes; the
    /// agent profile caps each section at `min(section max, remaining)` instead).
    pub accepts_unused: bool,
    pub truncation: Truncation,
    pub source: Source<'a>,
}

impl<'a> Section<'a> {
    /// A section of ordered entries; no heading, no grouping, whole entries only.
    pub fn entries(
        name: impl Into<String>,
        cap: usize,
        entries: Vec<Entry<'a>>,
        order: Order,
        render: Renderer<'a>,
    ) -> Self {
        Section {
            name: name.into(),
            heading: None,
            cap,
            accepts_unused: true,
            truncation: Truncation::Never,
            source: Source::Entries { entries, order, render, group: None },
        }
    }

    /// A section giving the leftovers of plan section `earlier` a second chance.
    pub fn continuation(name: impl Into<String>, cap: usize, earlier: usize) -> Self {
        Section {
            name: name.into(),
            heading: None,
            cap,
            accepts_unused: true,
            truncation: Truncation::Never,
            source: Source::Continue(earlier),
        }
    }

    pub fn with_heading(mut self, heading: impl Into<String>) -> Self {
        self.heading = Some(heading.into());
        self
    }

    pub fn with_truncation(mut self, marker: impl Into<Cow<'static, str>>) -> Self {
        self.truncation = Truncation::WithMarker(marker.into());
        self
    }

    pub fn with_groups(mut self, grouper: Grouper<'a>) -> Self {
        if let Source::Entries { group, .. } = &mut self.source {
            *group = Some(grouper);
        }
        self
    }

    pub fn without_inflow(mut self) -> Self {
        self.accepts_unused = false;
        self
    }
}

/// A total budget and the ordered sections that share it.
pub struct Plan<'a> {
    /// The hard cap, in tokens under the counter given to [`assemble`].
    pub budget: usize,
    /// The first line(s) of the document, reserved first when it fits.
    pub header: Option<String>,
    /// The last line(s) of the document, reserved next when it fits and takes at most a
    /// quarter of the budget.
    pub footer: Option<String>,
    pub sections: Vec<Section<'a>>,
    /// At most this many left-out entries per section are listed by name in the overflow
    /// list; the rest are summed up in one `"N more"` row (the counts stay exact).
    pub overflow_limit: usize,
}

/// Budget use of a whole output (SPEC §3).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetReport {
    /// The total budget.
    pub cap: usize,
    /// The exact token count of the output.
    pub used: usize,
    pub sections: Vec<SectionBudget>,
}

/// Budget use of one section. `cap` is the budget the section actually had (its own cap
/// plus inflow, bounded by what remained); `used` is the sum of the counts of the pieces it
/// placed (its heading included), so under BPE the section figures may differ from the
/// exact total by a few tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionBudget {
    pub name: String,
    pub cap: usize,
    pub used: usize,
    pub included: usize,
    pub excluded: usize,
}

/// Something left out of an output, and why (SPEC §3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overflow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub section: String,
    pub reason: String,
}

impl Overflow {
    pub fn new(label: Label<'_>, section: &str, reason: impl Into<String>) -> Overflow {
        let (id, name) = match label {
            Label::Id(id) => (Some(id.to_string()), None),
            Label::Name(name) => (None, Some(name.to_string())),
        };
        Overflow { id, name, section: section.to_string(), reason: reason.into() }
    }

    /// The row that stands for `count` further left-out entries of a section.
    pub fn more(count: usize, section: &str, reason: impl Into<String>) -> Overflow {
        Overflow { id: None, name: Some(format!("{count} more")), section: section.to_string(), reason: reason.into() }
    }
}

/// Appends at most `limit` rows from `rows` (lazy: only those are built), then one
/// `"N more"` row for the remaining `total - listed`.
pub fn push_overflow_limited(
    out: &mut Vec<Overflow>,
    rows: impl Iterator<Item = Overflow>,
    total: usize,
    limit: usize,
    section: &str,
    summary_reason: &str,
) {
    let mut listed = 0;
    for row in rows.take(limit) {
        out.push(row);
        listed += 1;
    }
    if total > listed {
        out.push(Overflow::more(total - listed, section, summary_reason));
    }
}

/// The reason given for entries that did not fit their section.
pub const OVER_SECTION_BUDGET: &str = "over section budget";
/// The reason given for entries removed because the composed document was over the total.
pub const OVER_TOTAL_BUDGET: &str = "over total budget";

/// What [`assemble`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct Assembled {
    /// The document; its count under the counter is `tokens <= plan.budget`.
    pub text: String,
    pub tokens: usize,
    pub budget: BudgetReport,
    pub overflow: Vec<Overflow>,
    /// Per plan section: the keys placed in it, in document order. An `Entries` section
    /// lists the keys shown in its place, its continuations' included; a `Continue`
    /// section lists the keys it placed.
    pub placed: Vec<Vec<usize>>,
    /// Keys (per plan section, as in `placed`) whose entry was truncated.
    pub truncated: Vec<Vec<usize>>,
}

/// The entries of an [`Order::ByRank`] section as a max-heap: the best on top. Elements
/// are 16 bytes — the rank as an order-preserving integer and the entry index — so the
/// O(n) construction over 100k candidates is a few integer comparisons per entry; equal
/// ranks (rare) compare labels, then indices, through the entries.
struct RankHeap {
    slots: Vec<(u64, usize)>,
}

/// `rank` as an unsigned integer with the order of `f64::total_cmp`.
fn rank_key(rank: f64) -> u64 {
    let bits = rank.to_bits() as i64;
    // `total_cmp` flips the magnitude bits of negatives and compares as signed integers;
    // flipping the sign bit too makes that an unsigned comparison.
    ((bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64) ^ (1 << 63)
}

impl RankHeap {
    fn new(entries: &[Entry<'_>]) -> RankHeap {
        let mut heap = RankHeap {
            slots: entries.iter().enumerate().map(|(index, entry)| (rank_key(entry.rank), index)).collect(),
        };
        for position in (0..heap.slots.len() / 2).rev() {
            heap.sift_down(position, entries);
        }
        heap
    }

    /// Whether slot value `a` ranks before `b`: higher rank, then label, then index.
    fn before(a: (u64, usize), b: (u64, usize), entries: &[Entry<'_>]) -> bool {
        match a.0.cmp(&b.0) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => {
                let (a_label, b_label) = (entries[a.1].label.as_str(), entries[b.1].label.as_str());
                a_label < b_label || (a_label == b_label && a.1 < b.1)
            }
        }
    }

    fn sift_down(&mut self, mut position: usize, entries: &[Entry<'_>]) {
        let length = self.slots.len();
        loop {
            let left = 2 * position + 1;
            if left >= length {
                return;
            }
            let right = left + 1;
            let child =
                if right < length && Self::before(self.slots[right], self.slots[left], entries) { right } else { left };
            if !Self::before(self.slots[child], self.slots[position], entries) {
                return;
            }
            self.slots.swap(position, child);
            position = child;
        }
    }

    /// The best remaining entry index.
    fn pop(&mut self, entries: &[Entry<'_>]) -> Option<usize> {
        let last = self.slots.len().checked_sub(1)?;
        self.slots.swap(0, last);
        let (_, index) = self.slots.pop()?;
        self.sift_down(0, entries);
        Some(index)
    }
}

/// The selection state of one `Entries` section, shared with its continuations.
struct Cursor {
    heap: RankHeap,
    /// Next index for [`Order::AsGiven`].
    next: usize,
    /// Entries considered but not placed, `(ordinal, entry index)` in ordinal order.
    skipped: Vec<(u32, usize)>,
    next_ordinal: u32,
    heading_placed: bool,
    groups_placed: Vec<Group>,
}

/// A placed piece of content.
struct Placed {
    /// The plan index of the `Entries` section whose place shows it.
    block: usize,
    /// The plan index of the section that placed it.
    phase: usize,
    ordinal: u32,
    entry: usize,
    group: Option<Group>,
    /// The entry text with its trailing newline.
    piece: String,
    cost: usize,
    truncated: bool,
}

/// Assembles `plan` under `counter`. Never panics; the result never exceeds `plan.budget`.
pub fn assemble(plan: &Plan<'_>, counter: &TokenCounter) -> Assembled {
    let mut remaining = plan.budget;
    let mut report = BudgetReport { cap: plan.budget, used: 0, sections: Vec::new() };

    let header_piece = plan.header.as_ref().map(|header| format!("{header}\n"));
    let header_cost = header_piece.as_deref().map_or(0, |piece| counter.count(piece));
    let header_placed = header_piece.is_some() && header_cost <= remaining;
    if header_placed {
        remaining -= header_cost;
    }
    let footer_piece = plan.footer.as_ref().map(|footer| format!("\n{footer}\n"));
    let footer_cost = footer_piece.as_deref().map_or(0, |piece| counter.count(piece));
    let footer_placed =
        footer_piece.is_some() && footer_cost <= remaining && footer_cost.saturating_mul(4) <= plan.budget;
    if footer_placed {
        remaining -= footer_cost;
    }

    let mut cursors: Vec<Option<Cursor>> = plan.sections.iter().map(|_| None).collect();
    let mut placed: Vec<Placed> = Vec::new();
    let mut section_rows: Vec<SectionBudget> = Vec::new();
    let mut carry = 0usize;
    for (phase, section) in plan.sections.iter().enumerate() {
        let inflow = if section.accepts_unused { carry } else { 0 };
        let available = section.cap.saturating_add(inflow).min(remaining);
        let block = match section.source {
            Source::Entries { .. } => Some(phase),
            Source::Continue(earlier) => match plan.sections.get(earlier).map(|s| &s.source) {
                Some(Source::Entries { .. }) if earlier < phase => Some(earlier),
                _ => None,
            },
        };
        let mut row = SectionBudget { name: section.name.clone(), cap: available, ..SectionBudget::default() };
        if let Some(block) = block {
            let before = placed.len();
            let considered_total = entries_of(plan, block).len();
            let already = placed.iter().filter(|p| p.block == block).count();
            let cursor = cursors[block].get_or_insert_with(|| Cursor::new(plan, block));
            row.used = fill(plan, block, phase, section, available, cursor, counter, &mut placed);
            row.included = placed.len() - before;
            row.excluded = considered_total - already - row.included;
        }
        remaining -= row.used;
        carry = carry - inflow + (available - row.used);
        section_rows.push(row);
    }

    let fitted = fit_document(
        plan,
        &placed,
        header_piece.as_deref(),
        footer_piece.as_deref(),
        (header_placed, footer_placed),
        counter,
    );
    let Fitted { keep, header: header_placed, footer: footer_placed, text, tokens } = fitted;

    // Budget rows: header and footer first/last, dropped entries taken off their phase.
    let mut overflow = Vec::new();
    for dropped in &placed[keep..] {
        let row = &mut section_rows[dropped.phase];
        row.used = row.used.saturating_sub(dropped.cost);
        row.included -= 1;
        row.excluded += 1;
        let entry = entries_of(plan, dropped.block)[dropped.entry];
        overflow.push(Overflow::new(entry.label, &plan.sections[dropped.block].name, OVER_TOTAL_BUDGET));
    }
    if plan.header.is_some() {
        let used = if header_placed { header_cost } else { 0 };
        report.sections.push(SectionBudget {
            name: "header".into(),
            cap: header_cost,
            used,
            included: usize::from(header_placed),
            excluded: usize::from(!header_placed),
        });
        if !header_placed {
            overflow.push(Overflow::new(Label::Name("header"), "header", OVER_TOTAL_BUDGET));
        }
    }
    report.sections.extend(section_rows);
    if plan.footer.is_some() {
        report.sections.push(SectionBudget {
            name: "footer".into(),
            cap: footer_cost,
            used: if footer_placed { footer_cost } else { 0 },
            included: usize::from(footer_placed),
            excluded: usize::from(!footer_placed),
        });
        if !footer_placed {
            overflow.push(Overflow::new(Label::Name("footer"), "footer", OVER_TOTAL_BUDGET));
        }
    }
    report.used = tokens;

    // Entries never placed, per block, in selection order.
    for (block, cursor) in cursors.iter_mut().enumerate() {
        let Some(cursor) = cursor else { continue };
        let entries = entries_of(plan, block);
        let placed_in_block = placed[..keep].iter().filter(|p| p.block == block).count();
        let dropped_in_block = placed[keep..].iter().filter(|p| p.block == block).count();
        let left = entries.len() - placed_in_block - dropped_in_block;
        let name = &plan.sections[block].name;
        let skipped: Vec<usize> = cursor.skipped.iter().map(|&(_, index)| index).collect();
        let rows = skipped
            .into_iter()
            .chain(std::iter::from_fn(|| cursor.next_fresh(plan, block)))
            .map(|index| Overflow::new(entries[index].label, name, OVER_SECTION_BUDGET));
        push_overflow_limited(&mut overflow, rows, left, plan.overflow_limit, name, OVER_SECTION_BUDGET);
    }
    // Sections never started (no cursor) left all their entries out.
    for (block, section) in plan.sections.iter().enumerate() {
        if cursors[block].is_some() {
            continue;
        }
        if let Source::Entries { entries, .. } = &section.source
            && !entries.is_empty()
        {
            let rows = entries.iter().map(|entry| Overflow::new(entry.label, &section.name, OVER_SECTION_BUDGET));
            push_overflow_limited(
                &mut overflow,
                rows,
                entries.len(),
                plan.overflow_limit,
                &section.name,
                OVER_SECTION_BUDGET,
            );
        }
    }

    let mut placed_keys = vec![Vec::new(); plan.sections.len()];
    let mut truncated_keys = vec![Vec::new(); plan.sections.len()];
    for index in document_order(&placed, keep) {
        let piece = &placed[index];
        let key = entries_of(plan, piece.block)[piece.entry].key;
        placed_keys[piece.block].push(key);
        if piece.phase != piece.block {
            placed_keys[piece.phase].push(key);
        }
        if piece.truncated {
            truncated_keys[piece.block].push(key);
            if piece.phase != piece.block {
                truncated_keys[piece.phase].push(key);
            }
        }
    }

    Assembled { text, tokens, budget: report, overflow, placed: placed_keys, truncated: truncated_keys }
}

/// The composed document and what of the placed content it kept.
struct Fitted {
    keep: usize,
    header: bool,
    footer: bool,
    text: String,
    tokens: usize,
}

/// Composes the real document and counts it. If it is over the budget (a non-additive
/// counter made the sum of pieces an underestimate), keeps the longest prefix of `placed`
/// (assembly order) that fits — binary search, each candidate recounted whole — dropping
/// the footer and then the header only when no entries at all would fit with them.
fn fit_document(
    plan: &Plan<'_>,
    placed: &[Placed],
    header_piece: Option<&str>,
    footer_piece: Option<&str>,
    (header, footer): (bool, bool),
    counter: &TokenCounter,
) -> Fitted {
    let attempt = |keep: usize, header: bool, footer: bool| {
        let text = compose(plan, placed, keep, header_piece, footer_piece, header, footer);
        let tokens = counter.count(&text);
        (tokens <= plan.budget).then_some(Fitted { keep, header, footer, text, tokens })
    };
    if let Some(fitted) = attempt(placed.len(), header, footer) {
        return fitted;
    }
    let mut best = Fitted { keep: 0, header: false, footer: false, text: String::new(), tokens: 0 };
    for (header, footer) in [(header, footer), (header, false)] {
        if let Some(fitted) = attempt(0, header, footer) {
            best = fitted;
            break;
        }
    }
    // Invariant: `best.keep` fits, `high` does not.
    let mut high = placed.len();
    while high - best.keep > 1 {
        let middle = best.keep + (high - best.keep) / 2;
        match attempt(middle, best.header, best.footer) {
            Some(fitted) => best = fitted,
            None => high = middle,
        }
    }
    best
}

fn entries_of<'p, 'a>(plan: &'p Plan<'a>, block: usize) -> &'p [Entry<'a>] {
    match &plan.sections[block].source {
        Source::Entries { entries, .. } => entries,
        Source::Continue(_) => &[],
    }
}

impl Cursor {
    fn new(plan: &Plan<'_>, block: usize) -> Cursor {
        let heap = match &plan.sections[block].source {
            Source::Entries { entries, order: Order::ByRank, .. } => RankHeap::new(entries),
            _ => RankHeap { slots: Vec::new() },
        };
        Cursor { heap, next: 0, skipped: Vec::new(), next_ordinal: 0, heading_placed: false, groups_placed: Vec::new() }
    }

    /// The next entry index never considered before, in the section's order.
    fn next_fresh(&mut self, plan: &Plan<'_>, block: usize) -> Option<usize> {
        let Source::Entries { entries, order, .. } = &plan.sections[block].source else { return None };
        match order {
            Order::ByRank => self.heap.pop(entries),
            Order::AsGiven => {
                let index = self.next;
                if index >= entries.len() {
                    return None;
                }
                self.next += 1;
                Some(index)
            }
        }
    }
}

/// Places entries of block `block` within `available` tokens; returns the tokens used.
#[allow(clippy::too_many_arguments)]
fn fill<'a>(
    plan: &Plan<'a>,
    block: usize,
    phase: usize,
    section: &Section<'a>,
    available: usize,
    cursor: &mut Cursor,
    counter: &TokenCounter,
    placed: &mut Vec<Placed>,
) -> usize {
    let owner = &plan.sections[block];
    let Source::Entries { entries, render, group: grouper, .. } = &owner.source else { return 0 };
    // A continuation truncates like the section it continues.
    let truncation = if phase == block { &section.truncation } else { &owner.truncation };
    let heading_cost = owner.heading.as_ref().map_or(0, |heading| counter.count(&format!("\n{heading}\n")));
    let marker_cost = match truncation {
        Truncation::WithMarker(marker) => counter.count(&format!("{marker}\n")),
        Truncation::Never => 0,
    };

    let retry = std::mem::take(&mut cursor.skipped);
    let mut retry = retry.into_iter();
    let mut skipped = Vec::new();
    let mut used = 0usize;
    let mut misses = 0usize;
    loop {
        if used >= available || misses >= MAX_CONSECUTIVE_MISSES {
            break;
        }
        let (ordinal, index) = match retry.next() {
            Some(next) => next,
            None => match cursor.next_fresh(plan, block) {
                Some(index) => {
                    let ordinal = cursor.next_ordinal;
                    cursor.next_ordinal += 1;
                    (ordinal, index)
                }
                None => break,
            },
        };
        let entry = &entries[index];
        let room = available - used;
        let estimated_too_big = entry.estimate > room.saturating_mul(ESTIMATE_SLACK);
        let may_truncate = matches!(truncation, Truncation::WithMarker(_)) && entry.estimate > available;
        if estimated_too_big && !may_truncate {
            skipped.push((ordinal, index));
            misses += 1;
            continue;
        }
        let text = render(entry.key);
        let group = grouper.as_ref().map(|grouper| grouper(entry.key));
        let mut extra = 0;
        if !cursor.heading_placed {
            extra += heading_cost;
        }
        let opens_group = group.as_ref().is_some_and(|group| !cursor.groups_placed.contains(group));
        if let Some(group) = group.as_ref().filter(|_| opens_group)
            && !group.heading.is_empty()
        {
            extra += counter.count(&format!("\n{}\n", group.heading));
        }
        let mut piece = text;
        piece.push('\n');
        let cost = counter.count(&piece);
        let mut accepted = None;
        if extra + cost <= room {
            accepted = Some((piece, cost, false));
        } else if let Truncation::WithMarker(marker) = truncation
            && extra + cost > available
            && room >= extra + marker_cost + MIN_TRUNCATED_TOKENS
        {
            let text = piece.strip_suffix('\n').unwrap_or(&piece);
            let cut = fit_prefix(counter, text, room - extra, |prefix, out| {
                out.push_str(prefix.trim_end());
                out.push_str(marker);
                out.push('\n');
            });
            if let Some(cut) = cut {
                let cost = counter.count(&cut);
                accepted = Some((cut, cost, true));
            }
        }
        match accepted {
            Some((piece, cost, truncated)) => {
                used += extra + cost;
                misses = 0;
                cursor.heading_placed = true;
                if opens_group && let Some(group) = &group {
                    cursor.groups_placed.push(group.clone());
                }
                placed.push(Placed { block, phase, ordinal, entry: index, group, piece, cost, truncated });
            }
            None => {
                skipped.push((ordinal, index));
                misses += 1;
            }
        }
    }
    // Entries of the retry list not reached this time stay ahead of fresh ones.
    skipped.extend(retry);
    skipped.sort_unstable_by_key(|&(ordinal, _)| ordinal);
    cursor.skipped = skipped;
    used
}

/// Indices into `placed[..keep]` in document order: by block, then group, then ordinal.
fn document_order(placed: &[Placed], keep: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keep).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&placed[a], &placed[b]);
        a.block.cmp(&b.block).then_with(|| a.group.cmp(&b.group)).then_with(|| a.ordinal.cmp(&b.ordinal))
    });
    order
}

/// Builds the document from the header, the first `keep` placed entries and the footer.
fn compose(
    plan: &Plan<'_>,
    placed: &[Placed],
    keep: usize,
    header_piece: Option<&str>,
    footer_piece: Option<&str>,
    header: bool,
    footer: bool,
) -> String {
    let mut text = String::new();
    if header && let Some(piece) = header_piece {
        text.push_str(piece);
    }
    let mut current_block = None;
    let mut current_group: Option<&Group> = None;
    for index in document_order(placed, keep) {
        let piece = &placed[index];
        if current_block != Some(piece.block) {
            current_block = Some(piece.block);
            current_group = None;
            if let Some(heading) = &plan.sections[piece.block].heading {
                text.push('\n');
                text.push_str(heading);
                text.push('\n');
            }
        }
        if let Some(group) = &piece.group
            && current_group != Some(group)
        {
            current_group = Some(group);
            if !group.heading.is_empty() {
                text.push('\n');
                text.push_str(&group.heading);
                text.push('\n');
            }
        }
        text.push_str(&piece.piece);
    }
    if footer && let Some(piece) = footer_piece {
        text.push_str(piece);
    }
    if !header {
        // Without a header the first piece's leading blank line has nothing to separate.
        let start = text.len() - text.trim_start_matches('\n').len();
        text.drain(..start);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces whose recorded costs understate the real count, as a non-additive counter
    /// could: the final check must still cut the document down to the budget.
    #[test]
    fn an_over_budget_composition_is_cut_from_the_end_of_the_assembly_order() {
        const TEXTS: [&str; 3] = ["alpha alpha alpha", "beta beta beta", "gamma gamma gamma"];
        let entries = (0..3).map(|key| Entry::new(Label::Name(TEXTS[key]), key, 0.0)).collect();
        let section = Section::entries("s", 100, entries, Order::AsGiven, Box::new(|key| TEXTS[key].to_string()));
        let mut plan = Plan { budget: 12, header: None, footer: None, sections: vec![section], overflow_limit: 10 };
        let placed: Vec<Placed> = TEXTS
            .iter()
            .enumerate()
            .map(|(entry, text)| Placed {
                block: 0,
                phase: 0,
                ordinal: entry as u32,
                entry,
                group: None,
                piece: format!("{text}\n"),
                cost: 0,
                truncated: false,
            })
            .collect();
        let counter = TokenCounter::Heuristic;
        let fitted = fit_document(&plan, &placed, Some("# H\n"), Some("\nfoot\n"), (true, true), &counter);
        assert_eq!((fitted.keep, fitted.header, fitted.footer), (2, true, true));
        assert_eq!(fitted.text, "# H\nalpha alpha alpha\nbeta beta beta\n\nfoot\n");
        assert!(fitted.tokens <= 12);

        plan.budget = 2;
        let fitted = fit_document(&plan, &placed, Some("# H\n"), Some("\nfoot\n"), (true, true), &counter);
        assert_eq!((fitted.keep, fitted.header, fitted.footer, fitted.text.as_str()), (0, true, false, "# H\n"));

        plan.budget = 0;
        let fitted = fit_document(&plan, &placed, Some("# H\n"), Some("\nfoot\n"), (true, true), &counter);
        assert_eq!((fitted.keep, fitted.header, fitted.footer, fitted.text.as_str()), (0, false, false, ""));
    }
}
