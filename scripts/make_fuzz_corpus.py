#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora from manifest/*.yaml: every expression string into
fuzz/corpus/expr/ as one file each, and each family file into fuzz/corpus/manifest/.

Expressions live in shape axes, shape_rules, let values, dtype fields, mutated/optional
conditions and roofline formulas (docs/manifest.md §6). Files are named by a hash of their text,
so a rerun adds new expressions without duplicating old ones; hand-written seeds (seed-*) are kept.
Family files are copied under their own names, so a rerun refreshes them; the small broken
manifests beside them (broken-*, from tests/data/manifests/broken/) are kept.

Usage: scripts/make_fuzz_corpus.py [--repo DIR]
"""

import argparse
import hashlib
import pathlib
import sys

import yaml

# Keys whose string values are expressions.
EXPRESSION_KEYS = {"dtype", "mutated", "optional", "flops", "bytes"}


def shape_axes(shape):
    """The axis expressions of a shape string "[a, *S, *f(x, y)]", stars dropped."""
    text = shape.strip()
    if not (text.startswith("[") and text.endswith("]")):
        return [text]
    axes, depth, current = [], 0, ""
    for ch in text[1:-1]:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            axes.append(current)
            current = ""
        else:
            current += ch
    axes.append(current)
    return [a.strip().lstrip("*").strip() for a in axes if a.strip()]


def expressions(node, key=None):
    """Yields every expression string under `node`; `key` is the mapping key it sits under."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "let" and isinstance(v, dict):
                yield from (x for x in v.values() if isinstance(x, str))
            else:
                yield from expressions(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from expressions(item, key)
    elif isinstance(node, str):
        if key == "shape":
            yield node
            yield from shape_axes(node)
        elif key == "shape_rules" or key in EXPRESSION_KEYS:
            yield node


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path)
    args = parser.parse_args()
    out = args.repo / "fuzz" / "corpus" / "expr"
    out.mkdir(parents=True, exist_ok=True)
    seen = set()
    for path in sorted((args.repo / "manifest").glob("*.yaml")):
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f) or {}
        for text in expressions(doc):
            if text in seen:
                continue
            seen.add(text)
            name = "manifest-" + hashlib.sha1(text.encode()).hexdigest()[:12]
            (out / name).write_text(text, encoding="utf-8")
    print(f"{len(seen)} expressions written to {out}", file=sys.stderr)
    manifests = args.repo / "fuzz" / "corpus" / "manifest"
    manifests.mkdir(parents=True, exist_ok=True)
    families = sorted((args.repo / "manifest").glob("*.yaml"))
    for path in families:
        (manifests / path.name).write_bytes(path.read_bytes())
    print(f"{len(families)} family files copied to {manifests}", file=sys.stderr)


if __name__ == "__main__":
    main()
