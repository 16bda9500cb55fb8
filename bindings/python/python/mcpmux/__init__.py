"""mcpmux: use a whole fleet of MCP servers from Python, through one Rust core.

``pool = await mcpmux.Pool.open()`` (asyncio), or ``mcpmux.sync.Pool()`` (blocking).
"""

from . import sync
from ._native import __version__
from ._pool import EVENT_NAMES, OPTION_NAMES, EventStream, Pool, Subscription
from .errors import (
    CancelledError,
    ConfigError,
    ConnectionError,
    Error,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    ProtocolError,
    ShuttingDownError,
    TimeoutError,
    ToolError,
)
from .types import (
    CallToolResult,
    DiscoverResult,
    Event,
    GetPromptResult,
    ImportResult,
    Progress,
    PromptInfo,
    ReadResourceResult,
    ResourceInfo,
    ResourceTemplateInfo,
    SearchHit,
    ServerConfig,
    ServerRecord,
    ServerStatus,
    TestResult,
    Timeouts,
    ToolInfo,
)

__all__ = [
    "__version__",
    "sync",
    "Pool",
    "EventStream",
    "Subscription",
    "EVENT_NAMES",
    "OPTION_NAMES",
    "Error",
    "ConfigError",
    "InvalidArgumentError",
    "NotFoundError",
    "ConnectionError",
    "TimeoutError",
    "CancelledError",
    "ProtocolError",
    "ToolError",
    "ShuttingDownError",
    "IoError",
    "CallToolResult",
    "SearchHit",
    "DiscoverResult",
    "Event",
    "GetPromptResult",
    "ImportResult",
    "Progress",
    "PromptInfo",
    "ReadResourceResult",
    "ResourceInfo",
    "ResourceTemplateInfo",
    "ServerConfig",
    "ServerRecord",
    "ServerStatus",
    "TestResult",
    "Timeouts",
    "ToolInfo",
]
