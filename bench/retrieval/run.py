#!/usr/bin/env python3
"""Retrieval benchmark: imports each corpus into throw-away brain homes, runs every query
through the real `brain search` binary (each mode it supports) and, in the same run, through
a plain BM25 and a grep baseline over the same items; prints recall@1/5/10, MRR@10, hit@5
and per-query latency, overall and per query category.

    python3 bench/retrieval/run.py --realtalk DIR            # DIR: REALTALK's data/ folder
    python3 bench/retrieval/run.py --corpus coding           # the generated corpus only
    python3 bench/retrieval/run.py --brain before=/path/to/old/brain --brain now=target/release/brain
    python3 bench/retrieval/run.py --realtalk DIR --model-dir DIR   # + semantic and hybrid
                                   # (cargo build --release -p brain-memory --features semantic)
    python3 bench/retrieval/run.py --realtalk DIR --embed-config FILE  # an [embed] table of your
                                   # own, e.g. an OpenAI-compatible endpoint and its prefixes
    python3 bench/retrieval/run.py --realtalk DIR --one-home ...     # every conversation in one
                                   # home (8,944 items: the vector index's bit pass runs)

See docs/BENCHMARKS.md (Retrieval) for the figures and the machine.
"""

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpora  # noqa: E402

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
K_VALUES = (1, 5, 10)


def item_id(home_index, key):
    """A deterministic `mem_` + ULID for an item (48-bit time, 80 bits from the key)."""
    value = ((1_700_000_000_000 + home_index) << 80) | int.from_bytes(hashlib.sha1(key.encode()).digest()[:10], "big")
    chars = []
    for _ in range(26):
        chars.append(CROCKFORD[value & 31])
        value >>= 5
    return "mem_" + "".join(reversed(chars))


# ---------------------------------------------------------------------------------------
# Baselines, over the same text fields brain indexes (title, content, tags, files).


def words(text):
    return re.findall(r"[^\W_]+", text.lower())


def item_text(item):
    return " ".join([item["title"], item["content"], " ".join(item["tags"]), " ".join(item["files"])])


class Bm25:
    """Plain BM25 (k1 1.2, b 0.75, Lucene's IDF), no stemming, no stopwords."""

    def __init__(self, items, k1=1.2, b=0.75):
        self.k1, self.b = k1, b
        self.docs = [Counter(words(item_text(item))) for item in items]
        self.lengths = [sum(doc.values()) for doc in self.docs]
        self.average = sum(self.lengths) / max(1, len(self.lengths))
        self.df = Counter()
        self.postings = defaultdict(list)
        for index, doc in enumerate(self.docs):
            for word in doc:
                self.df[word] += 1
                self.postings[word].append(index)

    def rank(self, query, limit):
        count = len(self.docs)
        scores = defaultdict(float)
        for word in set(words(query)):
            df = self.df.get(word)
            if not df:
                continue
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            for index in self.postings[word]:
                tf = self.docs[index][word]
                norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / self.average)
                scores[index] += idf * tf * (self.k1 + 1) / (tf + norm)
        return [index for index, _ in sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]]


class Grep:
    """Substring grep: items ranked by how many of the query's words (3+ letters) they
    contain as substrings, then by how often (what `grep -c` per word would tell)."""

    def __init__(self, items):
        self.texts = [item_text(item).lower() for item in items]

    def rank(self, query, limit):
        terms = {term for term in words(query) if len(term) >= 3}
        scored = []
        for index, text in enumerate(self.texts):
            counts = [text.count(term) for term in terms]
            found = sum(1 for count in counts if count)
            if found:
                scored.append((-found, -sum(counts), index))
        return [index for *_, index in sorted(scored)[:limit]]


# ---------------------------------------------------------------------------------------
# brain


MODES_WANTED = None  # --modes
EMBED_CONFIG = None  # the [embed] table written into every home (--model-dir or --embed-config)


def brain_modes(binary):
    """The modes `brain search` offers (`--mode`; hybrid and semantic only with an embedder),
    else just its default."""
    help_text = subprocess.run([binary, "search", "--help"], capture_output=True, text=True).stdout
    if "--mode" not in help_text:
        return ["default"]
    modes = ["lexical", "semantic", "hybrid"] if EMBED_CONFIG else ["lexical"]
    return [mode for mode in modes if not MODES_WANTED or mode in MODES_WANTED]


EMBED_SECONDS = defaultdict(float)
EMBEDDED = defaultdict(int)


def import_home(binary, home_dir, home, home_index):
    subprocess.run([binary, "--home", home_dir, "init"], check=True, capture_output=True)
    if EMBED_CONFIG:
        with open(os.path.join(home_dir, "config.toml"), "w", encoding="utf-8") as handle:
            handle.write(EMBED_CONFIG)
    path = os.path.join(home_dir, "items.jsonl")
    corpora.write_import_file(path, home["items"], lambda item: item_id(home_index, item["key"]))
    subprocess.run([binary, "--home", home_dir, "--project", "bench", "import", path], check=True, capture_output=True)


