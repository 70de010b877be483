#!/usr/bin/env python3
"""Writes the small Claude Code transcript fixtures of the capture tests (deterministic).

    python3 make_fixtures.py     # rewrites projects/ next to this file

Sessions (the tests run with --now 2026-11-21T10:00:00Z):
  projects/-w-api/api-one.jsonl      7 prompts, tool calls, edits, planted secrets, a bad line,
                                     an unknown record type, a cut last line
  projects/-w-api/api-two.jsonl      5 prompts, starts 30 min after api-one ends: same arc
  projects/-w-api/api-compact.jsonl  6 prompts and a compaction: an arc of its own
  projects/-w-api/api-short.jsonl    2 prompts: too short for an arc
  projects/-w-api/api-old.jsonl      5 prompts in August; the tests age its mtime
  projects/-w-web/web-one.jsonl      5 prompts in another project
  projects/-w-AKIA…-repo/secret-paths.jsonl  secrets in the folder, branch, paths, a tool name
The planted secrets are listed in PLANTED (and in tests/it/capture.rs).
"""
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

PLANTED = [
    "AKIAPLANTEDKEY00042X",
    "ghp_Pl4ntedGithubT0kenAbCdEfGh1234567890",
    "sk-proj-Pl4ntedOpenAiKey9x8y7z6W5v4U3t2S1",
    "sk-ant-api03-Pl4ntedAnthropicKey0123456789abcdef",
    "PlantedDbPassw0rd77",
    "planted-diary-zebra",
    "xoxb-123456789012-Pl4ntedSlackT0ken",
]

ROOT = Path(__file__).parent / "projects"


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class Session:
    def __init__(self, folder, sid, cwd, branch, start):
        self.path = ROOT / folder / f"{sid}.jsonl"
        self.sid, self.cwd, self.branch, self.t = sid, cwd, branch, start
        self.lines = []
        self.n = 0

    def rec(self, kind, message=None, **extra):
        self.t += timedelta(minutes=3)
        self.n += 1
        record = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                  "sessionId": self.sid, "version": "2.0.0", "gitBranch": self.branch, "type": kind,
                  "uuid": f"{self.sid}-{self.n}", "timestamp": stamp(self.t)}
        if message is not None:
            record["message"] = message
        record.update(extra)
        self.lines.append(json.dumps(record))

    def prompt(self, text):
        self.rec("user", {"role": "user", "content": text})

    def blocks_prompt(self, text):
        self.rec("user", {"role": "user", "content": [{"type": "text", "text": text}]})

    def tool(self, name, text="Let me look.", file_path=None, result="ok"):
        tool_input = {"file_path": file_path} if file_path else {"command": "cargo test"}
        self.rec("assistant", {"role": "assistant", "content": [
            {"type": "text", "text": text},
            {"type": "tool_use", "id": f"toolu_{self.n}", "name": name, "input": tool_input}]})
        self.rec("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{self.n - 1}", "content": result}]})

    def say(self, text):
        self.rec("assistant", {"role": "assistant", "content": [{"type": "text", "text": text}]})

    def write(self, tail=""):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(self.lines) + "\n" + tail, encoding="utf-8")


def main():
    day = datetime(2026, 11, 21, tzinfo=timezone.utc)

    s = Session("-w-api", "api-one", "/w/api", "fix/login", day.replace(hour=6))
    s.prompt("Fix the login flow, it returns 502 since the deploy")
    s.tool("Read", "Let me check the handler.")
    s.tool("Edit", "Patching the retry.", file_path="/w/api/src/login.rs")
    s.prompt(f"The staging key is {PLANTED[0]} and the token {PLANTED[1]}, use them")
    s.tool("Bash", "That failed with error 502.", result=f"export OPENAI_API_KEY={PLANTED[2]}")
    s.blocks_prompt(f"Try again with ANTHROPIC_API_KEY={PLANTED[3]}")
    s.tool("Write", "Writing the config.", file_path="/w/api/config/dev.toml")
    s.prompt(f"The database is postgres://app:{PLANTED[4]}@db.internal/app <private>{PLANTED[5]}</private>")
    s.lines.append("{this is not json")
    s.rec("mystery-record", {"content": "unknown type"})
    s.prompt("Run the tests")
    s.tool("Bash", "Running tests.")
    s.prompt("Now the edge case with empty passwords")
    s.prompt(f"Post the result to slack with {PLANTED[6]}")
    s.say(f"Done: the login flow works again, tests are green. I used {PLANTED[1]} as asked.")
    s.write(tail='{"type":"user","message":{"content":"cut sh')

    s = Session("-w-api", "api-two", "/w/api", "fix/login", day.replace(hour=7, minute=45))
    for text in ["Add a regression test for the login retry", "Make it table-driven",
                 "Also cover the timeout", "Rename the helper", "Commit it"]:
        s.prompt(text)
        s.tool("Edit", "Editing.", file_path="/w/api/tests/login.rs")
    s.say("Committed. Everything passes, nice.")
    s.write()

    s = Session("-w-api", "api-compact", "/w/api", "main", day.replace(hour=8, minute=40))
    s.prompt("Investigate the slow dashboard query")
    s.tool("Grep", "Searching.")
    s.prompt("/compact")
    s.rec("system", subtype="compact_boundary", content="Conversation compacted")
    s.rec("user", {"role": "user", "content": "This session is being continued from a previous conversation."},
          isCompactSummary=True)
    for text in ["Add an index", "Measure again", "Ship it", "Update the changelog", "Close the ticket"]:
        s.prompt(text)
    s.say("The query takes 40 ms now.")
    s.write()

    s = Session("-w-api", "api-short", "/w/api", "main", day.replace(hour=9))
    s.prompt("What time is it?")
    s.prompt("Thanks")
    s.write()

    s = Session("-w-api", "api-old", "/w/api", "main", datetime(2026, 8, 1, 9, tzinfo=timezone.utc))
    for text in ["Old work one", "Old work two", "Old work three", "Old work four", "Old work five"]:
        s.prompt(text)
    s.lines.append("not json either")
    s.write()

    # Secrets where no prompt is: the folder, the branch, file paths, a tool name, and one
    # right at the end of a prompt longer than what capture keeps before redacting.
    s = Session(f"-w-{PLANTED[0]}-repo", "secret-paths", f"/w/{PLANTED[0]}-repo",
                f"feat/{PLANTED[1]}", day.replace(hour=4))
    s.prompt("Rotate the leaked credentials")
    s.tool("Edit", "Editing.", file_path=f"/w/{PLANTED[0]}-repo/keys/{PLANTED[6]}.txt")
    s.tool(f"mcp__vault__{PLANTED[2]}", "Calling the vault.")
    s.prompt("word " * 818 + PLANTED[3] + " tail")
    s.prompt(f"Keep this between us:\n<private>\nline one\n{PLANTED[5]} {PLANTED[4]}\n</private>\nthanks")
    s.prompt("Check again")
    s.prompt("Done?")
    s.say("All rotated.")
    s.write()

    s = Session("-w-web", "web-one", "/w/web", "ideas/landing", day.replace(hour=5))
    for text in ["Sketch a new landing page", "Make the hero bigger", "Try a darker palette",
                 "Add the pricing table", "Looks good"]:
        s.prompt(text)
        s.tool("Write", "Drafting.", file_path="/w/web/index.html")
    s.say("Beautiful, shipped to the preview.")
    s.write()


if __name__ == "__main__":
    main()
