"""Model heterogeneity and privacy: sub-model extraction and membership inference attacks."""
