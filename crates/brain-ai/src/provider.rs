//! The LLM providers behind one small interface: a closed set, one `match` per wire format.
//!
//! - [`Provider::OpenAi`]: any OpenAI-compatible `POST /v1/chat/completions` (OpenAI, Ollama,
//!   vLLM, llama.cpp's server, LiteLLM, OpenRouter); structured output through
//!   `response_format: {type: json_schema, json_schema: {strict: true, schema}}`; the answer is
//!   `choices[0].message.content`, cut short when `finish_reason` is `length`.
//! - [`Provider::Anthropic`]: `POST /v1/messages`; structured output as one forced tool use
//!   (`tools: [{name, input_schema}]`, `tool_choice: {type: tool, name}`); the answer is that
//!   tool call's `input`, cut short when `stop_reason` is `max_tokens`.
//!
//! Every request goes through ureq (the agent of `http::http_agent`: no redirects, no proxy
//! for loopback) with a timeout of what is left of the phase's budget, and its answer is read
//! up to a byte cap. The API key is read from the environment variable the config names when
//! the provider is built, sent only in its header, and scrubbed from every message built from
//! a server's answer; `Debug` prints it as `[REDACTED]`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::config::AiConfig;

/// The name of the tick's schema (the tool the Anthropic provider forces, OpenAI's json_schema).
pub(crate) const SCHEMA_NAME: &str = "brain_tick_proposals";

/// The most bytes read of an answer besides what `max_output_tokens` allows.
const BASE_RESPONSE_BYTES: u64 = 64 << 10;
/// Bytes of answer allowed per output token (JSON escapes and the envelope included).
const BYTES_PER_OUTPUT_TOKEN: u64 = 16;
/// At most this much of a server's error text is quoted in a message.
const QUOTED_ERROR_CHARS: usize = 200;

/// An API key, never printed.
#[derive(Clone)]
pub(crate) struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ApiKey([REDACTED])")
    }
}

/// Where and how to ask.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    base_url: String,
    url: String,
    model: String,
    key: Option<ApiKey>,
    max_output_tokens: u32,
}

/// The configured LLM.
#[derive(Clone, Debug)]
pub(crate) enum Provider {
    OpenAi(Endpoint),
    Anthropic(Endpoint),
}

/// One question: instructions, data, and the schema the answer must match.
pub(crate) struct Question<'a> {
    /// The schema's name (OpenAI's `json_schema.name`, Anthropic's tool).
    pub name: &'a str,
    pub system: &'a str,
    pub user: &'a str,
    pub schema: &'a Value,
}

/// One answer as the server gave it.
#[derive(Clone, Debug)]
pub(crate) struct Reply {
    /// The JSON document (not yet parsed or checked).
    pub text: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// The model stopped at `max_tokens`: the document is incomplete.
    pub cut_short: bool,
}

/// Why a request gave no reply.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CallError {
    /// No answer within the time left (connect, send or read).
    TimedOut,
    /// 429; `retry_after` when the server said how long to wait.
    RateLimited { retry_after: Option<Duration> },
    /// Any other non-2xx status, with the start of the server's text (key scrubbed).
    Status { code: u16, message: String },
    /// The answer is larger than the cap derived from `max_output_tokens`.
    TooLarge { limit: u64 },
    /// Connection refused, reset, DNS, TLS…
    Transport(String),
    /// 2xx but not the envelope of this wire format (no choices, no tool call).
    Envelope(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::TimedOut => write!(formatter, "no answer within the time budget"),
            CallError::RateLimited { retry_after: Some(wait) } => {
                write!(formatter, "rate limited (HTTP 429, retry after {} s)", wait.as_secs())
            }
            CallError::RateLimited { retry_after: None } => write!(formatter, "rate limited (HTTP 429)"),
            CallError::Status { code, message } => write!(formatter, "HTTP {code}: {message}"),
            CallError::TooLarge { limit } => write!(formatter, "the answer is larger than {limit} bytes"),
            CallError::Transport(message) => write!(formatter, "{message}"),
            CallError::Envelope(message) => write!(formatter, "unexpected answer: {message}"),
        }
    }
}

