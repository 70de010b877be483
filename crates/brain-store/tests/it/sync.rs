//! The sync contract: the change log (cursors, tombstones), a pushed change applied with its
//! version checked, a pulled change never written over a local edit, conflicts kept and
//! resolved. Run on the backend under test, like the rest of the suite.

use brain_store::{Access, Change, Keep, PullOutcome, PushOutcome, Store};

use crate::backend::fixture;
use crate::{NOW, item};

fn everything(_: &str) -> bool {
    true
}

fn log(store: &Store) -> Vec<Change> {
    store.changes_since(0, 1000, &everything).unwrap().changes
}

fn pending(store: &Store) -> Vec<Change> {
    store.pending_changes(0, 1000, &everything).unwrap().changes
}

/// One sync of `client` with `server` at store level: pending changes pushed (acknowledged
/// when accepted), then the server's log since the client's cursor pulled.
fn sync(client: &Store, server: &Store) -> (usize, usize) {
    let mut conflicts = 0;
    for change in pending(client) {
        match server.write(|tx| tx.apply_pushed(&change)).unwrap() {
            PushOutcome::Accepted { version } => {
                client.write(|tx| tx.acknowledge_push(&change.id, change.seq, version)).unwrap();
            }
            PushOutcome::Conflict { .. } => {}
        }
    }
    let mut applied = 0;
    loop {
        let after = client.read(|tx| tx.sync_cursor("pull:test")).unwrap();
        let page = server.changes_since(after, 2, &everything).unwrap();
        client
            .write(|tx| {
                for change in &page.changes {
                    match tx.apply_pulled(change, NOW.parse().unwrap(), &everything)? {
                        PullOutcome::Applied => applied += 1,
                        PullOutcome::Conflict => conflicts += 1,
                        PullOutcome::Unchanged => {}
                        PullOutcome::OutOfScope { local_scope } => panic!("every scope syncs, not {local_scope}"),
                    }
                }
                tx.set_sync_cursor("pull:test", page.next)
            })
            .unwrap();
        if !page.more {
            break;
        }
    }
    (applied, conflicts)
}

#[test]
fn every_write_moves_the_item_to_the_end_of_the_log_and_a_delete_leaves_a_tombstone() {
    let f = fixture();
    let first = item(1, "First", "one");
    let second = item(2, "Second", "two");
    f.store.insert(&first).unwrap();
    f.store.insert(&second).unwrap();
    let ids: Vec<String> = log(&f.store).into_iter().map(|change| change.id).collect();
    assert_eq!(ids, [first.id.clone(), second.id.clone()]);

    let mut edited = first.clone();
    edited.content = "one, edited".into();
    f.store.write(|tx| tx.update(&edited, Some(1))).unwrap();
    let changes = log(&f.store);
    assert_eq!(changes.len(), 2, "one row per item: {changes:?}");
    assert_eq!(changes[1].id, first.id);
    assert_eq!(changes[1].version, 2);
    assert_eq!(changes[1].item.as_ref().unwrap().content, "one, edited");
    assert!(changes[1].seq > changes[0].seq);

    // Being read is not an edit: no change.
    let before = f.store.last_change().unwrap();
    f.store
        .record_access(&[Access { id: second.id.clone(), strength: Some(0.9) }], NOW.parse().unwrap(), None)
        .unwrap();
    assert_eq!(f.store.last_change().unwrap(), before);

    f.store.write(|tx| tx.delete(&second.id)).unwrap();
    let changes = log(&f.store);
    let tombstone = changes.last().unwrap();
    assert_eq!(tombstone.id, second.id);
    assert_eq!(tombstone.item, None);
    assert_eq!(tombstone.version, 2, "one past the deleted item's version");
    assert_eq!(tombstone.scope, "project/demo");
    assert!(f.store.get(&second.id).unwrap().is_none(), "delete still erases the item");
}

