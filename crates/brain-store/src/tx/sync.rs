//! The rules of `brain sync`, once for every backend: the change log read by cursor, a
//! pushed change applied with its version checked (the server's side), a pulled change
//! applied without overwriting a local edit (the synced copy's side), conflicts kept and
//! resolved, and each server's cursor. The backends supply row operations
//! (`sqlite/sync.rs`, `pg/sync.rs`) in the words of `crate::sync`.

use brain_core::{Item, Timestamp};

use super::{ReadBackend, ReadTx, WriteBackend, WriteTx};
use crate::sync::{
    Change, ChangePage, ChangeRow, ConflictRow, Keep, PullOutcome, PushOutcome, SyncConflict, same_content,
};
use crate::{StoreError, StoreResult};

fn same_state(local: Option<&Item>, remote: Option<&Item>) -> bool {
    match (local, remote) {
        (Some(local), Some(remote)) => same_content(local, remote),
        (None, None) => true,
        _ => false,
    }
}

macro_rules! write_dispatch {
    ($self:expr, $tx:ident => $call:expr) => {
        match $self {
            WriteBackend::Sqlite($tx) => $call,
            WriteBackend::Postgres($tx) => $call,
        }
    };
}

macro_rules! read_dispatch {
    ($self:expr, $tx:ident => $call:expr) => {
        match $self {
            ReadBackend::Sqlite($tx) => $call,
            ReadBackend::Postgres($tx) => $call,
        }
    };
}

fn into_change(row: ChangeRow, item: Option<Item>, base_version: u64) -> Change {
    Change {
        seq: row.seq.unwrap_or(0),
        id: row.id,
        scope: row.scope,
        version: row.version,
        base_version,
        item: if row.deleted { None } else { item },
    }
}

impl crate::Store {
    /// Numbers the committed changes that have no cursor yet (PostgreSQL logs a change
    /// without one; SQLite numbers at insert). The `Store` readers of the log below do it
    /// first; a `ReadTx` reader sees only changes numbered before its snapshot.
    pub fn number_changes(&self) -> StoreResult<()> {
        match self {
            crate::Store::Sqlite(store) => store.number_changes(),
            crate::Store::Postgres(store) => store.number_changes(),
        }
    }

    /// [`ReadTx::changes_since`] after [`Store::number_changes`](crate::Store::number_changes).
    pub fn changes_since(&self, after: u64, limit: usize, keep: &dyn Fn(&str) -> bool) -> StoreResult<ChangePage> {
        self.number_changes()?;
        self.read(|tx| tx.changes_since(after, limit, keep))
    }

    /// [`ReadTx::pending_changes`] after [`Store::number_changes`](crate::Store::number_changes).
    pub fn pending_changes(&self, after: u64, limit: usize, keep: &dyn Fn(&str) -> bool) -> StoreResult<ChangePage> {
        self.number_changes()?;
        self.read(|tx| tx.pending_changes(after, limit, keep))
    }

    /// [`ReadTx::last_change`] after [`Store::number_changes`](crate::Store::number_changes).
    pub fn last_change(&self) -> StoreResult<u64> {
        self.number_changes()?;
        self.read(|tx| tx.last_change())
    }
}

impl ReadTx<'_> {
    /// The change log after cursor `after`, at most `limit` rows read, in cursor order;
    /// rows whose scope `keep` refuses are read (the cursor passes them) but left out.
    /// Changes not numbered yet are not read: see [`crate::Store::changes_since`].
    pub fn changes_since(&self, after: u64, limit: usize, keep: &dyn Fn(&str) -> bool) -> StoreResult<ChangePage> {
        let rows = read_dispatch!(&self.backend, tx => tx.change_rows(after, limit.max(1), false))?;
        Ok(page(rows, after, limit.max(1), keep))
    }

    /// The local changes no server has acknowledged, after cursor `after` (within one sync
    /// run), at most `limit` rows read; items in conflict wait for their resolution.
    pub fn pending_changes(&self, after: u64, limit: usize, keep: &dyn Fn(&str) -> bool) -> StoreResult<ChangePage> {
        let rows = read_dispatch!(&self.backend, tx => tx.change_rows(after, limit.max(1), true))?;
        Ok(page(rows, after, limit.max(1), keep))
    }

    /// How many local changes of the scopes `keep` accepts wait for a push (items in
    /// conflict included; changes of scopes that do not sync never leave, so they are not
    /// waiting).
    pub fn count_pending(&self, keep: &dyn Fn(&str) -> bool) -> StoreResult<u64> {
        let by_scope = read_dispatch!(&self.backend, tx => tx.pending_by_scope())?;
        Ok(by_scope.into_iter().filter(|(scope, _)| keep(scope)).map(|(_, count)| count).sum())
    }

    /// The newest cursor of the change log (0 when empty).
    pub fn last_change(&self) -> StoreResult<u64> {
        read_dispatch!(&self.backend, tx => tx.last_change())
    }

    /// Every unresolved conflict, by id.
    pub fn sync_conflicts(&self) -> StoreResult<Vec<SyncConflict>> {
        let rows = read_dispatch!(&self.backend, tx => tx.conflict_rows())?;
        let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
        let mut locals = self.get_many(&ids)?;
        rows.into_iter()
            .map(|row| {
                let local = locals.iter().position(|item| item.id == row.id).map(|index| locals.swap_remove(index));
                conflict_from_row(row, local)
            })
            .collect()
    }

    /// A named cursor (`pull:<url>`, …); 0 when never set.
    pub fn sync_cursor(&self, name: &str) -> StoreResult<u64> {
        read_dispatch!(&self.backend, tx => tx.cursor(name))
    }
}

