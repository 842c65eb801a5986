"""From runs to position vectors: the ranks of the relevant documents (the RankTable), the loading
that builds it, the position vectors the measures read, and the subsampling of queries and labels."""
