"""Texts per instance: stored for reruns, one snapshot per repository and commit, named
outcomes for what cannot be had."""

from builder.core.repos import RepoCache
from builder.core.store import ResultStore
from builder.text import run as text_run
from builder.text.run import TextOutcome, TextSettings, make_texts
from builder.text.tokens import token_counter
from tests.support.git import GitRepo
from tests.support.instances import make_instance
from tests.support.text_repo import text_fixture

SETTINGS = TextSettings("bm25", 27000, ("zsb", "zsp"), "cl100k_base")


class _Bar:
    def __init__(self):
        self.total, self.done = None, 0

    def reset(self, total=None):
        self.total = total

    def update(self, count=1):
        self.done += count


def test_texts_are_made_stored_and_reused(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    repos = RepoCache(tmp_path / "mirrors", fixture.locations)
    store = ResultStore(tmp_path / "store")
    bar = _Bar()

    first = make_texts([fixture.instance], SETTINGS, repos, store, progress=bar)

    prompts = first.texts[fixture.instance.instance_id]
    assert sorted(prompts) == ["zsb", "zsp"]
    assert "[start of calc/stats.py]\n1 def median(values):\n" in prompts["zsp"]
    assert "[start of README.md]" in prompts["zsb"]  # a root README, always shown
    code = prompts["zsb"].split("<code>\n", 1)[1].split("</code>", 1)[0]
    shown = [line[10:-1] for line in code.splitlines() if line.startswith("[start of")]
    assert shown[1:] == sorted(shown[1:])  # the files by path, as SWE-bench shows them
    assert first.reused == 0 and not first.failed
    assert (bar.total, bar.done) == (1, 1)
    assert first.tokens[fixture.instance.instance_id]["zsb"] <= SETTINGS.budget

    second = make_texts([fixture.instance], SETTINGS, repos, store)
    assert second.reused == 1
    assert second.texts == first.texts


def test_one_snapshot_serves_every_instance_of_a_commit(tmp_path, monkeypatch):
    fixture = text_fixture(tmp_path / "repo")
    other = fixture.instance.model_copy(update={"instance_id": "owner__calc-2"})
    reads = []
    real = text_run.read_tree
    monkeypatch.setattr(text_run, "read_tree", lambda *a: reads.append(a) or real(*a))
    repos = RepoCache(tmp_path / "mirrors", fixture.locations)

    made = make_texts([fixture.instance, other], SETTINGS, repos, ResultStore(tmp_path / "s"))

    assert len(reads) == 1
    assert sorted(made.texts) == ["owner__calc-1", "owner__calc-2"]


def test_oracle_contexts_hold_the_golden_files_within_a_small_budget(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    repos = RepoCache(tmp_path / "mirrors", fixture.locations)
    store = ResultStore(tmp_path / "store")
    count = token_counter("cl100k_base")
    cases = (
        ("oracle", ["calc/stats.py"]),
        ("oracle+tests", ["calc/stats.py", "tests/test_stats.py"]),
    )
    for retrieval, shown in cases:
        settings = TextSettings(retrieval, 200, ("zsb",), "cl100k_base", "all-text")
        made = make_texts([fixture.instance], settings, repos, store)
        prompt = made.texts[fixture.instance.instance_id]["zsb"]
        context = prompt.split("<code>\n", 1)[1].split("</code>", 1)[0]
        assert [
            line[10:-1] for line in context.splitlines() if line.startswith("[start of")
        ] == shown
        assert count(context) <= 200
    assert "calc/io.py" not in prompt


def test_a_missing_repository_or_commit_is_a_named_outcome_and_not_stored(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    gone = fixture.instance.model_copy(
        update={"instance_id": "other__gone-1", "repo": "other/gone"}
    )
    unknown = fixture.instance.model_copy(
        update={"instance_id": "owner__calc-9", "base_commit": "1" * 40}
    )
    locations = {**fixture.locations, "other/gone": str(tmp_path / "nowhere")}
    store = ResultStore(tmp_path / "store")

    made = make_texts(
        [gone, unknown, fixture.instance], SETTINGS, RepoCache(tmp_path / "m", locations), store
    )

    assert {(i, o) for i, o, _ in made.failed} == {
        ("other__gone-1", TextOutcome.REPO_UNAVAILABLE),
        ("owner__calc-9", TextOutcome.REPO_UNAVAILABLE),
    }
    assert all(detail and "\n" not in detail for _, _, detail in made.failed)
    assert list(made.texts) == [fixture.instance.instance_id]
    assert len(list(store.keys(text_run.STAGE))) == 1


def test_config_names():
    assert SETTINGS.config_name("zsp") == "bm25_27k_zsp"
    assert TextSettings("oracle+tests", 13500, (), "o200k_base").config_name("zsb") == (
        "oracle_tests_13500_zsb"
    )


class _InPlace(RepoCache):
    """The fixture repository used as it is (a clone of a damaged repository fails)."""

    def __init__(self, path):
        super().__init__(path.parent / "unused")
        self.path = path

    def mirror(self, repo, commit):
        return self.path


def test_a_file_the_mirror_lacks_is_left_out_and_noted_and_the_texts_made(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    blob = fixture.repo.git("rev-parse", f"{fixture.commit}:calc/geometry.py").strip()
    (fixture.repo.path / ".git/objects" / blob[:2] / blob[2:]).unlink()

    made = make_texts([fixture.instance], SETTINGS, _InPlace(fixture.repo.path),
                      ResultStore(tmp_path / "store"))  # fmt: skip

    assert not made.failed
    assert made.skipped == {fixture.instance.instance_id: ["calc/geometry.py"]}
    assert "[start of calc/stats.py]" in made.texts[fixture.instance.instance_id]["zsb"]


def test_the_issue_aware_retrieval_puts_the_files_the_issue_names_first(tmp_path):
    fixture = text_fixture(tmp_path / "repo")
    issue = 'Reading fails:\n  File "/venv/lib/site-packages/calc/io.py", line 2\nmedian'
    instance = fixture.instance.model_copy(update={"problem_statement": issue})
    repos = RepoCache(tmp_path / "mirrors", fixture.locations)
    settings = TextSettings("issue+bm25", 27000, ("zsb",), "cl100k_base", "all-text")

    made = make_texts([instance], settings, repos, ResultStore(tmp_path / "store"))

    assert made.files[instance.instance_id]["zsb"][0] == "calc/io.py"  # BM25 alone: not shown
    assert "calc/stats.py" in made.files[instance.instance_id]["zsb"]
    assert settings.config_name("zsb") == "all_text_issue_bm25_27k_zsb"


def test_the_issue_aware_retrieval_shows_the_code_an_issue_writes_before_prose_matches(tmp_path):
    # a repository where a plain word of the issue ("time") is a function one large file
    # defines, and a doc file repeats the issue's words
    repo = GitRepo(tmp_path / "repo")
    filler = "".join(f"    step_{n} = {n}\n" for n in range(2000))
    repo.write({
        "pkg/__init__.py": "",
        "pkg/clock.py": "def time():\n" + filler,
        "pkg/header.py": "def parse_header(text):\n    return text.split(',')[:-1]\n",
        "pkg/fields.py": "def last_field(header):\n    return header[-1]  # the last field\n",
        "docs/conf.py": "# parse header fields: the header's last field\nproject = 'pkg'\n",
        "tests/test_header.py": "from pkg.header import parse_header\n",
    })  # fmt: skip
    commit = repo.commit({}, "base")
    issue = "parse_header drops the last field of a header, and it takes time to notice."
    instance = make_instance(1, repo="owner/pkg", base_commit=commit, problem_statement=issue)
    repos = RepoCache(tmp_path / "mirrors", {"owner/pkg": str(repo.path)})
    settings = TextSettings("issue+bm25", 27000, ("zsb",), "cl100k_base", "all-text")

    made = make_texts([instance], settings, repos, ResultStore(tmp_path / "store"))

    shown = made.files[instance.instance_id]["zsb"]  # all-text shows them in rank order
    # named: parse_header is code, defined there only; "time" is prose and names nothing,
    # so the large clock.py comes after the smaller code BM25 finds; docs and tests last
    assert shown == ["pkg/header.py", "pkg/fields.py", "pkg/clock.py", "docs/conf.py",
                     "tests/test_header.py"]  # fmt: skip


def test_an_issue_aware_text_is_stored_under_its_ranking_rules(monkeypatch):
    settings = TextSettings("issue+bm25", 27000, ("zsb",), "cl100k_base")
    before = settings.key()
    assert before["issue_ranking"]["size_weight"] == 4.0
    monkeypatch.setattr(text_run.named, "RULES_VERSION", text_run.named.RULES_VERSION + 1)
    assert settings.key() != before  # a stored text made by older rules is not reused
    assert "issue_ranking" not in SETTINGS.key()  # plain bm25's key is as it was
