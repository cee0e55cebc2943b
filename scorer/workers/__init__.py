"""The worker processes: their entry point, launch (exec or fork server), the judge-worker protocol,
the kernel and reference roles, device memory sharing, the batch loop the judge times."""
