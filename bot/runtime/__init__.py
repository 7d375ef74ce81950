"""Putting the bot together: configuration, logging that keeps secrets out, the loop's watchdog."""
