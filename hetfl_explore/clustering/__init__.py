"""Clustering-based FL (Al-Saedi and Boeva, 2023): a place for the seed-004 systems; empty until that chapter lands."""
