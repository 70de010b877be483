"""Corpora of the retrieval benchmark: items to import and labelled queries.

A corpus is a list of homes (each imported into its own brain home, so word statistics are
those of one user's memory). A home is a dict:
    name     str
    items    [{key, title, content, tags, files, kind, created_at, source (optional)}]
    queries  [{query, relevant: set of item keys, category}]
    now      RFC 3339 instant after every item (passed as --now)
"""

import glob
import json
import os
import random
import re

# ---------------------------------------------------------------------------------------
# REALTALK (public): 10 real-world 21-day messaging-app conversations between people, with
# memory-probing questions whose evidence names the dialog turns that hold the answer
# (the LoCoMo format, but human-written rather than LLM-generated). One item per turn, the
# question as the query, the evidence turns as the target.


def first_sentence(text, limit=80):
    """The first sentence of a turn, at most `limit` characters: the item's title."""
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    if len(sentence) > limit:
        sentence = sentence[:limit].rsplit(" ", 1)[0] + "…"
    return sentence or "(empty)"


def realtalk_time(stamp):
    """'29.12.2023, 22:42:04' -> '2023-12-29T22:42:04Z'."""
    match = re.match(r"(\d\d)\.(\d\d)\.(\d{4}), (\d\d:\d\d:\d\d)", stamp or "")
    if not match:
        return None
    day, month, year, clock = match.groups()
    return f"{year}-{month}-{day}T{clock}Z"


def load_realtalk(directory):
    files = sorted(glob.glob(os.path.join(directory, "Chat_*.json")))
    if not files:
        raise SystemExit(
            f"no REALTALK conversations (Chat_*.json) in {directory}: clone the public REALTALK "
            "repository (danny911kr/REALTALK on GitHub) and pass its data/ folder with --realtalk"
        )
    homes = []
    for path in files:
        with open(path, encoding="utf-8") as handle:
            chat = json.load(handle)
        items = []
        seen = set()
        last = "2000-01-01T00:00:00Z"
        sessions = sorted(
            (key for key in chat if re.fullmatch(r"session_\d+", key)), key=lambda k: int(k.split("_")[1])
        )
        for session in sessions:
            session_time = realtalk_time(chat.get(f"{session}_date_time")) or last
            for turn in chat[session]:
                key = turn.get("dia_id")
                text = (turn.get("clean_text") or "").strip()
                if not key or not text or key in seen:
                    continue
                seen.add(key)
                created = realtalk_time(turn.get("date_time")) or session_time
                last = max(last, created)
                speaker = (turn.get("speaker") or "someone").strip()
                items.append(
                    {
                        "key": key,
                        "title": first_sentence(text),
                        "content": f"{speaker}: {text}",
                        "tags": [],
                        "files": [],
                        "kind": "note",
                        "created_at": created,
                        # The day's chat is one session, as a captured transcript's items
                        # name theirs (`transcript:<session>`): its turns are neighbours.
                        "source": f"transcript:{os.path.splitext(os.path.basename(path))[0]}/{session}",
                    }
                )
        queries = []
        for qa in chat.get("qa", []):
            relevant = {key for key in qa.get("evidence", []) if key in seen}
            if qa.get("question") and relevant:
                queries.append(
                    {"query": qa["question"], "relevant": relevant, "category": f"cat{qa.get('category', '?')}"}
                )
        name = os.path.splitext(os.path.basename(path))[0]
        homes.append({"name": name, "items": items, "queries": queries, "now": bump_year(last)})
    return homes


def bump_year(stamp):
    return f"{int(stamp[:4]) + 1}{stamp[4:]}"


# ---------------------------------------------------------------------------------------
# Generated coding memory: decisions, bugs, conventions and lessons of a dozen services,
# each fact stated for several services (the service is what tells them apart), queried
# with paraphrases an agent would type, among generic notes that share the vocabulary.

SERVICES = [
    ("billing worker", "billing-worker"),
    ("auth service", "auth-service"),
    ("search indexer", "search-indexer"),
    ("notification gateway", "notification-gateway"),
    ("payments API", "payments-api"),
    ("report exporter", "report-exporter"),
    ("session store", "session-store"),
    ("image resizer", "image-resizer"),
    ("audit log", "audit-log"),
    ("feature flag service", "feature-flags"),
    ("webhook dispatcher", "webhook-dispatcher"),
    ("rate limiter", "rate-limiter"),
]

