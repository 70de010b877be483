//! The vectors of one model kept in memory for nearest-neighbour search, shared by every
//! handle of one database in the process (`brain serve` has a pool of them; `brain mcp` one).
//!
//! Scanning 100k vectors out of SQLite (and joining each to its item for the filter) is
//! most of a hybrid search's time at that size; a warm process keeps them here instead, in
//! two forms: one byte a dimension (100k × 384 dimensions: 38 MB, where `f32` would be
//! 154 MB) and one bit a dimension (the sign of each value less the index's mean of that
//! dimension: 4.8 MB at 100k, which stays in the CPU's cache between queries). A query is
//! ranked in three passes, each over the best of the one before: the Hamming distance of
//! the bits over every vector keeps `SHORTLIST` candidates per one wanted, the integer dot
//! product of the byte codes keeps the `limit × OVERSAMPLE` wanted, and the caller re-scores
//! those exactly from their stored `f32` vectors and filters them, so the order returned is
//! exact among them. When fewer than `limit` of them pass the filter (a filter that keeps
//! few items), the caller falls back to the exact scan in SQL.
//!
//! Validity: the index is tagged with the database's vector epoch, a counter the triggers of
//! migration 9 move with every vector written or dropped (by `brain embed`, or by the
//! triggers that drop an item's vector when it is deleted or its text changes), whichever
//! process did it. It is read on every search (one indexed read) and a new value rebuilds
//! the index from the table.
//!
//! The index file: a short-lived process (the CLI) that builds the index from the table also
//! writes it next to the database (`<database>.vectors`, written aside and renamed into
//! place; a long-running one rebuilds in memory as vectors change and writes none), and a process
//! without the index in memory reads that file instead of the table when it was written at
//! the current epoch and largest seq ([`Identity`]: two indexed reads). A one-shot `brain search`
//! at 100k items would otherwise read 154 MB of vectors and quantise them for one query;
//! from the file it reads the bits, scales and seqs (6 MB at 100k) and, on Unix, only the
//! byte codes of the bit pass's shortlist ([`Codes::File`]). The file is derived data: a
//! missing, short, foreign or stale one is ignored and rewritten, never trusted over the
//! table (the order returned is still re-scored from the stored vectors).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

/// How many candidates per result the quantised scan hands to the exact re-score.
pub(super) const OVERSAMPLE: usize = 4;
/// At least this many candidates are re-scored, however small `limit` is.
pub(super) const MIN_RESCORED: usize = 64;
/// How many candidates the bit pass keeps per candidate the byte codes are to rank. Sentence
/// embeddings of related texts lie close together, and the true nearest ones are within the
/// shortlist; on the retrieval benchmark's MiniLM vectors it changes no result (see
/// docs/BENCHMARKS.md, "Hybrid at 100k").
pub(super) const SHORTLIST: usize = 8;

/// What the vectors of one model in one database were when an index was read from them:
/// the vector epoch and the largest seq of the model's vectors. An index file is used only
/// by a database whose identity matches: a database replaced by an older copy of itself
/// reaches the file's epoch again only after other writes, and then its largest seq must
/// match too. (Counting the vectors would say more, and cost 8 ms at 100k on every one-shot
/// search; a false match could only make the candidates miss items until the next vector
/// is written, never show a wrong similarity: the order is re-scored from the table.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Identity {
    pub epoch: u64,
    pub largest_seq: i64,
}

/// Where an index's byte codes are.
enum Codes {
    Memory(Vec<i8>),
    /// In the index file from `offset`, one row of `dimensions` bytes per vector: the bit
    /// pass's shortlist is read row by row (positioned reads, so handles share the file).
    #[cfg(unix)]
    File {
        file: std::fs::File,
        offset: u64,
    },
}

/// The quantised vectors of one model, and what they were read at.
pub(super) struct VectorIndex {
    pub model: String,
    pub tag: u64,
    pub dimensions: usize,
    seqs: Vec<i64>,
    /// Per vector: the factor turning its codes back into values (max |value| / 127).
    scales: Vec<f32>,
    codes: Codes,
    /// Per dimension: the mean value over the indexed vectors (set by [`VectorIndex::seal`]).
    centre: Vec<f32>,
    /// Per vector: `words` 64-bit words, bit `d` set where dimension `d` lies above `centre`.
    signs: Vec<u64>,
}

/// 64-bit words per vector of `dimensions` bits.
fn words(dimensions: usize) -> usize {
    dimensions.div_ceil(64)
}

/// Sets in `out` (`words(values.len())` zeroed words) the bit of every value above its centre.
fn sign_bits(values: impl Iterator<Item = f32>, centre: &[f32], out: &mut [u64]) {
    for (dimension, (value, centre)) in values.zip(centre).enumerate() {
        if value > *centre {
            out[dimension / 64] |= 1 << (dimension % 64);
        }
    }
}