impl Provider {
    /// The provider `config` names, its key read through `env` (the process environment
    /// outside tests). `Ok(None)`: no LLM configured.
    pub fn from_config(config: &AiConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Provider>, String> {
        if !config.enabled() {
            return Ok(None);
        }
        let base_url = config.base_url.as_deref().unwrap_or_default().trim().trim_end_matches('/').to_string();
        let key = match &config.api_key_env {
            None => None,
            Some(name) => match env(name) {
                Some(key) if !key.trim().is_empty() => Some(ApiKey(key.trim().to_string())),
                _ => return Err(format!("the API key variable {name} named by [ai] api_key_env is not set")),
            },
        };
        let path = match config.provider.as_str() {
            "anthropic" => "messages",
            _ => "chat/completions",
        };
        let url =
            if base_url.ends_with("/v1") { format!("{base_url}/{path}") } else { format!("{base_url}/v1/{path}") };
        let endpoint = Endpoint {
            base_url,
            url,
            model: config.model.trim().to_string(),
            key,
            max_output_tokens: config.max_output_tokens,
        };
        Ok(Some(match config.provider.as_str() {
            "anthropic" => Provider::Anthropic(endpoint),
            _ => Provider::OpenAi(endpoint),
        }))
    }

    fn endpoint(&self) -> &Endpoint {
        match self {
            Provider::OpenAi(endpoint) | Provider::Anthropic(endpoint) => endpoint,
        }
    }

    /// `openai` or `anthropic`.
    pub fn name(&self) -> &'static str {
        match self {
            Provider::OpenAi(_) => "openai",
            Provider::Anthropic(_) => "anthropic",
        }
    }

    pub fn model(&self) -> &str {
        &self.endpoint().model
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.endpoint().url
    }

    /// The request body (also what the tests check for planted secrets).
    pub fn body(&self, question: &Question<'_>) -> Value {
        let endpoint = self.endpoint();
        match self {
            Provider::OpenAi(_) => json!({
                "model": endpoint.model,
                "temperature": 0,
                "max_tokens": endpoint.max_output_tokens,
                "messages": [
                    {"role": "system", "content": question.system},
                    {"role": "user", "content": question.user},
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": question.name, "strict": true, "schema": question.schema},
                },
            }),
            Provider::Anthropic(_) => json!({
                "model": endpoint.model,
                "max_tokens": endpoint.max_output_tokens,
                "temperature": 0,
                "system": question.system,
                "messages": [{"role": "user", "content": question.user}],
                "tools": [{
                    "name": question.name,
                    "description": "Record your answer. Call it exactly once.",
                    "input_schema": question.schema,
                }],
                "tool_choice": {"type": "tool", "name": question.name},
            }),
        }
    }

    /// The most bytes of answer read.
    pub fn response_limit(&self) -> u64 {
        BASE_RESPONSE_BYTES + u64::from(self.endpoint().max_output_tokens) * BYTES_PER_OUTPUT_TOKEN
    }

    /// Sends one question and waits at most `timeout` for the whole answer.
    pub fn ask(&self, question: &Question<'_>, timeout: Duration) -> Result<Reply, CallError> {
        let endpoint = self.endpoint();
        let agent = brain_api::http::http_agent(&endpoint.base_url, timeout.max(Duration::from_millis(1)));
        let mut request = agent.post(&endpoint.url).content_type("application/json");
        if let Some(ApiKey(key)) = &endpoint.key {
            request = match self {
                Provider::OpenAi(_) => request.header("authorization", format!("Bearer {key}")),
                Provider::Anthropic(_) => request.header("x-api-key", key.as_str()),
            };
        }
        if let Provider::Anthropic(_) = self {
            request = request.header("anthropic-version", "2023-06-01");
        }
        let limit = self.response_limit();
        let mut response = request.send(self.body(question).to_string()).map_err(|err| self.transport(err, limit))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(|err| self.transport(err, limit))?;
        if status == 429 {
            return Err(CallError::RateLimited { retry_after });
        }
        if !(200..300).contains(&status) {
            let quoted: String = self.scrub(&text).chars().take(QUOTED_ERROR_CHARS).collect();
            return Err(CallError::Status {
                code: status,
                message: brain_core::keeper::text::one_line(&quoted).into_owned(),
            });
        }
        let envelope: Value =
            serde_json::from_str(&text).map_err(|err| CallError::Envelope(format!("the body is not JSON ({err})")))?;
        match self {
            Provider::OpenAi(_) => openai_reply(&envelope),
            Provider::Anthropic(_) => anthropic_reply(&envelope, question.name),
        }
    }

    fn transport(&self, err: ureq::Error, limit: u64) -> CallError {
        match err {
            ureq::Error::Timeout(_) => CallError::TimedOut,
            ureq::Error::BodyExceedsLimit(_) => CallError::TooLarge { limit },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => CallError::TimedOut,
            other => CallError::Transport(format!("{}: {}", self.url(), self.scrub(&other.to_string()))),
        }
    }

    /// `text` without the API key (a server or proxy may echo a header back).
    pub fn scrub(&self, text: &str) -> String {
        match &self.endpoint().key {
            Some(ApiKey(key)) if key.len() >= 4 => text.replace(key.as_str(), "[REDACTED]"),
            _ => text.to_string(),
        }
    }
}

