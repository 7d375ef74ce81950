"""What the bot itself says to users (not the persona's replies, which the model writes), by
key, in each language a persona may speak; `say` picks the persona's, English where a sentence
has no translation yet. One place, so a sentence is spelled once and translated once.

    say("zh", "wiped_you", name="喵")   # "喵已经忘了关于你的一切。"
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MESSAGES", "say"]

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
    "forget_pick_in_chat": {
        "en": "Send /forget N in {chat} to delete the Nth.",
        "zh": "在{chat}里发送 /forget N 删除第 N 条。",
    },
    "button_wipe": {"en": "Wipe", "zh": "清除"},
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
