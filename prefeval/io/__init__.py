"""Reading and writing: TREC qrels and runs, JSON lines. No evaluation logic lives here."""