static INDEXES: LazyLock<Mutex<HashMap<PathBuf, Arc<VectorIndex>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Quantises `vector` to one signed byte a dimension and its scale.
fn quantise(vector: &[f32], codes: &mut Vec<i8>) -> f32 {
    let largest = vector.iter().fold(0f32, |largest, value| largest.max(value.abs()));
    if largest == 0.0 || !largest.is_finite() {
        codes.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let factor = 127.0 / largest;
    codes.extend(vector.iter().map(|value| (value * factor).round().clamp(-127.0, 127.0) as i8));
    largest / 127.0
}

/// The dot product of two code vectors of the same length. Sixteen independent lanes, each
/// adding the products of a pair of neighbours — the shape of the multiply-add of 16-bit
/// pairs (`pmaddwd`) that the compiler emits for it, in whatever SIMD width the caller is
/// compiled for (`candidates` dispatches to AVX2 / AVX-512): half the instructions of
/// widening every byte to 32 bits. Codes lie in -127..=127 (`quantise`), so every operand
/// fits in 16 bits.
#[inline(always)]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    const LANES: usize = 16;
    let mut lanes = [0i32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(2 * LANES), b.chunks_exact(2 * LANES));
    let tail: i32 =
        a_chunks.remainder().iter().zip(b_chunks.remainder()).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..LANES {
            let (x0, x1) = (i32::from(i16::from(x[2 * lane])), i32::from(i16::from(x[2 * lane + 1])));
            let (y0, y1) = (i32::from(i16::from(y[2 * lane])), i32::from(i16::from(y[2 * lane + 1])));
            lanes[lane] += x0 * y0 + x1 * y1;
        }
    }
    lanes.iter().sum::<i32>() + tail
}

/// Every bit vector's Hamming distance to the query's, as one loop compiled per SIMD level
/// like [`Dots`] (`count_ones` becomes `popcnt`).
struct Distances<'a> {
    signs: &'a [u64],
    query: &'a [u64],
    out: &'a mut [u16],
}

impl pulp::WithSimd for Distances<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        for (out, signs) in self.out.iter_mut().zip(self.signs.chunks_exact(self.query.len())) {
            *out = signs.iter().zip(self.query).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>() as u16;
        }
    }
}

/// The positions of the `keep` smallest `distances` (each at most `largest`), in position
/// order; among equal distances at the edge, the first positions. Linear: a histogram of the
/// distances gives the edge.
fn smallest(distances: &[u16], keep: usize, largest: usize) -> Vec<usize> {
    let mut histogram = vec![0usize; largest + 1];
    for &distance in distances {
        histogram[usize::from(distance).min(largest)] += 1;
    }
    let (mut below, mut edge) = (0usize, largest);
    for (distance, &count) in histogram.iter().enumerate() {
        if below + count >= keep {
            edge = distance;
            break;
        }
        below += count;
    }
    let mut at_edge = keep.saturating_sub(below);
    let mut kept = Vec::with_capacity(keep);
    for (position, &distance) in distances.iter().enumerate() {
        let distance = usize::from(distance);
        if distance < edge {
            kept.push(position);
        } else if distance == edge && at_edge > 0 {
            at_edge -= 1;
            kept.push(position);
        }
    }
    kept
}

/// Every code vector's dot product with the query, as one loop that `pulp` compiles once per
/// SIMD level and picks at run time (everything in it is inlined, so the whole scan gets the
/// wide instructions).
struct Dots<'a> {
    codes: &'a [i8],
    query: &'a [i8],
    out: &'a mut [i32],
}

impl pulp::WithSimd for Dots<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        for (out, codes) in self.out.iter_mut().zip(self.codes.chunks_exact(self.query.len())) {
            *out = dot(codes, self.query);
        }
    }
}

impl VectorIndex {
    /// An empty index of `model` for vectors of `dimensions`, tagged `tag`.
    pub fn new(model: &str, tag: u64, dimensions: usize) -> VectorIndex {
        VectorIndex {
            model: model.to_string(),
            tag,
            dimensions,
            seqs: Vec::new(),
            scales: Vec::new(),
            codes: Codes::Memory(Vec::new()),
            centre: Vec::new(),
            signs: Vec::new(),
        }
    }

    /// The byte codes held in memory (an index built by [`VectorIndex::push`]); `None` for
    /// one read from a file.
    fn memory_codes(&self) -> Option<&[i8]> {
        match &self.codes {
            Codes::Memory(codes) => Some(codes),
            #[cfg(unix)]
            Codes::File { .. } => None,
        }
    }