#[test]
fn changes_since_pages_by_cursor_and_passes_rows_of_other_scopes() {
    let f = fixture();
    for n in 1..=5 {
        let mut it = item(n, &format!("Item {n}"), "text");
        if n % 2 == 0 {
            it.scope = brain_core::Scope::Agent("bot".into());
        }
        f.store.insert(&it).unwrap();
    }
    let projects_only = |scope: &str| scope.starts_with("project/");
    let first = f.store.changes_since(0, 3, &projects_only).unwrap();
    assert!(first.more);
    assert_eq!(first.changes.len(), 2, "rows 1..3 read, the agent one left out");
    let second = f.store.read(|tx| tx.changes_since(first.next, 3, &projects_only)).unwrap();
    assert!(!second.more);
    assert_eq!(second.changes.len(), 1);
    let after_all = f.store.read(|tx| tx.changes_since(second.next, 3, &projects_only)).unwrap();
    assert!(after_all.changes.is_empty());
    assert_eq!(after_all.next, second.next, "an empty page keeps the cursor");
}

#[test]
fn vault_derived_items_are_never_logged() {
    let f = fixture();
    let mut derived = item(1, "From the vault", "text");
    derived.id = "mem_v0123456789abcdef01234567".into();
    derived.source = "vault:arcs/a.md".into();
    f.store.insert(&derived).unwrap();
    assert!(log(&f.store).is_empty());
}

#[test]
fn a_pushed_change_applies_on_its_base_version_and_a_replay_repeats_nothing() {
    let server = fixture();
    let new = item(1, "Pushed", "text");
    let change = Change {
        seq: 0,
        id: new.id.clone(),
        scope: "project/demo".into(),
        version: 7,
        base_version: 0,
        item: Some(new.clone()),
    };
    let outcome = server.store.write(|tx| tx.apply_pushed(&change)).unwrap();
    assert_eq!(outcome, PushOutcome::Accepted { version: 1 });
    let generation = server.store.generation().unwrap();
    // The answer was lost; the client pushes again.
    assert_eq!(server.store.write(|tx| tx.apply_pushed(&change)).unwrap(), PushOutcome::Accepted { version: 1 });
    assert_eq!(server.store.generation().unwrap(), generation, "a replay writes nothing");
    assert_eq!(log(&server.store).len(), 1);

    // An edit made on the server meanwhile: a push on the old base is a conflict.
    let mut theirs = new.clone();
    theirs.content = "edited on the server".into();
    server.store.write(|tx| tx.update(&theirs, Some(1))).unwrap();
    let mut mine = new.clone();
    mine.content = "edited elsewhere".into();
    let stale = Change { base_version: 1, item: Some(mine.clone()), ..change.clone() };
    assert_eq!(server.store.write(|tx| tx.apply_pushed(&stale)).unwrap(), PushOutcome::Conflict { version: 2 });
    assert_eq!(server.store.get(&new.id).unwrap().unwrap().content, "edited on the server");

    // On the current base it applies; a tombstone on the next one deletes.
    let fresh = Change { base_version: 2, ..stale };
    assert_eq!(server.store.write(|tx| tx.apply_pushed(&fresh)).unwrap(), PushOutcome::Accepted { version: 3 });
    let tombstone = Change { base_version: 3, item: None, ..fresh };
    assert_eq!(server.store.write(|tx| tx.apply_pushed(&tombstone)).unwrap(), PushOutcome::Accepted { version: 4 });
    assert!(server.store.get(&new.id).unwrap().is_none());
    assert_eq!(server.store.write(|tx| tx.apply_pushed(&tombstone)).unwrap(), PushOutcome::Accepted { version: 4 });
}

#[test]
fn a_pushed_item_must_carry_the_id_it_is_pushed_under() {
    let server = fixture();
    let new = item(1, "Pushed", "text");
    let change = Change {
        seq: 0,
        id: item(2, "x", "y").id,
        scope: "project/demo".into(),
        version: 1,
        base_version: 0,
        item: Some(new),
    };
    assert!(server.store.write(|tx| tx.apply_pushed(&change)).is_err());
}

