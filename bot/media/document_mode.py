"""Document mode: a file the user sent is read and summarised, then answers the questions that
follow from its passages, until the user closes it (`document close`, 退出文档模式) or the
conversation ends. The engine's turn asks it for the prompt's document section and hands it
the message that closes the document."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from bot.catalogue import say
from bot.chat_model import Message, ModelError
from bot.config import EngineConfig
from bot.conversation.sessions import Reading, Session, SessionManager, Turn
from bot.events import ChatEvent, Reply
from bot.llm.router import ModelRouter
from bot.llm.tokens import estimate_tokens
from bot.media.documents import Document, DocumentError, excerpts, extract_text, summarise
from bot.persona.file import Persona
from bot.platforms import Platforms
from bot.prompts import document_section
from memory.clock import Clock

__all__ = ["DocumentMode", "closes_document"]

log = logging.getLogger(__name__)

# Leaving document mode: /document close, "close the document", 退出文档模式, 关闭文档.
_CLOSE_DOCUMENT = re.compile(
    r"^\s*/?(?:document\s+close|close\s+(?:the\s+)?document)\b|退出文档模式|关闭文档|结束文档",
    re.IGNORECASE,
)


def closes_document(text: str) -> bool:
    return bool(_CLOSE_DOCUMENT.search(text))


@dataclass(slots=True, eq=False, kw_only=True)
class DocumentMode:
    personas: Mapping[str, Persona]
    platforms: Platforms
    models: ModelRouter
    sessions: SessionManager
    clock: Clock
    settings: EngineConfig

    @property
    def limit(self) -> int:
        """The largest document file read, in bytes."""
        return self.settings.document_max_kb * 1024

    async def read(self, event: ChatEvent, name: str, data: bytes) -> Reply:
        """Open document mode with the bytes of a file, for `event.persona`: a file that
        cannot be read is refused with a line saying why, and nothing of it is kept."""
        try:
            document = await asyncio.to_thread(extract_text, name, data, limit_bytes=self.limit)
        except DocumentError as e:
            persona = self.personas[event.persona]
            said = e.said(event.language or persona.identity.language)
            limit = self.platforms[event.platform].limit
            return Reply.build(said, persona.emotions.neutral, limit)
        return await self.open(event, document)

    async def open(self, event: ChatEvent, document: Document) -> Reply:
        """Document mode with a document already read: summarise it (the summary tier,
        map-reduce past its context) and say what it holds. A failed summary is apologised
        for, and the document kept all the same: questions are answered from its passages."""
        persona = self.personas[event.persona]
        limit = self.platforms[event.platform].limit
        neutral = persona.emotions.neutral

        async def complete(messages: list[Message]) -> str:
            answer = await self.models.complete("summary", messages, purpose="document")
            return answer.text

        failed = False
        try:
            summary = await summarise(
                document,
                complete,
                context_tokens=self.settings.context_tokens,
                count_tokens=estimate_tokens,
                language=persona.identity.language,
            )
        except ModelError as e:
            log.warning("summarising %s for %s failed: %s", document.name, persona.key, e)
            summary, failed = "", True
        session = await self.sessions.of(persona, event)
        async with session.lock:
            now = self.clock.now()
            if not session.is_open:
                session.recap = await self.sessions.recap(session, now)
            session.reading = Reading(document.name, summary, document.text)
            sent = f"[sent a document: {document.name}]"
            session.add(Turn("user", event.user_name, sent, now, event.user_id, document=True))
            if failed:
                return Reply.build(persona.apology(), persona.emotion("SAD"), limit, failed=True)
            said = say(
                persona.identity.language, "document_opened", name=document.name, summary=summary
            )
            session.add(
                Turn("assistant", persona.identity.name, said, now, emotion=neutral, document=True)
            )
        log.info(
            "%s opened %s (%d characters) for %s",
            persona.key,
            document.name,
            document.chars,
            event.user_id,
        )
        return Reply.build(said, neutral, limit)

    async def section(self, reading: Reading, question: str) -> str:
        """The prompt's section for a question about the open document: its summary and the
        passages that best answer it (picked off the loop: slow for a long document)."""

        def pick() -> str:
            passages = (
                excerpts(
                    reading.text,
                    question,
                    budget_tokens=self.settings.document_tokens,
                    count_tokens=estimate_tokens,
                )
                if reading.text
                else []
            )
            return document_section(reading.name, reading.summary, passages)

        return await asyncio.to_thread(pick)

    def close(
        self, persona: Persona, session: Session, event: ChatEvent, text: str, now: datetime
    ) -> Reply:
        """The user closed the open document with `text`: both turns join the session."""
        assert session.reading is not None
        name, session.reading = session.reading.name, None
        neutral = persona.emotions.neutral
        said = say(persona.identity.language, "document_closed", name=name)
        session.add(Turn("user", event.user_name, text, now, event.user_id, document=True))
        session.add(
            Turn("assistant", persona.identity.name, said, now, emotion=neutral, document=True)
        )
        return Reply.build(said, neutral, self.platforms[event.platform].limit)
