"""Clustering-based FL (Al-Saedi and Boeva): class profiles and Wasserstein distances, Markov clustering, eccentricity, GP-FL, CFL, CA-FL, FedCO and client-contribution evaluation."""
