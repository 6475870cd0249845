"""Files an account uploads and gives its runs as input (docs/guide/files.md)."""