def embed_home(binary, home_dir):
    """`brain embed` (resumes where a kept home stopped; a no-op when nothing is missing)."""
    if EMBED_CONFIG and "--mode" in subprocess.run([binary, "search", "--help"], capture_output=True, text=True).stdout:
        done = subprocess.run([binary, "--home", home_dir, "--json", "embed"], check=True, capture_output=True, text=True)
        report = json.loads(done.stdout)
        EMBED_SECONDS[binary] += report["seconds"]
        EMBEDDED[binary] += report.get("embedded", 0)


def brain_rank(binary, home_dir, query, mode, now, limit):
    command = [binary, "--home", home_dir, "--project", "bench", "--now", now, "search", "--json", "--limit", str(limit)]
    if mode != "default":
        command += ["--mode", mode]
    command += ["--", query]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        return None, elapsed, done.stderr.strip().splitlines()[-1:] or ["?"]
    page = json.loads(done.stdout)
    return [result["id"] for result in page["results"]], elapsed, page["results"][:1]


# ---------------------------------------------------------------------------------------
# Metrics


def score_ranking(ranked_keys, relevant):
    row = {}
    for k in K_VALUES:
        row[f"r@{k}"] = len(relevant.intersection(ranked_keys[:k])) / len(relevant)
    row["hit@5"] = 1.0 if relevant.intersection(ranked_keys[:5]) else 0.0
    row["mrr@10"] = next((1.0 / (rank + 1) for rank, key in enumerate(ranked_keys[:10]) if key in relevant), 0.0)
    return row


METRICS = [f"r@{k}" for k in K_VALUES] + ["mrr@10", "hit@5"]


def mean_rows(rows):
    return {metric: sum(row[metric] for row in rows) / len(rows) for metric in METRICS} if rows else {}


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run_corpus(name, homes, binaries, limit, errors_shown, work_dir=None):
    rankers = []  # (label, kind, binary, mode)
    for label, binary in binaries:
        for mode in brain_modes(binary):
            rankers.append((f"{label} {mode}" if len(binaries) > 1 or mode != "default" else f"{label}", binary, mode))
    labels = [ranker[0] for ranker in rankers] + ["bm25", "grep"]
    rows = defaultdict(list)  # label -> [(category, metrics)]
    latency = defaultdict(list)
    failures = Counter()
    with tempfile.TemporaryDirectory(prefix="brain-retrieval-") as scratch:
        work = work_dir or scratch
        for home_index, home in enumerate(homes):
            key_of = {item_id(home_index, item["key"]): item["key"] for item in home["items"]}
            homes_of = {}
            for label, binary, _ in rankers:
                if binary not in homes_of:
                    homes_of[binary] = os.path.join(work, f"{name}-{home_index}-{len(homes_of)}")
                    if not (work_dir and os.path.exists(os.path.join(homes_of[binary], "brain.db"))):
                        import_home(binary, homes_of[binary], home, home_index)
                    embed_home(binary, homes_of[binary])
            bm25 = Bm25(home["items"])
            grep = Grep(home["items"])
            keys = [item["key"] for item in home["items"]]
            for query in home["queries"]:
                # Every ranker answers the same query back to back (interleaved timing).
                for label, binary, mode in rankers:
                    ids, elapsed, detail = brain_rank(binary, homes_of[binary], query["query"], mode, home["now"], limit)
                    latency[label].append(elapsed)
                    if ids is None:
                        failures[label] += 1
                        if failures[label] <= errors_shown:
                            print(f"  {label}: {query['query']!r} failed: {detail[0]}", file=sys.stderr)
                        ids = []
                    ranked = [key_of.get(i, i) for i in ids]
                    rows[label].append((query["category"], score_ranking(ranked, query["relevant"])))
                for label, baseline in (("bm25", bm25), ("grep", grep)):
                    started = time.perf_counter()
                    ranked = [keys[i] for i in baseline.rank(query["query"], limit)]
                    latency[label].append(time.perf_counter() - started)
                    rows[label].append((query["category"], score_ranking(ranked, query["relevant"])))
    return labels, rows, latency, failures


def print_report(name, homes, labels, rows, latency, failures):
    items = sum(len(home["items"]) for home in homes)
    queries = sum(len(home["queries"]) for home in homes)
    print(f"\n## {name}: {len(homes)} home(s), {items} items, {queries} queries")
    header = f"| {'ranker':<22} | " + " | ".join(f"{m:>6}" for m in METRICS) + " | p50 ms | p95 ms | failed |"
    print(header)
    print("|" + "---|" * (len(METRICS) + 4))
    for label in labels:
        overall = mean_rows([metrics for _, metrics in rows[label]])
        cells = " | ".join(f"{overall[m]:6.3f}" for m in METRICS)
        lat = latency[label]
        print(
            f"| {label:<22} | {cells} | {percentile(lat, .5) * 1000:6.2f} | {percentile(lat, .95) * 1000:6.2f} "
            f"| {failures[label]:>6} |"
        )
    categories = sorted({category for label in labels for category, _ in rows[label]})
    print(f"\nrecall@5 by category ({name})")
    print(f"| {'ranker':<22} | " + " | ".join(f"{c} ({sum(1 for x, _ in rows[labels[0]] if x == c)})" for c in categories) + " |")
    print("|" + "---|" * (len(categories) + 1))
    for label in labels:
        cells = []
        for category in categories:
            subset = [metrics for cat, metrics in rows[label] if cat == category]
            cells.append(f"{mean_rows(subset)['r@5']:.3f}")
        print(f"| {label:<22} | " + " | ".join(cells) + " |")


