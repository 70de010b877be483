//! Items lend each other context: an item written next to a match shares part of its score.
//!
//! A question and its answer are different items: "Congrats on the promotion! What's the
//! backstory?" matches a question about the promotion, and the answer is the next turn,
//! which may share no word with it. Items written together — one captured session, one
//! vault arc — carry each other's context, so the items within [`NEIGHBOUR_REACH`] places of
//! a match, in the order its source wrote them and no more than [`NEIGHBOUR_GAP_SECONDS`]
//! apart, get a share of its score ([`NEIGHBOUR_SHARES`]: a quarter next to it, an eighth
//! two places away), added to their own. An item takes the best share any neighbour lends it,
//! never a sum, so what it is lent is always below the lender's own score: a neighbour never
//! outranks a direct match of the same strength.
//!
//! Only sources that name one session, capture or file lend ([`is_context_source`]:
//! `transcript:<session>`, `vault:<path>`); `cli`, `api`, `mcp` or `hook` name a channel,
//! through which unrelated items arrive side by side.
//!
//! The store finds the neighbours ([`Anchor`]: the items either side of each match in its
//! source, within the search's filter); this module decides what they are lent.

use std::collections::HashMap;

use crate::{Item, Timestamp};

/// Items up to this many places before or after a match, in its source's order, are its
/// neighbours.
pub const NEIGHBOUR_REACH: usize = 2;

/// The share of a match's score lent to the neighbour 1, 2, … places away.
///
/// Chosen on the retrieval benchmark (docs/BENCHMARKS.md, issue 29).
pub const NEIGHBOUR_SHARES: [f64; NEIGHBOUR_REACH] = [0.25, 0.125];

/// Items written further apart than this are not neighbours, however adjacent (a session
/// resumed the next day is another conversation).
pub const NEIGHBOUR_GAP_SECONDS: i64 = 6 * 3600;

/// The best matches of a query whose neighbours are looked for (the lenders).
pub const NEIGHBOUR_ANCHORS: usize = 10;

/// What an item's vector is made of: its title and content and, when its source writes
/// items together ([`is_context_source`]), the content of the item written just before it
/// there (`previous`: that content, and how many seconds earlier it was written), unless
/// more than [`NEIGHBOUR_GAP_SECONDS`] apart. An answer then carries the question it
/// answers ("It was Shin Godzilla" after "Seen any good movies?"), so a query close in
/// meaning to the question finds the answer by its own vote, not only by what the question
/// lends it (REALTALK hybrid recall@5 0.518 -> 0.532, docs/BENCHMARKS.md, issue 29, tenth
/// pass). Only the item before: a session grows at its end, so an item's text does not
/// change as later items arrive. Its own text comes first, so an embedder that reads a
/// bounded prefix cuts the context, not the item.
pub fn embedding_text(title: &str, content: &str, source: &str, previous: Option<(&str, i64)>) -> String {
    match previous {
        Some((context, seconds))
            if is_context_source(source) && !context.trim().is_empty() && seconds.abs() <= NEIGHBOUR_GAP_SECONDS =>
        {
            format!("{title}\n{content}\n{context}")
        }
        _ => format!("{title}\n{content}"),
    }
}

/// Whether items of this source were written together: it names one session, capture or
/// file (`transcript:<session>`, `vault:<path>`, any `kind:name`), not a channel (`cli`,
/// `api`, `mcp`, `hook`, `tick`).
pub fn is_context_source(source: &str) -> bool {
    source.split_once(':').is_some_and(|(kind, name)| !kind.is_empty() && !name.trim().is_empty())
}

/// A match whose neighbours a store is asked for: the items of the same `source`, within
/// the search's filter, up to `reach` places before and after it in `(created_at, id)`
/// order (the anchor itself excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Anchor<'a> {
    pub source: &'a str,
    pub created_at: Timestamp,
    pub id: &'a str,
}

impl<'a> Anchor<'a> {
    pub fn of(item: &'a Item) -> Anchor<'a> {
        Anchor { source: &item.source, created_at: item.created_at, id: &item.id }
    }
}

/// What one item is lent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lent {
    /// Index of the lender in the pool.
    pub from: usize,
    /// The share of the lender's score.
    pub score: f64,
}

