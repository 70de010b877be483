//! Near-duplicate texts without comparing every pair: word shingles, MinHash signatures and
//! locality-sensitive hashing by bands (Broder 1997; Leskovec, Rajaraman & Ullman, *Mining of
//! Massive Datasets*, ch. 3).
//!
//! - [`shingles`]: the text's words (lowercase letters and digits), every run of
//!   [`SHINGLE_WORDS`] consecutive words hashed to a `u64`, sorted and deduplicated (a text of
//!   fewer words is one shingle of all of them).
//! - [`Signature`]: [`HASHES`] minima of the shingles under independent 64-bit mixes; two
//!   signatures agree in a slot with probability equal to the texts' Jaccard similarity.
//! - [`candidate_pairs`]: the signatures cut into [`BANDS`] bands of [`ROWS`] slots; texts that
//!   agree on a whole band share a bucket. With 16 × 4 a pair at similarity 0.8 is a candidate
//!   with probability 0.9998, at 0.5 with 0.64, at 0.3 with 0.12. Each band is one sort of
//!   `(key, index)`; inside a bucket a text is compared with at most [`BUCKET_WINDOW`] earlier
//!   members, so a huge bucket (many texts from one template) stays linear.
//! - [`jaccard`]: the exact similarity of two shingle sets, which every candidate is checked
//!   against before it counts.
//!
//! Deterministic: fixed seeds, no randomness, no clock.

use std::collections::HashSet;

/// Words per shingle.
pub const SHINGLE_WORDS: usize = 3;
/// Slots of a signature.
pub const HASHES: usize = 64;
/// Bands the signature is cut into for bucketing.
pub const BANDS: usize = 16;
/// Slots per band.
pub const ROWS: usize = HASHES / BANDS;
/// In one bucket, a text is compared with at most this many earlier members.
pub const BUCKET_WINDOW: usize = 8;
/// Words of a text considered (a long text's first words decide; bounded work per text).
pub const MAX_WORDS: usize = 2_000;

/// A MinHash signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature(pub [u64; HASHES]);

/// splitmix64's finaliser: a fast, well-mixed 64-bit permutation.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The seeds of the [`HASHES`] hash functions (splitmix64's sequence from a fixed start).
const SEEDS: [u64; HASHES] = {
    let mut seeds = [0u64; HASHES];
    let mut state: u64 = 0x5eed_b4a1_2026_0016;
    let mut index = 0;
    while index < HASHES {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = state;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        seeds[index] = x ^ (x >> 31);
        index += 1;
    }
    seeds
};

