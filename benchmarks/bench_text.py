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
  swe-bench-no-readmes bm25  the default without the root READMEs (which count against the
                    budget): where the default and py-lucene differ
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
import zlib
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
NO_READMES = dataclasses.replace(
    constructions.SWE_BENCH, name="swe-bench-no-readmes", readmes=False
)
VARIANTS = (
    ("all-text", "bm25"),
    ("py-lucene", "bm25"),
    ("swe-bench", "bm25"),
    ("swe-bench-no-readmes", "bm25"),
    ("swe-bench", "issue+bm25"),
)
BUDGETS = (13000, 27000, 50000)


def _label(setting: TextSettings) -> str:
    return f"{setting.style} {setting.retrieval} {setting.budget}"


def _done(results: Path | None) -> dict:
    """The figures a results file holds per instance id, and ``_seconds`` summed."""
    done, seconds = {}, collections.Counter()
    if results and results.is_file():
        for line in results.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            done[entry["instance_id"]] = entry["figures"]
            seconds.update(entry["seconds"])
    done["_seconds"] = seconds
    return done


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
    parser.add_argument(
        "--shard", metavar="K/N",
        help="measure only the records of the K-th of N shards (by base commit, so a "
        "commit's snapshot is read once); run the N shards at once, each with its own "
        "--results, then concatenate those files and rerun without --shard for the table",
    )  # fmt: skip
    parser.add_argument(
        "--variants", nargs="+", choices=[f"{s} {r}" for s, r in VARIANTS],
        help="the variants to measure (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--results", type=Path,
        help="a JSONL file each record's figures are appended to as they are made; a rerun "
        "skips the records it holds (default: none kept)",
    )  # fmt: skip
    args = parser.parse_args(argv)

    constructions.CONSTRUCTIONS["py-lucene"] = PY_LUCENE  # variants for comparison only
    constructions.CONSTRUCTIONS["swe-bench-no-readmes"] = NO_READMES
    records = read_records(args.records)
    records = [r for r in records if (args.mirrors / r.repo.replace("/", "+")).is_dir()]
    records = records[: args.limit] if args.limit else records
    if args.shard:
        index, count = (int(part) for part in args.shard.split("/"))
        records = [r for r in records if zlib.crc32(r.base_commit.encode()) % count == index]
    repos = collections.Counter(record.repo for record in records)
    print(f"{len(records)} records: " + ", ".join(f"{r} {n}" for r, n in sorted(repos.items())))
    settings = [
        TextSettings(retrieval, budget, ("zsb",), "cl100k_base", style)
        for style, retrieval in VARIANTS
        if not args.variants or f"{style} {retrieval}" in args.variants
        for budget in args.budgets
    ]
    done = _done(args.results)
    seconds = collections.Counter(done.pop("_seconds", {}))
    mirrors, snapshots = _Mirrors(args.mirrors), collections.OrderedDict()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        store = ResultStore(Path(work) / "store")
        for record in sorted(records, key=lambda r: (r.repo, r.base_commit, r.instance_id)):
            if record.instance_id in done:
                continue
            figures, spent = {}, {}
            for setting in settings:
                began = time.perf_counter()
                run = make_texts([record], setting, mirrors, store, snapshots=snapshots)
                label = f"{setting.style} {setting.retrieval}"
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - began
                if run.failed:
                    raise SystemExit(f"{record.instance_id}: {run.failed[0]}")
                figures[_label(setting)] = (
                    run.files[record.instance_id]["zsb"],
                    run.tokens[record.instance_id]["zsb"],
                )
            done[record.instance_id] = figures
            seconds.update(spent)
            if args.results:
                with args.results.open("a", encoding="utf-8") as handle:
                    line = {"instance_id": record.instance_id, "figures": figures,
                            "seconds": spent}  # fmt: skip
                    handle.write(json.dumps(line) + "\n")
    wall = time.perf_counter() - start
    gold = {r.instance_id: edited_paths(r.patch) for r in records}
    print("| variant | budget | All | Any | prompt tokens median | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for setting in settings:
        shown = {i: done[i][_label(setting)] for i in gold}
        every = sum(set(gold[i]) <= set(shown[i][0]) for i in shown) / len(shown)
        some = sum(bool(set(gold[i]) & set(shown[i][0])) for i in shown) / len(shown)
        tokens = [shown[i][1] for i in shown]
        print(
            f"| {setting.style} {setting.retrieval} | {setting.budget // 1000}k | "
            f"{100 * every:.1f} % | {100 * some:.1f} % | {statistics.median(tokens):,.0f} | "
            f"{max(tokens):,} |"
        )
    print(
        f"wall time of this run {wall:.0f} s; seconds per variant over all runs (all "
        "budgets, snapshots shared): " + json.dumps({k: round(t) for k, t in seconds.items()})
    )


if __name__ == "__main__":
    main()
