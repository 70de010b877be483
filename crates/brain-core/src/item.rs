//! The memory item (SPEC §2.1): its closed sets, defaults and validation.
//!
//! `Item` is the stored, validated form. `ItemDraft` is the loose input form shared by
//! `remember`, `edit`, `import` and the wire adapters: every field optional, turned into an
//! `Item` (or applied to one) only through validation that names the offending field and
//! the allowed values.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::scope::Scope;
use crate::time::{Timestamp, serde_rfc3339};

/// Title limit in characters (SPEC §2.1).
pub const MAX_TITLE_CHARS: usize = 200;
/// Content limit in characters (SPEC §2.1).
pub const MAX_CONTENT_CHARS: usize = 20_000;
/// Rationale limit in characters.
pub const MAX_RATIONALE_CHARS: usize = 20_000;
/// At most this many tags.
pub const MAX_TAGS: usize = 10;
/// Longest tag.
pub const MAX_TAG_CHARS: usize = 50;
/// At most this many related files.
pub const MAX_FILES: usize = 50;
/// At most this many evidence references.
pub const MAX_EVIDENCE: usize = 50;
/// Longest file path, evidence reference, schema key, source or dedup hint.
pub const MAX_REFERENCE_CHARS: usize = 500;
/// Largest item version: the largest integer a JSON client reads exactly (2^53 − 1), far
/// from the store's `i64` and from wrapping on the next edit.
pub const MAX_VERSION: u64 = (1 << 53) - 1;

