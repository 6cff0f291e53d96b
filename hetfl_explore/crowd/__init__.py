"""Crowdsourced FL (Tahir, 2025): a place for the seed-003 systems; empty until that chapter lands."""
