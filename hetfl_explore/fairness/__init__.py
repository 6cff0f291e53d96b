"""Fairness: federated group fairness metrics, and FedDiverse and FedRK as fairness tools."""
