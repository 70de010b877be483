//! PostgreSQL rows ↔ core types: the column list, an item's parameters, rows back into
//! items and metas, and filters as `WHERE` clauses. The conversions are those of the SQLite
//! backend (timestamps truncated to whole seconds, lists in order), so an item reads back the
//! same from either store.

use brain_core::assemble::ItemMeta;
use brain_core::{Item, Kind, Scope, Timestamp};
use postgres::Row;
use postgres::types::ToSql;

use crate::{ItemFilter, StoreError, StoreResult};

/// The stored columns, in the order of [`item_params`] and [`row_to_item`].
pub(crate) const COLUMNS: &str = "id, scope, kind, schema_key, title, content, rationale, confidence, importance, \
    status, severity, pinned, pin_priority, stable, strength, decay_rate, tags, files, evidence, dedup_hint, \
    supersedes, superseded_by, valid_from, valid_until, source, created_at, updated_at, last_accessed_at, \
    access_count, review_due_at, review_count, tokens, version";

/// How many columns [`COLUMNS`] names.
pub(crate) const COLUMN_COUNT: usize = 33;

/// The columns of a lean meta listing (no text but the schema key and the dedup hint).
pub(crate) const META_COLUMNS: &str =
    "id, kind, schema_key, status, importance, confidence, severity, updated_at, valid_until, tokens, dedup_hint, tags";

/// A parameter list for the client.
pub(crate) type Params = Vec<Box<dyn ToSql + Sync + Send>>;

/// Borrows a parameter list the way the client takes it.
pub(crate) fn refs(params: &Params) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|param| param.as_ref() as &(dyn ToSql + Sync)).collect()
}

/// A timestamp as SQLite stores it: whole seconds.
pub(crate) fn whole_seconds(time: Timestamp) -> Timestamp {
    Timestamp::from_second(time.as_second()).unwrap_or(time)
}

fn optional_time(time: Option<Timestamp>) -> Option<Timestamp> {
    time.map(whole_seconds)
}

/// PostgreSQL text cannot hold NUL characters: refuse the item with a clear error rather
/// than let the server reject the statement (which would abort the whole transaction).
pub(crate) fn check_storable(item: &Item) -> StoreResult<()> {
    let texts = [
        ("title", Some(item.title.as_str())),
        ("content", Some(item.content.as_str())),
        ("rationale", item.rationale.as_deref()),
        ("schema_key", Some(item.schema_key.as_str())),
        ("source", Some(item.source.as_str())),
        ("dedup_hint", item.dedup_hint.as_deref()),
        ("supersedes", item.supersedes.as_deref()),
        ("superseded_by", item.superseded_by.as_deref()),
    ];
    let lists = [("tags", &item.tags), ("files", &item.files), ("evidence", &item.evidence)];
    let bad =
        texts.iter().find(|(_, text)| text.is_some_and(|text| text.contains('\0'))).map(|(name, _)| *name).or_else(
            || lists.iter().find(|(_, list)| list.iter().any(|text| text.contains('\0'))).map(|(name, _)| *name),
        );
    match bad {
        Some(field) => Err(StoreError::Unstorable {
            id: item.id.clone(),
            detail: format!("{field} contains a NUL character, which PostgreSQL text cannot hold"),
        }),
        None => Ok(()),
    }
}