    /// The byte codes of the vectors at `positions` (ascending), row after row, from the index
    /// file's codes at `offset`; `None` when the file cannot be read.
    #[cfg(unix)]
    fn file_rows(&self, file: &std::fs::File, offset: u64, positions: &[usize]) -> Option<Vec<i8>> {
        use std::os::unix::fs::FileExt;
        let dimensions = self.dimensions;
        let mut bytes = vec![0u8; positions.len() * dimensions];
        if positions.len().saturating_mul(4) >= self.seqs.len() {
            // Most rows: one read of them all, then the ones asked for.
            let mut all = vec![0u8; self.seqs.len() * dimensions];
            file.read_exact_at(&mut all, offset).ok()?;
            for (row, &at) in bytes.chunks_exact_mut(dimensions.max(1)).zip(positions) {
                row.copy_from_slice(&all[at * dimensions..(at + 1) * dimensions]);
            }
        } else {
            for (row, &at) in bytes.chunks_exact_mut(dimensions.max(1)).zip(positions) {
                file.read_exact_at(row, offset + (at * dimensions) as u64).ok()?;
            }
        }
        Some(bytes.into_iter().map(|byte| byte as i8).collect())
    }

    /// Computes the bit form of every vector pushed (the centre is their mean); called once,
    /// after the last push ([`keep`] does).
    pub fn seal(&mut self) {
        let (dimensions, count) = (self.dimensions, self.seqs.len());
        if dimensions == 0 {
            // No bits to set (and `chunks_exact` takes no empty chunks).
            return;
        }
        let Codes::Memory(all_codes) = &self.codes else {
            // Read from a file: sealed when it was written.
            return;
        };
        let mut sums = vec![0f64; dimensions];
        for (codes, scale) in all_codes.chunks_exact(dimensions).zip(&self.scales) {
            for (sum, &code) in sums.iter_mut().zip(codes) {
                *sum += f64::from(code) * f64::from(*scale);
            }
        }
        self.centre = sums.iter().map(|sum| if count == 0 { 0.0 } else { (sum / count as f64) as f32 }).collect();
        let words = words(dimensions);
        self.signs = vec![0u64; count * words];
        for ((codes, scale), out) in
            all_codes.chunks_exact(dimensions).zip(&self.scales).zip(self.signs.chunks_exact_mut(words))
        {
            sign_bits(codes.iter().map(|&code| f32::from(code) * scale), &self.centre, out);
        }
    }

    /// Adds one vector (vectors of another dimension are not indexed, as the scan skips them);
    /// seqs are pushed in ascending order ([`VectorIndex::candidates_among`] relies on it).
    pub fn push(&mut self, seq: i64, vector: &[f32]) {
        if vector.len() != self.dimensions {
            return;
        }
        debug_assert!(self.seqs.last().is_none_or(|last| *last < seq), "seqs are pushed in ascending order");
        let Codes::Memory(codes) = &mut self.codes else { return };
        let scale = quantise(vector, codes);
        self.seqs.push(seq);
        self.scales.push(scale);
    }

    pub fn len(&self) -> usize {
        self.seqs.len()
    }

    /// The `count` items whose vectors are nearest to `query` by the quantised dot product,
    /// best first (ties by seq, so the answer is deterministic); none when the index's file
    /// could not be read.
    pub fn candidates(&self, query: &[f32], count: usize) -> Vec<i64> {
        self.ranked(query, count, None).unwrap_or_default()
    }

    /// [`VectorIndex::candidates`] among the items `allowed` (seqs, ascending) only: what a
    /// filter lets through, when too few of the best of all passed it. Seqs the index does not
    /// hold are ignored. `None` when the index's file could not be read.
    pub fn candidates_among(&self, query: &[f32], count: usize, allowed: &[i64]) -> Option<Vec<i64>> {
        // The index's seqs ascend (built from the table in seq order, and so written).
        let mut positions = Vec::with_capacity(allowed.len().min(self.seqs.len()));
        let mut from = 0;
        for seq in allowed {
            match self.seqs[from..].binary_search(seq) {
                Ok(at) => {
                    positions.push(from + at);
                    from += at + 1;
                }
                Err(at) => from += at,
            }
            if from >= self.seqs.len() {
                break;
            }
        }
        self.ranked(query, count, Some(positions))
    }