# Each family: kind, title, content, tags, files, queries [(category, text)]. Placeholders:
# {svc} service name, {slug} its folder, {n} a number, {m} another number, {db}/{alt} stores.
FAMILIES = [
    {
        "kind": "decision",
        "title": "Use {db} for the {svc}",
        "content": "We store the {svc}'s state in {db} rather than {alt}: we need transactions across "
        "two tables and {alt} gave us no way to roll back a half-applied batch. Revisit if writes pass {n}k per second.",
        "tags": ["storage", "{slug}"],
        "files": ["services/{slug}/src/db.rs"],
        "queries": [
            ("paraphrase", "which database does the {svc} persist its data in"),
            ("paraphrase", "why didn't we pick {alt} for {svc} storage"),
            ("exact", "{svc} {db}"),
        ],
    },
    {
        "kind": "bug",
        "title": "{svc} deadlock when the connection pool is exhausted",
        "content": "Symptom: requests to the {svc} hang forever under load. Cause: a handler held a pooled "
        "connection while awaiting a second one; with {n} concurrent requests the pool of {m} ran dry. "
        "Fix: acquire one connection per request and pass it down.",
        "tags": ["bug", "{slug}", "pool"],
        "files": ["services/{slug}/src/handlers.rs"],
        "queries": [
            ("paraphrase", "{svc} requests stall and never return when traffic spikes"),
            ("paraphrase", "what caused the {svc} to freeze under heavy load"),
            ("exact", "{svc} deadlock connection pool"),
        ],
    },
    {
        "kind": "convention",
        "title": "Errors in the {svc} are typed with thiserror",
        "content": "Every module of the {svc} defines its own error enum with thiserror; anyhow is allowed "
        "only in binaries and tests. Map to HTTP status codes in one place, services/{slug}/src/error.rs.",
        "tags": ["errors", "{slug}", "style"],
        "files": ["services/{slug}/src/error.rs"],
        "queries": [
            ("paraphrase", "how should I define failures in {svc} code, anyhow or an enum"),
            ("file", "what goes in services/{slug}/src/error.rs"),
            ("exact", "{svc} error enum thiserror"),
        ],
    },
    {
        "kind": "lesson",
        "title": "Retries in the {svc} need jitter",
        "content": "After the outage of {n} March every {svc} instance retried at the same instant and "
        "knocked the upstream over again. Exponential backoff alone is not enough: add full jitter, cap at {m} seconds.",
        "tags": ["retries", "{slug}", "resilience"],
        "files": ["services/{slug}/src/retry.rs"],
        "queries": [
            ("paraphrase", "thundering herd after an outage in the {svc}, how do we back off"),
            ("paraphrase", "what did we learn about the {svc} hammering upstream when it reconnects"),
            ("exact", "{svc} retry jitter backoff"),
        ],
    },
    {
        "kind": "bug",
        "title": "{svc} returns 502 behind the load balancer",
        "content": "The load balancer closed idle keep-alive connections after 60 s while the {svc} kept them "
        "for 75 s, so the first request on a stale socket failed with a 502 Bad Gateway. Fix: keep-alive timeout of {m} s, below the balancer's.",
        "tags": ["bug", "{slug}", "http"],
        "files": ["services/{slug}/src/server.rs"],
        "queries": [
            ("error", "502 Bad Gateway from the {svc} every few minutes"),
            ("paraphrase", "intermittent gateway errors on the {svc} after idle periods"),
            ("exact", "{svc} 502 load balancer keep-alive"),
        ],
    },
    {
        "kind": "decision",
        "title": "The {svc} publishes events through the outbox table",
        "content": "Instead of writing to the database and then to the message broker (two systems, no "
        "atomicity), the {svc} inserts events into an outbox table in the same transaction; a relay ships them every {m} ms.",
        "tags": ["events", "{slug}", "consistency"],
        "files": ["services/{slug}/src/outbox.rs"],
        "queries": [
            ("paraphrase", "how does the {svc} avoid losing messages if it crashes between the db write and the publish"),
            ("paraphrase", "{svc} dual write problem with the broker"),
            ("exact", "{svc} outbox events"),
        ],
    },
    {
        "kind": "convention",
        "title": "Database migrations of the {svc} are append-only",
        "content": "Never edit a migration of the {svc} once it is merged: add a new numbered file in "
        "services/{slug}/migrations. Destructive changes go in two releases (stop using, then drop).",
        "tags": ["migrations", "{slug}", "database"],
        "files": ["services/{slug}/migrations/"],
        "queries": [
            ("paraphrase", "can I change an old schema change script of the {svc}"),
            ("paraphrase", "how do we drop a column in the {svc} safely"),
            ("file", "rules for services/{slug}/migrations"),
        ],
    },
    {
        "kind": "bug",
        "title": "{svc} leaks memory through an unbounded cache",
        "content": "The {svc}'s resident memory grew by about {n} MB an hour until the OOM killer restarted it. "
        "A HashMap used as a cache of parsed templates was never evicted. Fix: an LRU of {m} entries.",
        "tags": ["bug", "{slug}", "memory"],
        "files": ["services/{slug}/src/cache.rs"],
        "queries": [
            ("error", "{svc} killed by the OOM killer"),
            ("paraphrase", "RSS of the {svc} keeps climbing over the day"),
            ("exact", "{svc} memory leak cache"),
        ],
    },
    {
        "kind": "decision",
        "title": "Timeouts of the {svc}'s outgoing calls",
        "content": "Every outgoing HTTP call of the {svc} has a total deadline of {m} s (connect 2 s). "
        "No call without a deadline: one slow dependency once exhausted all worker threads.",
        "tags": ["timeouts", "{slug}", "http"],
        "files": ["services/{slug}/src/client.rs"],
        "queries": [
            ("paraphrase", "how long may the {svc} wait on a downstream dependency"),
            ("paraphrase", "deadline for requests the {svc} makes to other services"),
            ("exact", "{svc} outgoing http timeout"),
        ],
    },
    {
        "kind": "lesson",
        "title": "Feature-flag the {svc} rollout before touching the schema",
        "content": "Shipping the {svc}'s new schema and code together meant a rollback lost {n} minutes of "
        "writes. Now: ship code behind a flag that can read both shapes, migrate, then flip.",
        "tags": ["rollout", "{slug}", "lessons"],
        "files": [],
        "queries": [
            ("paraphrase", "what went wrong when we rolled back the {svc} last time"),
            ("paraphrase", "safe order for deploying {svc} code and schema changes"),
            ("exact", "{svc} rollout feature flag schema"),
        ],
    },
    {
        "kind": "convention",
        "title": "Log fields of the {svc}",
        "content": "The {svc} logs JSON lines with request_id, tenant_id and duration_ms on every request; "
        "never log tokens or e-mail addresses. Use tracing spans, not ad-hoc println.",
        "tags": ["logging", "{slug}", "observability"],
        "files": ["services/{slug}/src/telemetry.rs"],
        "queries": [
            ("paraphrase", "which keys must every {svc} log line carry"),
            ("paraphrase", "is it ok to print the user's email in {svc} logs"),
            ("exact", "{svc} logging request_id tracing"),
        ],
    },
    {
        "kind": "bug",
        "title": "Flaky {svc} integration test on clock skew",
        "content": "test_token_expiry in the {svc} failed about once in {n} CI runs: it compared the wall "
        "clock before and after a sleep. Fix: inject the clock and pass a fixed instant.",
        "tags": ["bug", "{slug}", "tests", "flaky"],
        "files": ["services/{slug}/tests/expiry.rs"],
        "queries": [
            ("error", "test_token_expiry fails randomly in CI for the {svc}"),
            ("paraphrase", "intermittent test failure about time in the {svc}"),
            ("exact", "{svc} flaky test clock"),
        ],
    },
    {
        "kind": "decision",
        "title": "Pagination of the {svc} API uses cursors",
        "content": "List endpoints of the {svc} return an opaque next cursor instead of page numbers: offsets "
        "skipped or repeated rows while items were inserted. Page size is capped at {m}.",
        "tags": ["api", "{slug}", "pagination"],
        "files": ["services/{slug}/src/api/list.rs"],
        "queries": [
            ("paraphrase", "how do clients fetch the next page from the {svc}"),
            ("paraphrase", "why no offset and limit in the {svc} endpoints"),
            ("exact", "{svc} cursor pagination"),
        ],
    },
    {
        "kind": "lesson",
        "title": "Index the {svc}'s foreign keys",
        "content": "A delete in the {svc} took {n} seconds because the child table's foreign key had no "
        "index, so PostgreSQL scanned it for every deleted row. Every foreign key gets an index now.",
        "tags": ["database", "{slug}", "performance"],
        "files": ["services/{slug}/migrations/"],
        "queries": [
            ("paraphrase", "why were deletes in the {svc} so slow"),
            ("paraphrase", "sequential scan on the child table when removing {svc} rows"),
            ("exact", "{svc} foreign key index"),
        ],
    },
]

