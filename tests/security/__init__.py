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
- Derived things acting for the wrong person: a reminder Bob asks for Alice in a group is no
  reminder of hers (only the member whose own message asked for it or told of it), and only
  what a user asked for themself passes their night and `/quiet`
  (tests/test_outreach_sender.py: test_in_a_group_a_reminder_goes_only_to_who_asked_for_it,
  test_a_reminder_of_another_members_words_is_never_written_to_them); a burst of two members
  is answered by a turn that offers no tool acting for a person, a tool call acts for the one
  person whose words it answers, and admin-only tools follow the commands' admin rule on
  ordinary messages (tests/test_discord.py, tests/test_telegram.py:
  test_a_burst_of_two_members_acts_for_neither_and_one_alone_for_them,
  test_an_admin_only_tool_is_for_...).
- Channels with different readers: what Alice said in #mods never comes up in a reply in
  #general, unless the persona shares a server's channels; a Telegram group's topics are one
  place (tests/test_discord.py:
  test_what_alice_says_in_mods_comes_up_in_general_only_where_channels_are_shared,
  test_a_memory_of_the_server_with_no_channel_stays_out_until_wiped; tests/test_telegram.py:
  test_a_groups_topics_are_one_place_for_a_members_memories).
- A line under a name taken for a while: a memory shows under its speaker's name now, by id,
  the old name only an alias (tests/test_discord.py, the rename test after the channels').
- Forgotten words left behind: after `/forget`, `/wipe`, the inspector's delete and the daily
  prune, no file of the data folder (the database, its -wal and -shm, the index files) holds
  the words or the vector, nor the transcript they came from, nor the intentions made from
  that conversation; an upgraded database is vacuumed
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
