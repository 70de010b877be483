//! Search as every surface sees it (`brain search`, MCP `brain_search`, the HTTP API and the
//! dashboard, session-start recall and the prompt hook's task recall, `brain_context_pack`,
//! the agent profile's memories), on every backend: the store's candidates ranked by
//! `brain_core::search`, the best matches lending their neighbours part of their score, each
//! hit with a `why`.

use brain_core::Item;
use brain_core::search::{
    Anchor, CandidateRequest, Lent, NEIGHBOUR_ANCHORS, NEIGHBOUR_REACH, Query, Ranked, Ranking, is_context_source, lend,
};
use brain_store::{ItemFilter, Store};

use crate::error::{BrainError, BrainResult};

/// Most results one page may hold (SPEC §5: bounded in every interface).
pub const MAX_LIMIT: usize = 100;

/// The core ranks at least this many candidates, however few results are asked for: the
/// store's order (FTS5's `bm25()`) is only a first cut, and the item core puts first is
/// usually, not always, among the store's first few.
pub const MIN_CANDIDATES: usize = 50;

/// One ranked result.
#[derive(Clone, Debug)]
pub struct Hit {
    pub item: Item,
    /// See `brain_core::search::Ranked::score`, plus what a neighbour lent: comparable within
    /// one query only.
    pub score: f64,
    /// Which words matched where (and a matching date): "matched: retry (title), jitter (content)".
    pub why: String,
    /// It matched only generic words or schema keys (`brain_core::search::Ranked::generic_only`)
    /// and no neighbour lent it anything: session start leaves it out.
    pub generic_only: bool,
}

/// Parses a query, refusing one with no words.
pub fn parse(text: &str) -> BrainResult<Query> {
    let query = Query::parse(text);
    if query.is_empty() {
        let shown: String = text.chars().take(60).collect();
        return Err(BrainError::user_with_hint(
            format!("{shown:?} has no words to search for"),
            "search for words (letters or digits), e.g. `brain search retry logic`",
        ));
    }
    Ok(query)
}

/// The best `needed` items of `filter` for `query`, best first: the candidates ranked, then
/// the neighbours of the best [`NEIGHBOUR_ANCHORS`] matches (same session, capture or arc,
/// adjacent in time) lent part of their score (`brain_core::search::lend`), within the same
/// filter. The anchors do not depend on `needed`, so every page of a query ranks alike.
pub fn lexical(store: &Store, query: &Query, filter: &ItemFilter, needed: usize) -> BrainResult<Vec<Hit>> {
    Ok(lexical_known(store, query, filter, needed)?.0)
}

/// [`lexical`], and the share of the query's weight the store holds at all
/// (`TermStatistics::held_share`).
fn lexical_known(store: &Store, query: &Query, filter: &ItemFilter, needed: usize) -> BrainResult<(Vec<Hit>, f64)> {
    let words = query.words();
    let limit = needed.saturating_mul(2).max(MIN_CANDIDATES);
    let candidates = store.candidates(&CandidateRequest { words: &words, limit }, filter)?;
    let known = candidates.statistics.held_share();
    let ranked = brain_core::search::rank(query, &candidates, &Ranking::default());
    let lenders: Vec<(usize, f64)> = ranked
        .iter()
        .filter(|hit| !hit.generic_only && hit.score > 0.0)
        .filter(|hit| is_context_source(&candidates.items[hit.index].source))
        .take(NEIGHBOUR_ANCHORS)
        .map(|hit| (hit.index, hit.score))
        .collect();
    let held: Vec<&Item> = candidates.items.iter().collect();
    let (neighbours, lent) = lend_beside(store, &held, &lenders, filter)?;
    // The pool: the candidates, then the neighbours that were not candidates.
    let pool: Vec<&Item> = held.into_iter().chain(&neighbours).collect();
    let mut scored: Vec<(f64, usize, Option<&Ranked>)> = ranked
        .iter()
        .map(|hit| (hit.score + lent[hit.index].map_or(0.0, |lent| lent.score), hit.index, Some(hit)))
        .collect();
    for (index, lent) in lent.iter().enumerate() {
        if let Some(lent) = lent
            && !ranked.iter().any(|hit| hit.index == index)
        {
            scored.push((lent.score, index, None));
        }
    }
    // Ties keep the ranking's order; a lent-only item comes after the direct matches.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.2.is_some().cmp(&a.2.is_some())).then(a.1.cmp(&b.1)));
    let hits: Vec<Hit> = scored
        .into_iter()
        .take(needed)
        .map(|(score, index, direct)| {
            let lent = lent[index];
            let explained = direct.map(|hit| explain(query, hit)).unwrap_or_default();
            let next_to = lent.map(|lent| format!("next to a match ({})", pool[lent.from].id)).unwrap_or_default();
            let why = joined(&[&explained, &next_to]);
            let generic_only = lent.is_none() && direct.is_some_and(|hit| hit.generic_only);
            Hit { item: pool[index].clone(), score, why, generic_only }
        })
        .collect();
    Ok((hits, known))
}

