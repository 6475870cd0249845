"""The caller's own account, as the key presented sees it."""
