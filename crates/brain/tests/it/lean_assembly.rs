//! The brain document and the claude-md summary read a big store lean (metas of every
//! item, full items only for what is rendered); the result must equal the assembly over
//! every item loaded in full, for any store.

use brain_api::app::{Brain, BudgetOverrides, Context};
use brain_core::assemble::fixtures::generate_items;
use brain_core::assemble::{BrainOptions, brain_document, claude_md_summary};
use brain_core::{Item, Scope, Status};
use brain_store::ItemFilter;

use crate::vault_support::standard_vault;
use crate::{Env, NOW};

fn open(env: &Env) -> Brain {
    let context = Context {
        home: env.home.clone(),
        cwd: env.project_dir.clone(),
        project: None,
        now: NOW.parse().unwrap(),
        env: brain_api::config::Environment::default(),
    };
    Brain::open(&context).unwrap()
}

/// `count` generated items (dedup hints, pins, every status, expired ones): most in the
/// project `demo`, a fifth global, and some of another project the session must not see.
fn generated(count: usize, seed: u64) -> Vec<Item> {
    let mut items = generate_items(count, seed, NOW.parse().unwrap());
    for (position, item) in items.iter_mut().enumerate() {
        if item.scope != Scope::Global {
            item.scope = Scope::Project(if position % 7 == 3 { "other".into() } else { "demo".into() });
        }
        if position % 13 == 0 {
            item.status = Status::Archived;
        }
    }
    items
}

/// The document and summary the lean path gives must equal the full-load ones.
fn assert_lean_equals_full(brain: &Brain, options: &BrainOptions) {
    let filter = ItemFilter { scopes: Some(brain.visible_scopes()), ..ItemFilter::default() };
    let items = brain.store().list(&filter).unwrap();
    let feed = brain.feed();
    let expected = brain_document(&items, brain.now(), brain.counter(), options, &feed);
    let lean = brain.brain_document(options).unwrap();
    assert_eq!(serde_json::to_string(&lean).unwrap(), serde_json::to_string(&expected).unwrap());

    let injects: Vec<_> = feed.injects.iter().filter(|block| block.targets("CLAUDE.md")).cloned().collect();
    let expected = claude_md_summary(&items, brain.now(), brain.counter(), options, &injects);
    let lean = brain.claude_md(options, "CLAUDE.md").unwrap();
    assert_eq!(serde_json::to_string(&lean).unwrap(), serde_json::to_string(&expected).unwrap());
}

#[test]
fn the_lean_brain_document_equals_the_fully_loaded_one() {
    for (count, seed, with_feed) in [(0, 1, false), (1, 2, true), (40, 3, false), (600, 4, true), (4000, 5, false)] {
        let env = Env::new();
        if with_feed {
            let vault = standard_vault(&env);
            env.brain().args(["vault", "scan", "--vault", vault.arg()]).assert().success();
        }
        let brain = open(&env);
        let items = generated(count, seed);
        brain.store().insert_all(&items, &mut |_| {}).unwrap();
        let configured = brain.brain_options(&BudgetOverrides::default());
        for options in [
            configured.clone(),
            BrainOptions { token_budget: 400, include_tree: false, ..configured.clone() },
            BrainOptions { token_budget: 30_000, ..configured.clone() },
        ] {
            assert_lean_equals_full(&brain, &options);
        }
    }
}
