"""One module per surface a persona speaks on: console (and later discord, telegram, web)."""