/// The items written next to `lenders` (indexes into `held`, each with the score it lends:
/// same session, capture or arc, within [`NEIGHBOUR_REACH`] places, within `filter`) that
/// `held` does not hold, and what each item of `held` and then of those is lent
/// (`brain_core::search::lend`). Both rankings lend through it: the lexical one its best
/// matches' scores ([`lexical`]), the hybrid one its closest neighbours' votes
/// ([`lent_in_meaning`]).
fn lend_beside(
    store: &Store,
    held: &[&Item],
    lenders: &[(usize, f64)],
    filter: &ItemFilter,
) -> BrainResult<(Vec<Item>, Vec<Option<Lent>>)> {
    let mut found = Vec::new();
    if !lenders.is_empty() {
        let anchors: Vec<Anchor<'_>> = lenders.iter().map(|&(index, _)| Anchor::of(held[index])).collect();
        let known: std::collections::HashSet<&str> = held.iter().map(|item| item.id.as_str()).collect();
        found = store.neighbours(&anchors, NEIGHBOUR_REACH, filter)?;
        found.retain(|item| !known.contains(item.id.as_str()));
    }
    let pool: Vec<&Item> = held.iter().copied().chain(&found).collect();
    let lent = lend(&pool, lenders);
    Ok((found, lent))
}

/// The parts of a `why` that say something, joined by "; ".
fn joined(parts: &[&str]) -> String {
    parts.iter().copied().filter(|part| !part.is_empty()).collect::<Vec<_>>().join("; ")
}

/// "matched: retry (title, content), jitter (content); written on 2023-12-29, a date the
/// query names; it only asks, so it ranks a step lower; the query had only stopwords, so
/// every word was searched for".
pub fn explain(query: &Query, hit: &Ranked) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !hit.matched.is_empty() {
        let terms: Vec<String> = hit
            .matched
            .iter()
            .map(|matched| format!("{} ({})", query.terms[matched.term].word, matched.fields.names().join(", ")))
            .collect();
        parts.push(format!("matched: {}", terms.join(", ")));
    }
    if let Some(date) = hit.on_date {
        parts.push(format!("written on {date}, a date the query names"));
    }
    if hit.said_by_named {
        parts.push("said by someone the query names".into());
    }
    if hit.asks {
        parts.push("it only asks, so it ranks a step lower".into());
    }
    if hit.generic_only {
        parts.push("only generic words matched, so it ranks low".into());
    }
    if query.stopwords_only {
        parts.push("the query had only common words, so every word was searched for".into());
    }
    parts.join("; ")
}

/// How `brain search` (and MCP, HTTP) ranks: by words, by meaning, or both fused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Lexical,
    Hybrid,
    Semantic,
}

impl Mode {
    pub fn parse(text: &str) -> BrainResult<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "lexical" => Ok(Mode::Lexical),
            "hybrid" => Ok(Mode::Hybrid),
            "semantic" => Ok(Mode::Semantic),
            other => Err(BrainError::user(format!("search mode {other:?} is not one of lexical, hybrid, semantic"))),
        }
    }
}

/// Each ranking contributes this many candidates to a fusion.
pub const FUSION_POOL: usize = 50;

