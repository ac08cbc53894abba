"""What a rebuild needs to give a release's bytes again, in its manifest and its card."""

from __future__ import annotations

import json
import platform
import sys

from builder.core import __version__
from builder.release.reproduce import rebuild_facts
from tests.support.instances import make_instance, make_release

META = {"backend": "local", "environment": "k1", "python": "3.9", "environment_spec": "bundled:a"}


def test_the_facts_name_toolkit_platform_writers_and_each_environment_once():
    instances = [
        make_instance(1, run_metadata=META),
        make_instance(2, run_metadata=META),
        make_instance(3, run_metadata={**META, "environment": "k2", "environment_spec": ""}),
    ]
    facts = rebuild_facts(instances)
    assert facts["toolkit_version"] == __version__
    assert facts["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert facts["platform"] == f"{sys.platform}-{platform.machine()}"
    assert set(facts["writers"]) == {"datasets", "pyarrow", "matplotlib"}
    assert all(version != "absent" for version in facts["writers"].values())
    assert facts["environments"] == [
        {"backend": "local", "key": "k1", "python": "3.9", "spec": "bundled:a"},
        {"backend": "local", "key": "k2", "python": "3.9", "spec": ""},
    ]


def test_the_manifest_and_the_card_carry_them(tmp_path):
    instances = [make_instance(1, run_metadata=META)]
    config, result = make_release(tmp_path, instances)
    manifest = json.loads((result.dataset_dir / "manifest.json").read_text())
    assert manifest["reproduce"] == rebuild_facts(instances)
    card = (result.dataset_dir / "README.md").read_text()
    section = card.split("## Reproduce\n", 1)[1]
    assert f"swt-builder {__version__} on Python" in section
    assert "| local | `k1` | 3.9 | bundled:a |" in section
    assert str(tmp_path) not in card
