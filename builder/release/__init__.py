"""The release: splits, export, statistics, figures, card, manifest, versions, publishing."""
