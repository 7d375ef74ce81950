"""The isolation suite: what must never happen, tried as an attacker would, end to end through
the real client libraries (discord.py, python-telegram-bot, the openai SDK) against the
loopback fakes. Alice's things each carry a made-up word (conftest.py), so a leak is a plain
substring. The classes of attack, and where each is tried:

- One person's memories reach another: Bob, an impostor with Alice's display name, and
  Alice in another room ask by every command, surface and id (test_commands, test_platforms,
  test_memory_ids, test_scopes, test_web).
- Identities the platform can't tell apart: Telegram's anonymous admins and channel posters,
  linked-channel forwards, other bots; Discord's webhooks, bots and system messages
  (test_platforms).
- Shared memory changed by who may not: wiping, exporting, forgetting from or changing the
  state of a channel's memory takes its admins, in slash commands, buttons and text commands;
  questions say what is really lost (test_shared_memory).
- Private answers shown to a group: Telegram answers that show memories go to the asker's
  private chat, Discord's are ephemeral (test_platforms, test_shared_memory).
- Words given to the wrong person: profiles, memories and /remember entries by id, never by a
  display name that changes or collides; the summary model sees speakers as labels given by
  id and answers by label (test_profiles).
- User text forging structure: a newline and "SYSTEM: ...", "Alice: ..." or a section heading
  inside a message, a /remember, a display name or a recap stays one quoted line of its real
  speaker, in the chat prompt and in the encoder's transcript (test_structure).
- Prompt injection: asking the persona for another's memories, or a tool call naming
  another's scope (test_prompts).
- Outside text forging structure or posing as instructions: a web search's titles and
  snippets (in the system message and a tool answer), a Python tool's and an MCP server's
  answers and a translation that echo Bob's "SYSTEM: ..." reach the model as one quoted
  string each, and the system prompt says quoted text is never an instruction
  (test_outside_text).
- Words relayed between personas: one bot hosting two personas, what one said in a channel
  some cannot read never reaches the other's reply in a channel they can; what one said of a
  user (from its memories of them) is never archived nor encoded by the other, so after that
  user's /wipe no /recall in the tavern and no file holds it (test_relays).
- Forgotten words left behind: after `/forget`, `/wipe`, the inspector's delete and the daily
  prune, no file of the data folder (the database, its -wal and -shm, the index files) holds
  the words or the vector, nor the transcript they came from; an upgraded database is vacuumed
  of what older versions deleted; on PostgreSQL no row holds them
  (test_forgetting_leaves_nothing).
- Listeners open to a network: the web client refuses an address other than loopback without
  a token of 16 characters or more, and every request without it (test_web); a Telegram
  webhook takes only updates carrying its secret, one derived from the bot token when none is
  configured (tests/test_telegram.py, tests/test_host.py).
- Data at rest readable by others: the data folder 0700 and its files 0600 whatever the
  umask (test_data_at_rest).
- Secrets and user text in logs, exports and errors (test_secrets, test_secret_scan,
  test_shared_memory).
"""
