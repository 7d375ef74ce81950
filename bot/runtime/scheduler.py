"""The scheduler: one asyncio task that snapshots dirty sessions, closes idle ones, encodes
closed conversations into long-term memory, embeds memories stored while the embedder was out
(and, in a task of its own started with it, the whole bank after a change of embedder, drawing
its progress through the callback it is given),
prunes each scope once a day, now and then writes changed memory indexes to disk (they can
always be rebuilt from SQLite, so this only saves the rebuild), and once a minute lets the
personas write first (bot.outreach), in a task of its own that the rounds do not wait for."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

from bot.conversation.lifecycle import Lifecycle
from bot.conversation.sessions import SessionManager
from bot.outreach import Outreach
from memory.embeddings import EmbeddingError

__all__ = ["OUTREACH_SECONDS", "Scheduler"]

OUTREACH_SECONDS = 60.0  # how often the personas' messages written first are looked for
WRITING_GRACE = 20.0  # seconds an outreach round under way may take to finish at a stop

log = logging.getLogger(__name__)


class Scheduler:
    def __init__(
        self,
        sessions: SessionManager,
        idle_time: Callable[[str, str], timedelta],
        *,
        interval: float = 5.0,
        flush: Callable[[], Awaitable[object]] | None = None,
        flush_seconds: float = 300.0,
        lifecycle: Lifecycle | None = None,
        outreach: Outreach | None = None,
    ) -> None:
        self._sessions = sessions
        self._idle_time = idle_time
        self._interval = interval
        self._flush = flush
        self._flush_every = max(1, round(flush_seconds / interval))  # in rounds
        self._rounds = 0
        self.lifecycle = lifecycle
        self.outreach = outreach
        self._outreach_every = max(1, round(OUTREACH_SECONDS / interval))  # in rounds
        self._task: asyncio.Task[None] | None = None
        self._writing: asyncio.Task[int] | None = None  # the latest outreach round
        self._catching_up: asyncio.Task[None] | None = None

    async def tick(self) -> None:
        """One round of housekeeping; a failure is logged and tried again next round."""
        self._rounds += 1
        try:
            await self._sessions.save_dirty()
            await self._sessions.close_idle(self._idle_time)
        except Exception:
            log.exception("scheduler round failed; retrying next round")
        if self.lifecycle is not None:
            try:  # each process embeds what it stored without a vector (the bank backs off)
                await self.lifecycle.bank.embed_pending()
            except Exception:
                log.exception("embedding pending memories failed; retrying next round")
            try:  # every process encodes, a scope at a time under the scope's lock
                await self.lifecycle.encode_pending()
            except Exception:
                log.exception("encoding conversations failed; retrying next round")
            try:
                # Processes sharing a database take turns at the daily jobs: one leads them at
                # a time, and another takes over when it dies.
                if await self.lifecycle.leads("daily"):
                    await self.lifecycle.prune_due()
            except Exception:
                log.exception("the daily prune failed; retrying next round")
        if self.outreach is not None and (self._rounds - 1) % self._outreach_every == 0:
            self._write_first(self.outreach)
        if self._flush is not None and self._rounds % self._flush_every == 0:
            try:
                await self._flush()
            except Exception:
                log.exception("saving memory indexes failed; retrying next time")

    def _write_first(self, outreach: Outreach) -> None:
        """Start this minute's outreach round in a task of its own: a round with a backlog
        takes minutes, and the rounds of housekeeping go on meanwhile. While one is under way
        no other starts (what is still due waits for the next minute's). Every process looks;
        the store's ledger lets one write each message."""
        if self._writing is not None and not self._writing.done():
            log.info("an outreach round is still under way; this minute's is left to the next")
            return
        self._writing = asyncio.create_task(outreach.tick(), name="kizuna-outreach")
        self._writing.add_done_callback(_report_writing)

    @property
    def writing(self) -> asyncio.Task[int] | None:
        """The latest outreach round, under way or done (None before the first)."""
        return self._writing

    async def _run(self) -> None:
        while True:
            await self.tick()
            await asyncio.sleep(self._interval)

    def start(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Start the rounds, and the catch-up of the bank's embeddings (see `catch_up`)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="kizuna-scheduler")
        if self._catching_up is None and self.lifecycle is not None:
            self._catching_up = asyncio.create_task(self.catch_up(progress), name="kizuna-catch-up")

    async def catch_up(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Embed what the embedder has not (after a change of embedder, the whole bank), a
        batch at a time, reporting (done, total) to `progress` when there is anything to do;
        meanwhile the scopes that wait recall by words. Should the embedder fail, the rounds'
        embed_pending carries on later."""
        if self.lifecycle is None:
            return
        try:
            async for done, total in self.lifecycle.bank.catch_up():
                if total and progress is not None:
                    progress(done, total)
        except EmbeddingError as e:
            log.warning("re-embedding paused, the scheduler's rounds go on with it: %s", e)
        except Exception:
            log.exception("re-embedding failed; the scheduler's rounds go on with it")

    async def stop(self, writing_grace: float = WRITING_GRACE) -> None:
        """Stop the loop, let an archive it had under way land, then save whatever is still
        dirty (indexes: the bank's close). An outreach round under way gets `writing_grace`
        seconds to finish (its messages sent and recorded) before it is cancelled: the ledger
        keeps a cancelled one from going twice."""
        for task in (self._catching_up, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._catching_up = None
        writing, self._writing = self._writing, None
        if writing is not None and not writing.done():
            await asyncio.wait({writing}, timeout=writing_grace)
            writing.cancel()
            await asyncio.wait({writing})  # its failure, if any, is logged by _report_writing
        await self._sessions.settle()
        await self._sessions.save_dirty()


def _report_writing(round_: asyncio.Task[int]) -> None:
    """Log how an outreach round failed (its exception, never a message's text)."""
    if not round_.cancelled() and (error := round_.exception()) is not None:
        log.error("writing first failed; retrying next minute", exc_info=error)
