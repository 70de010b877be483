#!/usr/bin/env python3
"""Replay benchmark of recall that learns from use (issue 32).

A stream of agent sessions on one project, replayed through the real `brain` binary and its
Claude Code hooks, once with learning on and once off (`[search] learn_from_use`), same
stream, same clock:

  1. `brain hook session-start` (no task yet: what a session is handed at its start);
  2. `brain hook user-prompt-submit` with the task (the first prompt's task recall);
  3. the agent uses what it needs of what it was given: the transcript shows it reading the
     file of a needed item that names one, else quoting a sentence of it (what a real agent
     leaves in a transcript when it uses a memory); a needed item it was not given it finds
     with probability P_SEARCH by searching the memory and opening it (`brain_get_memory`
     with the item's id) — a use too, but not of given tokens;
  4. `brain hook stop`: capture finds those signs and records the session's decisions.

Needs: each session's task is a query of the generated coding corpus
(`bench/retrieval/corpora.py`, the same one the retrieval benchmark uses), and it needs the
query's relevant item plus each of the project's "house rules" (a few facts most sessions
use) with probability P_HOUSE. With `--shift`, the house rules change at the stream's
midpoint: recall has to let go of the old ones and find the new ones.

Reported per half (and per tenth with --verbose): the share of given tokens that were used,
and recall of the needed items (needed items given / needed items), with learning on and
off, and after a shift the number of sessions until recall of the new house rules is back.

    cargo build --release -p brain-memory
    python3 bench/usage/replay.py --brain target/release/brain --sessions 80 [--shift]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "retrieval"))
import corpora  # noqa: E402

P_HOUSE = 0.5
P_SEARCH = 0.5
HOUSE_RULES = 6


def run(binary, home, cwd, now, args, stdin=None):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "BRAIN_HOME": os.path.join(home, "brain")}
    done = subprocess.run(
        [binary, "--now", now] + args, input=stdin, capture_output=True, text=True, cwd=cwd, env=env
    )
    if done.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def stamp(index):
    """Sessions four hours apart from 2027-01-01."""
    hours = 4 * index
    day, hour = divmod(hours, 24)
    return f"2027-01-{1 + day:02d}T{hour:02d}:00:00Z" if day < 31 else f"2027-02-{day - 30:02d}T{hour:02d}:00:00Z"


def make_home(binary, root, corpus, learn):
    home = os.path.join(root, "learn-on" if learn else "learn-off")
    project = os.path.join(home, "project")
    os.makedirs(project)
    with open(os.path.join(project, ".brain.toml"), "w", encoding="utf-8") as handle:
        handle.write('project = "bench"\n')
    run(binary, home, project, "2027-01-01T00:00:00Z", ["init"])
    with open(os.path.join(home, "brain", "config.toml"), "a", encoding="utf-8") as handle:
        handle.write(f"\n[search]\nlearn_from_use = {'true' if learn else 'false'}\n")
    path = os.path.join(home, "items.jsonl")
    corpora.write_import_file(path, corpus["items"], lambda item: item["id"])
    run(binary, home, project, "2027-01-01T00:00:00Z", ["import", path])
    exported = run(binary, home, project, "2027-01-01T00:00:00Z", ["export"])
    tokens = {item["id"]: item["tokens"] for item in map(json.loads, exported.splitlines())}
    return home, project, tokens


def transcript(path, session, cwd, task, used_items, fetched, start):
    """A Claude Code transcript: the task, one assistant message per used item, then the
    memory search's opened items."""
    records = [
        {"type": "user", "sessionId": session, "cwd": cwd, "timestamp": start, "isSidechain": False,
         "message": {"role": "user", "content": task}},
    ]
    for index, item in enumerate(used_items):
        if item["files"]:
            content = [{"type": "tool_use", "id": f"t{index}", "name": "Read",
                        "input": {"file_path": os.path.join(cwd, item["files"][0])}}]
        else:
            sentence = item["content"].split(". ")[0]
            content = [{"type": "text", "text": f"From the project memory: {sentence}."}]
        records.append({"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": start,
                        "isSidechain": False, "message": {"role": "assistant", "content": content}})
    for index, item_id in enumerate(fetched):
        content = [{"type": "tool_use", "id": f"f{index}", "name": "mcp__brain__brain_get_memory", "input": {"id": item_id}}]
        records.append({"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": start,
                        "isSidechain": False, "message": {"role": "assistant", "content": content}})
    records.append({"type": "assistant", "sessionId": session, "cwd": cwd, "timestamp": start, "isSidechain": False,
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}})
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(record) + "\n" for record in records))


