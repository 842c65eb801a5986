"""Rendering results: eval's JSON lines, trec_eval's text, tsv rows, tables for papers, and plots."""