def one_home(name, homes):
    """The homes of a corpus as one: keys prefixed by their home, `now` the latest."""
    items, queries = [], []
    for home in homes:
        items += [dict(item, key=f"{home['name']}/{item['key']}") for item in home["items"]]
        queries += [
            dict(query, relevant={f"{home['name']}/{key}" for key in query["relevant"]}) for query in home["queries"]
        ]
    return {"name": f"{name}-all", "items": items, "queries": queries, "now": max(home["now"] for home in homes)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brain", action="append", default=[], metavar="[LABEL=]PATH",
                        help="a brain binary (repeatable; default target/release/brain)")
    parser.add_argument("--realtalk", metavar="DIR", help="REALTALK's data/ folder (Chat_*.json)")
    parser.add_argument("--corpus", action="append", choices=["realtalk", "coding"],
                        help="corpora to run (default: coding, and realtalk when --realtalk is given)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated coding corpus")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--max-queries", type=int, default=0, help="per home, for quick runs (0: all)")
    parser.add_argument("--max-homes", type=int, default=0, help="first N homes of a corpus (0: all)")
    parser.add_argument("--one-home", action="store_true",
                        help="all conversations of a corpus in one home (the others' turns as distractors; "
                             "REALTALK: 8,944 items, enough for the vector index's bit pass to run)")
    parser.add_argument("--modes", help="comma-separated subset of brain's modes to run (default: all)")
    parser.add_argument("--keep-homes", metavar="DIR",
                        help="import into DIR and reuse homes found there (repeat runs skip import and embed)")
    parser.add_argument("--model-dir", metavar="DIR",
                        help="all-MiniLM-L6-v2 files (model.safetensors, config.json, tokenizer.json): adds the "
                             "semantic and hybrid modes (needs a brain built with --features semantic)")
    parser.add_argument("--embed-config", metavar="FILE",
                        help="an [embed] table (e.g. an endpoint with its prefixes) written into every home "
                             "instead of --model-dir's: adds the semantic and hybrid modes")
    args = parser.parse_args()
    global EMBED_CONFIG
    if args.model_dir and args.embed_config:
        parser.error("--model-dir and --embed-config are two embedders: give one")
    if args.model_dir:
        EMBED_CONFIG = f'[embed]\nprovider = "local"\nmodel_path = "{os.path.abspath(args.model_dir)}"\n'
    if args.embed_config:
        with open(args.embed_config, encoding="utf-8") as handle:
            EMBED_CONFIG = handle.read()
        if "[embed]" not in EMBED_CONFIG:
            parser.error(f"{args.embed_config} has no [embed] table")

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    binaries = []
    for spec in args.brain or [os.path.join(root, "target", "release", "brain")]:
        label, _, path = spec.rpartition("=")
        binaries.append((label or "brain", os.path.abspath(path)))
    for _, path in binaries:
        if not os.access(path, os.X_OK):
            raise SystemExit(f"no brain binary at {path} (cargo build --release -p brain-memory)")
    chosen = args.corpus or (["realtalk", "coding"] if args.realtalk else ["coding"])
    with open("/proc/loadavg") as handle:
        print(f"load average at start: {handle.read().split()[:3]}")
    for name in chosen:
        if name == "realtalk":
            if not args.realtalk:
                raise SystemExit("--corpus realtalk needs --realtalk DIR")
            homes = corpora.load_realtalk(args.realtalk)
        else:
            homes = corpora.gen_coding(args.seed)
        if args.max_homes:
            homes = homes[: args.max_homes]
        if args.one_home:
            homes = [one_home(name, homes)]
        if args.max_queries:
            for home in homes:
                home["queries"] = home["queries"][: args.max_queries]
        if args.keep_homes:
            os.makedirs(args.keep_homes, exist_ok=True)
        global MODES_WANTED
        MODES_WANTED = args.modes.split(",") if args.modes else None
        labels, rows, latency, failures = run_corpus(
            name, homes, binaries, args.limit, errors_shown=3, work_dir=args.keep_homes
        )
        print_report(name, homes, labels, rows, latency, failures)
        for binary, seconds in EMBED_SECONDS.items():
            items = EMBEDDED[binary]
            if items == 0:
                print(f"brain embed ({binary}): nothing to embed (the kept homes had their vectors)")
            else:
                print(f"brain embed of {items} items ({binary}): {seconds:.1f} s, {items / max(seconds, 1e-9):.0f} items/s")
        EMBED_SECONDS.clear()
        EMBEDDED.clear()
    with open("/proc/loadavg") as handle:
        print(f"\nload average at end: {handle.read().split()[:3]}")


if __name__ == "__main__":
    main()
