"""The participant's pages; each is thin, passes the one gate (``steps.participant_step``)
and calls the services."""
