//! A model's weights read from a safetensors file straight into each tensor's own memory,
//! once, when the model asks for that tensor.
//!
//! A one-shot `brain search --mode hybrid` loads the model in every process, and loading was
//! most of its time: `std::fs::read` of the 87 MB file into a buffer, then candle copied every
//! tensor out of it into memory of its own — twice the bytes copied and twice the fresh pages
//! faulted in (`perf`: page clearing, the read's copy and `memmove` were ~45% of the process).
//! Here the header is parsed (8 bytes of length, then JSON naming each tensor's dtype, shape
//! and byte range), and a tensor is read when the model builds it: its bytes through a small
//! buffer into the vector the tensor then owns (`Tensor::from_vec` takes it without a copy).
//! Tensors the model never asks for (BERT's pooler) are not read at all, and of a matrix a
//! model needs only some rows of (the word embeddings of a one-shot query) only those rows
//! are read ([`Weights::read_rows`]).
//!
//! Only F32 tensors are read this way (all of all-MiniLM-L6-v2's weights; its one I64 tensor,
//! `embeddings.position_ids`, is never asked for): asking for another dtype is an error, and
//! the caller then loads the file with candle's own reader.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use candle_core::{DType, Device, Shape, Tensor};

/// A header larger than this is not a model's (MiniLM's is ~10 KB).
const MAX_HEADER_BYTES: u64 = 16 << 20;

/// Bytes read at a time (fits in the cache; the tensor's vector is the only large write).
const CHUNK_BYTES: usize = 64 << 10;

#[derive(Debug)]
struct Entry {
    /// The safetensors dtype ("F32", "I64", …).
    dtype: String,
    shape: Vec<usize>,
    /// Absolute byte range in the file.
    start: u64,
    end: u64,
}

/// An open safetensors file (see the module docs).
#[derive(Debug)]
pub struct Weights {
    path: PathBuf,
    file: Mutex<File>,
    entries: HashMap<String, Entry>,
}

