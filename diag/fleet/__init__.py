"""Fleet: every finished job of a cluster diagnosed, kept as one small record, and aggregated.

    record.py   the ``slurmdiag.fleet/1`` record of one job, built from a Report (+ Slurm's record),
                and its create-and-rename writer (the epilog's ``--fleet-dir``)
    archive.py  ``fleet scan``: jobs found in an archive of log folders/files, one shard per task
    store.py    ``fleet compact``: the only writer; JSON lines -> one Parquet file, DuckDB
    stats.py    the arithmetic of "this node fails more than the fleet" (Wilson bound, binomial tail)
    summary.py  ``fleet report``: bad nodes, drain suggestions, causes over time, the unexplained share
    page.py     ``fleet report --format html``: the summary as one page of charts (svg.py draws them)
    templates.py ``fleet templates``: the unexplained jobs' error lines mined into templates, minus
                what healthy jobs print, ranked; draft rules for a person to finish
    mining.py   the template miners behind one adapter (our Drain; drain3 when installed)

Producers never share a file (one file per job or per task, renamed into place), so nothing takes a
lock on the shared file system; only ``compact`` rewrites the store. DuckDB is an optional extra
(``pip install 'slurmdiag[fleet]'``): producing records needs only the standard library.
"""
