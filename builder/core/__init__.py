"""The ground floor: records, result store, stage protocol, config, executor, git plumbing.

Every package of ours may import it; it imports none of them."""

__version__ = "0.1.0"