impl Weights {
    /// Opens `path` and reads its header. An error names what is wrong.
    pub fn open(path: &Path) -> Result<Weights, String> {
        let mut file = File::open(path).map_err(|err| err.to_string())?;
        let file_length = file.metadata().map_err(|err| err.to_string())?.len();
        let mut length = [0u8; 8];
        file.read_exact(&mut length).map_err(|err| format!("no safetensors header: {err}"))?;
        let header_length = u64::from_le_bytes(length);
        if header_length > MAX_HEADER_BYTES || 8 + header_length > file_length {
            return Err(format!("a safetensors header of {header_length} bytes in a file of {file_length}"));
        }
        let mut header = vec![0u8; header_length as usize];
        file.read_exact(&mut header).map_err(|err| err.to_string())?;
        let header: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&header).map_err(|err| format!("a safetensors header that is not JSON: {err}"))?;
        let data_start = 8 + header_length;
        let mut entries = HashMap::with_capacity(header.len());
        for (name, info) in header {
            if name == "__metadata__" {
                continue;
            }
            let invalid = || format!("the safetensors entry {name:?} is not a tensor's");
            let dtype = info.get("dtype").and_then(serde_json::Value::as_str).ok_or_else(invalid)?.to_string();
            let width = match dtype.as_str() {
                "F64" | "I64" | "U64" => 8,
                "F32" | "I32" | "U32" => 4,
                "F16" | "BF16" | "I16" | "U16" => 2,
                _ => 1,
            };
            let shape: Vec<usize> = info
                .get("shape")
                .and_then(serde_json::Value::as_array)
                .ok_or_else(invalid)?
                .iter()
                .map(|size| size.as_u64().and_then(|size| usize::try_from(size).ok()))
                .collect::<Option<_>>()
                .ok_or_else(invalid)?;
            let offsets = info.get("data_offsets").and_then(serde_json::Value::as_array).ok_or_else(invalid)?;
            let [Some(begin), Some(end)] = [offsets.first(), offsets.get(1)].map(|at| at.and_then(|at| at.as_u64()))
            else {
                return Err(invalid());
            };
            let elements = shape.iter().try_fold(1usize, |count, &size| count.checked_mul(size));
            let (start, end) = (data_start.saturating_add(begin), data_start.saturating_add(end));
            if elements.and_then(|count| count.checked_mul(width)).map(|bytes| bytes as u64) != end.checked_sub(start)
                || end > file_length
            {
                return Err(format!("the safetensors entry {name:?} does not fit its shape or the file"));
            }
            entries.insert(name, Entry { dtype, shape, start, end });
        }
        Ok(Weights { path: path.to_path_buf(), file: Mutex::new(file), entries })
    }

    /// The names of the file's F32 tensors, largest first (then by name).
    pub fn f32_names(&self) -> Vec<&str> {
        let mut names: Vec<(&str, &Entry)> = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.dtype == "F32")
            .map(|(name, entry)| (name.as_str(), entry))
            .collect();
        names.sort_by(|a, b| (b.1.end - b.1.start).cmp(&(a.1.end - a.1.start)).then(a.0.cmp(b.0)));
        names.into_iter().map(|(name, _)| name).collect()
    }

    /// A file handle of its own, for a thread reading tensors beside others
    /// ([`Weights::read_with`]).
    pub fn reader(&self) -> std::io::Result<File> {
        File::open(&self.path)
    }

    fn entry(&self, name: &str) -> candle_core::Result<&Entry> {
        let entry = self
            .entries
            .get(name)
            .ok_or_else(|| candle_core::Error::CannotFindTensor { path: name.to_string() }.bt())?;
        if entry.dtype != "F32" {
            return Err(candle_core::Error::Msg(format!("{name} is {}, read here only as F32", entry.dtype)).bt());
        }
        Ok(entry)
    }

    /// Reads one tensor (see the module docs).
    pub fn read(&self, name: &str) -> candle_core::Result<Tensor> {
        let mut file = self.file.lock().unwrap_or_else(|poison| poison.into_inner());
        self.read_with(&mut file, name)
    }

    /// Reads one tensor through `file`, a [`Weights::reader`] of this thread's.
    pub fn read_with(&self, file: &mut File, name: &str) -> candle_core::Result<Tensor> {
        let entry = self.entry(name)?;
        let bytes = (entry.end - entry.start) as usize;
        let mut values: Vec<f32> = Vec::with_capacity(bytes / 4);
        read_f32(file, entry.start, bytes, &mut values)?;
        Tensor::from_vec(values, entry.shape.as_slice(), &Device::Cpu)
    }

    /// Reads the rows `rows` of the matrix `name`, in that order, as a matrix of its own
    /// (`rows.len()` × its columns): what a model needs of an embedding matrix for the word
    /// pieces of known texts. A row past the matrix is an error.
    pub fn read_rows(&self, name: &str, rows: &[u32]) -> candle_core::Result<Tensor> {
        let entry = self.entry(name)?;
        let &[count, columns] = entry.shape.as_slice() else {
            return Err(candle_core::Error::Msg(format!("{name} is not a matrix")).bt());
        };
        let mut values: Vec<f32> = Vec::with_capacity(rows.len() * columns);
        let mut file = self.file.lock().unwrap_or_else(|poison| poison.into_inner());
        for &row in rows {
            if row as usize >= count {
                return Err(candle_core::Error::Msg(format!("{name} has no row {row} (it has {count})")).bt());
            }
            read_f32(&mut file, entry.start + (row as u64) * (columns as u64) * 4, columns * 4, &mut values)?;
        }
        Tensor::from_vec(values, (rows.len(), columns), &Device::Cpu)
    }
}

/// Reads `bytes` bytes of F32 values at `start` of `file` onto the end of `values`, through
/// a small buffer.
fn read_f32(file: &mut File, start: u64, bytes: usize, values: &mut Vec<f32>) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(start))?;
    let mut chunk = vec![0u8; CHUNK_BYTES.min(bytes)];
    let mut left = bytes;
    while left > 0 {
        let bytes = &mut chunk[..left.min(CHUNK_BYTES)];
        file.read_exact(bytes)?;
        values.extend(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        left -= bytes.len();
    }
    Ok(())
}

/// Tensors read beforehand, handed to the model as it asks for them: see
/// `super::local::MiniLm::load_for`.
#[derive(Debug, Default)]
pub struct Prepared(pub HashMap<String, Tensor>);

/// Where a model's tensors come from, by name: the file ([`Weights`]) or tensors read
/// beforehand ([`Prepared`]); [`Backend`] hands them to candle.
pub trait Tensors {
    fn tensor(&self, name: &str) -> candle_core::Result<Tensor>;
    fn has(&self, name: &str) -> bool;
}

impl Tensors for Weights {
    fn tensor(&self, name: &str) -> candle_core::Result<Tensor> {
        self.read(name)
    }

