"""Instance records for builder tests: valid defaults, a small diff helper, Lite-eligible text."""

from __future__ import annotations

from builder.core.records import Instance, InstanceStats, Transitions

LONG_ISSUE = (
    "Calling median on a list with an even number of elements returns the upper middle value "
    "instead of the average of the two middle values, which silently skews every report that "
    "relies on it; the function should follow the usual definition used by the standard "
    "library and average both middle elements after sorting the input values."
)


def diff(path: str = "calc/stats.py", hunks: int = 1, new_file: bool = False) -> str:
    """A unified diff of ``path`` with ``hunks`` one-line hunks (or a new file)."""
    if new_file:
        return (
            f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"
        )
    text = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
    for index in range(hunks):
        line = 10 * index + 1
        text += f"@@ -{line},1 +{line},1 @@\n-old_{index} = 0\n+new_{index} = 1\n"
    return text


def golden_test_patch(body: str = "    assert median([1, 2, 3, 4]) == 2.5") -> str:
    lines = body.splitlines()
    added = "".join(f"+{line}\n" for line in lines)
    return (
        "diff --git a/tests/test_stats.py b/tests/test_stats.py\n"
        "--- a/tests/test_stats.py\n+++ b/tests/test_stats.py\n"
        f"@@ -1,1 +1,{len(lines) + 1} @@\n def test_existing():\n{added}"
    )


def make_instance(number: int = 1, **overrides) -> Instance:
    """A valid Lite-eligible instance; ``overrides`` replace any field."""
    fields = {
        "instance_id": f"owner__repo-{number}",
        "repo": "owner/repo",
        "base_commit": "a" * 40,
        "patch": diff(),
        "test_patch": golden_test_patch(),
        "problem_statement": LONG_ISSUE,
        "hints_text": "",
        "created_at": "2024-03-06T17:20:00Z",
        "version": "0.1",
        "environment_setup_commit": "a" * 40,
        "FAIL_TO_PASS": ("tests/test_stats.py::test_even",),
        "PASS_TO_PASS": ("tests/test_stats.py::test_existing",),
        "pull_number": number,
        "issue_numbers": (),
        "issue_created_at": (),
        "merged_at": "2024-03-07T00:00:00Z",
        "golden_coverage": 0.5,
        "stats": InstanceStats(
            codebase_files=10,
            codebase_lines=1000,
            golden_tests=Transitions(
                fail_to_pass=1, fail_to_fail=0, pass_to_pass=1, pass_to_fail=0
            ),
            golden_test_files_edited=1,
            golden_test_lines_edited=2,
        ),
    }
    fields.update(overrides)
    return Instance(**fields)


def make_release(
    output_dir,
    instances,
    version: str = "0.1.0",
    previous: str = "",
    as_of: str | None = None,
    cutoffs: str = "",
    name: str = "bench",
    funnel=None,
    **lite,
):
    """Write a release dir from ``instances`` as the build's release step does."""
    from collections import Counter

    from builder.core.config import Config, LiteConfig, ReleaseConfig, RollingConfig
    from builder.core.pipeline import StageStats
    from builder.core.records import write_jsonl
    from builder.release.write import write_config_json, write_release

    config = Config(
        name=name,
        output_dir=output_dir,
        release=ReleaseConfig(version=version, previous=previous),
        rolling=RollingConfig(as_of=as_of, cutoffs=cutoffs),
        lite=LiteConfig(**lite),
    )
    ordered = sorted(instances, key=lambda i: i.instance_id)
    funnel = funnel or [
        StageStats("source", len(ordered) + 1, len(ordered), 0, Counter(malformed_record=1)),
        StageStats("validate", len(ordered), len(ordered), 0, Counter()),
    ]
    write_jsonl(config.dataset_dir / "instances.jsonl", ordered)
    write_config_json(config, config.dataset_dir)
    return config, write_release(config, ordered, funnel, echo=lambda _: None)
