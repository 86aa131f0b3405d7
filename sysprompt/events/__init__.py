"""Events: the audit log of every change, and signed webhooks delivered through a task
queue (docs/events.md). The bottom app layer: every other app's services call
:func:`sysprompt.events.services.event_record` inside their own transaction."""
