//! Deterministic generation of realistic items for benchmarks, examples and property
//! tests: varied kinds, statuses, ages, importance, tags, dedup hints and content lengths
//! (50–2,000 characters). Same `(n, seed, now)` → same items, on every platform.

use crate::item::{Item, Kind, Severity, Status};
use crate::scope::Scope;
use crate::time::Timestamp;
use crate::tokens::TokenCounter;

/// A small, fast PRNG (splitmix64): deterministic and dependency-free.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound.max(1))) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    pub fn pick<'a, T>(&mut self, choices: &'a [T]) -> &'a T {
        &choices[self.below(choices.len() as u64) as usize]
    }

    /// Picks from `(value, weight)` pairs.
    pub fn weighted<T: Copy>(&mut self, choices: &[(T, u32)]) -> T {
        let total: u32 = choices.iter().map(|(_, weight)| weight).sum();
        let mut roll = self.below(u64::from(total)) as u32;
        for &(value, weight) in choices {
            if roll < weight {
                return value;
            }
            roll -= weight;
        }
        choices[choices.len() - 1].0
    }
}

const KINDS: &[(Kind, u32)] = &[
    (Kind::Implementation, 200),
    (Kind::Decision, 100),
    (Kind::Convention, 80),
    (Kind::Architecture, 80),
    (Kind::Bug, 120),
    (Kind::Todo, 100),
    (Kind::Lesson, 80),
    (Kind::Note, 60),
    (Kind::Context, 40),
    (Kind::Session, 40),
    (Kind::Codemap, 30),
    (Kind::Learning, 30),
    (Kind::Preference, 20),
    (Kind::Signal, 10),
    (Kind::Skill, 5),
    (Kind::Arc, 5),
];

const STATUSES: &[(Status, u32)] = &[
    (Status::Approved, 75),
    (Status::Draft, 10),
    (Status::Deprecated, 5),
    (Status::Superseded, 6),
    (Status::Archived, 4),
];

const AREAS: &[&str] = &[
    "auth",
    "storage",
    "api",
    "cli",
    "hooks",
    "vault",
    "search",
    "dashboard",
    "mcp",
    "tokens",
    "config",
    "ci",
    "deploy",
    "billing",
    "frontend",
    "backend",
    "sync",
    "cache",
    "metrics",
    "docs",
];

const TAGS: &[&str] = &[
    "perf",
    "security",
    "sqlite",
    "postgres",
    "ux",
    "refactor",
    "regression",
    "flaky",
    "api-break",
    "migration",
    "tech-debt",
    "onboarding",
    "testing",
    "logging",
    "windows",
    "macos",
];

const WORDS: &[&str] = &[
    "the",
    "store",
    "writes",
    "every",
    "item",
    "in",
    "one",
    "transaction",
    "and",
    "checks",
    "version",
    "before",
    "commit",
    "so",
    "concurrent",
    "hooks",
    "never",
    "lose",
    "updates",
    "cache",
    "is",
    "invalidated",
    "when",
    "brain",
    "hash",
    "changes",
    "tokens",
    "are",
    "counted",
    "with",
    "configured",
    "counter",
    "budget",
    "overflow",
    "reported",
    "search",
    "uses",
    "bm25",
    "over",
    "title",
    "content",
    "tags",
    "files",
    "schema",
    "key",
    "vault",
    "parser",
    "returns",
    "diagnostics",
    "instead",
    "of",
    "failing",
    "retry",
    "timeout",
    "connection",
    "pool",
    "migration",
    "index",
    "query",
    "plan",
    "latency",
    "p99",
    "regression",
    "fixed",
    "by",
    "batching",
    "reads",
];

const FILES: &[&str] = &[
    "crates/brain-core/src/item.rs",
    "crates/brain-core/src/assemble/engine.rs",
    "crates/brain-store/src/sqlite.rs",
    "crates/brain-store/src/postgres.rs",
    "crates/brain/src/app.rs",
    "crates/brain/src/http/routes.rs",
    "crates/brain/src/hook.rs",
    "crates/brain/src/cli/commands/remember.rs",
    "docs/ARCHITECTURE.md",
    "web/src/components/Tree.tsx",
    "migrations/sqlite/0001_init.sql",
    "Cargo.toml",
];

/// Crockford base32 alphabet (ULID).
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn ulid_like(random: &mut SplitMix64, millis: u64) -> String {
    // 48-bit time + 80 random bits, Crockford base32, 26 chars: a valid ULID.
    let value: u128 = (u128::from(millis & 0xFFFF_FFFF_FFFF) << 80)
        | (u128::from(random.next_u64()) << 16)
        | u128::from(random.below(1 << 16));
    let mut out = String::with_capacity(30);
    out.push_str("mem_");
    for position in (0..26).rev() {
        let digit = ((value >> (position * 5)) & 0x1F) as usize;
        out.push(CROCKFORD[digit] as char);
    }
    out
}