macro_rules! closed_set {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The lowercase wire/storage name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The allowed values as one comma-separated string (for error messages).
            pub fn allowed() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                let lowered = text.trim().to_ascii_lowercase();
                match lowered.as_str() {
                    $($text => Ok($name::$variant),)+
                    _ => Err(format!("invalid {} {:?} (allowed: {})", $what, text, Self::allowed())),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

closed_set!(
    /// What an item is about.
    Kind, "kind", {
    Architecture => "architecture",
    Convention => "convention",
    Decision => "decision",
    Implementation => "implementation",
    Bug => "bug",
    Todo => "todo",
    Lesson => "lesson",
    Signal => "signal",
    Preference => "preference",
    Learning => "learning",
    Context => "context",
    Session => "session",
    Skill => "skill",
    Codemap => "codemap",
    Note => "note",
    Arc => "arc",
});

closed_set!(
    /// Review state; only `approved` items enter assembled context.
    Status, "status", {
    Draft => "draft",
    Approved => "approved",
    Deprecated => "deprecated",
    Superseded => "superseded",
    Archived => "archived",
});

closed_set!(
    /// Severity of a signal.
    Severity, "severity", {
    Info => "info",
    Warning => "warning",
    Critical => "critical",
    Nuclear => "nuclear",
    Resolved => "resolved",
});

impl Kind {
    /// The default schema key of a kind (SPEC §4.4 kind groups).
    pub fn default_schema_key(self) -> String {
        let group = match self {
            Kind::Architecture => "architecture",
            Kind::Convention => "conventions",
            Kind::Decision => "decisions",
            Kind::Implementation => "implementation",
            Kind::Bug => "bugs",
            Kind::Todo => "todo",
            Kind::Lesson => "lessons",
            other => other.as_str(),
        };
        format!("root/{group}")
    }

    /// Default `(strength, decay_rate per day)` of a kind (SPEC §5.4). Structural knowledge
    /// decays slowly; episodic notes quickly.
    pub fn default_strength(self) -> (f32, f32) {
        match self {
            Kind::Architecture | Kind::Convention | Kind::Decision | Kind::Preference | Kind::Skill => (1.0, 0.995),
            Kind::Lesson | Kind::Learning | Kind::Codemap => (1.0, 0.99),
            Kind::Implementation | Kind::Bug | Kind::Arc | Kind::Context | Kind::Note => (1.0, 0.98),
            Kind::Todo | Kind::Signal | Kind::Session => (1.0, 0.95),
        }
    }
}

/// A field-level validation failure: names the field, the offending value and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {message}")]
pub struct ValidationError {
    pub field: &'static str,
    pub message: String,
}

impl ValidationError {
    pub fn new(field: &'static str, message: impl Into<String>) -> ValidationError {
        ValidationError { field, message: message.into() }
    }
}

/// Serializes an `f32` as the decimal it was stored as (`0.8`, not `0.800000011920929`): the
/// shortest decimal that reads back as the same `f32`, written as an `f64`. Serializers that
/// widen an `f32` to `f64` (`serde_json::to_value`, `json!`) would print the widened value.
pub fn serialize_decimal_f32<S: serde::Serializer>(value: &f32, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(decimal_f64(*value))
}

/// `value` as the `f64` of its shortest decimal form (`0.8f32` → `0.8`).
pub fn decimal_f64(value: f32) -> f64 {
    if !value.is_finite() {
        return f64::from(value);
    }
    value.to_string().parse().unwrap_or(f64::from(value))
}

/// A stored memory item. Field names are the JSONL import/export names (snake_case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: String,
    pub scope: Scope,
    pub kind: Kind,
    pub schema_key: String,
    pub title: String,
    pub content: String,
    pub rationale: Option<String>,
    #[serde(serialize_with = "serialize_decimal_f32")]
    pub confidence: f32,
    pub importance: u8,
    pub status: Status,
    pub severity: Option<Severity>,
    pub pinned: bool,
    pub pin_priority: i32,
    pub stable: bool,
    #[serde(serialize_with = "serialize_decimal_f32")]
    pub strength: f32,
    #[serde(serialize_with = "serialize_decimal_f32")]
    pub decay_rate: f32,
    pub tags: Vec<String>,
    pub files: Vec<String>,
    pub evidence: Vec<String>,
    pub dedup_hint: Option<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    #[serde(with = "serde_rfc3339::option")]
    pub valid_from: Option<Timestamp>,
    #[serde(with = "serde_rfc3339::option")]
    pub valid_until: Option<Timestamp>,
    pub source: String,
    #[serde(with = "serde_rfc3339")]
    pub created_at: Timestamp,
    #[serde(with = "serde_rfc3339")]
    pub updated_at: Timestamp,
    #[serde(with = "serde_rfc3339::option")]
    pub last_accessed_at: Option<Timestamp>,
    pub access_count: u32,
    #[serde(with = "serde_rfc3339::option")]
    pub review_due_at: Option<Timestamp>,
    pub review_count: u32,
    pub tokens: u32,
    pub version: u64,
}

impl Item {
    /// True when the item carries `tag` (tags are stored lowercase).
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }

    /// True when `valid_until` lies before `now`.
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.valid_until.is_some_and(|until| until < now)
    }

    /// The text the token estimate is computed over: what a renderer shows of the item.
    pub fn rendered_text(&self) -> String {
        let mut text = format!("[{}] {}\n{}", self.kind, self.title, self.content);
        if let Some(rationale) = &self.rationale {
            text.push_str("\nWhy: ");
            text.push_str(rationale);
        }
        text
    }

    /// Checks every field's invariants; the first failure names the field.
    pub fn validate(&self) -> Result<(), ValidationError> {
        validate_id(&self.id)?;
        validate_title(&self.title)?;
        validate_content(&self.content)?;
        if let Some(rationale) = &self.rationale
            && rationale.chars().count() > MAX_RATIONALE_CHARS
        {
            return Err(ValidationError::new("rationale", format!("longer than {MAX_RATIONALE_CHARS} characters")));
        }
        validate_confidence(self.confidence)?;
        validate_importance(i64::from(self.importance))?;
        validate_schema_key(&self.schema_key)?;
        validate_tags(&self.tags)?;
        validate_references("files", &self.files, MAX_FILES)?;
        validate_references("evidence", &self.evidence, MAX_EVIDENCE)?;
        if let Some(hint) = &self.dedup_hint {
            validate_dedup_hint(hint)?;
        }
        for (field, value) in [("supersedes", &self.supersedes), ("superseded_by", &self.superseded_by)] {
            if let Some(id) = value {
                validate_id(id).map_err(|err| ValidationError::new(field, err.message))?;
            }
        }
        if !(self.strength.is_finite() && (0.0..=1.0).contains(&self.strength)) {
            return Err(ValidationError::new("strength", format!("{} is not between 0.0 and 1.0", self.strength)));
        }
        if !(self.decay_rate.is_finite() && self.decay_rate > 0.0 && self.decay_rate <= 1.0) {
            return Err(ValidationError::new("decay_rate", format!("{} is not in (0.0, 1.0]", self.decay_rate)));
        }
        if let (Some(from), Some(until)) = (self.valid_from, self.valid_until)
            && until < from
        {
            return Err(ValidationError::new("valid_until", "is before valid_from"));
        }
        if !(1..=MAX_VERSION).contains(&self.version) {
            return Err(ValidationError::new(
                "version",
                format!("{} is not between 1 and {MAX_VERSION}", self.version),
            ));
        }
        if self.source.is_empty() || self.source.chars().count() > MAX_REFERENCE_CHARS {
            return Err(ValidationError::new("source", "must be 1 to 500 characters"));
        }
        Ok(())
    }
}

