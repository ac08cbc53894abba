"""The layers of docs/architecture.md: which module prefixes each layer may import."""

LAYERS: dict[str, tuple[str, ...]] = {
    # module prefix: the prefixes it may import (besides itself)
    "builder.core": (),
    "recipes": ("builder.core",),
    "validation.environments": ("builder.core",),
    "validation.runs": ("builder.core", "validation.environments"),
    "validation": ("builder.core", "validation.environments", "validation.runs"),
    "builder.release": ("builder.core",),
    "builder": ("builder", "recipes", "validation"),
}
"""Most specific prefix first wins; ``validation`` stands for its modules outside the rooms."""
