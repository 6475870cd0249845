"""Accounts, API keys and the Bearer authentication every group shares."""
