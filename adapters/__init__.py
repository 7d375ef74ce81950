"""One module per platform a persona speaks on (discord, telegram, console; web/ the local
page), what they do alike (surface), the kinds of bot `kizuna run` starts, and the kizuna
command over them all (command/)."""
