"""The pure core of the decisions app: the ranking model and the routing of reads.

No Django here (import-linter checks it): frames in, arrays and plain rows out, so the model
is tested on small frames with known answers and the benchmark runs without a database.
"""
