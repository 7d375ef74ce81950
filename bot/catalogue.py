"""What the bot itself says to users (not the persona's replies, which the model writes), by
key, in each language a persona may speak; `say` picks the persona's, English where a sentence
has no translation yet. One place, so a sentence is spelled once and translated once.

    say("zh", "wiped_you", name="喵")   # "喵已经忘了关于你的一切。"
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["LANGUAGES", "MESSAGES", "say"]

LANGUAGES = ("en", "zh")  # every sentence is in each of these

MESSAGES: Mapping[str, Mapping[str, str]] = {
    "shared_admins_only": {
        "en": "What {name} remembers here belongs to the whole channel: only an admin may "
        "change it.",
        "zh": "{name}在这里的记忆属于整个频道：只有管理员可以修改。",
    },
    "wipe_question_you": {
        "en": "Forget this conversation and everything {name} remembers of you?",
        "zh": "要忘掉这次对话，以及{name}记得的关于你的一切吗？",
    },
    "wipe_question_channel": {
        "en": "Forget this channel's conversation and everything {name} remembers of this "
        "channel, for everyone in it?",
        "zh": "要忘掉这个频道的对话，以及{name}记得的关于这个频道的一切吗？所有人的都会被忘掉。",
    },
    "wiped_you": {
        "en": "Wiped: {name} remembers nothing of you now.",
        "zh": "已清除：{name}已经忘了关于你的一切。",
    },
    "wiped_channel": {
        "en": "Wiped: {name} remembers nothing of this channel now.",
        "zh": "已清除：{name}已经忘了关于这个频道的一切。",
    },
    "sent_privately": {
        "en": "I sent you the answer privately.",
        "zh": "我私下把答案发给你了。",
    },
    "start_private_first": {
        "en": "That answer is private, and I can't write to you privately yet: open a chat "
        "with me ({link}), press Start, then ask again here.",
        "zh": "这个回答是私密的，但我还不能私下给你发消息：先和我开个私聊（{link}），点“开始”，"
        "然后再在这里问一次。",
    },
    "asked_in": {
        "en": "(you asked in {chat})",
        "zh": "（你在{chat}里问的）",
    },
    # Pictures a user sent that the persona could not look at (bot.media.pictures).
    "picture_too_big": {
        "en": "{name} is too big for me to look at ({size}; the most I can take is {most}).",
        "zh": "{name}太大了，我看不了（{size}；最多 {most}）。",
    },
    "picture_unreadable": {
        "en": "I couldn't open {name}: it isn't a picture I can read (damaged, or a kind I "
        "don't know).",
        "zh": "我打不开{name}：它不是我能看的图片（可能损坏了，或者是我不认识的格式）。",
    },
    "picture_not_fetched": {
        "en": "I couldn't download {name}. Could you send it again?",
        "zh": "{name}我没能下载下来，可以再发一次吗？",
    },
    "picture_not_seen": {
        "en": "{name} reached me, but I couldn't make it out just now.",
        "zh": "{name}我收到了，但现在看不清楚。",
    },
    "picture_too_many": {
        "en": "That's a lot of pictures for one hour; I'll look at more a little later.",
        "zh": "这一小时的图片有点多啦，我过一会儿再看新的。",
    },
    # Voice notes and audio users send (bot/media/hearing.py).
    "voice_too_big": {
        "en": "{name} is too long for me to listen to ({size}; the most I can take is {most}).",
        "zh": "{name}太长了，我听不了（{size}；最多 {most}）。",
    },
    "voice_not_fetched": {
        "en": "I couldn't download {name}. Could you send it again?",
        "zh": "{name}我没能下载下来，可以再发一次吗？",
    },
    "voice_not_heard": {
        "en": "I couldn't make out {name}: it may be damaged, or a kind of recording I can't "
        "play. Could you type it?",
        "zh": "{name}我没听清：可能损坏了，或者是我放不了的格式。可以打字告诉我吗？",
    },
    "voice_no_hearing": {
        "en": "I can't listen to voice notes here, so {name} went unheard. Could you type it?",
        "zh": "我在这里听不了语音，{name}没能听到。可以打字告诉我吗？",
    },
    "voice_too_many": {
        "en": "That's a lot to listen to for one hour; I'll listen to more a little later.",
        "zh": "这一小时要听的有点多啦，我过一会儿再听新的。",
    },
    # What each command does, for menus and /help (Discord allows 100 characters).
    "help_remember": {"en": "remember TEXT for good", "zh": "永远记住一段话"},
    "help_recall": {"en": "the memory closest to QUERY", "zh": "和 QUERY 最接近的一条记忆"},
    "help_memories": {
        "en": "what is remembered of you (or the best matches of QUERY)",
        "zh": "记得的关于你的事（或最符合 QUERY 的几条）",
    },
    "help_forget": {
        "en": "pick one of your memories matching QUERY to delete",
        "zh": "从符合 QUERY 的记忆里挑一条删掉",
    },
    "help_diary": {
        "en": "the diary page for a day (yesterday, 2026-09-03...), or the newest",
        "zh": "某一天的日记（昨天、2026-09-03……），或最新的一页",
    },
    "help_profile": {"en": "what is known of you", "zh": "知道的关于你的事"},
    "help_state": {
        "en": "what is kept track of here; `state set NAME VALUE` changes it",
        "zh": "这里记录的状态；`state set 名称 值` 修改它",
    },
    "help_persona": {
        "en": "who talks here; `persona set NAME` changes it (admins)",
        "zh": "这里是谁在说话；`persona set 名字` 换人（管理员）",
    },
    "help_export": {
        "en": "your memories and what is to be brought up later, as a JSON file sent privately",
        "zh": "把你的记忆和之后要提起的事导出成 JSON 文件，私下发给你",
    },
    "help_dm_memories": {
        "en": "on/off: may what you say in private come up in groups (off by default)",
        "zh": "on/off：私聊里说的话能不能在群里提起（默认关闭）",
    },
    "help_group": {
        "en": "when the persona speaks in this channel; admins change it: `group mode listen`",
        "zh": "角色在这个频道什么时候说话；管理员可以修改：`group mode listen`",
    },
    "help_end": {
        "en": "end the conversation now (it goes to long-term memory)",
        "zh": "现在结束对话（它会进入长期记忆）",
    },
    "help_wipe": {
        "en": "forget this conversation and everything remembered of you",
        "zh": "忘掉这次对话和记得的关于你的一切",
    },
    "help_help": {"en": "list these commands", "zh": "列出这些命令"},
    "help_save": {
        "en": "save now and export the session to a JSON file",
        "zh": "现在保存，并把这次会话导出成 JSON 文件",
    },
    "help_log": {
        "en": "show the session: persona, turns, state",
        "zh": "显示会话：角色、对话、状态",
    },
    "help_get": {
        "en": "read one more line (or /get CUE) and show the closest memory",
        "zh": "再读一行（或 /get 线索），显示最接近的记忆",
    },
    "help_read": {
        "en": "read PATH: open a text, Markdown or PDF file and ask about it (document close ends)",
        "zh": "read 路径：打开文本、Markdown 或 PDF 文件来提问（document close 结束）",
    },
    "help_quit": {"en": "save and leave (Ctrl-D works too)", "zh": "保存并离开（Ctrl-D 也可以）"},
    "help_cancel": {"en": "answer no to what was asked", "zh": "对刚才的问题说不"},
    "help_start": {"en": "say hello", "zh": "打个招呼"},
    "help_intentions": {
        "en": "what will be brought up later (an exam to ask about, a reminder); cancel one",
        "zh": "之后要提起的事（要问的考试、提醒）；可以取消",
    },
    "help_quiet": {
        "en": "on: never message you first; off: may, now and then",
        "zh": "on：不再主动给你发消息；off：偶尔可以",
    },
    "help_voice": {
        "en": "on: replies as voice notes too; off: text only",
        "zh": "on：回复时也发语音；off：只发文字",
    },
    "help_timezone": {
        "en": "your time zone (like Europe/Paris), for when to write first",
        "zh": "你的时区（比如 Asia/Shanghai），决定什么时候主动发消息",
    },
    # What a command's option is, as Discord's menu shows it.
    "option_remember_text": {"en": "what to remember", "zh": "要记住的话"},
    "option_recall_query": {"en": "what to recall", "zh": "要回想的事"},
    "option_memories_query": {
        "en": "show the best matches of this instead of the newest",
        "zh": "显示最符合这个的记忆，而不是最新的",
    },
    "option_forget_query": {"en": "what to forget", "zh": "要忘掉的事"},
    "option_diary_day": {
        "en": "yesterday, 2026-09-03, last Monday...; empty: the newest",
        "zh": "昨天、2026-09-03、上周一……；留空：最新的一页",
    },
    "option_state_slot": {
        "en": "a slot to change (like characters); leave empty to see them all",
        "zh": "要修改的一项（比如角色）；留空查看全部",
    },
    "option_state_value": {"en": "the slot's new value", "zh": "这一项的新值"},
    "option_persona_action": {
        "en": "leave empty to see who talks here, or `set`",
        "zh": "留空查看这里是谁在说话，或者填 `set`",
    },
    "option_persona_name": {"en": "the persona to bind", "zh": "要换上的角色"},
    "option_dm_memories_choice": {
        "en": "on or off; leave empty to see the current choice",
        "zh": "on 或 off；留空查看现在的选择",
    },
    "option_group_setting": {
        "en": "mode, talkativeness, cooldown, max_per_minute, or reset; empty: see them",
        "zh": "mode、talkativeness、cooldown、max_per_minute 或 reset；留空：查看",
    },
    "option_group_value": {
        "en": "its new value (mode: speak or listen)",
        "zh": "新的值（mode：speak 或 listen）",
    },
    "option_intentions_cancel": {
        "en": "the number of one to cancel; leave empty to see them",
        "zh": "要取消的那条的编号；留空查看全部",
    },
    "option_quiet_choice": {
        "en": "on or off; leave empty to see the current choice",
        "zh": "on 或 off；留空查看现在的选择",
    },
    "option_voice_choice": {
        "en": "on or off; leave empty to see the current choice",
        "zh": "on 或 off；留空查看现在的选择",
    },
    "option_timezone_name": {
        "en": "an IANA name such as Europe/Paris or Asia/Shanghai; empty: see it",
        "zh": "IANA 时区名，比如 Asia/Shanghai 或 Europe/Paris；留空：查看",
    },
    # What commands answer.
    "memory_off": {"en": "Long-term memory is off.", "zh": "长期记忆没有开启。"},
    "remember_what": {
        "en": "Say what to remember: /remember TEXT",
        "zh": "说说要记住什么：/remember 内容",
    },
    "remembered": {"en": "{name} will remember that.", "zh": "{name}会记住的。"},
    "not_remembered": {"en": "Nothing remembered: {why}.", "zh": "没有记住：{why}。"},
    "recall_what": {
        "en": "Say what to recall: /recall QUERY",
        "zh": "说说要回想什么：/recall 内容",
    },
    "nothing_comes_to_mind": {"en": "Nothing comes to mind.", "zh": "什么也想不起来。"},
    "no_memories_yet": {"en": "No memories yet.", "zh": "还没有记忆。"},
    "memories_after_conversation": {
        "en": "No memories yet: this conversation becomes memory once it goes quiet (or on /end).",
        "zh": "还没有记忆：这次对话安静下来（或 /end 之后）就会成为记忆。",
    },
    "memories_being_written": {
        "en": "No memories yet: the conversation that just ended is still being written down.",
        "zh": "还没有记忆：刚结束的对话还在写进记忆里。",
    },
    "no_memories_match": {"en": "No memories match.", "zh": "没有符合的记忆。"},
    "forget_what": {
        "en": "Say what to forget: /forget QUERY",
        "zh": "说说要忘掉什么：/forget 内容",
    },
    "no_memory_matches": {"en": "No memory matches that.", "zh": "没有符合的记忆。"},
    "forget_which": {"en": "Which one should be forgotten?", "zh": "要忘掉哪一条？"},
    "document_kinds": {
        "en": "text (.txt), Markdown (.md) or PDF (.pdf)",
        "zh": "文本（.txt）、Markdown（.md）或 PDF（.pdf）",
    },
    "document_unsupported": {
        "en": "{suffix} files are not supported; send {kinds}",
        "zh": "不支持 {suffix} 文件；请发送{kinds}",
    },
    "document_too_big": {
        "en": "is too big ({size}); the most I can read is {limit}",
        "zh": "太大了（{size}）；我最多能读 {limit}",
    },
    "document_too_big_unknown": {
        "en": "is too big; the most I can read is {limit}",
        "zh": "太大了；我最多能读 {limit}",
    },
    "document_unreadable": {"en": "cannot be read ({why})", "zh": "读不了（{why}）"},
    "document_missing": {"en": "cannot be read (no such file)", "zh": "读不了（没有这个文件）"},
    "document_empty": {"en": "is empty", "zh": "是空的"},
    "document_too_long": {
        "en": "has too much text ({count} characters; the most is {most})",
        "zh": "文字太多了（{count} 个字符；最多 {most}）",
    },
    "document_too_long_pdf": {
        "en": "has too much text (over {most} characters)",
        "zh": "文字太多了（超过 {most} 个字符）",
    },
    "document_not_text": {
        "en": "is not a text file I can read; send {kinds}",
        "zh": "不是我能读的文本文件；请发送{kinds}",
    },
    "document_password": {
        "en": "is protected by a password; send a copy without the password",
        "zh": "有密码保护；请发送没有密码的副本",
    },
    "document_encrypted": {
        "en": "is encrypted in a way I cannot open",
        "zh": "的加密方式我打不开",
    },
    "document_bad_pdf": {
        "en": "is not a PDF I can read (damaged or not a PDF)",
        "zh": "不是我能读的 PDF（已损坏，或者不是 PDF）",
    },
    "document_no_text": {
        "en": "has no text I can read (a scan or images only?); send a PDF with text",
        "zh": "里没有我能读的文字（是扫描件或只有图片？）；请发送带文字的 PDF",
    },
    "document_not_downloaded": {
        "en": "could not be downloaded; send it again",
        "zh": "下载失败；请再发一次",
    },
    "offline_someone": {"en": "someone", "zh": "有人"},
    "offline_told_me": {"en": "{name} told me: {sentence}", "zh": "{name}告诉我：{sentence}"},
    "offline_talked_with": {
        "en": "{at} talked with {name}: {quote}",
        "zh": "{at} 和{name}聊了：{quote}",
    },
    "console_talking": {
        "en": "Talking with {name} as {user} ({models}).",
        "zh": "正在以 {user} 的身份和{name}聊天（{models}）。",
    },
    "console_commands": {
        "en": "Commands: {commands}. Ctrl-D leaves.",
        "zh": "命令：{commands}。按 Ctrl-D 离开。",
    },
    "console_exported": {
        "en": "Saved; session exported to {path}",
        "zh": "已保存；对话已导出到 {path}",
    },
    "console_export_failed": {
        "en": "Saved, but the export could not be written to {path}: {why}",
        "zh": "已保存，但导出文件无法写入 {path}：{why}",
    },
    "log_persona": {"en": "persona: {persona} ({name})", "zh": "角色：{persona}（{name}）"},
    "log_scope": {"en": "scope: {scope}", "zh": "范围：{scope}"},
    "log_conversation": {
        "en": "conversation: {count} turns since {since}",
        "zh": "对话：自 {since} 起 {count} 轮",
    },
    "log_summary": {"en": "  earlier (summary): {summary}", "zh": "  之前（摘要）：{summary}"},
    "log_last_closed": {
        "en": "conversation: none open; the last one ended {ended} ({reason}) and {fate}:",
        "zh": "对话：没有进行中的；上一次在 {ended} 结束（{reason}），{fate}：",
    },
    "log_encoded": {"en": "is in long-term memory", "zh": "已写入长期记忆"},
    "log_waiting": {"en": "waits to become long-term memory", "zh": "正等待写入长期记忆"},
    "log_none_open": {"en": "conversation: none open", "zh": "对话：没有进行中的"},
    "log_state": {"en": "state:", "zh": "状态："},
    "log_not_set": {"en": "(not set)", "zh": "（未设置）"},
    "log_archived": {"en": "archived conversations: {count}", "zh": "已归档的对话：{count}"},
    "log_tier_usage": {
        "en": "{tier} {calls} calls/{tokens} tokens",
        "zh": "{tier} {calls} 次调用/{tokens} 个词元",
    },
    "log_pictures": {"en": "/{count} pictures", "zh": "/{count} 张图片"},
    "log_recordings": {"en": "/{count} recordings", "zh": "/{count} 段录音"},
    "log_models": {"en": "models: {models}", "zh": "模型：{models}"},
    "page_hello": {
        "en": "Say hello to {name}. Type help for the commands.",
        "zh": "和{name}打个招呼吧。输入 help 查看命令。",
    },
    "memory_line": {
        "en": "[{age}, strength {strength}] {text}",
        "zh": "[{age}，强度 {strength}] {text}",
    },
    "age_just_now": {"en": "just now", "zh": "刚刚"},
    "age_minutes": {"en": "{count} minutes ago", "zh": "{count}分钟前"},
    "age_an_hour": {"en": "an hour ago", "zh": "一小时前"},
    "age_hours": {"en": "{count} hours ago", "zh": "{count}小时前"},
    "age_yesterday": {"en": "yesterday", "zh": "昨天"},
    "age_days": {"en": "{count} days ago", "zh": "{count}天前"},
    "age_weeks": {"en": "{count} weeks ago", "zh": "{count}周前"},
    "age_months": {"en": "{count} months ago", "zh": "{count}个月前"},
    "age_years": {"en": "{count} years ago", "zh": "{count}年前"},
    "forget_pick_range": {
        "en": "Pick a number from 1 to {count}.",
        "zh": "请选 1 到 {count} 之间的数字。",
    },
    "forgotten": {"en": "Forgotten: {text}", "zh": "已忘掉：{text}"},
    "already_gone": {"en": "That memory is already gone.", "zh": "这条记忆已经不在了。"},
    "ended": {
        "en": "Conversation ended; it goes to long-term memory.",
        "zh": "对话结束了，它会进入长期记忆。",
    },
    "not_open": {"en": "No conversation is open.", "zh": "现在没有进行中的对话。"},
    "diary_empty": {"en": "The diary is empty so far.", "zh": "日记还是空的。"},
    "diary_which_day": {
        "en": "Which day is {day}? Try a date like 2026-09-03, or yesterday.",
        "zh": "{day}是哪一天？试试 2026-09-03 这样的日期，或者“昨天”。",
    },
    "diary_not_yet": {"en": "{day} has not happened yet.", "zh": "{day}还没有到。"},
    "diary_no_page": {"en": "No diary page for {day}.", "zh": "{day}没有日记。"},
    "diary_page": {"en": "Diary, {day}:\n{text}", "zh": "日记，{day}：\n{text}"},
    "profile_none": {
        "en": "{name} knows nothing about you yet: a profile is written after a conversation.",
        "zh": "{name}还不了解你：聊过一次之后才会写下关于你的印象。",
    },
    "profile": {
        "en": "What {name} knows of you:\n{text}",
        "zh": "{name}知道的关于你的事：\n{text}",
    },
    "profile_aliases": {
        "en": "{name} also knows you as: {aliases}",
        "zh": "{name}也知道你叫：{aliases}",
    },
    "no_state": {"en": "{name} keeps no state.", "zh": "{name}不记录状态。"},
    "not_set": {"en": "(not set)", "zh": "（未设置）"},
    "no_slot": {
        "en": "No state slot {slot}; the slots are: {slots}.",
        "zh": "没有 {slot} 这一项；可以改的是：{slots}。",
    },
    "give_value": {
        "en": "Give the new value: state set {slot} VALUE",
        "zh": "请给出新值：state set {slot} 值",
    },
    "slot_now": {"en": "{slot} is now:\n{value}", "zh": "{slot} 现在是：\n{value}"},
    "export_one": {"en": "1 memory.", "zh": "1 条记忆。"},
    "export_many": {"en": "{count} memories.", "zh": "{count} 条记忆。"},
    "anonymous": {
        "en": "You are writing anonymously here, so {name} cannot tell you from the others who "
        "do: {name} keeps no memory of you personally, only this chat's. Write under your own "
        "name (or to {name} privately) for that.",
        "zh": "你在这里匿名发言，{name}分不清你和其他匿名的人：{name}不会单独记住你，只记得这个群。"
        "想被记住的话，请用自己的名字发言（或者私聊{name}）。",
    },
    "dm_channel": {
        "en": "In groups {name} shares one memory with the whole channel; private ones stay out.",
        "zh": "在群里{name}和整个频道共用一份记忆；私聊的内容不会进来。",
    },
    "dm_on": {
        "en": "{name} may bring up what you said in private in your conversations in groups.",
        "zh": "{name}可以在群里和你聊天时提起你私下说过的话。",
    },
    "dm_off": {
        "en": "What you tell {name} in private stays private: it never comes up in groups.",
        "zh": "你私下告诉{name}的话只留在私聊里，不会在群里提起。",
    },
    "group_private": {
        "en": "In a private chat {name} always answers: group settings are for groups.",
        "zh": "私聊里{name}总会回答：这些是群里的设置。",
    },
    "group_admins_only": {
        "en": "Only an admin of this chat can change when {name} speaks here.",
        "zh": "只有这个群的管理员可以修改{name}在这里什么时候说话。",
    },
    "group_which": {
        "en": "Change one of: mode, talkativeness, cooldown, max_per_minute; or reset.",
        "zh": "可以修改：mode、talkativeness、cooldown、max_per_minute；或者 reset。",
    },
    "group_bad_value": {
        "en": "{setting} takes {allowed}.",
        "zh": "{setting} 的值可以是 {allowed}。",
    },
    "group_now": {
        "en": "{name} here: mode {mode} (listen: speaks only when addressed), talkativeness "
        "{talkativeness} (its chance to join in uninvited), cool-down {cooldown} s, at most "
        "{most} messages a minute.",
        "zh": "{name}在这里：模式 {mode}（listen：只在被叫到时说话），活跃度 {talkativeness}"
        "（不请自来插话的机会），冷却 {cooldown} 秒，每分钟最多 {most} 条。",
    },
    "persona_admins_only": {
        "en": "Only an admin of this chat can choose who talks here.",
        "zh": "只有这个群的管理员可以决定谁在这里说话。",
    },
    "persona_here": {
        "en": "Here you talk with {name} ({persona}).",
        "zh": "在这里和你说话的是{name}（{persona}）。",
    },
    "persona_others": {
        "en": "This bot also hosts {listed}: start a message with a name to talk to one, or "
        "`/persona set NAME` to change who talks here.",
        "zh": "这个机器人还有{listed}：消息以名字开头就能和他们说话，或者用 `/persona set 名字` "
        "换人。",
    },
    "persona_unknown": {
        "en": "No persona {name} here; this bot hosts: {known}.",
        "zh": "这里没有叫{name}的角色；这个机器人有：{known}。",
    },
    "persona_bound": {
        "en": "From now on {name} talks in this channel.",
        "zh": "从现在起，{name}在这个频道里说话。",
    },
    "no_such_command": {
        "en": "There is no {command} command; /help lists them.",
        "zh": "没有 {command} 这个命令；/help 会列出所有命令。",
    },
    "weekdays": {
        "en": "Monday,Tuesday,Wednesday,Thursday,Friday,Saturday,Sunday",
        "zh": "星期一,星期二,星期三,星期四,星期五,星期六,星期日",
    },
    "day": {"en": "{weekday} {date}", "zh": "{date}（{weekday}）"},
    "days": {"en": "{first} to {last}", "zh": "{first}至{last}"},
    # What the persona says when the engine, not the model, speaks for it.
    "apology": {
        "en": "Sorry, I can't think straight right now; my mind isn't answering. I kept what "
        "you said, so try me again in a moment.",
        "zh": "对不起，我现在脑子有点转不过来。你说的话我都记着呢，等一下再和我说说吧。",
    },
    "slow_down": {
        "en": "You're writing faster than I can keep up with. Give me a minute, then I'm all "
        "yours.",
        "zh": "你说得太快啦，我有点跟不上。等一分钟再聊好吗？",
    },
    "message_too_long": {
        "en": "Messages here are limited to {limit} characters: shorten this one and send it "
        "again.",
        "zh": "这里的消息最多 {limit} 个字符：请缩短后再发送。",
    },
    "document_opened": {
        "en": "I've read {name}. Here's what it holds:\n\n{summary}\n\nAsk me anything about "
        'it; say "document close" when you\'re done.',
        "zh": "《{name}》读完啦，里面讲的是：\n\n{summary}\n\n"
        "有什么想问的尽管问；说「退出文档模式」就结束。",
    },
    "document_closed": {
        "en": "I've put {name} away. Back to us!",
        "zh": "好，《{name}》收起来啦。我们接着聊吧！",
    },
    "welcome": {
        "en": "Welcome, {name}! Glad you're here.",
        "zh": "欢迎你，{name}！很高兴你来了。",
    },
    "failed_here": {
        "en": "Sorry, something went wrong on my side. Please try again in a moment.",
        "zh": "抱歉，我这边出了点问题。请稍后再试一次。",
    },
    "not_allowed_here": {
        "en": "You can't use this bot here.",
        "zh": "你不能在这里使用这个机器人。",
    },
    "button_wipe": {"en": "Wipe", "zh": "清除"},
    "button_cancel_number": {"en": "Cancel {number}", "zh": "取消 {number}"},
    "intention_follow_up": {
        "en": "{number}. {what}: {ask} (from {when})",
        "zh": "{number}. {what}：{ask}（{when}起）",
    },
    "intention_reminder": {
        "en": "{number}. Reminder: {what} ({when})",
        "zh": "{number}. 提醒：{what}（{when}）",
    },
    "intention_special_day": {
        "en": "{number}. {what} ({when}, every year)",
        "zh": "{number}. {what}（{when}，每年）",
    },
    "intentions_none": {
        "en": "Nothing to bring up later. When you mention something coming (an exam, a trip), "
        "{name} asks how it went afterwards.",
        "zh": "暂时没有之后要提起的事。你说起接下来的事（考试、旅行），{name}之后会问你怎么样了。",
    },
    "intentions_cancel_how": {
        "en": "To cancel one: /intentions cancel N",
        "zh": "要取消一条：/intentions cancel 编号",
    },
    "intention_cancelled": {
        "en": "Cancelled: {what}. {name} won't bring it up.",
        "zh": "已取消：{what}。{name}不会再提起了。",
    },
    "intention_gone": {
        "en": "That one is no longer waiting to be brought up.",
        "zh": "这一条已经不在等待提起的列表里了。",
    },
    "quiet_on": {
        "en": "{name} won't message you first. /quiet off allows it again.",
        "zh": "{name}不会再主动给你发消息了。/quiet off 可以恢复。",
    },
    "quiet_off": {
        "en": "{name} may message you first now and then (a follow-up, a reminder), never at "
        "night where you are. /quiet on stops it.",
        "zh": "{name}偶尔会主动给你发消息（问问近况、提醒你），不会在你那边的深夜。"
        "/quiet on 可以停止。",
    },
    "voice_on": {
        "en": "{name} will send its replies to you as voice notes too. /voice off stops it.",
        "zh": "{name}回复你时也会发语音。/voice off 可以停止。",
    },
    "voice_off": {
        "en": "{name} will answer you in text only. /voice on sends voice notes too.",
        "zh": "{name}只会用文字回复你。/voice on 可以同时发语音。",
    },
    "voice_default": {
        "en": "{name} answers your voice notes with a voice note too; /voice on for every "
        "reply, /voice off for text only.",
        "zh": "你发语音时{name}也会用语音回复；/voice on 每次都发语音，/voice off 只发文字。",
    },
    "voice_always": {
        "en": "{name} sends its replies as voice notes too. /voice off for text only.",
        "zh": "{name}回复时也会发语音。/voice off 只发文字。",
    },
    "voice_none": {
        "en": "{name} only writes here: it has no voice to answer with.",
        "zh": "{name}在这里只能打字，没有可以说话的声音。",
    },
    "voice_which": {"en": "Say /voice on or /voice off.", "zh": "请说 /voice on 或 /voice off。"},
    "quiet_which": {"en": "Say /quiet on or /quiet off.", "zh": "请说 /quiet on 或 /quiet off。"},
    "timezone_now": {
        "en": "Your time zone: {timezone}.",
        "zh": "你的时区：{timezone}。",
    },
    "timezone_none": {
        "en": "No time zone set: {name} goes by the hours you talk at. Set one with /timezone "
        "followed by a name such as Europe/Paris.",
        "zh": "还没有设置时区：{name}会按你聊天的时间来判断。用 /timezone 加时区名来设置，"
        "比如 /timezone Asia/Shanghai。",
    },
    "timezone_set": {
        "en": "Your time zone is now {timezone}: {name} writes first only in your waking "
        "hours there.",
        "zh": "你的时区已设为 {timezone}：{name}只会在你那边醒着的时候主动发消息。",
    },
    "timezone_unknown": {
        "en": "{timezone} is not a time zone I know: use a name such as Europe/Paris or "
        "America/New_York.",
        "zh": "不认识 {timezone} 这个时区：请用 Asia/Shanghai、Europe/Paris 这样的名字。",
    },
    "button_cancel": {"en": "Cancel", "zh": "取消"},
    "cancelled": {"en": "Cancelled.", "zh": "已取消。"},
    "not_your_buttons": {"en": "These buttons are not yours.", "zh": "这些按钮不是给你的。"},
    "start": {
        "en": "Hello! Talk to me here, or in a group where I am. /help lists what I can do.",
        "zh": "你好！在这里和我聊天就行，也可以在有我的群里找我。/help 列出我能做的事。",
    },
}


def say(language: str, key: str, **values: str) -> str:
    """The sentence `key` in `language` (English if it has none), filled with `values`."""
    forms = MESSAGES[key]
    return forms.get(language, forms["en"]).format(**values)
