"""SWE-bench's construction compared with its settings on a small repository: the corpus,
Lucene's BM25 settings with stemming, the top 20 hits, root READMEs, files by path, the budget
over the whole prompt and SWT-Bench's patch columns."""

import json

from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from builder.release.export import read_split_rows, swt_bench_patches
from builder.text.configs import add_text_configs
from builder.text.construction import ALL_TEXT, SWE_BENCH, is_test_path
from builder.text.files import SourceFile, read_files
from builder.text.retrieval import Bm25Index
from builder.text.run import TextSettings, make_texts
from builder.text.tokens import token_counter
from tests.support.instances import make_release
from tests.support.text_repo import text_fixture

COUNT = token_counter("cl100k_base")
# 25 modules that all mention the word, and notes that mention it most of all
MANY = {f"calc/extra/m{n:02}.py": f"def medians_{n}():\n    return 'median'\n" for n in range(25)}
NOTES = {"docs/median.rst": "median median median even median\n", "CHANGES": "median even\n"}


def _fixture(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    commit = fixture.repo.commit({**MANY, **NOTES}, "more files")
    instance = fixture.instance.model_copy(update={"base_commit": commit})
    return fixture, instance


def test_swe_bench_s_rule_for_test_paths():
    assert is_test_path("tests/test_stats.py") and is_test_path("pkg/testing/util.py")
    assert not is_test_path("calc/contest.py") and not is_test_path("calc/latest_io.py")
    assert SWE_BENCH.indexed("tests/test_stats.py")  # SWT-Bench kept them
    assert not SWE_BENCH.with_tests(False).indexed("tests/test_stats.py")
    assert not SWE_BENCH.indexed("README.md")


def test_the_index_takes_py_files_stems_and_keeps_the_top_20(tmp_path):
    fixture, instance = _fixture(tmp_path)
    files = [f for f in read_files(fixture.repo.path, instance.base_commit)
             if SWE_BENCH.indexed(f.path)]  # fmt: skip
    index = Bm25Index(files, SWE_BENCH)

    ranked = index.rank(instance.problem_statement)

    assert len(ranked) == 20 and all(path.endswith(".py") for path in ranked)
    assert ranked[0] == "calc/stats.py"


def test_terms_are_stemmed():
    files = [SourceFile("a.py", "def sorting(): pass\n"), SourceFile("b.py", "x = 1\n")]
    assert Bm25Index(files, SWE_BENCH).rank("values sorted") == ["a.py"]
    assert Bm25Index(files, ALL_TEXT).rank("values sorted") == []  # no stemming


def test_a_prompt_is_within_its_budget_with_the_readme_and_files_by_path(tmp_path):
    fixture, instance = _fixture(tmp_path)
    repos = RepoCache(tmp_path / "mirrors", fixture.locations)
    for budget in (1500, 3000, 27000):
        settings = TextSettings("bm25", budget, ("zsb", "zsp"), "cl100k_base")
        made = make_texts([instance], settings, repos, ResultStore(tmp_path / f"s{budget}"))
        for prompt, text in made.texts[instance.instance_id].items():
            assert COUNT(text) == made.tokens[instance.instance_id][prompt] <= budget
            shown = made.files[instance.instance_id][prompt]
            assert shown == sorted(shown) and "calc/stats.py" in shown
            assert "[start of README.md]" in text
            assert "docs/median.rst" not in text and "[start of CHANGES]" not in text
    assert len(shown) == 20  # 27000: every one of the top 20 fits


def test_zsb_rows_swap_the_patch_columns_as_swt_bench(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fixture = text_fixture(tmp_path / "repo")
    config, _ = make_release(tmp_path / "dist", [fixture.instance])
    settings = [TextSettings("bm25", 27000, ("zsb",), "cl100k_base")]
    repos = RepoCache(tmp_path / "m", fixture.locations)
    store = ResultStore(tmp_path / "store")
    add_text_configs(config.dataset_dir, settings, repos, store, progress=False, echo=print)

    (row,) = read_split_rows(config.dataset_dir, "bm25_27k_zsb")

    assert row["patch"] == f"<patch>\n{fixture.instance.test_patch}\n</patch>"
    assert row["test_patch"] == fixture.instance.patch
    assert swt_bench_patches("a\r\nb\n", "")["test_patch"] == "a\nb\n"  # lines rejoined
    assert json.loads(row["FAIL_TO_PASS"]) == list(fixture.instance.FAIL_TO_PASS)
    card = (config.dataset_dir / "README.md").read_text()
    assert "the rows of `bm25_27k_zsb`, `lite_bm25_27k_zsb`" in card
    assert "swap the patch columns" in card
