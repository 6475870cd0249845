"""How the long-running processes (`atrium serve`, `atrium worker`) tune their interpreter: the
garbage collector's thresholds, sniffio's answer for the event loop's thread, and glibc's free
pages handed back. Each module is imported by the command that starts such a process."""