    /// The best `count` by the quantised dot product among `within` (positions, ascending), or
    /// among all; `None` when the index's file could not be read.
    fn ranked(&self, query: &[f32], count: usize, within: Option<Vec<usize>>) -> Option<Vec<i64>> {
        if query.len() != self.dimensions || count == 0 || self.seqs.is_empty() {
            return Some(Vec::new());
        }
        let mut query_codes = Vec::with_capacity(self.dimensions);
        let query_scale = quantise(query, &mut query_codes);
        let dimensions = self.dimensions;
        let arch = pulp::Arch::new();
        // The positions the byte codes rank: all of them (or of `within`) when few, else the
        // bit pass's shortlist (when `seal` ran).
        let words = words(dimensions);
        let shortlisted = count.saturating_mul(SHORTLIST);
        let size = within.as_ref().map_or(self.seqs.len(), Vec::len);
        let positions: Option<Vec<usize>> = if size > shortlisted && self.signs.len() == self.seqs.len() * words {
            let mut query_signs = vec![0u64; words];
            sign_bits(query.iter().copied(), &self.centre, &mut query_signs);
            let mut distances = vec![0u16; self.seqs.len()];
            arch.dispatch(Distances { signs: &self.signs, query: &query_signs, out: &mut distances });
            Some(match within {
                None => smallest(&distances, shortlisted, dimensions),
                Some(within) => {
                    let among: Vec<u16> = within.iter().map(|&at| distances[at]).collect();
                    smallest(&among, shortlisted, dimensions).into_iter().map(|at| within[at]).collect()
                }
            })
        } else {
            within
        };
        // The dot products, in one loop compiled for the CPU's widest SIMD (AVX-512 or AVX2,
        // chosen at run time): 3–4× the baseline SSE2 code; then the selection.
        let dots: Vec<(usize, i32)> = match (&positions, &self.codes) {
            (None, Codes::Memory(codes)) => {
                let mut dots = vec![0i32; self.seqs.len()];
                arch.dispatch(Dots { codes, query: &query_codes, out: &mut dots });
                dots.into_iter().enumerate().collect()
            }
            (Some(positions), Codes::Memory(codes)) => positions
                .iter()
                .map(|&at| (at, dot(&codes[at * dimensions..(at + 1) * dimensions], &query_codes)))
                .collect(),
            #[cfg(unix)]
            (positions, Codes::File { file, offset }) => {
                // Codes in the index file: only the rows ranked are read. An unreadable file
                // gives no candidates, and the caller falls back to the exact scan.
                let positions = positions.clone().unwrap_or_else(|| (0..self.seqs.len()).collect());
                let rows = self.file_rows(file, *offset, &positions)?;
                positions
                    .iter()
                    .zip(rows.chunks_exact(dimensions))
                    .map(|(&at, row)| (at, dot(row, &query_codes)))
                    .collect()
            }
        };
        // A min-heap of the best `count` (approximate similarity, then the lower seq first).
        let mut best: std::collections::BinaryHeap<std::cmp::Reverse<(Score, std::cmp::Reverse<i64>)>> =
            std::collections::BinaryHeap::with_capacity(count + 1);
        for (index, dot) in dots {
            let similarity = dot as f32 * self.scales[index] * query_scale;
            let entry = std::cmp::Reverse((Score(similarity), std::cmp::Reverse(self.seqs[index])));
            if best.len() < count {
                best.push(entry);
            } else if best.peek().is_some_and(|worst| entry < *worst) {
                best.pop();
                best.push(entry);
            }
        }
        let mut ranked: Vec<(Score, i64)> =
            best.into_iter().map(|std::cmp::Reverse((score, std::cmp::Reverse(seq)))| (score, seq)).collect();
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Some(ranked.into_iter().map(|(_, seq)| seq).collect())
    }
}

/// A similarity with a total order (NaN never occurs: codes and scales are finite).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Score(f32);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Marks the start of an index file (and its format: a change of layout changes it).
const MAGIC: &[u8; 8] = b"brainvx1";

/// The index file of the database at `database`.
pub(super) fn file_of(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".vectors");
    PathBuf::from(name)
}

/// The fixed part of an index file's header: magic, epoch, largest seq, dimensions, vectors,
/// the model's name's length.
const HEADER: usize = 8 + 8 + 8 + 4 + 8 + 4;

/// Byte lengths of the sections after the header and model name: centre, seqs, scales,
/// signs, codes; `None` when they overflow.
fn sections(dimensions: usize, count: usize) -> Option<[usize; 5]> {
    Some([
        dimensions.checked_mul(4)?,
        count.checked_mul(8)?,
        count.checked_mul(4)?,
        count.checked_mul(words(dimensions))?.checked_mul(8)?,
        count.checked_mul(dimensions)?,
    ])
}

/// Files written aside are named `<index file>.<pid>-<n>.tmp`; one left by a process killed
/// while writing is removed by a later save once it is this old.
const ASIDE_KEPT: std::time::Duration = std::time::Duration::from_secs(3600);

