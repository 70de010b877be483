//! The health line of a tick (`health.jsonl`): counts over the index and its arcs.

use super::*;

pub(crate) fn health_line(snapshot: &Snapshot, views: &[ArcView<'_>], signals: usize, now: Timestamp) -> HealthLine {
    // Each id hashed once into the position of its first arc, connections marked by position
    // (sorting ten thousand ids that share their date prefixes was 10% of a steady tick, and
    // hash sets of them hashed each id three times over).
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(views.len());
    let own: Vec<usize> =
        views.iter().enumerate().map(|(k, view)| *first.entry(view.arc.cluster_id.as_str()).or_insert(k)).collect();
    let mut connected = vec![false; views.len()];
    let mut edges = 0;
    for (view, &me) in views.iter().zip(&own) {
        edges += view.arc.edges.len();
        for target in &view.arc.edges {
            if let Some(&other) = first.get(target.as_str())
                && other != me
            {
                connected[me] = true;
                connected[other] = true;
            }
        }
    }
    // Titles compared case- and spacing-insensitively, by a hash of their words (no copies).
    let mut titles: Vec<u64> = views.iter().map(|view| title_key(&view.arc.title)).collect();
    titles.sort_unstable();
    let mut duplicates = titles.windows(2).filter(|pair| pair[0] == pair[1]).count();
    duplicates += snapshot.values().filter(|file| file.state.arc.is_some() && !file.state.arc_owner).count();
    let newest_age_days = views.iter().map(|view| age_days(timestamp(view.arc.created), now)).min_by(f64::total_cmp);
    let orphans = own.iter().filter(|&&me| !connected[me]).count();
    let inputs = HealthInputs {
        arcs: views.len(),
        covered: views.iter().filter(|view| view.arc.summary.is_some() || view.arc.synthesized).count(),
        newest_age_days,
        orphans,
        duplicates,
    };
    let result = health(&inputs);
    HealthLine {
        timestamp: format_timestamp(now),
        score: result.score,
        reason: result.reason,
        arcs: inputs.arcs,
        signals,
        lessons: snapshot.values().map(|file| file.state.lessons as usize).sum(),
        edges,
        orphans: inputs.orphans,
        duplicates,
    }
}

/// A hash (FNV-1a) of a title's words, lowercased: equal for titles that differ only in case
/// and spacing. Ten thousand titles, no allocation.
pub(crate) fn title_key(title: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |byte: u8| {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    };
    for word in title.split_whitespace() {
        if word.is_ascii() {
            word.bytes().for_each(|byte| feed(byte.to_ascii_lowercase()));
        } else {
            for c in word.chars().flat_map(char::to_lowercase) {
                let mut buffer = [0; 4];
                c.encode_utf8(&mut buffer).bytes().for_each(&mut feed);
            }
        }
        feed(b' ');
    }
    hash
}
