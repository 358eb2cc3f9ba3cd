"""docchat's benchmarks: one script per measure (bench/<name>.py), run alone or all together by
`python -m bench all [--quick]`, which writes bench/results/<name>.json and regenerates the
headline tables of bench/README.md (bench/report.py). See bench/README.md, "Running every bench"."""