/// What each item of `pool` is lent by `lenders` (pool indexes with their scores; a score
/// at or below zero lends nothing). The pool must hold every item within
/// [`NEIGHBOUR_REACH`] places of each lender in its source, as the store's answer to the
/// lenders' anchors does: positions are counted among the pool's items of one source.
pub fn lend(pool: &[&Item], lenders: &[(usize, f64)]) -> Vec<Option<Lent>> {
    let mut lent: Vec<Option<Lent>> = vec![None; pool.len()];
    let mut by_source: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, item) in pool.iter().enumerate() {
        if is_context_source(&item.source) {
            by_source.entry(item.source.as_str()).or_default().push(index);
        }
    }
    let mut place: HashMap<usize, (&str, usize)> = HashMap::new();
    for (source, members) in &mut by_source {
        members.sort_by(|&a, &b| pool[a].created_at.cmp(&pool[b].created_at).then_with(|| pool[a].id.cmp(&pool[b].id)));
        for (position, &index) in members.iter().enumerate() {
            place.insert(index, (*source, position));
        }
    }
    for &(lender, score) in lenders {
        if score <= 0.0 {
            continue;
        }
        let Some(&(source, position)) = place.get(&lender) else { continue };
        let members = &by_source[source];
        for (distance, share) in NEIGHBOUR_SHARES.iter().enumerate().map(|(step, share)| (step + 1, share)) {
            let around = [position.checked_sub(distance), position.checked_add(distance)];
            for neighbour in around.into_iter().flatten().filter_map(|at| members.get(at).copied()) {
                let gap = (pool[neighbour].created_at.as_second() - pool[lender].created_at.as_second()).abs();
                if gap > NEIGHBOUR_GAP_SECONDS {
                    continue;
                }
                let offer = Lent { from: lender, score: share * score };
                if lent[neighbour].is_none_or(|held| held.score < offer.score) {
                    lent[neighbour] = Some(offer);
                }
            }
        }
    }
    lent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str, source: &str, minute: i64) -> Item {
        let now = "2024-06-01T00:00:00Z".parse().unwrap();
        let mut item = crate::assemble::fixtures::generate_items(1, 1, now).remove(0);
        item.id = id.into();
        item.source = source.into();
        item.created_at = Timestamp::from_second(1_700_000_000 + minute * 60).unwrap();
        item
    }

    fn shares(pool: &[Item], lenders: &[(usize, f64)]) -> Vec<Option<(usize, f64)>> {
        let refs: Vec<&Item> = pool.iter().collect();
        lend(&refs, lenders).into_iter().map(|lent| lent.map(|lent| (lent.from, lent.score))).collect()
    }

    #[test]
    fn an_item_of_a_session_is_embedded_with_the_one_before_it_and_a_channels_item_alone() {
        let asked = Some(("Kate: Seen any good movies?", 60));
        assert_eq!(
            embedding_text("It was Shin Godzilla", "Emi: It was Shin Godzilla", "transcript:chat/1", asked),
            "It was Shin Godzilla\nEmi: It was Shin Godzilla\nKate: Seen any good movies?"
        );
        // A channel writes unrelated items side by side; the first item has none before it;
        // a day later is another conversation; an empty one adds nothing.
        assert_eq!(embedding_text("T", "c", "cli", asked), "T\nc");
        assert_eq!(embedding_text("T", "c", "transcript:chat/1", None), "T\nc");
        let day_before = Some(("Kate: Seen any good movies?", NEIGHBOUR_GAP_SECONDS + 1));
        assert_eq!(embedding_text("T", "c", "transcript:chat/1", day_before), "T\nc");
        assert_eq!(embedding_text("T", "c", "vault:arcs/a.md", Some((" ", 0))), "T\nc");
        assert_eq!(
            embedding_text("T", "c", "vault:arcs/a.md", Some(("before", NEIGHBOUR_GAP_SECONDS))),
            "T\nc\nbefore"
        );
    }

    #[test]
    fn the_turns_next_to_a_match_share_its_score() {
        // Pool order is not written order: positions come from the time each was written.
        let session = "transcript:s1";
        let pool = vec![
            turn("a4", session, 4),
            turn("a0", session, 0),
            turn("a2", session, 2),
            turn("a1", session, 1),
            turn("a3", session, 3),
            turn("b2", "transcript:s2", 2),
        ];
        let lent = shares(&pool, &[(2, 0.8)]);
        assert_eq!(lent, [Some((2, 0.1)), Some((2, 0.1)), None, Some((2, 0.2)), Some((2, 0.2)), None]);
    }

    #[test]
    fn a_neighbour_takes_the_best_share_never_a_sum_so_it_stays_below_its_lender() {
        let session = "vault:arcs/pool.md";
        let pool = vec![turn("q", session, 0), turn("answer", session, 1), turn("thanks", session, 2)];
        let lent = shares(&pool, &[(0, 0.6), (2, 0.5)]);
        assert_eq!(lent[1], Some((0, 0.15)));
        assert!(lent[1].unwrap().1 < 0.5);
        // The lenders lend each other too (two places apart).
        assert_eq!(lent[0], Some((2, 0.0625)));
        assert_eq!(lent[2], Some((0, 0.075)));
    }

    #[test]
    fn channels_far_turns_and_non_matches_lend_nothing() {
        let pool = vec![
            turn("c1", "cli", 0),
            turn("c2", "cli", 1),
            turn("late", "transcript:s1", 0),
            turn("next day", "transcript:s1", 24 * 60),
            turn("x", "transcript:s3", 0),
            turn("y", "transcript:s3", 1),
        ];
        assert_eq!(shares(&pool, &[(0, 0.9), (2, 0.9), (4, 0.0), (5, -0.2)]), vec![None; 6]);
        assert!(is_context_source("transcript:7d031027"));
        assert!(!is_context_source("cli") && !is_context_source("hook") && !is_context_source("vault:"));
    }
}
