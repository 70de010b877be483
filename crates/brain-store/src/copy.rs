//! Copying one store into another (`brain migrate --to`): every item, the vault index and
//! the stored tokens, in one write transaction on the target (all or nothing), read from
//! one snapshot of the source. What the target already holds is kept as it is — an item
//! whose id it has, a vault file or value it records, a token name it knows — so running
//! the copy again changes nothing.

use std::collections::HashSet;

use crate::{Store, StoreResult};

/// Items read and inserted per round.
const PAGE: usize = 2000;

/// What a copy did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Items in the source.
    pub items: usize,
    /// Items written into the target.
    pub copied: usize,
    /// Items whose id the target already held (left as they are).
    pub already_there: usize,
    pub vault_files_copied: usize,
    pub vault_values_copied: usize,
    pub tokens_copied: usize,
}

/// Copies `source` into `target` (see the module docs). `progress(done, total)` follows the
/// items.
pub fn copy_all(source: &Store, target: &Store, progress: &mut dyn FnMut(usize, usize)) -> StoreResult<CopyReport> {
    let total = source.count(&crate::ItemFilter::default())? as usize;
    let vault_files = source.vault_files(true)?;
    let tokens = source.tokens()?;
    let known_tokens: HashSet<String> = target.tokens()?.into_iter().map(|token| token.name).collect();
    let known_files: HashSet<String> = target.vault_files(false)?.into_iter().map(|record| record.relpath).collect();
    let values = source.vault_values()?;
    let report = source.read(|read| {
        target.write(|tx| {
            let mut report = CopyReport { items: total, ..CopyReport::default() };
            let mut after = String::new();
            loop {
                let page = read.items_after(&after, PAGE)?;
                let Some(last) = page.last() else { break };
                after = last.id.clone();
                let refs: Vec<&brain_core::Item> = page.iter().collect();
                let skipped = tx.insert_many(&refs)?.len();
                report.copied += page.len() - skipped;
                report.already_there += skipped;
                progress(report.copied + report.already_there, total.max(report.copied + report.already_there));
            }
            for record in vault_files.iter().filter(|record| !known_files.contains(&record.relpath)) {
                tx.put_vault_file(record)?;
                report.vault_files_copied += 1;
            }
            for (key, value) in &values {
                if tx.vault_value(key)?.is_none() {
                    tx.set_vault_value(key, value)?;
                    report.vault_values_copied += 1;
                }
            }
            for token in tokens.iter().filter(|token| !known_tokens.contains(&token.name)) {
                tx.insert_token(token)?;
                report.tokens_copied += 1;
            }
            Ok(report)
        })
    })?;
    // A bulk load changes the shape of the data: see `Store::analyze`.
    if report.copied >= 1000 {
        target.analyze()?;
    }
    Ok(report)
}
