"""The foundation: validation and seeds, heterogeneity metrics, the published federations, data sets and loaders."""
