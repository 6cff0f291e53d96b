"""Data heterogeneity: FedDiverse's diversity-driven selection, the estimation of client triplets, the paper's experiments."""
