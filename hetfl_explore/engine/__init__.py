"""The engine: the selector protocol and the federated simulation (local training, aggregation, evaluation, run store)."""