/// True for a `mem_` + ULID id (or a vault-derived `mem_v` + 24 hex id).
pub fn is_valid_id(id: &str) -> bool {
    validate_id(id).is_ok()
}

/// Validates an item id: `mem_` + 26-char Crockford ULID, or `mem_v` + 24 lowercase hex.
pub fn validate_id(id: &str) -> Result<(), ValidationError> {
    let invalid = || {
        ValidationError::new("id", format!("{id:?} is not an item id (expected mem_ followed by a 26-character ULID)"))
    };
    let Some(rest) = id.strip_prefix("mem_") else {
        return Err(invalid());
    };
    if let Some(hex) = rest.strip_prefix('v')
        && hex.len() == 24
        && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Ok(());
    }
    if rest.len() == 26
        && ulid::Ulid::from_string(rest).is_ok()
        && rest.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        return Ok(());
    }
    Err(invalid())
}

/// Makes a new item id from a ULID (time-ordered).
pub fn new_id(ulid: ulid::Ulid) -> String {
    format!("mem_{ulid}")
}

pub fn validate_title(title: &str) -> Result<(), ValidationError> {
    if title.trim().is_empty() {
        return Err(ValidationError::new("title", "is empty (1 to 200 characters, one line)"));
    }
    let count = title.chars().count();
    if count > MAX_TITLE_CHARS {
        return Err(ValidationError::new("title", format!("has {count} characters (1 to {MAX_TITLE_CHARS} allowed)")));
    }
    if title.contains(['\n', '\r']) {
        return Err(ValidationError::new("title", "must be one line"));
    }
    Ok(())
}

pub fn validate_content(content: &str) -> Result<(), ValidationError> {
    let count = content.chars().count();
    if count > MAX_CONTENT_CHARS {
        return Err(ValidationError::new(
            "content",
            format!("has {count} characters (at most {MAX_CONTENT_CHARS} allowed)"),
        ));
    }
    Ok(())
}

pub fn validate_confidence(confidence: f32) -> Result<(), ValidationError> {
    if confidence.is_finite() && (0.0..=1.0).contains(&confidence) {
        return Ok(());
    }
    Err(ValidationError::new("confidence", format!("{confidence} is not between 0.0 and 1.0")))
}

pub fn validate_importance(importance: i64) -> Result<u8, ValidationError> {
    if (1..=5).contains(&importance) {
        return Ok(importance as u8);
    }
    Err(ValidationError::new("importance", format!("{importance} is not an integer from 1 to 5")))
}