fn sentence(random: &mut SplitMix64, min_chars: usize, max_chars: usize) -> String {
    let target = min_chars + random.below((max_chars - min_chars + 1) as u64) as usize;
    let mut out = String::with_capacity(target + 16);
    let mut words_in_line = 0;
    while out.len() < target {
        if !out.is_empty() {
            if words_in_line > 12 && random.chance(0.08) {
                out.push_str(if random.chance(0.3) { "\n\n" } else { "\n" });
                words_in_line = 0;
            } else {
                out.push(' ');
            }
        }
        let word: &&str = random.pick(WORDS);
        out.push_str(word);
        words_in_line += 1;
    }
    out.truncate(target);
    let mut out = out.trim_end().to_string();
    while out.len() < min_chars {
        out.push('x');
    }
    out
}

/// `n` realistic items, deterministic in `(n, seed, now)`. Ages (from `updated_at`)
/// spread from minutes to about 400 days before `now`, denser near `now`.
pub fn generate_items(n: usize, seed: u64, now: Timestamp) -> Vec<Item> {
    let mut random = SplitMix64::new(seed);
    let hint_pool = (n / 10).max(1) as u64;
    let now_seconds = now.as_second();
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = random.weighted(KINDS);
        let status = random.weighted(STATUSES);
        // Squaring a uniform number makes recent updates more common than old ones.
        let age_days = random.unit().powi(2) * 400.0;
        let updated_seconds = now_seconds - (age_days * 86_400.0) as i64;
        let created_seconds = updated_seconds - random.below(30 * 86_400) as i64;
        let updated_at = Timestamp::from_second(updated_seconds).unwrap_or(now);
        let created_at = Timestamp::from_second(created_seconds).unwrap_or(updated_at);
        let area = *random.pick(AREAS);
        let schema_key = if random.chance(0.5) {
            format!("{}/{area}", kind.default_schema_key())
        } else {
            kind.default_schema_key()
        };
        let mut tags: Vec<String> = Vec::new();
        for _ in 0..random.below(4) {
            let tag = random.pick(TAGS).to_string();
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        if kind == Kind::Bug && random.chance(0.4) {
            tags.push("fixed".into());
        }
        if kind == Kind::Todo && random.chance(0.3) {
            tags.push("done".into());
        }
        let files = (0..random.below(4)).map(|_| random.pick(FILES).to_string()).collect::<Vec<_>>();
        let content_length = if random.chance(0.1) { 1000..=2000 } else { 50..=600 };
        let content = sentence(&mut random, *content_length.start(), *content_length.end());
        let title_text = sentence(&mut random, 12, 70).replace('\n', " ");
        let title = format!("{area}: {title_text}");
        let rationale = (kind == Kind::Decision && random.chance(0.6)).then(|| sentence(&mut random, 40, 240));
        let dedup_hint = random.chance(0.15).then(|| format!("{}:{area}:h{}", kind.as_str(), random.below(hint_pool)));
        let valid_until = random
            .chance(0.02)
            .then(|| Timestamp::from_second(now_seconds - random.below(60 * 86_400) as i64).unwrap_or(now));
        let (strength, decay_rate) = kind.default_strength();
        let mut item = Item {
            id: ulid_like(&mut random, (created_seconds.max(0) as u64) * 1000),
            scope: if random.chance(0.2) { Scope::Global } else { Scope::Project("bench".into()) },
            kind,
            schema_key,
            title,
            content,
            rationale,
            confidence: (0.2 + random.unit() * 0.8) as f32,
            importance: random.weighted(&[(1u8, 5), (2, 15), (3, 45), (4, 25), (5, 10)]),
            status,
            severity: (kind == Kind::Signal).then(|| {
                random.weighted(&[
                    (Severity::Info, 4),
                    (Severity::Warning, 3),
                    (Severity::Critical, 2),
                    (Severity::Resolved, 1),
                ])
            }),
            pinned: random.chance(0.01),
            pin_priority: 0,
            stable: false,
            strength,
            decay_rate,
            tags,
            files,
            evidence: Vec::new(),
            dedup_hint,
            supersedes: None,
            superseded_by: None,
            valid_from: None,
            valid_until,
            source: "cli".into(),
            created_at,
            updated_at,
            last_accessed_at: None,
            access_count: random.below(20) as u32,
            review_due_at: None,
            review_count: 0,
            tokens: 0,
            version: 1,
        };
        item.tokens = TokenCounter::Heuristic.count(&item.rendered_text()) as u32;
        items.push(item);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_items_are_valid_and_deterministic() {
        let now: Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
        let items = generate_items(500, 7, now);
        assert_eq!(items, generate_items(500, 7, now));
        assert_ne!(items, generate_items(500, 8, now));
        for item in &items {
            item.validate().unwrap_or_else(|err| panic!("{err}: {item:?}"));
            assert!(item.updated_at <= now);
            assert!((50..=2000).contains(&item.content.chars().count()), "{}", item.content.len());
        }
        let kinds: std::collections::BTreeSet<_> = items.iter().map(|item| item.kind).collect();
        assert!(kinds.len() >= 12);
        assert!(items.iter().any(|item| item.dedup_hint.is_some()));
    }
}
