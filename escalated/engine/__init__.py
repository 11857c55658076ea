"""The parts that run on their own inside ``escalated serve``: the event bus,
the SLA clock and the outbox sender."""