/// FNV-1a of a word's bytes.
fn word_hash(word: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in word {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The sorted, deduplicated shingle hashes of `text` (empty when it has no word).
pub fn shingles(text: &str) -> Vec<u64> {
    let mut words: Vec<u64> = Vec::new();
    let mut word: Vec<u8> = Vec::new();
    let flush = |word: &mut Vec<u8>, words: &mut Vec<u64>| {
        if !word.is_empty() && words.len() < MAX_WORDS {
            words.push(word_hash(word));
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            for lower in c.to_lowercase() {
                let mut buffer = [0u8; 4];
                word.extend_from_slice(lower.encode_utf8(&mut buffer).as_bytes());
            }
        } else {
            flush(&mut word, &mut words);
        }
    }
    flush(&mut word, &mut words);
    if words.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<u64> = if words.len() < SHINGLE_WORDS {
        vec![words.iter().fold(0u64, |acc, w| mix(acc.rotate_left(17) ^ w))]
    } else {
        words.windows(SHINGLE_WORDS).map(|run| run.iter().fold(0u64, |acc, w| mix(acc.rotate_left(17) ^ w))).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

impl Signature {
    /// The signature of a shingle set (all slots `u64::MAX` for an empty set).
    pub fn of(shingles: &[u64]) -> Signature {
        let mut slots = [u64::MAX; HASHES];
        for shingle in shingles {
            for (slot, seed) in slots.iter_mut().zip(SEEDS.iter()) {
                let value = mix(shingle ^ seed);
                if value < *slot {
                    *slot = value;
                }
            }
        }
        Signature(slots)
    }

    /// The share of agreeing slots: an estimate of the Jaccard similarity.
    pub fn estimate(&self, other: &Signature) -> f64 {
        let same = self.0.iter().zip(other.0.iter()).filter(|(a, b)| a == b).count();
        same as f64 / HASHES as f64
    }

    fn band_key(&self, band: usize) -> u64 {
        let rows = &self.0[band * ROWS..(band + 1) * ROWS];
        rows.iter().fold(band as u64, |acc, row| mix(acc.rotate_left(23) ^ row))
    }
}

/// The exact Jaccard similarity of two sorted, deduplicated shingle sets (0 when both are empty).
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() + b.len() - common) as f64
}

/// A pair of near-duplicates: indices into the input (`a < b`) and their exact similarity.
#[derive(Clone, Debug, PartialEq)]
pub struct NearPair {
    pub a: usize,
    pub b: usize,
    pub similarity: f64,
}

/// The pairs among `texts` (shingle sets with their signatures) whose exact Jaccard similarity
/// is at least `threshold`, found through LSH buckets; `same_group(a, b)` may refuse a pair
/// before it is checked (e.g. different scopes). Texts without shingles are never paired.
/// `progress(done, total)` after each band. Sorted by `(a, b)`.
pub fn candidate_pairs(
    shingle_sets: &[Vec<u64>],
    signatures: &[Signature],
    threshold: f64,
    same_group: &dyn Fn(usize, usize) -> bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<NearPair> {
    let mut seen: HashSet<(u32, u32)> = HashSet::new();
    let mut pairs = Vec::new();
    let mut keyed: Vec<(u64, u32)> = Vec::with_capacity(signatures.len());
    for band in 0..BANDS {
        keyed.clear();
        keyed.extend(
            signatures
                .iter()
                .enumerate()
                .filter(|(index, _)| !shingle_sets[*index].is_empty())
                .map(|(index, signature)| (signature.band_key(band), index as u32)),
        );
        keyed.sort_unstable();
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len() && keyed[end].0 == keyed[start].0 {
                end += 1;
            }
            for later in start + 1..end {
                for earlier in later.saturating_sub(BUCKET_WINDOW).max(start)..later {
                    let (a, b) = (keyed[earlier].1, keyed[later].1);
                    if !seen.insert((a, b)) {
                        continue;
                    }
                    let (a, b) = (a as usize, b as usize);
                    if !same_group(a, b) {
                        continue;
                    }
                    let similarity = jaccard(&shingle_sets[a], &shingle_sets[b]);
                    if similarity >= threshold {
                        pairs.push(NearPair { a: a.min(b), b: a.max(b), similarity });
                    }
                }
            }
            start = end;
        }
        progress(band + 1, BANDS);
    }
    pairs.sort_by_key(|x| (x.a, x.b));
    pairs.dedup_by(|x, y| (x.a, x.b) == (y.a, y.b));
    pairs
}

/// Groups of indices joined by `pairs` (union–find), each sorted, groups in order of their
/// smallest member; singletons left out.
pub fn groups(count: usize, pairs: &[NearPair]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..count).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for pair in pairs {
        let (ra, rb) = (find(&mut parent, pair.a), find(&mut parent, pair.b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    for pair in pairs {
        for member in [pair.a, pair.b] {
            let root = find(&mut parent, member);
            by_root.entry(root).or_default().push(member);
        }
    }
    by_root
        .into_values()
        .map(|mut members| {
            members.sort_unstable();
            members.dedup();
            members
        })
        .filter(|members| members.len() > 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs_of(texts: &[&str], threshold: f64) -> Vec<(usize, usize)> {
        let sets: Vec<Vec<u64>> = texts.iter().map(|t| shingles(t)).collect();
        let signatures: Vec<Signature> = sets.iter().map(|s| Signature::of(s)).collect();
        candidate_pairs(&sets, &signatures, threshold, &|_, _| true, &mut |_, _| {})
            .into_iter()
            .map(|pair| (pair.a, pair.b))
            .collect()
    }

    #[test]
    fn shingles_ignore_case_and_punctuation_and_short_texts_are_one_shingle() {
        assert_eq!(shingles("Retry the gateway, then back off!"), shingles("retry THE gateway then back-off"));
        assert_eq!(shingles("two words").len(), 1);
        assert!(shingles("  ,;: ").is_empty());
        let text = "a b c d e";
        assert_eq!(shingles(text).len(), 3);
    }

    #[test]
    fn near_duplicates_are_found_and_different_texts_are_not() {
        let base = "Use exponential backoff with jitter when the payment gateway returns 429, capped at \
                    thirty seconds, and log each retry with the request id so the storm can be traced";
        let edited = format!("{base} later");
        let other = "The CSV export streams rows from a cursor instead of loading the whole table into memory";
        let texts = [base, other, edited.as_str(), "short note"];
        assert_eq!(pairs_of(&texts, 0.8), vec![(0, 2)]);
        let sets: Vec<Vec<u64>> = texts.iter().map(|t| shingles(t)).collect();
        assert!(jaccard(&sets[0], &sets[2]) > 0.9);
        assert_eq!(jaccard(&sets[0], &sets[1]), 0.0);
        // The signature's estimate is close to the exact similarity.
        let (a, b) = (Signature::of(&sets[0]), Signature::of(&sets[2]));
        assert!((a.estimate(&b) - jaccard(&sets[0], &sets[2])).abs() < 0.2);
    }

    #[test]
    fn a_refused_group_is_never_paired_and_groups_join_chains() {
        let text = "the quick brown fox jumps over the lazy dog near the river bank today";
        let sets: Vec<Vec<u64>> = (0..3).map(|_| shingles(text)).collect();
        let signatures: Vec<Signature> = sets.iter().map(|s| Signature::of(s)).collect();
        let pairs = candidate_pairs(&sets, &signatures, 0.8, &|a, b| a != 1 && b != 1, &mut |_, _| {});
        assert_eq!(pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>(), vec![(0, 2)]);
        let chain = [
            NearPair { a: 0, b: 3, similarity: 1.0 },
            NearPair { a: 3, b: 5, similarity: 1.0 },
            NearPair { a: 1, b: 2, similarity: 1.0 },
        ];
        assert_eq!(groups(6, &chain), vec![vec![0, 3, 5], vec![1, 2]]);
    }

    #[test]
    fn one_huge_bucket_stays_bounded() {
        // 2,000 identical texts: every pair is similar, but each text is checked against at
        // most BUCKET_WINDOW earlier members per band, and the group is still one.
        let text = "identical template text for every item in the store";
        let sets: Vec<Vec<u64>> = (0..2000).map(|_| shingles(text)).collect();
        let signatures: Vec<Signature> = sets.iter().map(|s| Signature::of(s)).collect();
        let pairs = candidate_pairs(&sets, &signatures, 0.8, &|_, _| true, &mut |_, _| {});
        assert!(pairs.len() <= 2000 * BUCKET_WINDOW, "{}", pairs.len());
        assert_eq!(groups(2000, &pairs), vec![(0..2000).collect::<Vec<_>>()]);
    }
}