fn page(
    rows: Vec<(ChangeRow, Option<Item>, u64)>,
    after: u64,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> ChangePage {
    let more = rows.len() >= limit;
    let next = rows.last().and_then(|(row, _, _)| row.seq).unwrap_or(after);
    let changes = rows
        .into_iter()
        .filter(|(row, _, _)| keep(&row.scope))
        .map(|(row, item, base)| into_change(row, item, base))
        .collect();
    ChangePage { changes, next, more }
}

fn conflict_from_row(row: ConflictRow, local: Option<Item>) -> StoreResult<SyncConflict> {
    let remote = row
        .remote
        .as_deref()
        .map(serde_json::from_str::<Item>)
        .transpose()
        .map_err(|err| StoreError::InvalidRow { id: row.id.clone(), detail: format!("conflict copy: {err}") })?;
    Ok(SyncConflict { id: row.id, local, remote_version: row.remote_version, remote, found_at: row.found_at })
}

impl WriteTx<'_> {
    /// The server's side of a push: applies `change` when the stored version (an item's,
    /// a tombstone's, or 0 for an id never seen) is the change's `base_version`. A change
    /// whose content is already stored is accepted without a write, so a push replayed
    /// after a lost answer is recognised and repeats nothing.
    pub fn apply_pushed(&mut self, change: &Change) -> StoreResult<PushOutcome> {
        if let Some(item) = &change.item
            && item.id != change.id
        {
            return Err(StoreError::InvalidRow {
                id: change.id.clone(),
                detail: format!("pushed item carries id {}", item.id),
            });
        }
        let current = self.get(&change.id)?;
        let current_version = match &current {
            Some(item) => item.version,
            None => self.change_row(&change.id)?.map_or(0, |row| row.version),
        };
        if same_state(current.as_ref(), change.item.as_ref()) {
            return Ok(PushOutcome::Accepted { version: current_version });
        }
        if change.base_version != current_version {
            return Ok(PushOutcome::Conflict { version: current_version });
        }
        let version = self.write_state(&change.id, current.as_ref(), change.item.as_ref(), current_version)?;
        Ok(PushOutcome::Accepted { version })
    }

    /// The synced copy's side of a push answer: the server stored the change read at `seq`
    /// as its `version`. The change stops being pending unless the item changed again
    /// since it was read (then it stays pending, on top of the new base).
    pub fn acknowledge_push(&mut self, id: &str, seq: u64, version: u64) -> StoreResult<()> {
        self.set_sync_base(id, version)?;
        write_dispatch!(&mut self.backend, tx => tx.settle_change(id, Some(seq)))?;
        Ok(())
    }

    /// The synced copy's side of a pull: applies the server's `change` unless this copy
    /// already has it (its base is as new) or changed the item too since the last sync —
    /// then the server's version is kept as a conflict beside the local one (replacing an
    /// older one), never written over it. A pulled state equal to the local one ends any
    /// conflict of the item.
    ///
    /// `synced` says which scopes this copy syncs now. A change is applied only to an item
    /// whose local copy is in one of them: the scope a change claims is the server's word,
    /// and a copy whose `[sync] scopes` were narrowed keeps items of the scopes it dropped,
    /// which no server may delete or move any more.
    pub fn apply_pulled(
        &mut self,
        change: &Change,
        now: Timestamp,
        synced: &dyn Fn(&str) -> bool,
    ) -> StoreResult<PullOutcome> {
        let local = self.get(&change.id)?;
        if let Some(local) = &local {
            let local_scope = local.scope.to_string();
            if !synced(&local_scope) {
                return Ok(PullOutcome::OutOfScope { local_scope });
            }
        }
        if change.version <= self.sync_base(&change.id)? {
            return Ok(PullOutcome::Unchanged);
        }
        let pending = self.change_row(&change.id)?.is_some_and(|row| row.pending);
        let equal = same_state(local.as_ref(), change.item.as_ref());
        if pending && !equal {
            let remote = change.item.as_ref().map(serde_json::to_string).transpose().map_err(|err| {
                StoreError::InvalidRow { id: change.id.clone(), detail: format!("conflict copy: {err}") }
            })?;
            let row = ConflictRow { id: change.id.clone(), remote_version: change.version, remote, found_at: now };
            write_dispatch!(&mut self.backend, tx => tx.put_conflict(&row))?;
            return Ok(PullOutcome::Conflict);
        }
        if !equal {
            let local_version = local.as_ref().map_or(0, |item| item.version);
            self.write_state(&change.id, local.as_ref(), change.item.as_ref(), local_version)?;
        }
        if pending {
            // The server came round to this copy's state (another copy made the same
            // change): a conflict kept from an older pull has nothing left to resolve, and
            // resolving it for the server's older side would bring back what the server
            // itself has since replaced.
            write_dispatch!(&mut self.backend, tx => tx.remove_conflict(&change.id))?;
        }
        write_dispatch!(&mut self.backend, tx => tx.settle_change(&change.id, None))?;
        self.set_sync_base(&change.id, change.version)?;
        Ok(if equal { PullOutcome::Unchanged } else { PullOutcome::Applied })
    }

    /// Resolves a conflict: `Local` keeps this copy's item and makes it the next push (on
    /// top of the server's version, so the server takes it); `Remote` replaces the local
    /// item with the server's. `NotFound` when `id` is not in conflict.
    pub fn resolve_conflict(&mut self, id: &str, keep: Keep) -> StoreResult<()> {
        let row = write_dispatch!(&self.backend, tx => tx.conflict_row(id))?
            .ok_or_else(|| StoreError::NotFound { id: id.to_string() })?;
        let local = self.get(id)?;
        let conflict = conflict_from_row(row, local)?;
        match keep {
            Keep::Local => {
                self.set_sync_base(id, conflict.remote_version)?;
                write_dispatch!(&mut self.backend, tx => tx.mark_pending(id))?;
            }
            Keep::Remote => {
                if !same_state(conflict.local.as_ref(), conflict.remote.as_ref()) {
                    let local_version = conflict.local.as_ref().map_or(0, |item| item.version);
                    self.write_state(id, conflict.local.as_ref(), conflict.remote.as_ref(), local_version)?;
                }
                write_dispatch!(&mut self.backend, tx => tx.settle_change(id, None))?;
                self.set_sync_base(id, conflict.remote_version)?;
            }
        }
        write_dispatch!(&mut self.backend, tx => tx.remove_conflict(id))?;
        Ok(())
    }

    /// Sets a named cursor, in this transaction (so it moves exactly when what it counts
    /// commits).
    pub fn set_sync_cursor(&mut self, name: &str, value: u64) -> StoreResult<()> {
        write_dispatch!(&mut self.backend, tx => tx.set_cursor(name, value))
    }

    fn sync_base(&self, id: &str) -> StoreResult<u64> {
        write_dispatch!(&self.backend, tx => tx.sync_base(id))
    }

    fn set_sync_base(&mut self, id: &str, version: u64) -> StoreResult<()> {
        write_dispatch!(&mut self.backend, tx => tx.set_sync_base(id, version))
    }

    fn change_row(&self, id: &str) -> StoreResult<Option<ChangeRow>> {
        write_dispatch!(&self.backend, tx => tx.change_row(id))
    }

    /// Makes the stored state of `id` `wanted` (an item or nothing), from `current` whose
    /// version (or tombstone's) is `current_version`. Returns the version stored.
    fn write_state(
        &mut self,
        id: &str,
        current: Option<&Item>,
        wanted: Option<&Item>,
        current_version: u64,
    ) -> StoreResult<u64> {
        match (current, wanted) {
            (Some(_), Some(item)) => Ok(self.update(item, Some(current_version))?.version),
            (None, Some(item)) => {
                let mut item = item.clone();
                item.version = current_version + 1;
                self.insert(&item)?;
                Ok(item.version)
            }
            (Some(_), None) => {
                self.delete(id)?;
                Ok(current_version + 1)
            }
            (None, None) => Ok(current_version),
        }
    }
}
