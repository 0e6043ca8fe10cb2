"""Layer 7: running systems over a data set and scoring them: runner, metrics, statistics, significance."""