/// Writes `index` (built from the table, sealed) as the index file `path`, for `identity`:
/// aside first (a name of its own per writer: two handles of one process may build at
/// once), then renamed into place, so a reader sees a whole file or the one before.
pub(super) fn save(index: &VectorIndex, identity: Identity, path: &Path) -> std::io::Result<()> {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let Some(codes) = index.memory_codes() else { return Ok(()) };
    remove_old_asides(path);
    let aside = {
        let mut name = path.as_os_str().to_owned();
        let write = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        name.push(format!(".{}-{write}.tmp", std::process::id()));
        PathBuf::from(name)
    };
    let written = (|| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&aside)?);
        out.write_all(MAGIC)?;
        out.write_all(&identity.epoch.to_le_bytes())?;
        out.write_all(&identity.largest_seq.to_le_bytes())?;
        out.write_all(&(index.dimensions as u32).to_le_bytes())?;
        out.write_all(&(index.seqs.len() as u64).to_le_bytes())?;
        out.write_all(&(index.model.len() as u32).to_le_bytes())?;
        out.write_all(index.model.as_bytes())?;
        for value in &index.centre {
            out.write_all(&value.to_le_bytes())?;
        }
        for seq in &index.seqs {
            out.write_all(&seq.to_le_bytes())?;
        }
        for scale in &index.scales {
            out.write_all(&scale.to_le_bytes())?;
        }
        for word in &index.signs {
            out.write_all(&word.to_le_bytes())?;
        }
        out.write_all(&codes.iter().map(|&code| code as u8).collect::<Vec<u8>>())?;
        out.into_inner().map_err(|err| err.into_error())?.sync_data()?;
        std::fs::rename(&aside, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&aside);
    }
    written
}

/// Removes files written aside for `path` by writers that did not finish ([`ASIDE_KEPT`]).
fn remove_old_asides(path: &Path) {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name().and_then(|name| name.to_str())) else { return };
    let Ok(entries) = std::fs::read_dir(if folder.as_os_str().is_empty() { Path::new(".") } else { folder }) else {
        return;
    };
    let prefix = format!("{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else { continue };
        let old = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > ASIDE_KEPT));
        if file_name.starts_with(&prefix) && file_name.ends_with(".tmp") && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The index of `model` in the index file `path`, when the file is whole and was written
/// for `identity` with vectors of `dimensions`; else `None` (the caller builds it from the
/// table). Every length is checked against the file's before anything is allocated.
pub(super) fn load(path: &Path, model: &str, identity: Identity, dimensions: usize) -> Option<VectorIndex> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = usize::try_from(file.metadata().ok()?.len()).ok()?;
    let mut header = [0u8; HEADER];
    file.read_exact(&mut header).ok()?;
    let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    let u32_at = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let found = Identity { epoch: u64_at(8), largest_seq: u64_at(16) as i64 };
    let (file_dimensions, count, model_length) = (u32_at(24) as usize, u64_at(28), u32_at(36) as usize);
    if &header[..8] != MAGIC || found != identity || file_dimensions != dimensions || model_length != model.len() {
        return None;
    }
    let count = usize::try_from(count).ok()?;
    let lengths = sections(dimensions, count)?;
    let body = lengths[..4].iter().try_fold(model_length, |sum, part| sum.checked_add(*part))?;
    if HEADER.checked_add(body)?.checked_add(lengths[4])? != length {
        return None;
    }
    let mut name = vec![0u8; model_length];
    file.read_exact(&mut name).ok()?;
    if name != model.as_bytes() {
        return None;
    }
    // Each section straight into its vector, through one small buffer (a copy of the whole
    // body first would fault in its pages twice).
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, &file);
    let f32s = |bytes: &[u8]| f32::from_le_bytes(bytes.try_into().expect("4 bytes"));
    let centre = read_values(&mut reader, dimensions, 4, f32s)?;
    let seqs = read_values(&mut reader, count, 8, |bytes| i64::from_le_bytes(bytes.try_into().expect("8 bytes")))?;
    let scales = read_values(&mut reader, count, 4, f32s)?;
    let signs =
        read_values(&mut reader, lengths[3] / 8, 8, |bytes| u64::from_le_bytes(bytes.try_into().expect("8 bytes")))?;
    drop(reader);
    if scales.iter().chain(&centre).any(|value| !value.is_finite()) {
        return None;
    }
    let offset = (HEADER + body) as u64;
    #[cfg(unix)]
    let codes = Codes::File { file, offset };
    #[cfg(not(unix))]
    let codes = {
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(offset)).ok()?;
        let mut codes = vec![0u8; lengths[4]];
        file.read_exact(&mut codes).ok()?;
        Codes::Memory(codes.into_iter().map(|byte| byte as i8).collect())
    };
    Some(VectorIndex { model: model.to_string(), tag: identity.epoch, dimensions, seqs, scales, codes, centre, signs })
}

