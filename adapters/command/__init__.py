"""The kizuna command: its subcommands (cli), hosting the bots of `kizuna run` (host), the
doctor's checks, the set-up wizard and progress on the terminal."""
