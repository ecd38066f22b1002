//! What a request is besides its rows: the provider shape and the fields around the messages.

/// The wire shape of a request body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// OpenAI chat completions: `{"model","messages":[..],"stream"}`, tool calls on assistant
    /// messages, one `tool` message per tool result, ids mapped to `call_<n>`.
    OpenAiChat,
    /// Anthropic messages: `{"model","max_tokens","system"?,"messages":[..],"stream"}`, consecutive
    /// rows of one role merged, `tool_use`/`tool_result` blocks with ids mapped to `toolu_<n>`,
    /// `cache_control` on the last block of the last two non-empty rows.
    AnthropicMessages,
}

impl Shape {
    pub const ALL: [Shape; 2] = [Shape::OpenAiChat, Shape::AnthropicMessages];

    /// The request path the provider serves this shape on.
    pub fn default_target(self) -> &'static str {
        match self {
            Shape::OpenAiChat => "/v1/chat/completions",
            Shape::AnthropicMessages => "/v1/messages",
        }
    }

    /// The prefix of mapped tool-call ids (`call_0`, `toolu_0`).
    pub fn tool_id_prefix(self) -> &'static str {
        match self {
            Shape::OpenAiChat => "call_",
            Shape::AnthropicMessages => "toolu_",
        }
    }

    /// A short name for reports and bench ids.
    pub fn name(self) -> &'static str {
        match self {
            Shape::OpenAiChat => "openai",
            Shape::AnthropicMessages => "anthropic",
        }
    }
}

/// The request fields that are not rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    /// The provider's model name.
    pub model: String,
    /// The system prompt: a leading `system` message (OpenAI) or the `system` field (Anthropic).
    pub system: Option<String>,
    /// The answer budget; only the Anthropic shape sends it (`max_tokens`).
    pub max_tokens: u32,
    /// Whether the provider should stream its answer (`"stream"`).
    pub stream: bool,
}

impl Default for RequestHead {
    fn default() -> Self {
        RequestHead {
            model: "test-model".to_string(),
            system: None,
            max_tokens: 4096,
            stream: true,
        }
    }
}
