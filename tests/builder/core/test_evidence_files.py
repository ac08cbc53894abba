"""Files a verdict's evidence names travel from a worker's root to the client's, by name."""

from builder.core.evidence_files import named_files, place


def test_named_files_are_those_under_the_root_and_placed_evidence_names_the_copies(tmp_path):
    worker = tmp_path / "worker"
    (worker / "logs" / "a").mkdir(parents=True)
    (worker / "logs" / "a" / "before.log").write_bytes(b"before \xff\n")
    (worker / "logs" / "a" / "after.log").write_text("after\n")
    outside = tmp_path / "elsewhere.log"
    outside.write_text("not the worker's\n")
    (worker / "link.log").symlink_to(outside)
    evidence = {
        "log": str(worker / "logs" / "a" / "before.log"),
        "log_after": str(worker / "logs" / "a" / "after.log"),
        "other": str(outside),
        "linked": str(worker / "link.log"),
        "work_dir": str(worker),
        "exit_code": "1",
    }
    files = named_files(evidence, worker)
    assert files == {"logs/a/before.log": b"before \xff\n", "logs/a/after.log": b"after\n"}

    client = tmp_path / "client"
    placed = place(evidence, files, str(worker), client)
    assert placed == {
        **evidence,
        "log": str(client / "logs" / "a" / "before.log"),
        "log_after": str(client / "logs" / "a" / "after.log"),
    }
    assert (client / "logs" / "a" / "before.log").read_bytes() == b"before \xff\n"
    assert not (client / "link.log").exists()
