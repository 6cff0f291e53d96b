"""Client selection: the taxonomy as data, every method it names, grouped by family, and their comparison."""
