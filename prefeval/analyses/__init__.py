"""What is done with evaluated values: orderings and their aggregation, significance tests, sampled
metrics, random-ranking baselines, and the validation report of ``prefeval check``."""
