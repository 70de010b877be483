//! One line of `brain import`: parsed as an item draft, made an item, redacted and validated
//! as `Brain::prepare` does. Never panics; an accepted item survives export → import
//! unchanged, and redacting it again changes nothing.
#![no_main]

use brain_core::item::{Item, ItemDraft, NewItemContext};
use brain_core::redact::redact_item;
use brain_core::{Scope, Status, Timestamp};
use libfuzzer_sys::fuzz_target;

fn context() -> NewItemContext {
    let now: Timestamp = "2026-11-21T10:00:00Z".parse().expect("a valid time");
    NewItemContext {
        id: "mem_01JD5Z8X9Y3K4M6N7P8Q9R0S1T".into(),
        now,
        default_scope: Scope::Project("fuzz".into()),
        default_source: "cli".into(),
        default_status: Status::Approved,
    }
}

/// What `Brain::prepare` does before anything is stored.
fn prepare(mut item: Item) -> Option<Item> {
    redact_item(&mut item);
    item.title = item.title.trim().to_string();
    item.validate().ok()?;
    Some(item)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(draft) = serde_json::from_str::<ItemDraft>(text.trim()) else { return };
    let Ok(item) = draft.into_new_item(context()) else { return };
    let Some(mut item) = prepare(item) else { return };
    assert_eq!(redact_item(&mut item.clone()), 0, "redaction is idempotent");
    item.tokens = 0;
    let exported = serde_json::to_string(&item).expect("an item serializes");
    let draft: ItemDraft = serde_json::from_str(&exported).expect("an exported line parses");
    let mut again = prepare(draft.into_new_item(context()).expect("an exported item is accepted"))
        .expect("an exported item validates");
    again.tokens = 0;
    assert_eq!(again, item, "export → import is lossless");
});