/// An item's values in [`COLUMNS`] order.
pub(crate) fn item_params(item: &Item) -> Params {
    vec![
        Box::new(item.id.clone()),
        Box::new(item.scope.to_string()),
        Box::new(item.kind.as_str()),
        Box::new(item.schema_key.clone()),
        Box::new(item.title.clone()),
        Box::new(item.content.clone()),
        Box::new(item.rationale.clone()),
        Box::new(item.confidence),
        Box::new(i16::from(item.importance)),
        Box::new(item.status.as_str()),
        Box::new(item.severity.map(|severity| severity.as_str())),
        Box::new(item.pinned),
        Box::new(item.pin_priority),
        Box::new(item.stable),
        Box::new(item.strength),
        Box::new(item.decay_rate),
        Box::new(item.tags.clone()),
        Box::new(item.files.clone()),
        Box::new(item.evidence.clone()),
        Box::new(item.dedup_hint.clone()),
        Box::new(item.supersedes.clone()),
        Box::new(item.superseded_by.clone()),
        Box::new(optional_time(item.valid_from)),
        Box::new(optional_time(item.valid_until)),
        Box::new(item.source.clone()),
        Box::new(whole_seconds(item.created_at)),
        Box::new(whole_seconds(item.updated_at)),
        Box::new(optional_time(item.last_accessed_at)),
        Box::new(i64::from(item.access_count)),
        Box::new(optional_time(item.review_due_at)),
        Box::new(i64::from(item.review_count)),
        Box::new(i64::from(item.tokens)),
        Box::new(i64::try_from(item.version).unwrap_or(i64::MAX)),
    ]
}

/// Reads an item from a row whose first columns are [`COLUMNS`].
pub(crate) fn row_to_item(row: &Row) -> StoreResult<Item> {
    let id: String =
        row.try_get(0).map_err(|err| StoreError::InvalidRow { id: "?".into(), detail: err.to_string() })?;
    let invalid = |detail: String| StoreError::InvalidRow { id: id.clone(), detail };
    let get_error = |index: usize, err: postgres::Error| invalid(format!("column {index}: {err}"));
    macro_rules! get {
        ($index:expr) => {
            row.try_get($index).map_err(|err| get_error($index, err))?
        };
    }
    let scope: String = get!(1);
    let kind: String = get!(2);
    let status: String = get!(9);
    let severity: Option<String> = get!(10);
    let importance: i16 = get!(8);
    let access_count: i64 = get!(28);
    let review_count: i64 = get!(30);
    let tokens: i64 = get!(31);
    let version: i64 = get!(32);
    let count = |value: i64| u32::try_from(value).map_err(|_| invalid(format!("count {value} is out of range")));
    Ok(Item {
        id: id.clone(),
        scope: Scope::parse(&scope).map_err(invalid)?,
        kind: kind.parse().map_err(invalid)?,
        schema_key: get!(3),
        title: get!(4),
        content: get!(5),
        rationale: get!(6),
        confidence: get!(7),
        importance: u8::try_from(importance)
            .map_err(|_| invalid(format!("importance {importance} is out of range")))?,
        status: status.parse().map_err(invalid)?,
        severity: severity.map(|severity| severity.parse()).transpose().map_err(invalid)?,
        pinned: get!(11),
        pin_priority: get!(12),
        stable: get!(13),
        strength: get!(14),
        decay_rate: get!(15),
        tags: get!(16),
        files: get!(17),
        evidence: get!(18),
        dedup_hint: get!(19),
        supersedes: get!(20),
        superseded_by: get!(21),
        valid_from: get!(22),
        valid_until: get!(23),
        source: get!(24),
        created_at: get!(25),
        updated_at: get!(26),
        last_accessed_at: get!(27),
        access_count: crate::saturating_count(access_count),
        review_due_at: get!(29),
        review_count: crate::saturating_count(review_count),
        tokens: count(tokens)?,
        version: u64::try_from(version).map_err(|_| invalid(format!("version {version} is out of range")))?,
    })
}

