#!/usr/bin/env python3
"""The layering of the workspace, checked: for every crate, the graph of its top-level
modules (an edge a -> b when a non-test file of a names `crate::b`, or `super::b` from a
top-level file) and its non-test line count.

Prints each crate's lines and every import circle (a strongly connected component of more
than one module). Fails when a crate is over --max-lines, or when a circle is not one of
those recorded in .ci/layers-known-circles.txt (a ratchet: a circle may shrink or go, never
grow or appear; issue 28 removes the recorded ones). `--graph CRATE` prints that crate's
edges.

Also fails when an adapter crate (ADAPTERS: the CLI and hooks, the server) reaches the store
past `Brain` (`.store()` in non-test code): adapters convert, call one `Brain` method, render.

Usage: .ci/layers.py [--max-lines 20000] [--graph brain]
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KNOWN = os.path.join(ROOT, ".ci", "layers-known-circles.txt")
ADAPTERS = ("brain", "brain-serve")


def strip_tests(text):
    """The file without its `#[cfg(test)]` items (a test module, a test-only function)."""
    out = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() == "#[cfg(test)]":
            # Skip the attribute and the item after it: to its matching closing brace, or to
            # the end of a one-line item (`mod tests;`, `use …;`).
            index += 1
            depth = 0
            opened = False
            while index < len(lines):
                current = lines[index]
                depth += current.count("{") - current.count("}")
                opened = opened or "{" in current
                index += 1
                if (opened and depth <= 0) or (not opened and current.rstrip().endswith(";")):
                    break
            continue
        out.append(line)
        index += 1
    return "\n".join(out)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] if "//" in line and '"' not in line.split("//")[0] else line
                     for line in text.split("\n"))


def group_names(text, start):
    """Top-level names of a `{a, b::c, d::{e}}` group starting at text[start] == '{'."""
    depth = 0
    names = []
    current = ""
    for char in text[start:]:
        if char == "{":
            depth += 1
            if depth == 1:
                continue
        elif char == "}":
            depth -= 1
            if depth == 0:
                names.append(current)
                break
        if depth == 1 and char == ",":
            names.append(current)
            current = ""
        elif depth >= 1:
            current += char
    result = []
    for name in names:
        head = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", name)
        if head:
            result.append(head.group(1))
    return result


def referenced(text, prefix):
    """Names that follow `prefix::` (a path or a group) in text."""
    names = set()
    for match in re.finditer(r"\b" + prefix + r"::", text):
        rest = text[match.end():]
        if rest.startswith("{"):
            names.update(group_names(text, match.end()))
        else:
            head = re.match(r"([A-Za-z_][A-Za-z0-9_]*)", rest)
            if head:
                names.add(head.group(1))
    return names


def crate_graph(crate_dir):
    src = os.path.join(crate_dir, "src")
    modules = set()
    for entry in os.listdir(src):
        if entry.endswith(".rs") and entry not in ("lib.rs", "main.rs"):
            modules.add(entry[:-3])
        elif os.path.isdir(os.path.join(src, entry)):
            modules.add(entry)
    edges = {module: set() for module in modules}
    lines = 0
    store_uses = []
    for folder, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in ("tests", "fixtures")]
        for name in files:
            if not name.endswith(".rs") or name in ("tests.rs",) or name.endswith("_tests.rs"):
                continue
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, src)
            parts = relative[:-3].split(os.sep)
            with open(path, encoding="utf-8") as handle:
                text = strip_tests(handle.read())
            lines += sum(1 for line in text.split("\n") if line.strip())
            text = strip_comments(text)
            store_uses += [f"{relative}:{number}" for number, line in enumerate(text.split("\n"), 1)
                           if ".store()" in line]
            if parts[0] in ("lib", "main"):
                continue
            top = parts[0]
            targets = referenced(text, "crate")
            # `super::x` from a top-level file (src/a.rs or src/a/mod.rs) names the root's x.
            if len(parts) == 1 or (len(parts) == 2 and parts[1] == "mod"):
                targets |= referenced(text, "super")
            for target in targets:
                if target in modules and target != top:
                    edges[top].add(target)
    return modules, edges, lines, store_uses


def circles(modules, edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index = {}
    low = {}
    stack = []
    on_stack = set()
    found = []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for node in sorted(modules):
        if node not in index:
            visit(node)
    return found


def known_circles():
    known = {}
    if not os.path.exists(KNOWN):
        return known
    with open(KNOWN, encoding="utf-8") as handle:
        for line in handle:
            line = line.split("#")[0].strip()
            if not line:
                continue
            crate, members = line.split(":", 1)
            known.setdefault(crate.strip(), []).append(set(members.split()))
    return known


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-lines", type=int, default=20000)
    parser.add_argument("--graph", metavar="CRATE")
    args = parser.parse_args()
    crates_dir = os.path.join(ROOT, "crates")
    known = known_circles()
    failures = []
    for crate in sorted(os.listdir(crates_dir)):
        crate_dir = os.path.join(crates_dir, crate)
        if not os.path.isdir(os.path.join(crate_dir, "src")):
            continue
        modules, edges, lines, store_uses = crate_graph(crate_dir)
        found = circles(modules, edges)
        print(f"{crate}: {lines} non-test lines, {len(modules)} top-level modules, "
              f"{len(found)} import circle(s)")
        for circle in found:
            print(f"  circle: {' '.join(circle)}")
            if not any(set(circle) <= allowed for allowed in known.get(crate, [])):
                failures.append(f"{crate}: a new or larger import circle: {' '.join(circle)}")
        if crate in ADAPTERS and store_uses:
            failures.append(f"{crate}: an adapter reaches the store past Brain at {', '.join(store_uses)}")
        if lines > args.max_lines:
            failures.append(f"{crate}: {lines} non-test lines, over {args.max_lines}: split it")
        if args.graph == crate:
            for module in sorted(edges):
                print(f"  {module} -> {' '.join(sorted(edges[module]))}")
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
