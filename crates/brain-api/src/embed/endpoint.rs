//! An OpenAI-compatible `/v1/embeddings` endpoint (Ollama, vLLM, LiteLLM, …) over ureq:
//! one POST per batch, one time-out for connect + request + response, the answer bounded
//! in size, redirects refused, texts redacted before they leave the machine.

use std::time::Duration;

use serde::Deserialize;

use super::EmbedError;
use crate::error::{BrainError, BrainResult};

/// The largest answer read (32 texts × 4,096 dimensions as JSON is ~2 MB).
const MAX_RESPONSE_BYTES: u64 = 16 << 20;

pub struct Endpoint {
    url: String,
    model: String,
    batch: usize,
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl Endpoint {
    pub fn new(base: &str, model: &str, timeout_ms: u64, batch: usize) -> BrainResult<Endpoint> {
        let base = base.trim().trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) || base.parse::<ureq::http::Uri>().is_err() {
            return Err(BrainError::Config {
                message: format!("[embed] url {base:?} is not an http(s) URL"),
                hint: Some("e.g. url = \"http://127.0.0.1:11434\"".into()),
            });
        }
        let url = if base.ends_with("/v1") { format!("{base}/embeddings") } else { format!("{base}/v1/embeddings") };
        let timeout = Duration::from_millis(timeout_ms.max(1));
        let agent = crate::http::http_agent(base, timeout);
        Ok(Endpoint { url, model: model.trim().to_string(), batch: batch.clamp(1, 256), agent })
    }

    pub fn model_id(&self) -> String {
        format!("endpoint:{}@{}", self.model, self.url)
    }

    pub fn batch(&self) -> usize {
        self.batch
    }

    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch) {
            let input: Vec<String> =
                chunk.iter().map(|text| brain_core::redact::redact_str(text).into_owned()).collect();
            let body = serde_json::json!({"model": self.model, "input": input});
            let unavailable =
                |detail: String| EmbedError::Unavailable(format!("embedding endpoint {}: {detail}", self.url));
            let mut response = self
                .agent
                .post(&self.url)
                .content_type("application/json")
                .send(body.to_string())
                .map_err(|err| unavailable(err.to_string()))?;
            let status = response.status();
            let text = response
                .body_mut()
                .with_config()
                .limit(MAX_RESPONSE_BYTES)
                .read_to_string()
                .map_err(|err| unavailable(err.to_string()))?;
            if !status.is_success() {
                let said: String = text.chars().take(200).collect();
                return Err(unavailable(format!("HTTP {status}: {said}")));
            }
            let answer: Answer = serde_json::from_str(&text).map_err(|err| EmbedError::Garbage(err.to_string()))?;
            if answer.data.len() != chunk.len() {
                return Err(EmbedError::Garbage(format!("{} vectors for {} texts", answer.data.len(), chunk.len())));
            }
            let mut data = answer.data;
            if data.iter().all(|datum| datum.index.is_some()) {
                data.sort_by_key(|datum| datum.index);
            }
            vectors.extend(data.into_iter().map(|datum| datum.embedding));
        }
        Ok(vectors)
    }
}