#[test]
fn a_write_on_one_copy_reaches_the_other_and_nothing_echoes_back() {
    let server = fixture();
    let a = fixture();
    let b = fixture();
    let written = item(1, "Written on A", "text");
    a.store.insert(&written).unwrap();
    assert_eq!(pending(&a.store).len(), 1);
    sync(&a.store, &server.store);
    assert!(pending(&a.store).is_empty(), "acknowledged");
    let (applied, conflicts) = sync(&b.store, &server.store);
    assert_eq!((applied, conflicts), (1, 0));
    let on_b = b.store.get(&written.id).unwrap().unwrap();
    assert!(brain_store::same_content(&on_b, &written));
    assert!(pending(&b.store).is_empty(), "a pulled change is not pushed back");
    // A's own change comes back from the server: nothing to do.
    assert_eq!(sync(&a.store, &server.store), (0, 0));

    // A deletion travels as a tombstone.
    a.store.write(|tx| tx.delete(&written.id)).unwrap();
    sync(&a.store, &server.store);
    assert!(server.store.get(&written.id).unwrap().is_none());
    assert_eq!(sync(&b.store, &server.store), (1, 0));
    assert!(b.store.get(&written.id).unwrap().is_none());
}

#[test]
fn an_item_edited_on_both_sides_is_a_conflict_with_both_versions_resolvable_either_way() {
    let server = fixture();
    let a = fixture();
    let b = fixture();
    let original = item(1, "Shared", "original");
    a.store.insert(&original).unwrap();
    sync(&a.store, &server.store);
    sync(&b.store, &server.store);

    let mut on_a = a.store.get(&original.id).unwrap().unwrap();
    on_a.content = "A's edit".into();
    a.store.write(|tx| tx.update(&on_a, None)).unwrap();
    let mut on_b = b.store.get(&original.id).unwrap().unwrap();
    on_b.content = "B's edit".into();
    b.store.write(|tx| tx.update(&on_b, None)).unwrap();

    sync(&a.store, &server.store);
    let (_, conflicts) = sync(&b.store, &server.store);
    assert_eq!(conflicts, 1);
    assert_eq!(b.store.get(&original.id).unwrap().unwrap().content, "B's edit", "never overwritten");
    let listed = b.store.read(|tx| tx.sync_conflicts()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].local.as_ref().unwrap().content, "B's edit");
    assert_eq!(listed[0].remote.as_ref().unwrap().content, "A's edit");
    assert!(pending(&b.store).is_empty(), "an item in conflict waits for its resolution");
    assert_eq!(server.store.get(&original.id).unwrap().unwrap().content, "A's edit");

    // Keep B's: it becomes the next push and the server takes it; A pulls it.
    b.store.write(|tx| tx.resolve_conflict(&original.id, Keep::Local)).unwrap();
    assert!(b.store.read(|tx| tx.sync_conflicts()).unwrap().is_empty());
    sync(&b.store, &server.store);
    assert_eq!(server.store.get(&original.id).unwrap().unwrap().content, "B's edit");
    assert_eq!(sync(&a.store, &server.store), (1, 0));
    assert_eq!(a.store.get(&original.id).unwrap().unwrap().content, "B's edit");

    // Again, now keeping the server's.
    let mut on_a = a.store.get(&original.id).unwrap().unwrap();
    on_a.content = "A again".into();
    a.store.write(|tx| tx.update(&on_a, None)).unwrap();
    b.store.write(|tx| tx.delete(&original.id)).unwrap();
    sync(&a.store, &server.store);
    assert_eq!(sync(&b.store, &server.store).1, 1, "a local delete against a remote edit is a conflict too");
    let listed = b.store.read(|tx| tx.sync_conflicts()).unwrap();
    assert_eq!(listed[0].local, None);
    b.store.write(|tx| tx.resolve_conflict(&original.id, Keep::Remote)).unwrap();
    assert_eq!(b.store.get(&original.id).unwrap().unwrap().content, "A again");
    assert!(pending(&b.store).is_empty());
    assert!(b.store.write(|tx| tx.resolve_conflict(&original.id, Keep::Remote)).is_err(), "nothing left to resolve");
}

