"""The command table: every command takes its own options and only those."""

import pytest

from builder.cli import COMMANDS, main, parser


def test_every_command_has_help_and_runs_from_the_table() -> None:
    for name, module in COMMANDS.items():
        assert module.HELP, name
        assert callable(module.run) and callable(module.add_arguments), name


@pytest.mark.parametrize(
    "argv",
    [
        ["publish", "--jobs", "3"],
        ["publish", "--source", "x.jsonl"],
        ["diff", "--config", "x.toml", "a", "b"],
        ["demo", "--set", "jobs=1", "d"],
        ["collect", "--source", "x.jsonl"],
        ["images", "list", "--jobs", "2"],
    ],
)
def test_an_option_that_does_not_apply_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_shortcuts_override_their_settings() -> None:
    from builder.cli import options

    args = parser().parse_args(["config", "--jobs", "3", "--work-dir", "w", "--set", "name=x"])
    config = options.load(args)
    assert (config.jobs, config.work_dir.name, config.name) == (3, "w", "x")


def test_any_error_raised_on_purpose_is_one_line_and_exit_2(monkeypatch, capsys) -> None:
    from builder.cli import config as config_command
    from builder.core.gitutil import GitError

    def fails(args):
        raise GitError(["fetch", "origin"], 128, "repository not found\n")

    monkeypatch.setattr(config_command, "run", fails)
    assert main(["config"]) == 2
    assert capsys.readouterr().err == (
        "swt-builder config: git fetch origin failed (128): repository not found\n"
    )


def test_a_bug_still_raises(monkeypatch) -> None:
    from builder.cli import config as config_command

    def bug(args):
        raise KeyError("a bug")

    monkeypatch.setattr(config_command, "run", bug)
    with pytest.raises(KeyError):
        main(["config"])
