"""Benchmark: recall of the files to fix and tokens per prompt for each retrieval variant and
budget, on SWE-bench-format records whose repositories' bare mirrors are at hand; wall time.

Recall as SWE-bench's ``eval_retrieval.py`` counts it: **All**, the share of instances whose
prompt shows every file the golden patch edits (that exists at the base commit); **Any**, the
share showing at least one. Tokens: of the whole zsb prompt, median and max.

Variants:
  all-text bm25     every text file, bm25s defaults (k1 1.5, b 0.75), every hit, rank order,
                    the budget over the files
  py-lucene bm25    *.py files, k1 0.9, b 0.4, top 20, no stemming, rank order, the budget over
                    the files (the .py-only Lucene variant)
  swe-bench bm25    the default: SWE-bench's construction (stemming, Lucene stop words, root
                    READMEs, files by path, the budget over the whole prompt)
  swe-bench issue+bm25  the files the issue names first, then the default's BM25 hits
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path

from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from builder.text import construction as constructions
from builder.text.records import read_records
from builder.text.retrieval import edited_paths
from builder.text.run import TextSettings, make_texts

PY_LUCENE = dataclasses.replace(
    constructions.ALL_TEXT, name="py-lucene", corpus="py", k1=0.9, b=0.4, top_k=20
)
VARIANTS = (
    ("all-text", "bm25"),
    ("py-lucene", "bm25"),
    ("swe-bench", "bm25"),
    ("swe-bench", "issue+bm25"),
)
BUDGETS = (13000, 27000, 50000)


class _Mirrors(RepoCache):
    """Bare mirrors used where they are: ``ROOT/<owner>+<name>/repo``."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.root = root

    def mirror(self, repo: str, commit: str) -> Path:
        return self.root / repo.replace("/", "+") / "repo"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", required=True, help="SWE-bench-format records")
    parser.add_argument("--mirrors", type=Path, required=True, help="ROOT of OWNER+NAME/repo")
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--limit", type=int, help="records to take (default: all)")
    args = parser.parse_args(argv)

    constructions.CONSTRUCTIONS["py-lucene"] = PY_LUCENE  # a variant for comparison only
    records = read_records(args.records)
    records = [r for r in records if (args.mirrors / r.repo.replace("/", "+")).is_dir()]
    records = records[: args.limit] if args.limit else records
    repos = collections.Counter(record.repo for record in records)
    print(f"{len(records)} records: " + ", ".join(f"{r} {n}" for r, n in sorted(repos.items())))
    settings = [
        TextSettings(retrieval, budget, ("zsb",), "cl100k_base", style)
        for style, retrieval in VARIANTS
        for budget in args.budgets
    ]
    found = {setting: {} for setting in settings}
    seconds = collections.Counter()
    mirrors, snapshots = _Mirrors(args.mirrors), collections.OrderedDict()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        store = ResultStore(Path(work) / "store")
        for record in sorted(records, key=lambda r: (r.repo, r.base_commit, r.instance_id)):
            for setting in settings:
                began = time.perf_counter()
                run = make_texts([record], setting, mirrors, store, snapshots=snapshots)
                seconds[(setting.style, setting.retrieval)] += time.perf_counter() - began
                if run.failed:
                    raise SystemExit(f"{record.instance_id}: {run.failed[0]}")
                found[setting][record.instance_id] = (
                    run.files[record.instance_id]["zsb"],
                    run.tokens[record.instance_id]["zsb"],
                )
    wall = time.perf_counter() - start
    gold = {r.instance_id: edited_paths(r.patch) for r in records}
    print("| variant | budget | All | Any | prompt tokens median | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for setting in settings:
        shown = found[setting]
        every = sum(set(gold[i]) <= set(shown[i][0]) for i in shown) / len(shown)
        some = sum(bool(set(gold[i]) & set(shown[i][0])) for i in shown) / len(shown)
        tokens = [shown[i][1] for i in shown]
        print(
            f"| {setting.style} {setting.retrieval} | {setting.budget // 1000}k | "
            f"{100 * every:.1f} % | {100 * some:.1f} % | {statistics.median(tokens):,.0f} | "
            f"{max(tokens):,} |"
        )
    print(f"wall time {wall:.0f} s; per variant (all budgets, snapshots shared): "
          + json.dumps({f"{s} {r}": round(t) for (s, r), t in seconds.items()}))  # fmt: skip


if __name__ == "__main__":
    main()
