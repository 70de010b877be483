//! `ROUTES`, the one route table: the router is built from it (`serve::router` mounts each
//! entry and nothing else), `/openapi.json` describes it, auth reads which routes are
//! public from it, and the security matrix test (`tests/it/serve_security.rs`) calls every
//! entry with every kind of bad credential, failing for an entry it has no expectation for.

use serde_json::{Map, Value, json};

/// Routes that never take a share of what one token or address may hold (`holds`).
pub const PROBES: &[&str] = &["/healthz", "/readyz"];

/// A query or path parameter.
#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: &'static str,
    pub required: bool,
    pub about: &'static str,
}

/// How a route is mounted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mount {
    /// A handler under the request timeout (API routes, the dashboard's page and assets).
    Timed,
    /// A handler without the timeout: the event stream lives as long as its subscriber.
    Stream,
    /// The rmcp streamable-HTTP service, nested once at `/mcp` for all its methods.
    Mcp,
}

/// One operation of the API.
#[derive(Debug)]
pub struct RouteDoc {
    pub method: &'static str,
    pub path: &'static str,
    /// Callable without a token when tokens are configured (it holds no data).
    pub public: bool,
    pub mount: Mount,
    pub summary: &'static str,
    pub params: &'static [Param],
    /// The JSON body it takes, if any (a schema name under components).
    pub body: Option<&'static str>,
    /// Success status and what it returns.
    pub ok: (u16, &'static str),
    /// Other statuses it may answer with.
    pub errors: &'static [u16],
}

const fn q(name: &'static str, kind: &'static str, about: &'static str) -> Param {
    Param { name, kind, required: false, about }
}

const PROJECT: Param = q("project", "string", "Project name (default: the server's project)");
const NOW: Param = q("now", "string", "The clock, RFC 3339 (default: now, rounded to the minute)");
const ID: Param = Param { name: "id", kind: "string", required: true, about: "Item id (mem_…)" };
const LIMIT: Param = q("limit", "integer", "Results per page (1 to 100)");
const CURSOR: Param = q("cursor", "string", "nextCursor of the previous page");
const TOKEN_BUDGET: Param = q("tokenBudget", "integer", "Token budget (1 to 100000)");
const WEEKS: Param = q("weeks", "integer", "Weeks back, ending now (1 to 52, default 8)");

/// Every route of the API.
pub const ROUTES: &[RouteDoc] = &[
    RouteDoc {
        method: "get",
        path: "/api/v2/brain",
        public: false,
        mount: Mount::Timed,
        summary: "The layered brain document (ETag = brainHash; If-None-Match gives 304)",
        params: &[
            PROJECT,
            TOKEN_BUDGET,
            q("layer0", "integer", "Layer 0 budget"),
            q("layer1", "integer", "Layer 1 budget"),
            q("layer2", "integer", "Layer 2 budget"),
            NOW,
        ],
        body: None,
        ok: (
            200,
            "BrainDocument: document, summary, tokenEstimate, itemsLoaded, schemaKeys, brainHash, tree, layers, budget, overflow",
        ),
        errors: &[304, 400, 401, 403, 404],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/session-start",
        public: false,
        mount: Mount::Timed,
        summary: "The working-memory payload for a new session: pins, skills, feed, recall",
        params: &[
            PROJECT,
            q("topics", "string", "Topics to recall for"),
            q("task", "string", "The task at hand"),
            q("top", "integer", "Items to recall (1 to 50)"),
            q("maxChars", "integer", "Character cap of `text`"),
            TOKEN_BUDGET,
            NOW,
        ],
        body: None,
        ok: (200, "SessionStart, as `brain session-start --format json`"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/context-pack",
        public: false,
        mount: Mount::Timed,
        summary: "A task-focused pack within a token budget",
        params: &[
            PROJECT,
            Param { name: "task", kind: "string", required: true, about: "The task at hand" },
            TOKEN_BUDGET,
            NOW,
        ],
        body: None,
        ok: (200, "SessionStart scaled to tokenBudget"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/search",
        public: false,
        mount: Mount::Timed,
        summary: "BM25 search over the items of the project and global scope (approved ones unless status says otherwise)",
        params: &[
            Param { name: "q", kind: "string", required: true, about: "Words to search for" },
            PROJECT,
            q("kind", "string", "Only this kind"),
            q("status", "string", "Only this status (default: approved)"),
            LIMIT,
            CURSOR,
            NOW,
        ],
        body: None,
        ok: (200, "{query, results: [{id, title, kind, scope, status, score, snippet}], nextCursor}"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/items",
        public: false,
        mount: Mount::Timed,
        summary: "Items of the project and global scope, newest first",
        params: &[
            PROJECT,
            q("scope", "string", "Only this scope"),
            q("kind", "string", "Only this kind"),
            q("status", "string", "Only this status"),
            q("tag", "string", "Only items with this tag"),
            q("schemaKey", "string", "Only items at or below this schema key (a node of the brain tree)"),
            LIMIT,
            CURSOR,
            NOW,
        ],
        body: None,
        ok: (200, "{items: [Item], nextCursor}"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "post",
        path: "/api/v2/items",
        public: false,
        mount: Mount::Timed,
        summary: "Remember a new item (redacted and validated); Location and ETag headers",
        params: &[PROJECT, NOW],
        body: Some("ItemDraft"),
        ok: (201, "Item"),
        errors: &[400, 401, 403, 413, 415],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/items/{id}",
        public: false,
        mount: Mount::Timed,
        summary: "One item; ETag is its version",
        params: &[ID, NOW],
        body: None,
        ok: (200, "Item"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "patch",
        path: "/api/v2/items/{id}",
        public: false,
        mount: Mount::Timed,
        summary: "Change the fields the draft sets; If-Match: <version> gives 412 when stale",
        params: &[ID, NOW],
        body: Some("ItemDraft"),
        ok: (200, "Item"),
        errors: &[400, 401, 403, 404, 412, 413, 415],
    },
    RouteDoc {
        method: "delete",
        path: "/api/v2/items/{id}",
        public: false,
        mount: Mount::Timed,
        summary: "Archive the item, or erase it with hard=true (204); If-Match as for PATCH",
        params: &[ID, q("hard", "boolean", "Erase instead of archiving"), NOW],
        body: None,
        ok: (200, "Item (archived)"),
        errors: &[204, 400, 401, 403, 404, 412],
    },
    RouteDoc {
        method: "post",
        path: "/api/v2/items/{id}/approve",
        public: false,
        mount: Mount::Timed,
        summary: "Approve a draft",
        params: &[ID, NOW],
        body: None,
        ok: (200, "Item"),
        errors: &[400, 401, 403, 404, 412],
    },
    RouteDoc {
        method: "post",
        path: "/api/v2/items/{id}/deprecate",
        public: false,
        mount: Mount::Timed,
        summary: "Deprecate an item (kept and searchable, never injected)",
        params: &[ID, NOW],
        body: None,
        ok: (200, "Item"),
        errors: &[400, 401, 403, 404, 412],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/arcs",
        public: false,
        mount: Mount::Timed,
        summary: "Indexed vault arcs of the project (and those without one), hottest first",
        params: &[PROJECT, LIMIT, CURSOR, NOW],
        body: None,
        ok: (200, "{arcs: [{path, id, title, heat, region, status, project}], total, inOtherProjects, nextCursor}"),
        errors: &[400, 401, 403],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/use",
        public: false,
        mount: Mount::Timed,
        summary: "The project's use rate by week: of the items sessions were given, how many (and how many of their tokens) they used",
        params: &[PROJECT, WEEKS, NOW],
        body: None,
        ok: (200, "{project, weeks: [{from, until, sessions, given, used, givenTokens, usedTokens, tokenShare}]}"),
        errors: &[400, 401, 403],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/feed/{name}",
        public: false,
        mount: Mount::Timed,
        summary: "A vault feed file: hot-arcs.md, signals.md, inject.md (the project's), intent.md, last-tick-diff.md, health.jsonl (the whole vault: a grant on every project it names)",
        params: &[Param { name: "name", kind: "string", required: true, about: "Feed file name" }, PROJECT, NOW],
        body: None,
        ok: (200, "The file (text/markdown or application/x-ndjson)"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/events",
        public: false,
        mount: Mount::Stream,
        summary: "Server-sent events: ready, brain (the store changed), signal (a new critical or nuclear signal, item or vault, in the /api/v2/signals shape, of a scope the caller may read), tick (to a caller who may read every project of the vault), lagged",
        params: &[PROJECT],
        body: None,
        ok: (200, "text/event-stream"),
        errors: &[400, 401, 403],
    },
    RouteDoc {
        method: "get",
        path: "/healthz",
        public: true,
        mount: Mount::Timed,
        summary: "Liveness: the store answers (no auth)",
        params: &[],
        body: None,
        ok: (200, "{status, generation}"),
        errors: &[503],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/signals",
        public: false,
        mount: Mount::Timed,
        summary: "Active signals a session of the project sees (global and the project's), items and vault markers in one shape and order (nuclear, critical, warning, info; newest first), with the generation",
        params: &[PROJECT, NOW],
        body: None,
        ok: (
            200,
            "{generation, signals: [{id, origin: item|vault, severity, scope, project, source, title, text, createdAt, file?}]}",
        ),
        errors: &[400, 401, 403],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/tick",
        public: false,
        mount: Mount::Timed,
        summary: "The last vault tick (by any replica) and the schedule; read grant on global",
        params: &[],
        body: None,
        ok: (200, "{last: {at, trigger, ok, report|error} | null, intervalSecs, thisReplicaHasVault}"),
        errors: &[401, 403],
    },
    RouteDoc {
        method: "post",
        path: "/api/v2/tick",
        public: false,
        mount: Mount::Timed,
        summary: "Run the vault tick now, on one replica at a time; write grant on global, rate-limited",
        params: &[],
        body: None,
        ok: (200, "{at, trigger, ok, report|error}"),
        errors: &[401, 403, 409, 429],
    },
    RouteDoc {
        method: "post",
        path: "/api/v2/markers",
        public: false,
        mount: Mount::Timed,
        summary: "Append a marker block (lesson, signal, decision, todo, inject) to an arc of the vault (by cluster_id) or its inbox note: redacted, idempotent by key, atomic; write grant on the arc's project (or global)",
        params: &[NOW],
        body: Some("MarkerDraft"),
        ok: (201, "{file, key, written, block, indexed} (200 with written: false when the key was there)"),
        errors: &[400, 401, 403, 404, 409, 413, 415],
    },
    RouteDoc {
        method: "post",
        path: "/api/v2/sync/push",
        public: false,
        mount: Mount::Timed,
        summary: "brain sync: push local changes (at most 500); each applies only on its baseVersion (else conflict), a replay is recognised by its content; redacted and validated like every write; write grant on each change's scope and the stored item's",
        params: &[NOW],
        body: Some("SyncPush"),
        ok: (200, "{results: [{id, status: accepted|conflict, version}]}"),
        errors: &[400, 401, 403, 413, 415],
    },
    RouteDoc {
        method: "get",
        path: "/api/v2/sync/pull",
        public: false,
        mount: Mount::Timed,
        summary: "brain sync: the change log after a cursor (items and tombstones) in the scopes the token may read and `scopes` asks for; at most 1000 rows and 4 MiB a page",
        params: &[
            q("after", "integer", "The cursor pulled through (default 0)"),
            q("limit", "integer", "Log rows to read (1 to 1000)"),
            q("scopes", "string", "Comma-separated scope patterns (default global,project/*,team/*)"),
            NOW,
        ],
        body: None,
        ok: (200, "{changes: [{id, scope, version, item|null}], next, more}"),
        errors: &[400, 401, 403],
    },
    RouteDoc {
        method: "get",
        path: "/readyz",
        public: true,
        mount: Mount::Timed,
        summary: "Readiness: the database answers a read started now (no auth; for load balancers)",
        params: &[],
        body: None,
        ok: (200, "{status, backend, generation}"),
        errors: &[503],
    },
    RouteDoc {
        method: "get",
        path: "/metrics",
        public: false,
        mount: Mount::Timed,
        summary: "Prometheus metrics (OpenMetrics text)",
        params: &[],
        body: None,
        ok: (200, "OpenMetrics text"),
        errors: &[401],
    },
    RouteDoc {
        method: "get",
        path: "/openapi.json",
        public: true,
        mount: Mount::Timed,
        summary: "This description (no auth)",
        params: &[],
        body: None,
        ok: (200, "OpenAPI 3.1"),
        errors: &[],
    },
    RouteDoc {
        method: "post",
        path: "/mcp",
        public: false,
        mount: Mount::Mcp,
        summary: "MCP over streamable HTTP: the tools of `brain mcp`",
        params: &[],
        body: Some("JsonRpc"),
        ok: (200, "JSON-RPC response or event stream"),
        errors: &[400, 401, 403, 404, 406, 413, 415],
    },
    RouteDoc {
        method: "get",
        path: "/mcp",
        public: false,
        mount: Mount::Mcp,
        summary: "MCP over streamable HTTP: the server-to-client event stream of a session (Mcp-Session-Id)",
        params: &[],
        body: None,
        ok: (200, "text/event-stream"),
        errors: &[400, 401, 403, 404, 406],
    },
    RouteDoc {
        method: "delete",
        path: "/mcp",
        public: false,
        mount: Mount::Mcp,
        summary: "MCP over streamable HTTP: end a session (Mcp-Session-Id)",
        params: &[],
        body: None,
        ok: (202, "Session ended"),
        errors: &[400, 401, 403, 404],
    },
    RouteDoc {
        method: "get",
        path: "/",
        public: true,
        mount: Mount::Timed,
        summary: "The dashboard page (no data in it: everything shown comes from the API calls it makes)",
        params: &[],
        body: None,
        ok: (200, "text/html"),
        errors: &[],
    },
    RouteDoc {
        method: "get",
        path: "/assets/app.js",
        public: true,
        mount: Mount::Timed,
        summary: "The dashboard's script",
        params: &[],
        body: None,
        ok: (200, "text/javascript"),
        errors: &[],
    },
    RouteDoc {
        method: "get",
        path: "/assets/style.css",
        public: true,
        mount: Mount::Timed,
        summary: "The dashboard's style sheet",
        params: &[],
        body: None,
        ok: (200, "text/css"),
        errors: &[],
    },
    RouteDoc {
        method: "get",
        path: "/favicon.svg",
        public: true,
        mount: Mount::Timed,
        summary: "The dashboard's icon",
        params: &[],
        body: None,
        ok: (200, "image/svg+xml"),
        errors: &[],
    },
];

/// Whether `path` is one of the routes callable without a token.
pub fn is_public(path: &str) -> bool {
    ROUTES.iter().any(|route| route.public && route.path == path)
}

fn status_text(code: u16) -> &'static str {
    match code {
        204 => "Erased",
        304 => "Not modified (the ETag matches)",
        400 => "Invalid parameters or body",
        401 => "Missing or invalid bearer token",
        403 => "The token lacks the scope grant, or the request comes from another origin",
        404 => "Unknown item, project or file",
        409 => "A tick is running already (on any replica), or this replica has no vault",
        412 => "If-Match names a stale version",
        406 => "Accept names no type the route answers with",
        413 => "Body larger than [serve] max_body_bytes",
        414 => "URI (path and query) longer than 16 KiB",
        415 => "A POST or a body without Content-Type: application/json",
        421 => "The Host header does not name this server ([serve] allowed_hosts)",
        408 => {
            "The body did not arrive within [serve] body_timeout_secs, or the request took longer than request_timeout_secs"
        }
        429 => {
            "The token or the client address holds its share of requests or streams ([serve] max_requests_per_token, max_streams_per_token, max_requests_per_peer, max_streams_per_peer), or a tick was requested too soon; Retry-After says when to retry"
        }
        431 => "Request head larger than 64 KiB or with more than 100 headers",
        503 => "The store does not answer",
        _ => "Error",
    }
}

/// The OpenAPI document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for route in ROUTES {
        let parameters: Vec<Value> = route
            .params
            .iter()
            .map(|param| {
                let location = if route.path.contains(&format!("{{{}}}", param.name)) { "path" } else { "query" };
                json!({"name": param.name, "in": location, "required": param.required || location == "path",
                       "description": param.about, "schema": {"type": param.kind}})
            })
            .collect();
        let mut responses = Map::new();
        responses.insert(route.ok.0.to_string(), json!({"description": route.ok.1}));
        // What the guard, the shares and the connection layer may answer on every route
        // (probes take no share).
        let mut errors: Vec<u16> = route.errors.to_vec();
        errors.extend([403, 414, 421, 431]);
        if !PROBES.contains(&route.path) {
            errors.push(429);
        }
        if route.method == "post" || route.body.is_some() {
            errors.extend([408, 415]);
        }
        errors.sort_unstable();
        errors.dedup();
        for code in &errors {
            let mut response = json!({"description": status_text(*code)});
            if *code >= 400 {
                response["content"] = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}});
            }
            responses.insert(code.to_string(), response);
        }
        let mut operation = json!({"summary": route.summary, "parameters": parameters, "responses": responses});
        if route.public {
            operation["security"] = json!([]);
        }
        if let Some(body) = route.body {
            operation["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{body}")}}}});
        }
        let entry = paths.entry(route.path.to_string()).or_insert_with(|| json!({}));
        entry[route.method] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "brain", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Local-first memory for AI coding agents. Errors are {error: {code, message}}. Auth: Authorization: Bearer <token> when [[serve.tokens]] are configured."},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "hint": {"type": "string"}}}}},
                "ItemDraft": {"type": "object", "description": "Item fields of SPEC §2.1 in snake_case, all optional (title and content needed to create); unknown fields are rejected",
                              "properties": {"title": {"type": "string"}, "content": {"type": "string"}, "kind": {"type": "string"}, "scope": {"type": "string"}, "importance": {"type": "integer"}, "confidence": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}, "files": {"type": "array", "items": {"type": "string"}}, "pinned": {"type": "boolean"}, "status": {"type": "string"}}},
                "MarkerDraft": {"type": "object", "required": ["type", "text"], "additionalProperties": false,
                                "description": "A marker block for the vault; text at most 8 KiB, without <!-- --> or code fences",
                                "properties": {"type": {"type": "string", "enum": ["lesson", "signal", "decision", "todo", "inject"]}, "text": {"type": "string"}, "arc": {"type": "string", "description": "cluster_id of the arc (default: the inbox note)"}, "severity": {"type": "string", "enum": ["info", "warning", "critical", "nuclear", "resolved"]}, "source": {"type": "string"}, "target": {"type": "string"}, "key": {"type": "string", "description": "idempotency key (default: a digest of the block)"}}},
                "JsonRpc": {"type": "object", "description": "An MCP JSON-RPC message"},
                "SyncPush": {"type": "object", "required": ["changes"], "additionalProperties": false,
                             "properties": {"changes": {"type": "array", "maxItems": 500, "items": {"type": "object", "required": ["id", "scope", "version", "item"],
                                 "properties": {"id": {"type": "string"}, "scope": {"type": "string"}, "version": {"type": "integer"}, "baseVersion": {"type": "integer", "description": "the server version the change was made on (0: new)"}, "item": {"description": "the item (SPEC §2.1), or null for a deletion"}}}}}}
            }
        },
        "security": [{"bearer": []}]
    })
}
