"""Job and node fate as Slurm tells it (time limit, OOM, node failure, preemption) and the honest 'unexplained'.

One module per sub-family: unexplained (unexplained-failure), time_limit (job-time-limit), oom (job-oom),
node_failure (node-failure), preempted (preempted, job-cancelled); what they share is in common.
"""
