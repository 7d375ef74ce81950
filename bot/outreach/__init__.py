"""A persona that writes first: `policy` decides whether it may, locally and with
a reason; `sender` writes, exactly once per message, through the platforms' couriers."""

from __future__ import annotations

from bot.outreach.policy import Clearance, Reason, may_write
from bot.outreach.sender import Outreach, OutreachStore

__all__ = ["Clearance", "Outreach", "OutreachStore", "Reason", "may_write"]
