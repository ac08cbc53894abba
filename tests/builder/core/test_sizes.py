"""The size of a record's fields against ``[sizes]``: each field over its limit, named."""

from builder.core.config import SizesConfig
from builder.core.sizes import oversized, size
from tests.support.records import candidate


def test_sizes_are_utf8_bytes_and_lists_add_up():
    assert size("é") == 2 and size(("ab", "c")) == 3 and size(None) == 0 and size(7) == 0
    assert size("\ud800") == 3  # a lone surrogate is counted, not an error


def test_each_field_over_its_limit_is_named_with_its_setting():
    limits = SizesConfig(problem_statement_kb=1, other_kb=1)
    record = candidate(problem_statement="x" * 1025, version="1" * 2000)
    assert oversized(record, limits) == {
        "problem_statement": "1025 bytes > 1024 (sizes.problem_statement_kb)",
        "version": "2000 bytes > 1024 (sizes.other_kb)",
    }
    assert oversized(candidate(), SizesConfig()) == {}
    assert limits.setting("reference_fail_to_pass") == "test_ids_kb"
    assert limits.setting("model_patch") == "model_patch_kb"
