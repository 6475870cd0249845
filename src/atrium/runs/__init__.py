"""Agent runs: the API (endpoints, schemas, service, repository), events and their broker."""