DATABASES = ["PostgreSQL", "SQLite", "Redis", "DynamoDB", "MySQL", "Cassandra"]

# Filler for the distractor notes: the vocabulary the facts use, in other combinations.
NOTE_SUBJECTS = [
    "standup notes", "meeting notes", "on-call handover", "sprint retro", "design review", "incident review",
    "release checklist", "dependency upgrade", "perf investigation", "customer escalation",
]
NOTE_WORDS = (
    "request connection pool database timeout retry error cache memory deploy rollout schema migration "
    "test flaky load balancer upstream latency index query log metrics tracing token session queue event "
    "broker message backoff worker thread handler endpoint page cursor client server config flag release "
    "alert dashboard incident outage capacity disk cpu throughput batch job cron lock transaction replica "
    "deadlock jitter outbox keep-alive 502 gateway thiserror anyhow enum cursor offset pagination foreign key "
    "OOM leak LRU clock skew deadline rollback flag relay idle socket slow delete scan hang stall freeze"
).split()


def fill(template, values):
    return template.format(**values)


def gen_coding(seed=7, notes=4000):
    rng = random.Random(seed)
    items = []
    queries = []
    day = 0

    def stamp():
        nonlocal day
        day += 1
        return f"2026-{1 + (day // 28) % 10:02d}-{1 + day % 28:02d}T{9 + day % 8:02d}:00:00Z"

    for family_index, family in enumerate(FAMILIES):
        services = rng.sample(SERVICES, 7)
        for service_index, (service, slug) in enumerate(services):
            db, alt = rng.sample(DATABASES, 2)
            values = {"svc": service, "slug": slug, "n": rng.randint(2, 40), "m": rng.randint(3, 90), "db": db, "alt": alt}
            key = f"f{family_index}s{service_index}"
            items.append(
                {
                    "key": key,
                    "title": fill(family["title"], values),
                    "content": fill(family["content"], values),
                    "tags": [fill(tag, values) for tag in family["tags"]],
                    "files": [fill(path, values) for path in family["files"]],
                    "kind": family["kind"],
                    "created_at": stamp(),
                }
            )
            # Two of the family's queries per fact, picked by the seed.
            for category, text in rng.sample(family["queries"], 2):
                queries.append({"query": fill(text, values), "relevant": {key}, "category": category})
    for index in range(notes):
        service, slug = rng.choice(SERVICES)
        words = rng.sample(NOTE_WORDS, 14)
        subject = rng.choice(NOTE_SUBJECTS)
        body = (
            f"{subject.capitalize()} for the {service}: {' '.join(words[:7])}. "
            f"Follow up on {' '.join(words[7:11])} with {rng.choice(SERVICES)[0]}; {' '.join(words[11:])}."
        )
        items.append(
            {
                "key": f"n{index}",
                "title": f"{subject.capitalize()}: {service} {words[0]} and {words[1]}",
                "content": body,
                "tags": [slug, rng.choice(["notes", "ops", "planning"])],
                "files": [],
                "kind": rng.choice(["note", "context", "todo"]),
                "created_at": stamp(),
            }
        )
    rng.shuffle(items)
    return [{"name": f"coding-seed{seed}", "items": items, "queries": queries, "now": "2027-01-01T00:00:00Z"}]


def write_import_file(path, items, id_of):
    """`brain import`'s JSONL of a corpus's items (approved, in the `bench` project), each
    under the id `id_of(item)`."""
    lines = []
    for item in items:
        record = {
            "id": id_of(item),
            "scope": "project/bench",
            "kind": item["kind"],
            "title": item["title"],
            "content": item["content"],
            "tags": item["tags"],
            "files": item["files"],
            "status": "approved",
            "created_at": item["created_at"],
            "updated_at": item["created_at"],
        }
        if item.get("source"):
            record["source"] = item["source"]
        lines.append(json.dumps(record))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
