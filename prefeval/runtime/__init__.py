"""How work is carried out: worker processes and the progress line."""