/// Reads a meta from a row of [`META_COLUMNS`], with the conversions of [`row_to_item`] so
/// a meta always agrees with its full item.
pub(crate) fn row_to_meta(row: &Row) -> StoreResult<ItemMeta> {
    let id: String =
        row.try_get(0).map_err(|err| StoreError::InvalidRow { id: "?".into(), detail: err.to_string() })?;
    let invalid = |detail: String| StoreError::InvalidRow { id: id.clone(), detail };
    let get_error = |index: usize, err: postgres::Error| invalid(format!("column {index}: {err}"));
    macro_rules! get {
        ($index:expr) => {
            row.try_get($index).map_err(|err| get_error($index, err))?
        };
    }
    let kind: &str = get!(1);
    let kind: Kind = kind.parse().map_err(invalid)?;
    let status: &str = get!(3);
    let importance: i16 = get!(4);
    let severity: Option<&str> = get!(6);
    let tokens: i64 = get!(9);
    let tags: Vec<&str> = get!(11);
    Ok(ItemMeta {
        id: id.clone(),
        kind,
        schema_key: get!(2),
        status: status.parse().map_err(invalid)?,
        importance: u8::try_from(importance)
            .map_err(|_| invalid(format!("importance {importance} is out of range")))?,
        confidence: get!(5),
        severity: severity.map(str::parse).transpose().map_err(invalid)?,
        updated_at: get!(7),
        valid_until: get!(8),
        tokens: u32::try_from(tokens).map_err(|_| invalid(format!("tokens {tokens} is out of range")))?,
        dedup_hint: get!(10),
        fixed_bug: kind == Kind::Bug && tags.contains(&"fixed"),
        done_todo: kind == Kind::Todo && tags.contains(&"done"),
    })
}

/// ` WHERE …` (or an empty string) for a filter, numbering parameters after `params`.
pub(crate) fn filter_sql(filter: &ItemFilter, params: &mut Params) -> String {
    let mut clauses: Vec<String> = Vec::new();
    let mut push = |clause: &str, value: Box<dyn ToSql + Sync + Send>, params: &mut Params| {
        params.push(value);
        clauses.push(clause.replace('?', &format!("${}", params.len())));
    };
    if let Some(scopes) = &filter.scopes {
        let names: Vec<String> = scopes.iter().map(Scope::to_string).collect();
        push("scope = ANY(?)", Box::new(names), params);
    }
    if !filter.kinds.is_empty() {
        let names: Vec<&'static str> = filter.kinds.iter().map(|kind| kind.as_str()).collect();
        push("kind = ANY(?)", Box::new(names), params);
    }
    if !filter.statuses.is_empty() {
        let names: Vec<&'static str> = filter.statuses.iter().map(|status| status.as_str()).collect();
        push("status = ANY(?)", Box::new(names), params);
    }
    if !filter.tags.is_empty() {
        push("tags @> ?", Box::new(filter.tags.clone()), params);
    }
    if let Some(key) = &filter.schema_key {
        // The key itself or a key below it (`starts_with` takes no wildcards).
        push("(schema_key = ? OR starts_with(schema_key, ? || '/'))", Box::new(key.clone()), params);
    }
    if let Some(prefix) = &filter.source_prefix {
        // A byte range, as in SQLite: exact for any prefix, and it walks the index.
        push("source >= ?", Box::new(prefix.clone()), params);
        push("source < ?", Box::new(format!("{prefix}\u{10FFFF}")), params);
    }
    if let Some(prefix) = &filter.source_prefix_not {
        // Exact for any prefix; an exclusion walks no index anyway.
        push("NOT starts_with(source, ?)", Box::new(prefix.clone()), params);
    }
    if let Some(due) = filter.review_due_by {
        push("review_due_at <= ?", Box::new(whole_seconds(due)), params);
    }
    if let Some(count) = filter.min_access_count {
        push("access_count >= ?", Box::new(i64::from(count)), params);
    }
    if let Some(confidence) = filter.confidence_below {
        push("confidence < ?", Box::new(confidence), params);
    }
    if let Some(pinned) = filter.pinned {
        push("pinned = ?", Box::new(pinned), params);
    }
    if clauses.is_empty() {
        return String::new();
    }
    format!(" WHERE {}", clauses.join(" AND "))
}

/// ` LIMIT … OFFSET …` of a filter's page.
pub(crate) fn page_sql(filter: &ItemFilter, params: &mut Params) -> String {
    let mut sql = String::new();
    if let Some(limit) = filter.limit {
        params.push(Box::new(i64::try_from(limit).unwrap_or(i64::MAX)));
        sql.push_str(&format!(" LIMIT ${}", params.len()));
    }
    if filter.offset > 0 {
        params.push(Box::new(i64::try_from(filter.offset).unwrap_or(i64::MAX)));
        sql.push_str(&format!(" OFFSET ${}", params.len()));
    }
    sql
}
