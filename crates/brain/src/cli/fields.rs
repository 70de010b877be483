//! The item field flags shared by `remember` and `edit`.

use brain_core::ItemDraft;

/// Item fields as flags. Lists are comma-separated or repeated.
#[derive(Debug, Default, clap::Args)]
pub struct ItemFields {
    /// architecture, convention, decision, implementation, bug, todo, lesson, signal, preference,
    /// learning, context, session, skill, codemap, note, arc
    #[arg(long)]
    pub kind: Option<String>,
    /// One line, 1 to 200 characters
    #[arg(long)]
    pub title: Option<String>,
    /// Markdown body (at most 20,000 characters); `-` reads stdin
    #[arg(long, allow_hyphen_values = true)]
    pub content: Option<String>,
    /// Why (for decisions)
    #[arg(long)]
    pub rationale: Option<String>,
    /// 1 to 5
    #[arg(long, allow_hyphen_values = true)]
    pub importance: Option<i64>,
    /// 0.0 to 1.0
    #[arg(long, allow_hyphen_values = true)]
    pub confidence: Option<f64>,
    /// draft, approved, deprecated, superseded, archived
    #[arg(long)]
    pub status: Option<String>,
    /// Signals: info, warning, critical, nuclear, resolved
    #[arg(long)]
    pub severity: Option<String>,
    /// global, project/<name>, team/<name>, agent/<name> [default: the current project]
    #[arg(long)]
    pub scope: Option<String>,
    /// e.g. root/architecture/auth [default: by kind]
    #[arg(long)]
    pub schema_key: Option<String>,
    /// Lowercase-hyphenated tags (at most 10)
    #[arg(long, value_delimiter = ',')]
    pub tags: Option<Vec<String>>,
    /// Related repository paths (at most 50)
    #[arg(long, value_delimiter = ',')]
    pub files: Option<Vec<String>>,
    /// References: commit, session, url, vault path
    #[arg(long, value_delimiter = ',')]
    pub evidence: Option<Vec<String>>,
    /// category:topic:key; items sharing one are consolidated
    #[arg(long)]
    pub dedup_hint: Option<String>,
    /// Start of validity (RFC 3339)
    #[arg(long)]
    pub valid_from: Option<String>,
    /// End of validity (RFC 3339); expired items rank lower and are never pinned
    #[arg(long)]
    pub valid_until: Option<String>,
    /// Exempt from strength decay
    #[arg(long)]
    pub stable: Option<bool>,
}

impl ItemFields {
    /// The draft these flags describe (content resolved by the caller).
    pub fn to_draft(&self, content: Option<String>) -> ItemDraft {
        ItemDraft {
            kind: self.kind.clone(),
            title: self.title.clone(),
            content,
            rationale: self.rationale.clone(),
            importance: self.importance,
            confidence: self.confidence,
            status: self.status.clone(),
            severity: self.severity.clone(),
            scope: self.scope.clone(),
            schema_key: self.schema_key.clone(),
            tags: self.tags.clone(),
            files: self.files.clone(),
            evidence: self.evidence.clone(),
            dedup_hint: self.dedup_hint.clone(),
            valid_from: self.valid_from.clone(),
            valid_until: self.valid_until.clone(),
            stable: self.stable,
            ..ItemDraft::default()
        }
    }
}
