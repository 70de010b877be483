//! `[ai]` configuration: which LLM the tick's phases 2–5 ask, and the bounds of one tick.
//!
//! Only the user config (`<home>/config.toml`) may carry it: an `[ai]` table in a project's
//! `.brain.toml` is refused (`config::PROJECT_ALLOWED` does not list it), so a cloned
//! repository can neither switch network calls on nor choose where vault text is sent. The
//! key itself is never in a file: `api_key_env` names the environment variable it is read
//! from when a tick runs.

use serde::{Deserialize, Serialize};

/// The `[ai]` table. Every key is optional; `provider = "none"` (the default) means no LLM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AiConfig {
    /// `none`, `openai` (any OpenAI-compatible chat-completions server: OpenAI, Ollama,
    /// vLLM, llama.cpp's server, LiteLLM, OpenRouter) or `anthropic` (the Messages API).
    pub provider: String,
    /// Base URL of the server (`/v1/chat/completions` or `/v1/messages` is appended).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model name sent to the server.
    pub model: String,
    /// The environment variable holding the API key (unset: no key is sent, as for a local
    /// Ollama). The key is never stored, printed or logged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The whole reasoning phase (every request, a repair retry and a rate-limit wait
    /// included) gives up after this long; phase 1's work is already done by then.
    pub timeout_ms: u64,
    /// The most tokens the model may answer with (sent as `max_tokens`).
    pub max_output_tokens: u32,
    /// The most the phase may cost, in the currency of the prices below (US dollars by
    /// convention). A request whose worst case (prompt + `max_output_tokens`) would exceed
    /// what is left is not sent. With both prices 0 (unknown, or a local model) it never binds.
    pub max_cost_per_tick: f64,
    /// Price per million prompt tokens.
    pub input_price_per_mtok: f64,
    /// Price per million answer tokens.
    pub output_price_per_mtok: f64,
    /// The prompt's budget, counted with the configured tokenizer (instructions + data).
    pub prompt_max_tokens: usize,
    /// At most this many changes of each kind (edges, merges, signal changes) per tick.
    pub max_changes_per_kind: usize,
}

impl Default for AiConfig {
    fn default() -> Self {
        AiConfig {
            provider: "none".into(),
            base_url: None,
            model: String::new(),
            api_key_env: None,
            timeout_ms: 60_000,
            max_output_tokens: 2_000,
            max_cost_per_tick: 0.05,
            input_price_per_mtok: 0.0,
            output_price_per_mtok: 0.0,
            prompt_max_tokens: 6_000,
            max_changes_per_kind: 10,
        }
    }
}

/// The most a config may ask for: beyond these a value is a typo, not a wish.
const MAX_TIMEOUT_MS: u64 = 600_000;
const MAX_OUTPUT_TOKENS: u32 = 32_000;
const MAX_PROMPT_TOKENS: usize = 200_000;
const MAX_CHANGES_PER_KIND: usize = 100;

impl AiConfig {
    /// Whether an LLM is configured at all.
    pub fn enabled(&self) -> bool {
        self.provider != "none"
    }

    /// `base` with the keys of `table` (from the config file `origin`) laid over it, validated.
    /// Checks every key's bounds; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !["none", "openai", "anthropic"].contains(&self.provider.as_str()) {
            return Err(format!("provider {:?} is not one of none, openai, anthropic", self.provider));
        }
        if self.enabled() {
            let Some(url) = self.base_url.as_deref() else {
                return Err(format!("provider {:?} needs base_url", self.provider));
            };
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.parse::<ureq::http::Uri>().is_err() {
                return Err(format!("base_url {url:?} is not an http(s) URL"));
            }
            if self.model.trim().is_empty() {
                return Err(format!("provider {:?} needs model", self.provider));
            }
        }
        if let Some(name) = &self.api_key_env
            && (name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return Err(format!("api_key_env {name:?} is not an environment variable name"));
        }
        if self.timeout_ms == 0 || self.timeout_ms > MAX_TIMEOUT_MS {
            return Err(format!("timeout_ms = {} must be 1 to {MAX_TIMEOUT_MS}", self.timeout_ms));
        }
        if self.max_output_tokens < 64 || self.max_output_tokens > MAX_OUTPUT_TOKENS {
            return Err(format!("max_output_tokens = {} must be 64 to {MAX_OUTPUT_TOKENS}", self.max_output_tokens));
        }
        if self.prompt_max_tokens < 500 || self.prompt_max_tokens > MAX_PROMPT_TOKENS {
            return Err(format!("prompt_max_tokens = {} must be 500 to {MAX_PROMPT_TOKENS}", self.prompt_max_tokens));
        }
        if self.max_changes_per_kind > MAX_CHANGES_PER_KIND {
            return Err(format!(
                "max_changes_per_kind = {} must be 0 to {MAX_CHANGES_PER_KIND}",
                self.max_changes_per_kind
            ));
        }
        for (name, value) in [
            ("max_cost_per_tick", self.max_cost_per_tick),
            ("input_price_per_mtok", self.input_price_per_mtok),
            ("output_price_per_mtok", self.output_price_per_mtok),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(format!("{name} = {value} must be a non-negative number"));
            }
        }
        Ok(())
    }

    /// The cost of `input` prompt tokens and `output` answer tokens.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_price_per_mtok + output as f64 * self.output_price_per_mtok) / 1_000_000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(text: &str) -> Result<AiConfig, String> {
        let table: toml::Table = toml::from_str(text).unwrap();
        crate::config::merged(&AiConfig::default(), table, "x.toml").map_err(|err| err.to_string())
    }

    #[test]
    fn a_provider_needs_an_http_url_and_a_model_and_bounds_are_checked() {
        let config =
            merged("provider = \"openai\"\nbase_url = \"http://127.0.0.1:11434\"\nmodel = \"qwen\"\napi_key_env = \"OPENAI_API_KEY\"")
                .unwrap();
        assert!(config.enabled());
        assert!(!AiConfig::default().enabled());
        for (bad, named) in [
            ("provider = \"gemini\"", "provider"),
            ("provider = \"openai\"\nmodel = \"m\"", "base_url"),
            ("provider = \"anthropic\"\nbase_url = \"file:///etc\"\nmodel = \"m\"", "base_url"),
            ("provider = \"openai\"\nbase_url = \"http://x\"", "model"),
            ("api_key_env = \"A B\"", "api_key_env"),
            ("timeout_ms = 0", "timeout_ms"),
            ("max_output_tokens = 10", "max_output_tokens"),
            ("max_cost_per_tick = -1.0", "max_cost_per_tick"),
            ("api_key = \"sk-123\"", "api_key"),
        ] {
            let err = merged(bad).unwrap_err();
            assert!(err.contains(named) && err.contains("x.toml"), "{bad}: {err}");
        }
        let config = merged("input_price_per_mtok = 3.0\noutput_price_per_mtok = 15.0").unwrap();
        assert!((config.cost(1_000_000, 100_000) - 4.5).abs() < 1e-9);
    }
}
