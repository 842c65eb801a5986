"""Rendering results: eval's JSON lines, trec_eval's text, tsv rows, tables for papers, check's report,
the measure catalogue (every format of every command in one registry: :mod:`.formats`), and plots
(:mod:`.plots`)."""