/// `count` values of `size` bytes each from `reader`, each made by `value`.
fn read_values<T>(reader: &mut impl Read, count: usize, size: usize, value: impl Fn(&[u8]) -> T) -> Option<Vec<T>> {
    let mut values = Vec::with_capacity(count);
    let mut buffer = vec![0u8; (16 * 1024 / size).max(1) * size];
    let mut left = count;
    while left > 0 {
        let take = left.min(buffer.len() / size);
        reader.read_exact(&mut buffer[..take * size]).ok()?;
        values.extend(buffer[..take * size].chunks_exact(size).map(&value));
        left -= take;
    }
    Some(values)
}

/// Keeps `index` (sealed: read from a file) as the one of `path`.
pub(super) fn share(path: &Path, index: VectorIndex) -> Arc<VectorIndex> {
    let index = Arc::new(index);
    let mut indexes = INDEXES.lock().unwrap_or_else(|poison| poison.into_inner());
    indexes.insert(path.to_path_buf(), index.clone());
    index
}

/// The index of `path` for `model` if it was read at `tag`.
pub(super) fn cached(path: &Path, model: &str, tag: u64) -> Option<Arc<VectorIndex>> {
    let indexes = INDEXES.lock().unwrap_or_else(|poison| poison.into_inner());
    indexes.get(path).filter(|index| index.model == model && index.tag == tag).cloned()
}