/// Schema keys are `/`-separated lowercase segments such as `root/architecture/auth`.
pub fn validate_schema_key(key: &str) -> Result<(), ValidationError> {
    let ok = !key.is_empty()
        && key.chars().count() <= MAX_REFERENCE_CHARS
        && key.split('/').all(|segment| {
            !segment.is_empty()
                && segment.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
        });
    if ok {
        return Ok(());
    }
    Err(ValidationError::new(
        "schema_key",
        format!("{key:?} is not a schema key (lowercase segments separated by '/', like root/architecture/auth)"),
    ))
}

/// Normalizes tags: trimmed, lowercased, spaces and underscores to hyphens, deduplicated in
/// first-seen order. Validation happens separately.
pub fn normalize_tags<I: IntoIterator<Item = S>, S: AsRef<str>>(tags: I) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.as_ref().trim().to_lowercase().replace([' ', '_'], "-");
        if !tag.is_empty() && !out.contains(&tag) {
            out.push(tag);
        }
    }
    out
}

pub fn validate_tags(tags: &[String]) -> Result<(), ValidationError> {
    if tags.len() > MAX_TAGS {
        return Err(ValidationError::new("tags", format!("{} tags given (at most {MAX_TAGS})", tags.len())));
    }
    for tag in tags {
        let ok = !tag.is_empty()
            && tag.chars().count() <= MAX_TAG_CHARS
            && tag.chars().all(|c| {
                c.is_lowercase() || c.is_ascii_digit() || c == '-' || (c.is_alphabetic() && !c.is_uppercase())
            })
            && !tag.starts_with('-')
            && !tag.ends_with('-');
        if !ok {
            return Err(ValidationError::new(
                "tags",
                format!(
                    "{tag:?} is not lowercase-hyphenated (letters, digits and '-', at most {MAX_TAG_CHARS} characters)"
                ),
            ));
        }
    }
    Ok(())
}

fn validate_references(field: &'static str, values: &[String], max: usize) -> Result<(), ValidationError> {
    if values.len() > max {
        return Err(ValidationError::new(field, format!("{} entries given (at most {max})", values.len())));
    }
    for value in values {
        if value.trim().is_empty() || value.chars().count() > MAX_REFERENCE_CHARS || value.contains(['\n', '\r']) {
            return Err(ValidationError::new(
                field,
                format!("entry {value:?} must be one line of 1 to {MAX_REFERENCE_CHARS} characters"),
            ));
        }
    }
    Ok(())
}

/// Dedup hints are `category:topic:key`.
pub fn validate_dedup_hint(hint: &str) -> Result<(), ValidationError> {
    let parts: Vec<&str> = hint.split(':').collect();
    if parts.len() == 3 && parts.iter().all(|p| !p.trim().is_empty()) && hint.chars().count() <= MAX_REFERENCE_CHARS {
        return Ok(());
    }
    Err(ValidationError::new("dedup_hint", format!("{hint:?} is not of the form category:topic:key")))
}

/// Loose input for creating or editing an item: every field optional. Unknown JSON fields
/// are rejected so a typo in an import never silently drops data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemDraft {
    pub id: Option<String>,
    pub scope: Option<String>,
    pub kind: Option<String>,
    pub schema_key: Option<String>,
    pub title: Option<String>,
    pub content: Option<String>,
    pub rationale: Option<String>,
    pub confidence: Option<f64>,
    pub importance: Option<i64>,
    pub status: Option<String>,
    pub severity: Option<String>,
    pub pinned: Option<bool>,
    pub pin_priority: Option<i32>,
    pub stable: Option<bool>,
    pub strength: Option<f64>,
    pub decay_rate: Option<f64>,
    pub tags: Option<Vec<String>>,
    pub files: Option<Vec<String>>,
    pub evidence: Option<Vec<String>>,
    pub dedup_hint: Option<String>,
    pub supersedes: Option<String>,
    pub superseded_by: Option<String>,
    pub valid_from: Option<String>,
    pub valid_until: Option<String>,
    pub source: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub last_accessed_at: Option<String>,
    pub access_count: Option<u32>,
    pub review_due_at: Option<String>,
    pub review_count: Option<u32>,
    /// Accepted for lossless round trips; always recomputed at write time.
    pub tokens: Option<u32>,
    pub version: Option<u64>,
}