#[test]
fn the_same_edit_on_both_sides_is_not_a_conflict() {
    let server = fixture();
    let a = fixture();
    let b = fixture();
    let original = item(1, "Shared", "original");
    a.store.insert(&original).unwrap();
    sync(&a.store, &server.store);
    sync(&b.store, &server.store);
    for copy in [&a.store, &b.store] {
        let mut edited = copy.get(&original.id).unwrap().unwrap();
        edited.content = "same words".into();
        copy.write(|tx| tx.update(&edited, None)).unwrap();
    }
    sync(&a.store, &server.store);
    assert_eq!(sync(&b.store, &server.store).1, 0);
    assert!(pending(&b.store).is_empty(), "the server had the same words: acknowledged");
    assert!(b.store.read(|tx| tx.sync_conflicts()).unwrap().is_empty());
}

/// Found by the convergence property on PostgreSQL: both copies delete an item one of them
/// had edited. The first delete meets the edit (a conflict); the second reaches the server.
/// When the first copy then pulls the tombstone, server and copy agree again: the conflict
/// is gone, so resolving "for the server" can no longer bring back an edit the server
/// itself deleted.
#[test]
fn a_conflict_ends_when_the_server_comes_round_to_the_local_state() {
    let server = fixture();
    let (a, b) = (fixture(), fixture());
    let original = item(1, "Shared", "original");
    b.store.insert(&original).unwrap();
    sync(&b.store, &server.store);
    let mut edited = b.store.get(&original.id).unwrap().unwrap();
    edited.content = "edited".into();
    b.store.write(|tx| tx.update(&edited, None)).unwrap();
    sync(&a.store, &server.store);
    sync(&b.store, &server.store);
    b.store.write(|tx| tx.delete(&original.id)).unwrap();
    a.store.write(|tx| tx.delete(&original.id)).unwrap();
    assert_eq!(sync(&a.store, &server.store).1, 1, "a's delete meets b's edit");
    assert_eq!(a.store.read(|tx| tx.sync_conflicts()).unwrap().len(), 1);

    sync(&b.store, &server.store);
    assert!(server.store.get(&original.id).unwrap().is_none(), "b's delete reached the server");
    sync(&a.store, &server.store);
    assert!(a.store.read(|tx| tx.sync_conflicts()).unwrap().is_empty(), "both sides deleted it: nothing to resolve");
    assert!(a.store.write(|tx| tx.resolve_conflict(&original.id, Keep::Remote)).is_err());
    assert!(a.store.get(&original.id).unwrap().is_none());
    assert!(pending(&a.store).is_empty(), "the delete is the server's state: nothing to push");
    sync(&a.store, &server.store);
    assert!(a.store.get(&original.id).unwrap().is_none() && server.store.get(&original.id).unwrap().is_none());
}
#[test]
fn a_pulled_change_never_touches_an_item_of_a_scope_not_synced_now() {
    let server = fixture();
    let copy = fixture();
    let mut beta = item(1, "Beta", "beta words");
    beta.scope = brain_core::Scope::Project("beta".into());
    copy.store.insert(&beta).unwrap();
    sync(&copy.store, &server.store);
    assert!(pending(&copy.store).is_empty(), "acknowledged: nothing protects it but its scope");

    // This copy now syncs alpha only; the changes claim alpha for the beta item.
    let alpha_only = |scope: &str| scope == "project/alpha";
    let mut moved = beta.clone();
    moved.scope = brain_core::Scope::Project("alpha".into());
    moved.content = "moved and rewritten".into();
    let claims = [
        Change { seq: 0, id: beta.id.clone(), scope: "project/alpha".into(), version: 2, base_version: 0, item: None },
        Change {
            seq: 0,
            id: beta.id.clone(),
            scope: "project/alpha".into(),
            version: 2,
            base_version: 0,
            item: Some(moved.clone()),
        },
    ];
    let generation = copy.store.generation().unwrap();
    for change in &claims {
        let outcome = copy.store.write(|tx| tx.apply_pulled(change, NOW.parse().unwrap(), &alpha_only)).unwrap();
        assert_eq!(outcome, PullOutcome::OutOfScope { local_scope: "project/beta".into() });
        let kept = copy.store.get(&beta.id).unwrap().expect("not deleted");
        assert_eq!((kept.scope.to_string(), kept.content.as_str()), ("project/beta".into(), "beta words"));
    }
    assert_eq!(copy.store.generation().unwrap(), generation, "a refused change writes nothing");
    assert!(pending(&copy.store).is_empty() && copy.store.read(|tx| tx.sync_conflicts()).unwrap().is_empty());

    // Where beta syncs, the same change applies.
    let outcome = copy.store.write(|tx| tx.apply_pulled(&claims[1], NOW.parse().unwrap(), &everything)).unwrap();
    assert_eq!(outcome, PullOutcome::Applied);
    assert_eq!(copy.store.get(&beta.id).unwrap().unwrap().scope.to_string(), "project/alpha");
}