/// Keeps `index` as the one of `path` (one model per database: the embedder's).
pub(super) fn keep(path: &Path, mut index: VectorIndex) -> Arc<VectorIndex> {
    index.seal();
    share(path, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random_unit(seed: u64, dimensions: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let vector: Vec<f32> = (0..dimensions)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
            })
            .collect();
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        vector.into_iter().map(|x| x / norm).collect()
    }

    /// `count` unit vectors around `topics` random centres (noise of `spread` per dimension),
    /// as sentence embeddings of related texts lie; each with its topic.
    fn clustered(seed: u64, count: usize, topics: usize, spread: f32, dimensions: usize) -> Vec<Vec<f32>> {
        let centres: Vec<Vec<f32>> =
            (0..topics).map(|topic| pseudo_random_unit(seed + topic as u64, dimensions)).collect();
        (0..count)
            .map(|n| {
                let noise = pseudo_random_unit(seed * 7919 + 1_000_003 + n as u64, dimensions);
                let vector: Vec<f32> = centres[n % topics]
                    .iter()
                    .zip(&noise)
                    .map(|(c, e)| c + e * spread * (dimensions as f32).sqrt())
                    .collect();
                let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                vector.into_iter().map(|x| x / norm).collect()
            })
            .collect()
    }

    fn exact_nearest(vectors: &[Vec<f32>], query: &[f32], limit: usize) -> Vec<i64> {
        let mut exact: Vec<(f32, i64)> = vectors
            .iter()
            .enumerate()
            .map(|(seq, vector)| (vector.iter().zip(query).map(|(a, b)| a * b).sum(), seq as i64))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0));
        exact.into_iter().take(limit).map(|(_, seq)| seq).collect()
    }

    /// 6,000 clustered vectors of 384 dimensions (30 topics; noise as large as the centre: a
    /// vector's cosine to its own centre is ~0.7, to another ~0) sealed in an index at seqs
    /// 0.., and 20 queries of the same topics.
    fn clustered_index(seed: u64) -> (Vec<Vec<f32>>, Vec<Vec<f32>>, VectorIndex) {
        let mut vectors = clustered(seed, 6_020, 30, 0.05, 384);
        let queries = vectors.split_off(6_000);
        let mut index = VectorIndex::new("m", 1, 384);
        for (seq, vector) in vectors.iter().enumerate() {
            index.push(seq as i64, vector);
        }
        index.seal();
        (vectors, queries, index)
    }

    #[test]
    fn the_bit_pass_keeps_the_exact_nearest_of_clustered_vectors() {
        let (vectors, queries, index) = clustered_index(3);
        let limit = 10;
        let count = (limit * OVERSAMPLE).max(MIN_RESCORED);
        assert!(index.len() > count * SHORTLIST, "the bit pass must run");
        for (probe, query) in queries.iter().enumerate() {
            let candidates = index.candidates(query, count);
            assert_eq!(candidates.len(), count);
            for seq in exact_nearest(&vectors, query, limit) {
                assert!(candidates.contains(&seq), "probe {probe}: exact neighbour {seq} missing from the candidates");
            }
        }
    }

    #[test]
    fn ranking_among_the_items_a_filter_lets_through_keeps_their_exact_nearest() {
        let (vectors, queries, index) = clustered_index(11);
        let dimensions = index.dimensions;
        // One item in seven passes, in every topic (7 and 30 share no factor), as a search
        // outside a project sees only the global items; a seq the index never held is ignored.
        let mut allowed: Vec<i64> = (0..vectors.len() as i64).filter(|seq| seq % 7 == 2).collect();
        allowed.push(1_000_000);
        let passing: Vec<Vec<f32>> = vectors
            .iter()
            .enumerate()
            .map(|(seq, v)| if seq % 7 == 2 { v.clone() } else { vec![0.0; dimensions] })
            .collect();
        let limit = 10;
        let count = (limit * OVERSAMPLE).max(MIN_RESCORED);
        assert!(allowed.len() > count * SHORTLIST, "the bit pass must run among the allowed");
        for (probe, query) in queries.iter().enumerate() {
            let candidates = index.candidates_among(query, count, &allowed).unwrap();
            assert_eq!(candidates.len(), count);
            assert!(candidates.iter().all(|seq| seq % 7 == 2), "probe {probe}: a candidate the filter keeps out");
            for seq in exact_nearest(&passing, query, limit) {
                assert!(candidates.contains(&seq), "probe {probe}: exact neighbour {seq} missing from the candidates");
            }
        }
        // Few allowed: every one of them ranked, best first; none allowed: none.
        let few = [3_i64, 400, 5_999];
        let ranked = index.candidates_among(&queries[0], count, &few).unwrap();
        let mut sorted = ranked.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, few);
        assert_eq!(index.candidates_among(&queries[0], count, &[]), Some(Vec::new()));
    }

    #[test]
    fn an_index_read_back_from_its_file_ranks_as_the_one_built_and_a_foreign_file_is_refused() {
        let dimensions = 384;
        let mut vectors = clustered(5, 3_010, 20, 0.05, dimensions);
        let queries = vectors.split_off(3_000);
        let mut built = VectorIndex::new("model-a", 7, dimensions);
        for (seq, vector) in vectors.iter().enumerate() {
            built.push(seq as i64 * 3 + 1, vector);
        }
        built.seal();
        let dir = tempfile::tempdir().unwrap();
        let path = file_of(&dir.path().join("brain.db"));
        assert_eq!(path.file_name().unwrap(), "brain.db.vectors");
        let identity = Identity { epoch: 7, largest_seq: 8_998 };
        save(&built, identity, &path).unwrap();
        let read = load(&path, "model-a", identity, dimensions).expect("the file just written");
        assert!(read.memory_codes().is_none() || cfg!(not(unix)), "on Unix the codes stay in the file");
        assert_eq!(
            (read.len(), read.tag, read.centre.clone(), read.signs.len()),
            (3_000, 7, built.centre.clone(), built.signs.len())
        );
        let count = (10 * OVERSAMPLE).max(MIN_RESCORED);
        assert!(built.len() > count * SHORTLIST, "the bit pass runs, and reads the shortlist's rows from the file");
        for query in queries.iter().chain(&vectors[..5]) {
            assert_eq!(read.candidates(query, count), built.candidates(query, count));
            // More than a quarter of the rows: read in one go.
            assert_eq!(read.candidates(query, 1_000), built.candidates(query, 1_000));
            // Half the items (the odd seqs), so the bit pass runs among them.
            let allowed: Vec<i64> = (1..9_000).step_by(2).collect();
            assert_eq!(read.candidates_among(query, count, &allowed), built.candidates_among(query, count, &allowed));
        }
        // Another epoch, largest seq, model or dimension: not this index.
        for (other, model, dims) in [
            (Identity { epoch: 8, ..identity }, "model-a", dimensions),
            (Identity { largest_seq: 9_001, ..identity }, "model-a", dimensions),
            (identity, "model-b", dimensions),
            (identity, "model-a", 768),
        ] {
            assert!(load(&path, model, other, dims).is_none(), "{other:?} {model} {dims}");
        }
        // A cut, lengthened or scribbled file, or none at all, is refused.
        let whole = std::fs::read(&path).unwrap();
        for broken in [whole[..whole.len() - 1].to_vec(), [&whole[..], b"x"].concat(), b"brainvx1".to_vec(), Vec::new()]
        {
            std::fs::write(&path, &broken).unwrap();
            assert!(load(&path, "model-a", identity, dimensions).is_none(), "{} bytes", broken.len());
        }
        let mut huge = whole.clone();
        huge[28..36].copy_from_slice(&u64::MAX.to_le_bytes());
        std::fs::write(&path, &huge).unwrap();
        assert!(load(&path, "model-a", identity, dimensions).is_none(), "an absurd count allocates nothing");
        std::fs::remove_file(&path).unwrap();
        assert!(load(&path, "model-a", identity, dimensions).is_none());
        // Nothing was left aside.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // What a killed writer left aside goes with a later save once old; a fresh one (a
        // writer at work) stays, and so does anything else in the folder.
        let left = dir.path().join("brain.db.vectors.999-0.tmp");
        let working = dir.path().join("brain.db.vectors.999-1.tmp");
        let other = dir.path().join("brain.db.vectors.bak");
        for file in [&left, &working, &other] {
            std::fs::write(file, b"partial").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - ASIDE_KEPT * 2;
        std::fs::File::options().write(true).open(&left).unwrap().set_modified(long_ago).unwrap();
        std::fs::File::options().write(true).open(&other).unwrap().set_modified(long_ago).unwrap();
        save(&built, identity, &path).unwrap();
        assert!(!left.exists() && working.exists() && other.exists() && path.exists());
    }

    #[test]
    fn handles_of_one_process_saving_at_once_leave_a_whole_file() {
        // A server's handles may each build the index at once: each writes aside under a
        // name of its own.
        let dimensions = 64;
        let mut index = VectorIndex::new("m", 3, dimensions);
        for seq in 0..2_000 {
            index.push(seq, &pseudo_random_unit(seq as u64, dimensions));
        }
        index.seal();
        let dir = tempfile::tempdir().unwrap();
        let path = file_of(&dir.path().join("brain.db"));
        let identity = Identity { epoch: 3, largest_seq: 1_999 };
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| save(&index, identity, &path).unwrap());
            }
        });
        let read = load(&path, "m", identity, dimensions).expect("a whole file");
        let query = pseudo_random_unit(77, dimensions);
        assert_eq!(read.candidates(&query, 64), index.candidates(&query, 64));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing left aside");
    }

    #[test]
    fn the_shortlist_is_the_smallest_distances_first_positions_at_the_edge() {
        let distances = [5u16, 1, 3, 3, 0, 9, 3, 2];
        assert_eq!(smallest(&distances, 3, 9), vec![1, 4, 7]);
        assert_eq!(smallest(&distances, 4, 9), vec![1, 2, 4, 7]);
        assert_eq!(smallest(&distances, 5, 9), vec![1, 2, 3, 4, 7]);
        assert_eq!(smallest(&distances, 8, 9).len(), 8);
        assert_eq!(smallest(&distances, 20, 9).len(), 8);
        assert!(smallest(&distances, 0, 9).is_empty());
    }

    #[test]
    fn sealing_sets_the_bits_above_the_mean() {
        let mut index = VectorIndex::new("m", 0, 3);
        index.push(1, &[1.0, 0.0, 0.0]);
        index.push(2, &[0.0, 1.0, 0.0]);
        index.seal();
        // Mean (0.5, 0.5, 0): the first vector is above it in dimension 0 only.
        assert_eq!(index.signs, vec![0b001, 0b010]);
    }

    #[test]
    fn the_byte_codes_keep_the_exact_nearest_among_their_candidates() {
        let dimensions = 384;
        let vectors: Vec<Vec<f32>> = (0..2_000).map(|seed| pseudo_random_unit(seed, dimensions)).collect();
        // Not sealed: the byte codes rank every vector (random vectors are the worst case
        // for a bit pass; the test above holds it to what embeddings look like).
        let mut index = VectorIndex::new("m", 1, dimensions);
        for (seq, vector) in vectors.iter().enumerate() {
            index.push(seq as i64, vector);
        }
        for probe in 0..10u64 {
            let query = pseudo_random_unit(10_000 + probe, dimensions);
            let mut exact: Vec<(f32, i64)> = vectors
                .iter()
                .enumerate()
                .map(|(seq, vector)| (vector.iter().zip(&query).map(|(a, b)| a * b).sum(), seq as i64))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0));
            let limit = 10;
            let candidates = index.candidates(&query, (limit * OVERSAMPLE).max(MIN_RESCORED));
            for (_, seq) in &exact[..limit] {
                assert!(candidates.contains(seq), "probe {probe}: exact neighbour {seq} missing from the candidates");
            }
        }
    }

    #[test]
    fn the_lane_dot_product_is_the_plain_one() {
        for length in [0i32, 1, 15, 16, 17, 31, 32, 33, 63, 384, 385] {
            let a: Vec<i8> = (0..length).map(|i| (i * 37 % 255 - 127) as i8).collect();
            let b: Vec<i8> = (0..length).map(|i| (i * 91 % 255 - 127) as i8).collect();
            let plain: i32 = a.iter().zip(&b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum();
            assert_eq!(dot(&a, &b), plain, "length {length}");
        }
    }

    #[test]
    fn vectors_of_another_dimension_or_zero_are_harmless() {
        let mut index = VectorIndex::new("m", 0, 4);
        index.push(1, &[0.0, 0.0, 0.0, 0.0]);
        index.push(2, &[1.0, 0.0]);
        index.push(3, &[0.0, 1.0, 0.0, 0.0]);
        assert_eq!(index.len(), 2);
        assert_eq!(index.candidates(&[0.0, 1.0, 0.0, 0.0], 5), vec![3, 1]);
        assert!(index.candidates(&[1.0], 5).is_empty());
    }
}
