"""The parts that run on their own inside ``escalated serve`` and drive the
core: the SLA clock and the outbox sender."""
