"""Bridges to other evaluation frameworks (each imports its framework lazily, as an optional extra)."""
