"""Schedules: runs that fire on a cron expression in a time zone, once per fire time."""