/// The semantic vote's weight in the fusion: an item's fused score is its lexical score (the
/// share of the query's weight it matches, see `brain_core::search::rank`; 0 when it matched
/// nothing) plus this weight times its closeness in meaning (1 at a similarity of 1, nothing
/// at the floor, see [`similarity_floor`]). A semantic neighbour at full closeness counts as a
/// full lexical match, so meaning decides where the words are weak and the words where they
/// are strong. It replaced a reciprocal-rank fusion (`2 / (10 + rank)` semantic against
/// `1 / (10 + rank)` lexical), which reordered a sure lexical top by rank alone: with the
/// lexical score scaled by `TermStatistics::held_share`, REALTALK hybrid recall@1 0.269 →
/// 0.324, recall@5 0.507 → 0.515; the coding corpus's recall@1 0.770 → 0.827 and paraphrases
/// 0.731 → 0.787 (docs/BENCHMARKS.md, issue 29, seventh pass).
const SEMANTIC_WEIGHT: f64 = 1.0;

/// Below this cosine similarity a semantic neighbour gets no vote (MiniLM's unrelated
/// sentences sit around 0–0.3).
const SIMILARITY_FLOOR: f64 = 0.3;

/// The similarity a semantic neighbour must pass to vote: [`SIMILARITY_FLOOR`], or higher
/// when a full pool of `pool` neighbours was found — the similarity of the pool's last, so
/// only what stands above the crowd of a query's neighbours votes. Chat turns full of small
/// talk sit close to any question (a flat crowd at 0.4–0.5 gets no vote), while a note that
/// paraphrases the query stands out from its neighbours (docs/BENCHMARKS.md, issue 29, third
/// pass: REALTALK hybrid recall@5 0.487 → 0.502, coding paraphrase 0.704 → 0.731). A pool
/// not full (a small store) has no crowd to measure.
fn similarity_floor(near: &[(Item, f32)], pool: usize) -> f64 {
    match near.last() {
        Some((_, last)) if near.len() >= pool => SIMILARITY_FLOOR.max(f64::from(*last)),
        _ => SIMILARITY_FLOOR,
    }
}

/// Search in `mode`. Hybrid and semantic need an embedder (`[embed]`) and vectors (`brain
/// embed`); without them, or when the embedder fails or is slow, the lexical ranking is
/// returned and every hit's `why` says why.
pub fn search(
    store: &Store,
    embed: &crate::embed::EmbedConfig,
    text: &str,
    query: &Query,
    filter: &ItemFilter,
    needed: usize,
    mode: Mode,
) -> BrainResult<Vec<Hit>> {
    if mode == Mode::Lexical {
        return lexical(store, query, filter, needed);
    }
    let pool = needed.max(FUSION_POOL);
    // The embedder is built (in a short process: the model loaded) and the query embedded on
    // a thread of its own; the lexical ranking runs here once the embedder is built, beside
    // the query's forward pass (one thread). Loading a model is two threads' work already
    // (the tokenizer, then the weights): a ranking beside it slowed it on two cores, while
    // the forward pass left a core idle (docs/BENCHMARKS.md, hybrid). A warm embedder is
    // built at once.
    let (lexical_hits, (embedder, embedded)) = std::thread::scope(|scope| {
        // Dropped once the embedder is built (or could not be).
        let (loaded, ready) = std::sync::mpsc::channel::<()>();
        let embedding = scope.spawn(move || {
            let embedder = crate::embed::for_query(embed, text);
            drop(loaded);
            let embedded = match &embedder {
                Ok(Some(embedder)) => Some(embedder.embed_query(text)),
                _ => None,
            };
            (embedder, embedded)
        });
        let _ = ready.recv();
        let lexical_hits = lexical_known(store, query, filter, pool);
        let embedding =
            embedding.join().unwrap_or_else(|_| (Err(BrainError::internal("the embedding thread panicked")), None));
        (lexical_hits, embedding)
    });
    let (mut lexical_hits, known) = lexical_hits?;
    let mut fall_back = |reason: String| {
        lexical_hits.truncate(needed);
        for hit in &mut lexical_hits {
            hit.why = joined(&[&hit.why, &format!("lexical only: {reason}")]);
        }
        Ok(std::mem::take(&mut lexical_hits))
    };
    let embedder = match embedder {
        Ok(Some(embedder)) => embedder,
        Ok(None) => return fall_back("no embedder is configured ([embed] provider)".into()),
        Err(err) => return fall_back(err.to_string()),
    };
    let vector = match embedded {
        Some(Ok(vector)) => vector,
        Some(Err(err)) => return fall_back(err.to_string()),
        None => return fall_back("the embedder failed on this query".into()),
    };
    let model = embedder.model_id();
    let near = match store.nearest(&model, &vector, filter, pool) {
        Ok(near) => near,
        Err(err) => return fall_back(err.to_string()),
    };
    if near.is_empty() {
        return fall_back(format!("no item has a vector of {model} yet (run `brain embed`)"));
    }
    if mode == Mode::Semantic {
        return Ok(near
            .into_iter()
            .take(needed)
            .map(|(item, similarity)| {
                let lexical_why = lexical_hits.iter().find(|hit| hit.item.id == item.id).map_or("", |hit| &hit.why);
                let why = joined(&[&format!("similar in meaning ({similarity:.2})"), lexical_why]);
                Hit { item, score: f64::from(similarity), why, generic_only: false }
            })
            .collect());
    }
    let near = voting(near, pool);
    let beside = lent_in_meaning(store, &near, filter)?;
    Ok(fuse(lexical_hits, known, near, beside, needed))
}