    fn has(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
}

impl Tensors for Prepared {
    fn tensor(&self, name: &str) -> candle_core::Result<Tensor> {
        self.0.get(name).cloned().ok_or_else(|| candle_core::Error::CannotFindTensor { path: name.to_string() }.bt())
    }

    fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}

/// A [`Tensors`] as candle's variable builder asks for tensors: of the shape asked (else an
/// error naming the tensor), on the device and as the dtype asked.
#[derive(Debug)]
pub struct Backend<T>(pub T);

impl<T: Tensors + Send + Sync> candle_nn::var_builder::SimpleBackend for Backend<T> {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        let tensor = self.0.tensor(name)?;
        if tensor.shape() != &shape {
            return Err(candle_core::Error::UnexpectedShape {
                msg: format!("shape mismatch for {name}"),
                expected: shape,
                got: tensor.shape().clone(),
            }
            .bt());
        }
        tensor.to_device(device)?.to_dtype(dtype)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, device: &Device) -> candle_core::Result<Tensor> {
        self.0.tensor(name)?.to_device(device)?.to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.0.has(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_nn::var_builder::SimpleBackend;

    /// A safetensors file of the given tensors, written as the format says.
    fn write(path: &Path, tensors: &[(&str, &str, Vec<usize>, Vec<u8>)]) {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, dtype, shape, bytes) in tensors {
            header.insert(
                (*name).into(),
                serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()]}),
            );
            data.extend_from_slice(bytes);
        }
        let header = serde_json::to_vec(&header).unwrap();
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(&header);
        file.extend_from_slice(&data);
        std::fs::write(path, file).unwrap();
    }

    fn f32_bytes(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|value| value.to_le_bytes()).collect()
    }

    #[test]
    fn tensors_read_back_as_written_and_what_is_wrong_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.safetensors");
        // Larger than one read chunk, so the chunked read is exercised.
        let big: Vec<f32> = (0..40_000).map(|n| n as f32 * 0.5 - 7.25).collect();
        write(
            &path,
            &[
                ("small", "F32", vec![2, 2], f32_bytes(&[1.0, -2.5, 3.25, 0.0])),
                ("big", "F32", vec![200, 200], f32_bytes(&big)),
            ],
        );
        let weights = Backend(Weights::open(&path).unwrap());
        assert!(weights.contains_tensor("big") && !weights.contains_tensor("pooler"));
        let small = weights.get(Shape::from((2, 2)), "small", candle_nn::Init::Const(0.0), DType::F32, &Device::Cpu);
        assert_eq!(small.unwrap().to_vec2::<f32>().unwrap(), [[1.0, -2.5], [3.25, 0.0]]);
        let read = weights.get_unchecked("big", DType::F32, &Device::Cpu).unwrap();
        assert_eq!(read.flatten_all().unwrap().to_vec1::<f32>().unwrap(), big);
        // Rows of a matrix, in the order asked, as a matrix of their own.
        let rows = weights.0.read_rows("big", &[199, 0, 7]).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(rows, [&big[199 * 200..200 * 200], &big[..200], &big[7 * 200..8 * 200]]);
        assert!(weights.0.read_rows("big", &[200]).unwrap_err().to_string().contains("has no row 200"));
        let wrong = weights.get(Shape::from((4,)), "small", candle_nn::Init::Const(0.0), DType::F32, &Device::Cpu);
        assert!(wrong.unwrap_err().to_string().contains("shape mismatch for small"));
        assert!(weights.get_unchecked("pooler", DType::F32, &Device::Cpu).is_err());

        // A tensor of another dtype is known but not read here (the caller falls back to
        // candle's reader); a range past the file or off its shape is an error.
        write(&path, &[("ids", "I64", vec![1], vec![0; 8]), ("w", "F32", vec![1], f32_bytes(&[4.0]))]);
        let weights = Backend(Weights::open(&path).unwrap());
        assert!(weights.contains_tensor("ids"));
        assert!(weights.get_unchecked("ids", DType::F32, &Device::Cpu).unwrap_err().to_string().contains("ids is I64"));
        assert_eq!(weights.get_unchecked("w", DType::F32, &Device::Cpu).unwrap().to_vec1::<f32>().unwrap(), [4.0]);
        write(&path, &[("short", "F32", vec![3], f32_bytes(&[1.0, 2.0]))]);
        assert!(Weights::open(&path).unwrap_err().contains("does not fit"));
        std::fs::write(&path, [200u8, 0, 0, 0, 0, 0, 0, 0, b'{']).unwrap();
        assert!(Weights::open(&path).unwrap_err().contains("header of 200 bytes"));
    }
}