/// What the caller supplies when a draft becomes a new item.
#[derive(Clone, Debug)]
pub struct NewItemContext {
    pub id: String,
    pub now: Timestamp,
    pub default_scope: Scope,
    pub default_source: String,
    pub default_status: Status,
}

fn parse_time_field(field: &'static str, text: &str) -> Result<Timestamp, ValidationError> {
    crate::time::parse_timestamp(text).map_err(|message| ValidationError::new(field, message))
}

fn parse_optional_time(field: &'static str, text: &Option<String>) -> Result<Option<Timestamp>, ValidationError> {
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => parse_time_field(field, text).map(Some),
    }
}

fn non_empty(text: &Option<String>) -> Option<String> {
    text.as_ref().map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

impl ItemDraft {
    /// Builds a new validated item; missing optional fields take their defaults.
    /// `tokens` is left 0: the caller computes it with its configured counter.
    pub fn into_new_item(self, context: NewItemContext) -> Result<Item, ValidationError> {
        let kind: Kind = match &self.kind {
            Some(text) => text.parse().map_err(|message| ValidationError::new("kind", message))?,
            None => Kind::Note,
        };
        let (default_strength, default_decay) = kind.default_strength();
        let id = match &self.id {
            Some(id) => {
                validate_id(id)?;
                id.clone()
            }
            None => context.id,
        };
        let created_at = match &self.created_at {
            Some(text) => parse_time_field("created_at", text)?,
            None => context.now,
        };
        let updated_at = match &self.updated_at {
            Some(text) => parse_time_field("updated_at", text)?,
            None => created_at,
        };
        let mut item = Item {
            id,
            scope: context.default_scope,
            kind,
            schema_key: kind.default_schema_key(),
            title: String::new(),
            content: String::new(),
            rationale: None,
            confidence: 0.7,
            importance: 3,
            status: context.default_status,
            severity: None,
            pinned: false,
            pin_priority: 0,
            stable: false,
            strength: default_strength,
            decay_rate: default_decay,
            tags: Vec::new(),
            files: Vec::new(),
            evidence: Vec::new(),
            dedup_hint: None,
            supersedes: None,
            superseded_by: None,
            valid_from: None,
            valid_until: None,
            source: context.default_source,
            created_at,
            updated_at,
            last_accessed_at: None,
            access_count: 0,
            review_due_at: None,
            review_count: 0,
            tokens: 0,
            version: self.version.unwrap_or(1).max(1),
        };
        if self.title.is_none() {
            return Err(ValidationError::new("title", "is missing (1 to 200 characters, one line)"));
        }
        self.apply_to(&mut item)?;
        Ok(item)
    }

    /// Applies the fields that are set to an existing item and validates the result.
    /// `id`, `created_at`, `version` and `tokens` are not editable through a draft.
    pub fn apply_to(&self, item: &mut Item) -> Result<(), ValidationError> {
        if let Some(text) = &self.scope {
            item.scope = Scope::parse(text).map_err(|message| ValidationError::new("scope", message))?;
        }
        if let Some(text) = &self.kind {
            let kind: Kind = text.parse().map_err(|message| ValidationError::new("kind", message))?;
            if kind != item.kind && self.schema_key.is_none() && item.schema_key == item.kind.default_schema_key() {
                item.schema_key = kind.default_schema_key();
            }
            item.kind = kind;
        }
        if let Some(key) = &self.schema_key {
            item.schema_key = key.trim().to_string();
        }
        if let Some(title) = &self.title {
            item.title = title.trim().to_string();
        }
        if let Some(content) = &self.content {
            item.content = content.clone();
        }
        if let Some(rationale) = &self.rationale {
            item.rationale = non_empty(&Some(rationale.clone()));
        }
        if let Some(confidence) = self.confidence {
            if !(confidence.is_finite() && (0.0..=1.0).contains(&confidence)) {
                return Err(ValidationError::new("confidence", format!("{confidence} is not between 0.0 and 1.0")));
            }
            item.confidence = confidence as f32;
        }
        if let Some(importance) = self.importance {
            item.importance = validate_importance(importance)?;
        }
        if let Some(text) = &self.status {
            item.status = text.parse().map_err(|message| ValidationError::new("status", message))?;
        }
        if let Some(text) = &self.severity {
            item.severity = if text.trim().is_empty() {
                None
            } else {
                Some(text.parse().map_err(|message| ValidationError::new("severity", message))?)
            };
        }
        if let Some(pinned) = self.pinned {
            item.pinned = pinned;
        }
        if let Some(priority) = self.pin_priority {
            item.pin_priority = priority;
        }
        if let Some(stable) = self.stable {
            item.stable = stable;
        }
        if let Some(strength) = self.strength {
            item.strength = strength as f32;
        }
        if let Some(decay) = self.decay_rate {
            item.decay_rate = decay as f32;
        }
        if let Some(tags) = &self.tags {
            item.tags = normalize_tags(tags);
        }
        if let Some(files) = &self.files {
            item.files = files.iter().map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).collect();
        }
        if let Some(evidence) = &self.evidence {
            item.evidence = evidence.iter().map(|e| e.trim().to_string()).filter(|e| !e.is_empty()).collect();
        }
        if self.dedup_hint.is_some() {
            item.dedup_hint = non_empty(&self.dedup_hint);
        }
        if self.supersedes.is_some() {
            item.supersedes = non_empty(&self.supersedes);
        }
        if self.superseded_by.is_some() {
            item.superseded_by = non_empty(&self.superseded_by);
        }
        if self.valid_from.is_some() {
            item.valid_from = parse_optional_time("valid_from", &self.valid_from)?;
        }
        if self.valid_until.is_some() {
            item.valid_until = parse_optional_time("valid_until", &self.valid_until)?;
        }
        if let Some(source) = non_empty(&self.source) {
            item.source = source;
        }
        if let Some(text) = &self.updated_at {
            item.updated_at = parse_time_field("updated_at", text)?;
        }
        if self.last_accessed_at.is_some() {
            item.last_accessed_at = parse_optional_time("last_accessed_at", &self.last_accessed_at)?;
        }
        if let Some(count) = self.access_count {
            item.access_count = count;
        }
        if self.review_due_at.is_some() {
            item.review_due_at = parse_optional_time("review_due_at", &self.review_due_at)?;
        }
        if let Some(count) = self.review_count {
            item.review_count = count;
        }
        item.validate()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn f32_values_serialize_as_their_stored_decimal_also_through_json_values() {
        #[derive(Serialize)]
        struct Probe {
            #[serde(serialize_with = "serialize_decimal_f32")]
            confidence: f32,
        }
        for (value, text) in [(0.8_f32, "0.8"), (0.1, "0.1"), (0.333, "0.333"), (1.0, "1.0"), (0.0, "0.0")] {
            let probe = Probe { confidence: value };
            assert_eq!(serde_json::to_value(&probe).unwrap().to_string(), format!("{{\"confidence\":{text}}}"));
            assert_eq!(serde_json::to_string(&probe).unwrap(), format!("{{\"confidence\":{text}}}"));
        }
        assert_eq!(decimal_f64(0.8), 0.8);
    }

    use super::*;

    fn context() -> NewItemContext {
        NewItemContext {
            id: "mem_01JD0000000000000000000000".into(),
            now: "2026-11-21T10:00:00Z".parse().unwrap(),
            default_scope: Scope::Global,
            default_source: "cli".into(),
            default_status: Status::Approved,
        }
    }

    fn draft(title: &str) -> ItemDraft {
        ItemDraft { title: Some(title.into()), ..ItemDraft::default() }
    }

    #[test]
    fn a_minimal_draft_takes_every_default() {
        let item = draft("Use WAL").into_new_item(context()).unwrap();
        assert_eq!(item.kind, Kind::Note);
        assert_eq!(item.schema_key, "root/note");
        assert_eq!(item.confidence, 0.7);
        assert_eq!(item.importance, 3);
        assert_eq!(item.status, Status::Approved);
        assert_eq!(item.version, 1);
    }

    #[test]
    fn each_bad_field_is_named_with_its_allowed_values() {
        let cases: Vec<(ItemDraft, &str, &str)> = vec![
            (ItemDraft { importance: Some(6), ..draft("t") }, "importance", "1 to 5"),
            (ItemDraft { importance: Some(0), ..draft("t") }, "importance", "1 to 5"),
            (ItemDraft { confidence: Some(1.5), ..draft("t") }, "confidence", "between 0.0 and 1.0"),
            (ItemDraft { confidence: Some(f64::NAN), ..draft("t") }, "confidence", "between"),
            (ItemDraft { kind: Some("banana".into()), ..draft("t") }, "kind", "allowed: architecture, convention"),
            (ItemDraft { status: Some("live".into()), ..draft("t") }, "status", "allowed: draft, approved"),
            (ItemDraft { scope: Some("planet/x".into()), ..draft("t") }, "scope", "allowed: global"),
            (draft(""), "title", "empty"),
            (draft(&"x".repeat(500)), "title", "500 characters"),
            (draft("two\nlines"), "title", "one line"),
            (ItemDraft { content: Some("y".repeat(20_001)), ..draft("t") }, "content", "20000"),
            (ItemDraft { tags: Some((0..11).map(|i| format!("t{i}")).collect()), ..draft("t") }, "tags", "at most 10"),
            (ItemDraft { dedup_hint: Some("just-one".into()), ..draft("t") }, "dedup_hint", "category:topic:key"),
            (ItemDraft { id: Some("mem_nope".into()), ..draft("t") }, "id", "ULID"),
            (ItemDraft { valid_until: Some("yesterday".into()), ..draft("t") }, "valid_until", "RFC 3339"),
            (ItemDraft { schema_key: Some("Root//x".into()), ..draft("t") }, "schema_key", "lowercase segments"),
        ];
        for (draft, field, fragment) in cases {
            let err = draft.clone().into_new_item(context()).expect_err(&format!("{draft:?} should fail"));
            assert_eq!(err.field, field, "{err}");
            assert!(err.to_string().contains(fragment), "{err} should mention {fragment:?}");
        }
    }

    #[test]
    fn tags_are_normalized_to_lowercase_hyphenated() {
        let item = ItemDraft { tags: Some(vec!["Auth Flow".into(), "auth_flow".into(), " db ".into()]), ..draft("t") }
            .into_new_item(context())
            .unwrap();
        assert_eq!(item.tags, vec!["auth-flow", "db"]);
    }

    #[test]
    fn changing_kind_moves_a_default_schema_key_but_keeps_a_custom_one() {
        let mut item = draft("t").into_new_item(context()).unwrap();
        ItemDraft { kind: Some("decision".into()), ..ItemDraft::default() }.apply_to(&mut item).unwrap();
        assert_eq!(item.schema_key, "root/decisions");
        item.schema_key = "root/decisions/storage".into();
        ItemDraft { kind: Some("bug".into()), ..ItemDraft::default() }.apply_to(&mut item).unwrap();
        assert_eq!(item.schema_key, "root/decisions/storage");
    }

    #[test]
    fn ids_accept_ulids_and_vault_hashes_only() {
        assert!(is_valid_id("mem_01JD0000000000000000000000"));
        assert!(is_valid_id("mem_v0123456789abcdef01234567"));
        assert!(!is_valid_id("mem_../../etc/passwd"));
        assert!(!is_valid_id("mem_01jd0000000000000000000000"));
        assert!(!is_valid_id("01JD0000000000000000000000"));
    }
}
