"""A persona that writes first (issue 22): `policy` decides whether it may, locally and with
a reason; `sender` writes, exactly once per message, through the platforms' couriers."""

from __future__ import annotations

from bot.outreach.policy import Reason, Verdict, may_write
from bot.outreach.sender import Outreach, OutreachStore

__all__ = ["Outreach", "OutreachStore", "Reason", "Verdict", "may_write"]
