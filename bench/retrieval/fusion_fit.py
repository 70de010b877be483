#!/usr/bin/env python3
"""How far a fusion of brain's own scores can go on REALTALK: dumps brain's lexical and
semantic top 50 of every question from homes kept by run.py (`--keep-homes`, with vectors),
then prints recall@5 of the shipped hybrid (replayed from `--mode hybrid`), of a perfect order
of the candidates, and of rankings learned over the candidates' features, each tested on one
conversation after training on the nine others (a logistic model in numpy; boosted trees when
scikit-learn is installed). docs/BENCHMARKS.md, issue 29, eleventh pass.

    python3 bench/retrieval/fusion_fit.py --realtalk REALTALK/data --homes HOMES --brain BRAIN
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpora  # noqa: E402
import run  # noqa: E402

FEATURES = ["lexical score", "lexical rank", "closeness", "semantic rank", "in semantic", "in lexical",
            "only asks", "said by the person named", "lent by a lexical match", "closeness beside",
            "lexical score beside", "closeness of the turn before", "in both"]


def recall_at_5(ranked, relevant):
    return len(set(ranked[:5]) & set(relevant)) / len(relevant)


def dump(args):
    homes = corpora.load_realtalk(args.realtalk)
    questions, order = [], {}
    for index, home in enumerate(homes):
        home_dir = os.path.join(args.homes, f"realtalk-{index}-0")
        if not os.path.exists(os.path.join(home_dir, "brain.db")):
            raise SystemExit(f"{home_dir}: no kept home (run run.py with --keep-homes {args.homes} first)")
        key_of = {run.item_id(index, item["key"]): item["key"] for item in home["items"]}
        order[index] = [item["key"] for item in home["items"]]
        for query in home["queries"]:
            record = {"home": index, "relevant": sorted(query["relevant"])}
            for mode, limit in (("lexical", 50), ("semantic", 50), ("hybrid", 10)):
                command = [args.brain, "--home", home_dir, "--project", "bench", "--now", home["now"], "search",
                           "--json", "--limit", str(limit), "--mode", mode, "--", query["query"]]
                page = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
                if mode != "lexical" and any("lexical only" in hit.get("why", "") for hit in page["results"]):
                    raise SystemExit(f"{mode} fell back to lexical in {home_dir}: is the embedder up and embedded?")
                record[mode] = [(key_of.get(hit["id"], hit["id"]), hit["score"], hit.get("why", ""))
                                for hit in page["results"]]
            questions.append(record)
        print(f"conversation {index + 1}/{len(homes)}: {len(questions)} questions", file=sys.stderr, flush=True)
    return questions, order


def candidates(question):
    keys = []
    for key, _, _ in question["lexical"] + question["semantic"]:
        if key not in keys:
            keys.append(key)
    return keys


def features(question, order):
    lexical = {key: (score, rank, why) for rank, (key, score, why) in enumerate(question["lexical"])}
    semantic = {key: (score, rank, why) for rank, (key, score, why) in enumerate(question["semantic"])}
    floor = question["semantic"][-1][1] if len(question["semantic"]) >= 50 else 0.3

    def close(key):
        return max(0.0, (semantic[key][0] - floor) / (1 - floor)) if key in semantic else 0.0

    def lexical_score(key):
        return lexical[key][0] if key in lexical else 0.0

    turns = order[question["home"]]
    place = {key: index for index, key in enumerate(turns)}
    keys, rows = candidates(question), []
    for key in keys:
        at = place.get(key)
        before = turns[at - 1] if at else None
        after = turns[at + 1] if at is not None and at + 1 < len(turns) else None
        why = (lexical.get(key) or semantic.get(key))[2]
        rows.append([
            lexical_score(key), 1 / (10 + lexical[key][1]) if key in lexical else 0.0,
            close(key), 1 / (10 + semantic[key][1]) if key in semantic else 0.0,
            float(key in semantic), float(key in lexical), float("only asks" in why),
            float("said by someone" in why), float(key in lexical and "next to a match (" in lexical[key][2]),
            max(close(before) if before else 0.0, close(after) if after else 0.0),
            max(lexical_score(before) if before else 0.0, lexical_score(after) if after else 0.0),
            close(before) if before else 0.0, float(key in lexical and key in semantic),
        ])
    labels = [float(key in question["relevant"]) for key in keys]
    return keys, np.array(rows), np.array(labels)


def logistic(rows, labels, iterations=3000, rate=0.5, l2=1e-3):
    mean, spread = rows.mean(0), rows.std(0) + 1e-9
    x = (rows - mean) / spread
    weight = np.where(labels > 0, (len(labels) - labels.sum()) / max(labels.sum(), 1), 1.0)
    weight /= weight.mean()
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(iterations):
        gradient = (1 / (1 + np.exp(-(x @ w + b))) - labels) * weight
        w -= rate * (x.T @ gradient / len(labels) + l2 * w)
        b -= rate * gradient.mean()
    return lambda test: ((test - mean) / spread) @ w + b, w


def boosted(rows, labels):
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                           class_weight="balanced", random_state=0).fit(rows, labels)
    return lambda test: model.predict_proba(test)[:, 1], None


def held_out(questions, data, fit):
    """recall@5 of `fit`, each conversation ranked by a model trained on the others."""
    found = []
    for home in sorted({question["home"] for question in questions}):
        train = [i for i, question in enumerate(questions) if question["home"] != home]
        score, _ = fit(np.vstack([data[i][1] for i in train]), np.concatenate([data[i][2] for i in train]))
        for i, question in enumerate(questions):
            if question["home"] == home:
                keys, rows, _ = data[i]
                ranked = [keys[j] for j in np.argsort(-score(rows), kind="stable")]
                found.append(recall_at_5(ranked, question["relevant"]))
    return float(np.mean(found))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--realtalk", required=True, metavar="DIR", help="REALTALK's data/ folder")
    parser.add_argument("--homes", required=True, metavar="DIR", help="run.py's --keep-homes folder (embedded)")
    parser.add_argument("--brain", required=True, metavar="PATH", help="the brain binary those homes were made with")
    args = parser.parse_args()
    questions, order = dump(args)
    data = [features(question, order) for question in questions]
    mean = lambda values: float(np.mean(values))  # noqa: E731
    print(f"{len(questions)} questions")
    print(f"lexical (top 50)          r@5 {mean([recall_at_5([k for k, _, _ in q['lexical']], q['relevant']) for q in questions]):.3f}")
    print(f"hybrid (shipped)          r@5 {mean([recall_at_5([k for k, _, _ in q['hybrid']], q['relevant']) for q in questions]):.3f}")
    perfect = [recall_at_5(sorted(candidates(q), key=lambda k: k not in q["relevant"]), q["relevant"]) for q in questions]
    print(f"candidates, perfect order r@5 {mean(perfect):.3f}")
    print(f"logistic, held out        r@5 {held_out(questions, data, logistic):.3f}")
    _, weights = logistic(np.vstack([d[1] for d in data]), np.concatenate([d[2] for d in data]))
    print("  its weights on all questions (standardised): "
          + ", ".join(f"{name} {weight:+.2f}" for name, weight in zip(FEATURES, weights)))
    try:
        print(f"boosted trees, held out   r@5 {held_out(questions, data, boosted):.3f}")
    except ImportError:
        print("boosted trees: scikit-learn is not installed (pip install scikit-learn)")


if __name__ == "__main__":
    main()
