"""Crowdsourced FL (Tahir, 2025): a device and network simulator, PROMETHEE II selection, selection baselines and a race, Shapley incentives, and the FedOnDemand workflow."""