fn usage(envelope: &Value, input: &str, output: &str) -> (Option<u64>, Option<u64>) {
    (envelope["usage"][input].as_u64(), envelope["usage"][output].as_u64())
}

fn openai_reply(envelope: &Value) -> Result<Reply, CallError> {
    let choice = &envelope["choices"][0];
    let Some(content) = choice["message"]["content"].as_str() else {
        return Err(CallError::Envelope("no choices[0].message.content".into()));
    };
    let (input_tokens, output_tokens) = usage(envelope, "prompt_tokens", "completion_tokens");
    Ok(Reply {
        text: without_fence(content).to_string(),
        input_tokens,
        output_tokens,
        cut_short: choice["finish_reason"].as_str() == Some("length"),
    })
}

fn anthropic_reply(envelope: &Value, name: &str) -> Result<Reply, CallError> {
    let (input_tokens, output_tokens) = usage(envelope, "input_tokens", "output_tokens");
    let cut_short = envelope["stop_reason"].as_str() == Some("max_tokens");
    let blocks = envelope["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tool_input = blocks
        .iter()
        .find(|block| block["type"].as_str() == Some("tool_use") && block["name"].as_str() == Some(name))
        .map(|block| &block["input"]);
    let text = match tool_input {
        Some(input) => input.to_string(),
        // A model that wrote text instead of calling the tool: its text is checked like an
        // answer (the repair retry tells it what was wrong).
        None => match blocks.iter().find_map(|block| block["text"].as_str()) {
            Some(text) => without_fence(text).to_string(),
            None if cut_short => String::new(),
            None => return Err(CallError::Envelope(format!("no {name} tool call"))),
        },
    };
    Ok(Reply { text, input_tokens, output_tokens, cut_short })
}

/// The JSON inside a Markdown code fence, which some models add despite the schema.
fn without_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else { return trimmed };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// Time left before `deadline`.
pub(crate) fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(provider: &str) -> AiConfig {
        AiConfig {
            provider: provider.into(),
            base_url: Some("http://127.0.0.1:9/v1/".into()),
            model: "m".into(),
            api_key_env: Some("TEST_KEY".into()),
            ..AiConfig::default()
        }
    }

    #[test]
    fn the_key_comes_from_the_named_variable_and_is_never_printed() {
        let env = |name: &str| (name == "TEST_KEY").then(|| "sk-secret-value-123".to_string());
        let provider = Provider::from_config(&config("openai"), &env).unwrap().unwrap();
        assert_eq!(provider.url(), "http://127.0.0.1:9/v1/chat/completions");
        let printed = format!("{provider:?}");
        assert!(!printed.contains("sk-secret") && printed.contains("REDACTED"), "{printed}");
        assert_eq!(provider.scrub("echo: Bearer sk-secret-value-123"), "echo: Bearer [REDACTED]");
        let anthropic = Provider::from_config(&config("anthropic"), &env).unwrap().unwrap();
        assert_eq!(anthropic.url(), "http://127.0.0.1:9/v1/messages");
        let err = Provider::from_config(&config("openai"), &|_| None).unwrap_err();
        assert!(err.contains("TEST_KEY") && err.contains("not set"), "{err}");
        assert!(Provider::from_config(&AiConfig::default(), &env).unwrap().is_none());
    }

    #[test]
    fn each_wire_format_carries_the_schema_and_is_read_back() {
        let provider = Provider::from_config(&config("anthropic"), &|_| Some("k".into())).unwrap().unwrap();
        let schema = json!({"type": "object"});
        let body = provider.body(&Question { name: SCHEMA_NAME, system: "s", user: "u", schema: &schema });
        assert_eq!(body["tool_choice"]["name"], SCHEMA_NAME);
        assert_eq!(body["tools"][0]["input_schema"], schema);
        let reply = anthropic_reply(
            &json!({
                "content": [{"type": "tool_use", "name": SCHEMA_NAME, "input": {"intent": "x"}}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 3},
            }),
            SCHEMA_NAME,
        )
        .unwrap();
        assert_eq!((reply.text.as_str(), reply.input_tokens, reply.cut_short), ("{\"intent\":\"x\"}", Some(10), false));
        let reply = openai_reply(&json!({
            "choices": [{"message": {"content": "```json\n{\"a\":1}\n```"}, "finish_reason": "length"}],
        }))
        .unwrap();
        assert_eq!((reply.text.as_str(), reply.cut_short), ("{\"a\":1}", true));
        assert!(openai_reply(&json!({"choices": []})).is_err());
    }
}
