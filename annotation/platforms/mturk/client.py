"""MTurk's transport: boto3's client (credentials from the standard AWS environment
variables, which boto3 reads), its endpoint, and how botocore says a call failed.

Recording, the dry run and the reading of outcomes are the room's (``platforms.base``); the
audit log names each call by its MTurk operation and the endpoint it went to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.models import Platform
from annotation.platforms.audit import CallContext
from annotation.platforms.base import PlatformCalls
from annotation.platforms.errors import PlatformError, PlatformOutcomeUnknown, PlatformUnreachable

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
# MTurk's operations (as the audit log names them) and boto3's methods for them.
OPERATIONS = {
    "CreateHIT": "create_hit",
    "ListAssignmentsForHIT": "list_assignments_for_hit",
    "ApproveAssignment": "approve_assignment",
    "RejectAssignment": "reject_assignment",
    "SendBonus": "send_bonus",
}


def mturk_boto_client(*, sandbox: bool):
    """boto3's MTurk client (MTurk lives in us-east-1); credentials from the environment."""
    import boto3  # imported when a job needs it: the web process starts without it loaded

    return boto3.client(
        "mturk", region_name="us-east-1", endpoint_url=SANDBOX_ENDPOINT if sandbox else LIVE_ENDPOINT
    )


@dataclass
class MTurkCalls(PlatformCalls):
    """Calls through a boto3 client: ``read``/``write`` take the operation and its parameters
    (``path`` is the endpoint, for the audit log)."""

    platform = Platform.MTURK
    name = "MTurk"

    client: Any
    endpoint: str

    def operation(self, operation: str, **params: Any) -> dict:
        """A read (``ListAssignmentsForHIT``)."""
        return self.read(operation, self.endpoint, params)

    def change(self, operation: str, **params: Any) -> dict:
        """A write (held back in a dry run)."""
        return self.write(operation, self.endpoint, params)

    def send(self, method: str, path: str, body: dict | None) -> tuple[int, object]:
        from botocore.exceptions import ClientError

        try:
            reply = getattr(self.client, OPERATIONS[method])(**(body or {}))
        except ClientError as exc:  # MTurk answered, with an error
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 400
            return status, exc.response.get("Error", {})
        status = reply.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
        return status, {key: value for key, value in reply.items() if key != "ResponseMetadata"}

    def unanswered(self, exc: Exception) -> PlatformError | None:
        from botocore.exceptions import BotoCoreError, EndpointConnectionError

        if isinstance(exc, EndpointConnectionError):
            return PlatformUnreachable(f"MTurk could not be reached ({exc}); nothing was sent.")
        if isinstance(exc, BotoCoreError):
            return PlatformOutcomeUnknown(f"MTurk did not answer ({exc}).")
        return None

    def describe(self, method: str, path: str) -> str:
        return method

    def code(self, status: int, reply: dict) -> str:
        return str(reply.get("Code", status))

    def detail(self, reply: dict) -> str:
        return str(reply.get("Message", ""))[:300]


def mturk_calls(context: CallContext, *, sandbox: bool) -> MTurkCalls:
    """The calls for a job, on the sandbox or the live endpoint."""
    return MTurkCalls(
        context=context,
        client=mturk_boto_client(sandbox=sandbox),
        endpoint=SANDBOX_ENDPOINT if sandbox else LIVE_ENDPOINT,
    )
