//! Numbering the distinct strings of a pass (the schema keys and dedup hints of 100k items):
//! a string hash and an interning table made for that one loop. Written by hand rather than
//! a `HashMap<&str, usize>` with foldhash (already in the tree) for the reason measured in
//! docs/BENCHMARKS.md ("Interning the pass's strings"): the table keeps its own copies of the
//! texts back to back, so comparing against them reads a few hot cache lines instead of one
//! cold line per distinct string somewhere in the items, and the hashes of a chunk are
//! computed in a tight loop before the lookups.

/// A fast string hash (folded 64×64→128 multiplies over 16-byte blocks, as in foldhash
/// and wyhash): independent multiplies instead of a byte-serial chain.
pub(super) fn hash_str(text: &str) -> u64 {
    const K0: u64 = 0x243f_6a88_85a3_08d3;
    const K1: u64 = 0x1319_8a2e_0370_7344;
    fn fold(a: u64, b: u64) -> u64 {
        let product = u128::from(a) * u128::from(b);
        (product as u64) ^ ((product >> 64) as u64)
    }
    let bytes = text.as_bytes();
    let length = bytes.len();
    let mut hash = (length as u64) ^ K0;
    // Fixed-size reads only (overlapping at the end), so no variable-length copies.
    let (a, b) = if length >= 16 {
        let mut at = 0;
        while length - at > 16 {
            hash = fold(u64_at(bytes, at) ^ hash, u64_at(bytes, at + 8) ^ K1);
            at += 16;
        }
        (u64_at(bytes, length - 16), u64_at(bytes, length - 8))
    } else if length >= 8 {
        (u64_at(bytes, 0), u64_at(bytes, length - 8))
    } else if length >= 4 {
        (u32_at(bytes, 0), u32_at(bytes, length - 4))
    } else if length > 0 {
        let (first, middle, last) = (bytes[0], bytes[length / 2], bytes[length - 1]);
        (u64::from(first) << 16 | u64::from(middle) << 8 | u64::from(last), 0)
    } else {
        (0, 0)
    };
    hash = fold(a ^ hash, b ^ K1);
    fold(hash, K0)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

fn u32_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(word))
}

/// Equal byte strings, compared in 8-byte words (the strings here are short; a call to
/// `memcmp` per row costs more than the comparison).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let length = a.len();
    if length != b.len() {
        return false;
    }
    if length < 8 {
        return a == b;
    }
    if length <= 16 {
        // Two overlapping words cover it.
        return u64_at(a, 0) == u64_at(b, 0) && u64_at(a, length - 8) == u64_at(b, length - 8);
    }
    let mut at = 0;
    while length - at > 16 {
        if u128_at(a, at) != u128_at(b, at) {
            return false;
        }
        at += 16;
    }
    u128_at(a, length - 16) == u128_at(b, length - 16)
}

fn u128_at(bytes: &[u8], at: usize) -> u128 {
    let mut word = [0u8; 16];
    word.copy_from_slice(&bytes[at..at + 16]);
    u128::from_le_bytes(word)
}

/// Numbers distinct strings in order of first appearance: an open-addressing table
/// (linear probing) over precomputed hashes. Texts are compared exactly, so equal strings
/// always share a slot and different ones never do, whatever their hashes. The table
/// keeps its own copies of the texts, back to back: comparing against them reads a few
/// hot cache lines instead of one cold line per distinct string somewhere in the items.
pub(super) struct StringTable<'a> {
    /// `(high half of the hash, slot + 1)`; a zero slot marks an empty entry. The length is
    /// a power of two; the low half of the hash picks the first entry to probe.
    entries: Vec<(u32, u32)>,
    texts: Vec<&'a str>,
    copies: Vec<u8>,
    /// Per slot: where its copy starts in `copies`, and its length.
    spans: Vec<(usize, usize)>,
    /// Per slot: its hash (for growing the table).
    hashes: Vec<u64>,
}

impl<'a> StringTable<'a> {
    pub(super) fn new() -> StringTable<'a> {
        StringTable {
            entries: vec![(0, 0); 64],
            texts: Vec::new(),
            copies: Vec::new(),
            spans: Vec::new(),
            hashes: Vec::new(),
        }
    }

    /// The slot of `text` (whose hash is `hash`); a new text gets the next slot,
    /// `texts.len()` before the call.
    #[inline(always)]
    pub(super) fn slot(&mut self, hash: u64, text: &'a str) -> usize {
        let mask = self.entries.len() - 1;
        let tag = (hash >> 32) as u32;
        let bytes = text.as_bytes();
        let mut position = hash as usize & mask;
        loop {
            let (stored_tag, stored_slot) = self.entries[position];
            if stored_slot == 0 {
                return self.insert(position, hash, text);
            }
            if stored_tag == tag {
                let slot = stored_slot as usize - 1;
                let (start, length) = self.spans[slot];
                if length == bytes.len() && same_bytes(&self.copies[start..start + length], bytes) {
                    return slot;
                }
                // Another text with the same hash half: this one may sit further along.
            }
            position = (position + 1) & mask;
        }
    }

    /// Adds `text` at the empty entry `position`.
    #[inline(never)]
    fn insert(&mut self, position: usize, hash: u64, text: &'a str) -> usize {
        let slot = self.texts.len();
        self.hashes.push(hash);
        self.texts.push(text);
        self.spans.push((self.copies.len(), text.len()));
        self.copies.extend_from_slice(text.as_bytes());
        self.entries[position] = ((hash >> 32) as u32, slot as u32 + 1);
        if self.texts.len() * 2 > self.entries.len() {
            self.grow();
        }
        slot
    }

    #[cold]
    fn grow(&mut self) {
        let size = self.entries.len() * 2;
        let old = std::mem::replace(&mut self.entries, vec![(0, 0); size]);
        let mask = size - 1;
        for (tag, slot) in old.into_iter().filter(|&(_, slot)| slot != 0) {
            let mut position = self.hashes[slot as usize - 1] as usize & mask;
            while self.entries[position].1 != 0 {
                position = (position + 1) & mask;
            }
            self.entries[position] = (tag, slot);
        }
    }

    /// The distinct texts, by slot.
    pub(super) fn into_texts(self) -> Vec<&'a str> {
        self.texts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_with_equal_hashes_keep_apart_and_equal_strings_share_a_slot() {
        let texts: Vec<String> = (0..200).map(|n| format!("root/key/{n}")).collect();
        let copies = texts.clone();
        let mut table = StringTable::new();
        // Every text under one hash (the worst case), then under its real hash.
        for (expected, text) in texts.iter().enumerate() {
            assert_eq!(table.slot(7, text), expected);
        }
        for (expected, text) in texts.iter().enumerate() {
            assert_eq!(table.slot(7, text), expected, "{text}");
        }
        let mut table = StringTable::new();
        for (expected, (text, copy)) in texts.iter().zip(&copies).enumerate() {
            assert_eq!(table.slot(hash_str(text), text), expected);
            assert_eq!(table.slot(hash_str(copy), copy), expected);
        }
        assert_eq!(table.into_texts().len(), texts.len());
    }

    #[test]
    fn byte_strings_compare_whole_at_every_length() {
        for length in 0..40 {
            let a: Vec<u8> = (0..length).map(|n| n as u8).collect();
            assert!(same_bytes(&a, &a.clone()));
            for position in 0..length {
                let mut b = a.clone();
                b[position] ^= 1;
                assert!(!same_bytes(&a, &b), "{length} {position}");
            }
            assert!(!same_bytes(&a, &a[..length.saturating_sub(1)]) || length == 0);
        }
    }
}