def replay(binary, root, corpus, stream, learn, seed):
    home, project, tokens = make_home(binary, root, corpus, learn)
    by_id = {item["id"]: item for item in corpus["items"]}
    results = []
    started = time.perf_counter()
    for index, (task, needed) in enumerate(stream):
        now = stamp(index)
        session = f"replay-{index:04d}"
        base = {"session_id": session, "cwd": project}
        run(binary, home, project, now, ["hook", "session-start", "--agent", "claude-code"],
            json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}))
        run(binary, home, project, now, ["hook", "user-prompt-submit", "--agent", "claude-code"],
            json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": task}))
        with open(os.path.join(home, "brain", "hooks", "sessions", f"{session}.json"), encoding="utf-8") as handle:
            given = json.load(handle)["given"]
        used = [by_id[item_id] for item_id in given if item_id in needed]
        searcher = random.Random(seed * 100_003 + index)
        fetched = [item_id for item_id in sorted(needed) if item_id not in given and searcher.random() < P_SEARCH]
        path = os.path.join(home, f"{session}.jsonl")
        transcript(path, session, project, task, used, fetched, now)
        run(binary, home, project, now, ["hook", "stop", "--agent", "claude-code"],
            json.dumps({**base, "hook_event_name": "Stop", "transcript_path": path}))
        given_tokens = sum(tokens.get(item_id, 0) for item_id in given)
        used_tokens = sum(tokens.get(item["id"], 0) for item in used)
        results.append({"given": len(given), "used": len(used), "needed": len(needed),
                        "given_tokens": given_tokens, "used_tokens": used_tokens,
                        "house_needed": sum(1 for item_id in needed if by_id[item_id].get("house")),
                        "house_given": sum(1 for item_id in given if item_id in needed and by_id[item_id].get("house"))})
    elapsed = time.perf_counter() - started
    return results, elapsed


def summary(results):
    given_tokens = sum(r["given_tokens"] for r in results)
    used_tokens = sum(r["used_tokens"] for r in results)
    needed = sum(r["needed"] for r in results)
    used = sum(r["used"] for r in results)
    return {
        "share": used_tokens / given_tokens if given_tokens else 0.0,
        "recall": used / needed if needed else 0.0,
        "given": sum(r["given"] for r in results) / len(results),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brain", default="target/release/brain")
    parser.add_argument("--sessions", type=int, default=80)
    parser.add_argument("--notes", type=int, default=400, help="generic notes beside the corpus's facts")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shift", action="store_true", help="the house rules change at the midpoint")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="keep the homes in DIR (empty) to look at afterwards")
    args = parser.parse_args()
    binary = os.path.abspath(args.brain)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"no brain binary at {binary}: cargo build --release -p brain-memory")

    corpus = corpora.gen_coding(seed=args.seed, notes=args.notes)[0]
    rng = random.Random(args.seed)
    for number, item in enumerate(corpus["items"]):
        item["id"] = "mem_01" + f"{number:024d}"
    facts = [item for item in corpus["items"] if not item["key"].startswith("n")]
    houses = [rng.sample(facts, HOUSE_RULES), rng.sample(facts, HOUSE_RULES)]
    for item in houses[0] + houses[1]:
        item["house"] = True
    by_key = {item["key"]: item for item in corpus["items"]}
    stream = []
    for index in range(args.sessions):
        query = rng.choice(corpus["queries"])
        house = houses[1] if args.shift and index >= args.sessions // 2 else houses[0]
        needed = {by_key[key]["id"] for key in query["relevant"]}
        needed |= {item["id"] for item in house if rng.random() < P_HOUSE}
        stream.append((query["query"], needed))

    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="brain-replay-") as root:
        if args.keep:
            root = args.keep
        runs = {}
        for learn in (False, True):
            runs[learn] = replay(binary, root, corpus, stream, learn, args.seed)
    half = args.sessions // 2
    print(f"replay: {args.sessions} sessions, {len(corpus['items'])} items, seed {args.seed}, "
          f"shift {'yes' if args.shift else 'no'}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'':28}{'learning off':>16}{'learning on':>16}{'on/off':>10}")
    for label, part in (("first half", slice(0, half)), ("second half", slice(half, None)), ("all", slice(None))):
        off, on = summary(runs[False][0][part]), summary(runs[True][0][part])
        ratio = on["share"] / off["share"] if off["share"] else float("inf")
        print(f"{label + ': used share of tokens':28}{off['share']:16.3f}{on['share']:16.3f}{ratio:10.2f}")
        print(f"{label + ': recall of needed':28}{off['recall']:16.3f}{on['recall']:16.3f}")
        print(f"{label + ': items given':28}{off['given']:16.1f}{on['given']:16.1f}")
    if args.shift:
        # Recovery: the first session after the shift from which recall of the needed items
        # over the next WINDOW sessions is back within 0.1 of the WINDOW before the shift.
        window = 8
        for learn in (False, True):
            after = runs[learn][0][half:]
            baseline = summary(runs[learn][0][half - window:half])["recall"]
            recovered = next((start + window for start in range(0, len(after) - window + 1)
                              if summary(after[start:start + window])["recall"] >= baseline - 0.1), None)
            print(f"learning {'on ' if learn else 'off'}: recall of the {window} sessions before the shift "
                  f"{baseline:.3f}; back within 0.1 after {recovered if recovered is not None else 'never (in this stream)'} sessions")
    if args.verbose:
        tenth = max(1, args.sessions // 10)
        for start in range(0, args.sessions, tenth):
            part = slice(start, start + tenth)
            off, on = summary(runs[False][0][part]), summary(runs[True][0][part])
            print(f"sessions {start:3}-{start + tenth - 1:3}: share off {off['share']:.3f} on {on['share']:.3f}; "
                  f"recall off {off['recall']:.3f} on {on['recall']:.3f}")
    print(f"time: off {runs[False][1]:.1f} s, on {runs[True][1]:.1f} s "
          f"({1000 * runs[True][1] / args.sessions / 3:.1f} ms per hook call with learning on)")


if __name__ == "__main__":
    main()