mod convergence {
    //! Random operations on two copies, synced at random moments: once every conflict is
    //! resolved, both copies and the server hold the same items.

    use std::collections::BTreeMap;

    use brain_store::{Keep, Store};
    use proptest::prelude::*;

    use super::{pending, sync};
    use crate::backend::fixture;
    use crate::item;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(bool),
        Edit(bool, usize, u8),
        Delete(bool, usize),
        Sync(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => any::<bool>().prop_map(Op::Insert),
            3 => (any::<bool>(), any::<usize>(), any::<u8>()).prop_map(|(a, k, t)| Op::Edit(a, k, t)),
            1 => (any::<bool>(), any::<usize>()).prop_map(|(a, k)| Op::Delete(a, k)),
            2 => any::<bool>().prop_map(Op::Sync),
        ]
    }

    fn contents(store: &Store) -> BTreeMap<String, String> {
        store
            .list(&brain_store::ItemFilter::default())
            .unwrap()
            .into_iter()
            .map(|item| (item.id, format!("{} / {}", item.title, item.content)))
            .collect()
    }

    fn nth_id(store: &Store, k: usize) -> Option<String> {
        let ids: Vec<String> = contents(store).into_keys().collect();
        (!ids.is_empty()).then(|| ids[k % ids.len()].clone())
    }

    fn resolve_all(store: &Store) {
        for conflict in store.read(|tx| tx.sync_conflicts()).unwrap() {
            store.write(|tx| tx.resolve_conflict(&conflict.id, Keep::Remote)).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn two_copies_converge_to_the_same_items(ops in proptest::collection::vec(op(), 1..30)) {
            let server = fixture();
            let (a, b) = (fixture(), fixture());
            let copy = |first: bool| if first { &a.store } else { &b.store };
            let mut next: u64 = 1;
            for op in ops {
                match op {
                    Op::Insert(first) => {
                        copy(first).insert(&item(next, &format!("Item {next}"), "new")).unwrap();
                        next += 1;
                    }
                    Op::Edit(first, k, text) => {
                        if let Some(id) = nth_id(copy(first), k) {
                            let mut edited = copy(first).get(&id).unwrap().unwrap();
                            edited.content = format!("edit {text}");
                            copy(first).write(|tx| tx.update(&edited, None)).unwrap();
                        }
                    }
                    Op::Delete(first, k) => {
                        if let Some(id) = nth_id(copy(first), k) {
                            copy(first).write(|tx| tx.delete(&id)).unwrap();
                        }
                    }
                    Op::Sync(first) => {
                        sync(copy(first), &server.store);
                    }
                }
            }
            for _ in 0..2 {
                for store in [&a.store, &b.store] {
                    sync(store, &server.store);
                    resolve_all(store);
                    sync(store, &server.store);
                }
            }
            let on_server = contents(&server.store);
            prop_assert_eq!(&contents(&a.store), &on_server);
            prop_assert_eq!(&contents(&b.store), &on_server);
            prop_assert!(pending(&a.store).is_empty() && pending(&b.store).is_empty());
        }
    }
}