/// An item next to one of the closest neighbours in meaning, and what it is lent.
#[derive(Clone, Debug)]
struct LentInMeaning {
    item: Item,
    /// The id of the neighbour that lent it.
    from: String,
    /// Its share of the lender's semantic vote.
    score: f64,
}

/// How close a neighbour of `similarity` is, above `floor`: `0..=1`.
fn closeness(similarity: f32, floor: f64) -> f64 {
    ((f64::from(similarity) - floor) / (1.0 - floor)).clamp(0.0, 1.0)
}

/// A neighbour in meaning and its vote in the fusion.
#[derive(Clone, Debug)]
struct Close {
    item: Item,
    similarity: f32,
    /// [`SEMANTIC_WEIGHT`] times its closeness above [`similarity_floor`]: 0 at or below it.
    vote: f64,
}

/// The votes of `near` (nearest first, with their similarities; `pool` were asked for).
fn voting(near: Vec<(Item, f32)>, pool: usize) -> Vec<Close> {
    let floor = similarity_floor(&near, pool);
    near.into_iter()
        .map(|(item, similarity)| Close { vote: SEMANTIC_WEIGHT * closeness(similarity, floor), item, similarity })
        .collect()
}

/// What the items written next to the closest neighbours in meaning are lent. As the
/// lexical ranking's best matches lend theirs ([`lexical`]), the [`NEIGHBOUR_ANCHORS`]
/// closest neighbours that vote, of a session or arc source, lend the items either side of
/// them a share of their semantic vote (`brain_core::search::lend`: a quarter next to it, an
/// eighth two places away, the best share, never a sum): the turn that asked is often the
/// one close to a question, and the answer the next. REALTALK hybrid recall@5 0.515 → 0.518,
/// every category up (docs/BENCHMARKS.md, issue 29, ninth pass).
fn lent_in_meaning(store: &Store, near: &[Close], filter: &ItemFilter) -> BrainResult<Vec<LentInMeaning>> {
    let lenders: Vec<(usize, f64)> = near
        .iter()
        .enumerate()
        .filter(|(_, close)| close.vote > 0.0 && is_context_source(&close.item.source))
        .take(NEIGHBOUR_ANCHORS)
        .map(|(index, close)| (index, close.vote))
        .collect();
    let held: Vec<&Item> = near.iter().map(|close| &close.item).collect();
    let (found, lent) = lend_beside(store, &held, &lenders, filter)?;
    let pool: Vec<&Item> = held.into_iter().chain(&found).collect();
    Ok(lent
        .into_iter()
        .enumerate()
        .filter_map(|(index, lent)| {
            lent.map(|lent| LentInMeaning {
                item: pool[index].clone(),
                from: pool[lent.from].id.clone(),
                score: lent.score,
            })
        })
        .collect())
}

