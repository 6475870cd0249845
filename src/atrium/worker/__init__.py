"""Workers: claim queued runs with a lease, execute them, recover runs of lost workers."""