/// The hybrid ranking of `lexical` hits (best first, with their lexical scores) and `near`
/// neighbours (nearest first, with their votes, see [`voting`]): each item's
/// lexical score plus [`SEMANTIC_WEIGHT`] times its closeness plus what a close neighbour
/// lent it (`beside`, see [`lent_in_meaning`]), best first, scaled so a full match of both is
/// 1; an item with none is dropped, and only a neighbour that votes says "similar in
/// meaning".
fn fuse(lexical: Vec<Hit>, known: f64, near: Vec<Close>, beside: Vec<LentInMeaning>, needed: usize) -> Vec<Hit> {
    let mut fused: Vec<(f64, Hit)> = lexical.into_iter().map(|hit| (hit.score.max(0.0) * known, hit)).collect();
    for Close { item, similarity, vote } in near {
        if vote <= 0.0 {
            // At or below the floor: no vote, and `why` does not claim one.
            continue;
        }
        let note = format!("similar in meaning ({similarity:.2})");
        match fused.iter_mut().find(|(_, hit)| hit.item.id == item.id) {
            Some((score, hit)) => {
                *score += vote;
                hit.why = joined(&[&hit.why, &note]);
            }
            None => fused.push((vote, Hit { item, score: 0.0, why: note, generic_only: false })),
        }
    }
    for LentInMeaning { item, from, score: lent } in beside {
        let note = format!("next to a match in meaning ({from})");
        match fused.iter_mut().find(|(_, hit)| hit.item.id == item.id) {
            Some((score, hit)) => {
                *score += lent;
                hit.why = joined(&[&hit.why, &note]);
            }
            None => fused.push((lent, Hit { item, score: 0.0, why: note, generic_only: false })),
        }
    }
    let best = 1.0 + SEMANTIC_WEIGHT;
    fused.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.item.id.cmp(&b.1.item.id)));
    fused
        .into_iter()
        .filter(|(score, _)| *score > 0.0)
        .take(needed)
        .map(|(score, mut hit)| {
            hit.score = score / best;
            hit
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meaning_decides_where_the_words_are_weak_and_the_words_where_they_are_strong() {
        let now = "2026-11-01T00:00:00Z".parse().unwrap();
        let items = brain_core::assemble::fixtures::generate_items(4, 7, now);
        let [full, partial, weak, unmatched] = [0, 1, 2, 3].map(|index| items[index].clone());
        let hit =
            |item: &Item, score: f64| Hit { item: item.clone(), score, why: "matched".into(), generic_only: false };
        let order = |hits: &[Hit]| hits.iter().map(|hit| hit.item.id.clone()).collect::<Vec<_>>();
        // A full lexical match and a weak one; the semantic side finds a paraphrase no word
        // matched, very close in meaning (closeness 0.8 above the base floor 0.3), and the
        // weak match, close too.
        let lexical = vec![hit(&full, 1.0), hit(&partial, 0.5), hit(&weak, 0.1)];
        let near = vec![(unmatched.clone(), 0.86), (weak.clone(), 0.65), (full.clone(), 0.2)];
        let fused = fuse(lexical, 1.0, voting(near, 50), Vec::new(), 10);
        // The full match stays first: a neighbour at closeness 0.8 does not outrank it.
        assert_eq!(order(&fused), [full.id.clone(), unmatched.id.clone(), weak.id.clone(), partial.id.clone()]);
        // A paraphrase close in meaning passes a half match; the weak word match with a
        // semantic vote (0.1 + 0.5) passes the half match without one.
        assert!((fused[0].score - 0.5).abs() < 1e-9, "a full match of one side is half the scale: {}", fused[0].score);
        assert!(fused[1].why.starts_with("similar in meaning (0.86)"), "{}", fused[1].why);
        assert!(fused[2].why.contains("; similar in meaning (0.65)"), "{}", fused[2].why);
        // Below the floor no vote: the full match's why says nothing of meaning.
        assert_eq!(fused[0].why, "matched");
        // Nothing at all from either side: dropped.
        let fused = fuse(vec![hit(&partial, 0.0)], 1.0, voting(vec![(unmatched.clone(), 0.1)], 50), Vec::new(), 10);
        assert!(fused.is_empty(), "{:?}", order(&fused));
    }

    #[test]
    fn the_items_beside_a_close_neighbour_are_lent_part_of_its_vote_and_say_so() {
        let now = "2026-11-01T00:00:00Z".parse().unwrap();
        let items = brain_core::assemble::fixtures::generate_items(4, 7, now);
        let [asked, answer, matched, far] = [0, 1, 2, 3].map(|index| items[index].clone());
        let hit = |item: &Item, score: f64| Hit {
            item: item.clone(),
            score,
            why: "matched: x (content)".into(),
            generic_only: false,
        };
        let lent = |item: &Item, score: f64| LentInMeaning { item: item.clone(), from: asked.id.clone(), score };
        // The turn that asked is close in meaning (closeness 0.8 above the floor 0.3); the
        // answer, beside it, shares neither its words nor its meaning and is lent a quarter
        // of its vote; a weak word match beside it is lent too.
        let near = vec![(asked.clone(), 0.86), (far.clone(), 0.1)];
        let beside = vec![lent(&answer, 0.2), lent(&matched, 0.2)];
        let fused = fuse(vec![hit(&matched, 0.1)], 1.0, voting(near, 50), beside, 10);
        let order: Vec<&str> = fused.iter().map(|hit| hit.item.id.as_str()).collect();
        assert_eq!(order, [asked.id.as_str(), matched.id.as_str(), answer.id.as_str()]);
        // Below its lender, what it was lent on the fusion's scale (a full match of both is 1).
        assert!((fused[2].score - 0.1).abs() < 1e-9 && fused[2].score < fused[0].score, "{}", fused[2].score);
        assert_eq!(fused[2].why, format!("next to a match in meaning ({})", asked.id));
        // A lexical match lent by meaning too: both added, both said.
        assert!((fused[1].score - 0.15).abs() < 1e-9, "{}", fused[1].score);
        assert_eq!(fused[1].why, format!("matched: x (content); next to a match in meaning ({})", asked.id));
    }

    #[test]
    fn the_words_no_item_holds_are_left_to_meaning() {
        use brain_core::search::TermStatistics;
        let share = |documents, df: &[u64]| TermStatistics { documents, document_frequency: df.to_vec() }.held_share();
        // Every word held (or no word at all): the lexical score counts in full.
        assert_eq!(share(1000, &[3, 40]), 1.0);
        assert_eq!(share(1000, &[]), 1.0);
        // Nothing held: the lexical side has nothing to say.
        assert_eq!(share(1000, &[0, 0]), 0.0);
        // One word of three held: less than a third when it is common, more when it is rare
        // (a word in no item weighs as the rarest word there is).
        let common = share(1000, &[0, 0, 400]);
        let rare = share(1000, &[0, 0, 1]);
        assert!(common > 0.0 && common < 1.0 / 3.0, "{common}");
        assert!(rare > common && rare < 0.5, "{rare}");
        // An empty store holds nothing: no lexical vote.
        assert_eq!(share(0, &[0]), 0.0);
    }

    #[test]
    fn only_what_stands_above_a_full_pools_crowd_gets_a_semantic_vote() {
        let now = "2026-11-01T00:00:00Z".parse().unwrap();
        let near = |similarities: &[f32]| -> Vec<(Item, f32)> {
            let items = brain_core::assemble::fixtures::generate_items(similarities.len(), 7, now);
            items.into_iter().zip(similarities.iter().copied()).collect()
        };
        // A full pool: its last neighbour's similarity is the floor.
        assert_eq!(similarity_floor(&near(&[0.9, 0.6, 0.45]), 3), f64::from(0.45f32));
        // A crowd below the base floor does not lower it.
        assert_eq!(similarity_floor(&near(&[0.5, 0.2, 0.1]), 3), SIMILARITY_FLOOR);
        // A pool not full (a small store) has no crowd: the base floor.
        assert_eq!(similarity_floor(&near(&[0.9, 0.6]), 3), SIMILARITY_FLOOR);
        assert_eq!(similarity_floor(&[], 3), SIMILARITY_FLOOR);
    }
}
