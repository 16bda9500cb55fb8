"""Typed results of mcpmux: frozen dataclasses built from the core's JSON.

Each has ``to_dict()``, which gives back the core's JSON object (camelCase keys) unchanged,
so nothing the server sent is lost even where no attribute names it.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, TypeVar

__all__ = [
    "AgentResult",
    "ApprovalRequest",
    "AuthorizationPrompt",
    "CallToolResult",
    "ChatRequest",
    "ChatResponse",
    "ChatUsage",
    "Completion",
    "ContentBlock",
    "DiscoverResult",
    "Event",
    "GetPromptResult",
    "HostRequest",
    "IdpSettings",
    "ImageBlock",
    "ImportResult",
    "Message",
    "OAuthSettings",
    "Progress",
    "PromptInfo",
    "ProviderConfig",
    "ReadResourceResult",
    "Recipe",
    "ResourceInfo",
    "ResourceTemplateInfo",
    "ServerConfig",
    "ServerRecord",
    "ServerStatus",
    "TestResult",
    "TextBlock",
    "Timeouts",
    "TokenStore",
    "ToolDef",
    "ToolInfo",
    "ToolLayer",
    "ToolResultBlock",
    "ToolUseBlock",
    "UrlElicitation",
    "Usage",
]

_M = TypeVar("_M", bound="Model")

# Between "@generated" and "@end": each field's name and type, and the literal types below,
# written from core's JSON Schemas by tests/tests/integration/mirrors (which fails CI when
# they drift). A field's comment and its default are this file's own, kept as written.
# Refresh: MCPMUX_UPDATE_MIRRORS=1 cargo test -p mcpmux-tests --test integration mirrors

# @generated literal types
ApprovalReason = (
    Literal["untrusted_server"]
    | Literal["changed_since_trusted"]
    | Literal["new_since_trusted"]
    | Literal["not_auto_approved"]
    | Literal["destructive"]
    | Literal["not_read_only"]
    | Literal["always"]
    | Literal["sampling"]
)
ConnectionState = (
    Literal["disconnected"] | Literal["connecting"] | Literal["connected"] | Literal["error"]
)
InstallSource = Literal["builtin"] | Literal["manual"] | Literal["protocol"] | Literal["unknown"]
LogLevel = (
    Literal["debug"]
    | Literal["info"]
    | Literal["notice"]
    | Literal["warning"]
    | Literal["error"]
    | Literal["critical"]
    | Literal["alert"]
    | Literal["emergency"]
)
Network = Literal["none"] | Literal["all"]
OAuthGrant = (
    Literal["authorization_code"]
    | Literal["client_credentials"]
    | Literal["enterprise_managed"]
    | Literal["jwt_bearer"]
)
Scope = Literal["user"] | Literal["local"]
ServeMode = Literal["direct"] | Literal["search"] | Literal["auto"]
SessionScope = Literal["shared"] | Literal["perClient"]
SkillSource = Literal["skills/list"] | Literal["resources"]
TransportType = Literal["stdio"] | Literal["websocket"] | Literal["http"] | Literal["sse"]
# @end


def camel(name: str) -> str:
    """``request_timeout_ms`` -> ``requestTimeoutMs``."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake(name: str) -> str:
    """``requestTimeoutMs`` -> ``request_timeout_ms``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True, kw_only=True)
class Model:
    """Base of every result type."""

    _raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The core's JSON object, camelCase keys, as a fresh copy; for one built in Python
        (``Sandbox(read=[...])``), its fields that are set."""
        if self._raw:
            return copy.deepcopy(self._raw)
        renames = _RENAMES.get(type(self).__name__, {})
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name.startswith("_") or not f.init or value is None:
                continue
            if isinstance(value, Model):
                value = value.to_dict()
            out[renames.get(f.name, camel(f.name))] = copy.deepcopy(value)
        return out

    @classmethod
    def from_dict(cls: type[_M], data: dict[str, Any]) -> _M:
        """Builds the dataclass from the core's JSON object."""
        renames = _RENAMES.get(cls.__name__, {})
        nested = _NESTED.get(cls.__name__, {})
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name.startswith("_") or not f.init:
                continue
            key = renames.get(f.name, camel(f.name))
            if key not in data:
                continue
            value = data[key]
            sub = nested.get(f.name)
            if sub is not None and value is not None:
                if isinstance(value, list):
                    value = [sub.from_dict(v) for v in value]
                else:
                    value = sub.from_dict(value)
            kwargs[f.name] = value
        return cls(_raw=data, **kwargs)


class OAuthSettings(TypedDict, total=False):
    """A remote server's OAuth settings (``config.oauth``), every key optional, in snake_case
    or the core's camelCase. Without any, a server that answers 401 is authorized with
    dynamic client registration.

    ``client_id``/``client_secret``: a client registered beforehand; ``client_metadata_url``:
    an HTTPS URL of this client's metadata document (its client id where the authorization
    server supports that); ``scopes``: the scopes to ask for (else the server's challenge or
    metadata decides); ``grant``: ``"authorization_code"`` (a user signs in, the default) or
    ``"client_credentials"`` (machine to machine) or ``"enterprise_managed"`` (cross-app
    access: the user's enterprise ID token is exchanged at ``idp`` for an ID-JAG that
    ``client_id``/``client_secret`` redeem at the server's authorization server) or
    ``"jwt_bearer"`` (workload identity: the JWT in ``assertion_file``, read each time, or
    ``assertion`` is exchanged for an access token); ``private_key_pem`` and
    ``signing_algorithm`` (``RS256`` by default, ``ES256``, ...): ``private_key_jwt`` client
    authentication for the client-credentials grant; ``idp``: the :class:`IdpSettings` of the
    enterprise grant; ``dpop``: ``False`` never asks for DPoP-bound tokens (by default they
    are used whenever the authorization server offers them)."""

    # @generated OAuthSettings
    client_id: str
    clientId: str
    client_secret: str
    clientSecret: str
    client_metadata_url: str
    clientMetadataUrl: str
    scopes: list[str]
    grant: OAuthGrant
    private_key_pem: str
    privateKeyPem: str
    signing_algorithm: str
    signingAlgorithm: str
    idp: IdpSettings
    dpop: bool
    assertion: str
    assertion_file: str
    assertionFile: str
    # @end


class IdpSettings(TypedDict, total=False):
    """The enterprise identity provider of the ``enterprise_managed`` grant (``oauth.idp``),
    keys in snake_case or camelCase: ``issuer`` and ``client_id`` (this client's registration
    there) are required; ``token_endpoint`` (else read from the issuer's metadata);
    ``client_secret`` and ``token_endpoint_auth_method`` (``client_secret_basic`` by default
    with a secret, ``client_secret_post``, ``none``); ``id_token``: the signed-in user's ID
    token from that provider (short-lived: update the server's config with a new one when it
    expires)."""

    # @generated IdpSettings
    issuer: str
    token_endpoint: str
    tokenEndpoint: str
    client_id: str
    clientId: str
    client_secret: str
    clientSecret: str
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post", "none"]
    tokenEndpointAuthMethod: Literal["client_secret_basic", "client_secret_post", "none"]
    id_token: str
    idToken: str
    # @end


class OAuthResourceSettings(TypedDict, total=False):
    """``serve_http(oauth=...)``: accept access tokens an OAuth authorization server issued,
    instead of one shared token; keys in snake_case or camelCase. ``issuer`` (required): the
    authorization server's issuer identifier, exactly as in its metadata and tokens (HTTPS, or
    HTTP on this machine); ``resource``: this server's resource identifier, what tokens must
    be issued for (default ``http://HOST/mcp`` as the client reached the server; set it behind
    a proxy); ``audience``: the audience tokens must name when the issuer names this server
    otherwise (e.g. an Auth0 API identifier); ``scopes``: scopes every token must carry (403
    without); ``jwks_uri``: the issuer's key set, for an issuer that publishes no metadata."""

    # @generated OAuthResourceSettings
    issuer: str
    resource: str
    audience: str
    scopes: list[str]
    jwks_uri: str
    jwksUri: str
    # @end


@dataclass(frozen=True, kw_only=True)
class ServerConfig(Model):
    """How to reach a server: ``command``/``args``/``env``/``cwd`` (stdio) or ``url``/``headers``
    (+ ``strict_transport``: never fall back to legacy HTTP+SSE, and ``oauth``: the
    :class:`OAuthSettings` as the core stores them, camelCase)."""

    # @generated ServerConfig
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    #: Start the server with this process's whole environment (never mcpmux's own secrets)
    #: instead of only HOME, PATH, the locale and the like; ``env`` is added either way.
    inherit_env: bool = False
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    strict_transport: bool = False
    # Not in the repr: it may hold a client secret or a private key.
    oauth: OAuthSettings | None = field(default=None, repr=False)
    # For stdio: run the server in a sandbox that grants it only what this says.
    sandbox: Sandbox | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class Sandbox(Model):
    """What a sandboxed stdio server may reach: the paths it may read and write (``~`` is
    the home folder), the network (``"none"``, the default, or ``"all"``), and its memory and
    open files; ``required`` refuses to start it where the kernel cannot keep all of it. What
    it needs to run (its program, its runtime, the system's libraries) is found for it."""

    # @generated Sandbox
    # The most memory the server's process may allocate, in MiB (its data segment: what it writes
    # to, not the address space a runtime reserves).
    memory_mb: int | None = None
    # Whether the server may use the network at all (default: none).
    network: Network | None = None
    # The most files and sockets the server's process may hold open at once.
    open_files: int | None = None
    # Paths the server may read (a folder with everything under it); `~` is the home folder.
    read: list[str] | None = None
    # Refuse to start the server where the kernel cannot keep all of this sandbox, instead of
    # starting it with what the kernel can keep (and a warning).
    required: bool | None = None
    # Paths the server may read and write (a folder with everything under it).
    write: list[str] | None = None
    # The most processes and threads the server may run at once, itself included.
    processes: int | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class Timeouts(Model):
    """Per-server time limits in milliseconds; ``None`` uses the pool's. ``tools`` gives
    some of the server's tools (by their own names) a limit of their own instead of
    ``request_ms`` (both restart with each progress report)."""

    # @generated Timeouts
    connect_ms: int | None = None
    request_ms: int | None = None
    tools: dict[str, int] = field(default_factory=dict)
    # @end


@dataclass(frozen=True, kw_only=True)
class ServerRecord(Model):
    """One server as stored in the config file."""

    # @generated ServerRecord
    id: str = ""
    name: str = ""
    type: TransportType = "stdio"
    scope: Scope = "user"
    config: ServerConfig = field(default_factory=ServerConfig)
    is_active: bool = True
    is_trusted: bool = False
    disabled_tools: list[str] = field(default_factory=list)
    disabled_auto_approve_tools: list[str] = field(default_factory=list)
    install_source: InstallSource = "manual"
    project_path: str | None = None
    created_at: int = 0
    updated_at: int | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    log_level: LogLevel | None = None
    #: ``"shared"`` (one connection for every client of a served pool) or ``"perClient"``
    #: (each client its own, at most ``max_clients`` at once; default 8).
    session_scope: SessionScope = "shared"
    max_clients: int | None = None
    #: The server's tools as they were when it was trusted, by name (``{"digest", "description"}``
    #: each): a tool that changed since, or is new, is asked about again.
    trusted_tools: dict[str, dict[str, Any]] | None = None
    # Saved from another host's file and not yet approved by the user: nothing of it runs (no
    # process, no connection) until it is approved (`Pool::approve_server`).
    pending: bool | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class ImportResult(Model):
    """The outcome of one entry of ``add_json``."""

    # @generated ImportResult
    name: str = ""
    success: bool = False
    record: ServerRecord | None = None
    error: str | None = None
    #: The server was saved before as this entry asks: nothing was added (an import run
    #: again).
    already_there: bool = False
    # @end


@dataclass(frozen=True, kw_only=True)
class TestResult(Model):
    """Whether a server connects, and its tool names if so."""

    __test__ = False  # not a pytest test class

    success: bool = False
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    protocol_version: str | None = None
    duration_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class DiscoverResult(Model):
    """Everything a server offers (MCP objects as dicts); prompts and resources may fail alone."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    prompts_error: str | None = None
    resources_error: str | None = None


@dataclass(frozen=True, kw_only=True)
class ServerStatus(Model):
    """A snapshot of one server's connection, with what the server said of itself at its
    last connection (known before connecting, from the catalog): ``server_info`` (``name``,
    ``version``, and ``title``, ``description``, ``icons``, ``websiteUrl`` when given),
    ``instructions`` (how to use its tools, for a model) and ``capabilities``. ``error`` says
    why it is not connected: the last failure, kept while a reconnect waits its turn."""

    # @generated ServerStatus
    id: str = ""
    name: str = ""
    state: ConnectionState = "disconnected"
    error: str | None = None
    protocol_version: str | None = None
    pid: int | None = None
    server_info: dict[str, Any] | None = None
    instructions: str | None = None
    capabilities: dict[str, Any] | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class ToolInfo(Model):
    """A tool, with its pool-unique ``id`` (what ``call_tool`` takes)."""

    # @generated ToolInfo
    id: str = ""
    server_id: str = ""
    server_name: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    #: Icons a host may show (``src``, ``mimeType``, ``sizes``, ``theme``).
    icons: list[dict[str, Any]] | None = None
    #: The server's ``_meta`` of the tool (extensions' data, e.g. an MCP App's ``ui``).
    meta: dict[str, Any] | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class SearchHit(Model):
    """A ranked result of ``search_tools``."""

    id: str = ""
    score: float = 0.0
    server_name: str = ""
    name: str = ""
    description: str = ""


def _texts(items: list[dict[str, Any]]) -> str:
    return "\n".join(i["text"] for i in items if isinstance(i.get("text"), str))


@dataclass(frozen=True, kw_only=True)
class CallToolResult(Model):
    """A tool's answer. ``is_error`` is the tool saying it failed (not an exception)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    structured_content: Any = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The text parts of ``content``, joined by newlines."""
        return _texts(self.content)


@dataclass(frozen=True, kw_only=True)
class ResourceInfo(Model):
    """A resource, with the server it comes from."""

    server_id: str = ""
    server_name: str = ""
    uri: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True, kw_only=True)
class ResourceTemplateInfo(Model):
    """A resource template, with the server it comes from."""

    server_id: str = ""
    server_name: str = ""
    uri_template: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class SkillFile(Model):
    """One file of a skill, as its listing promises it: the size and digest its bytes must
    have."""

    # @generated SkillFile
    uri: str = ""
    digest: str = ""
    size: int = 0
    # @end


@dataclass(frozen=True, kw_only=True)
class SkillInfo(Model):
    """A skill a server offers (the Skills extension), as ``skills/list`` gives it: no file of
    it has been read. ``frontmatter`` holds every field of its ``SKILL.md`` front matter;
    ``files`` is ``None`` when the server says they change (nothing can be checked)."""

    # @generated SkillInfo
    server_id: str = ""
    server_name: str = ""
    name: str = ""
    description: str = ""
    uri: str = ""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    files: list[SkillFile] | None = None
    #: ``"skills/list"`` (the Skills extension) or ``"resources"`` (a ``skill://…/SKILL.md``
    #: resource of a server without it, as FastMCP's skills provider serves them).
    listed_by: SkillSource = "skills/list"
    # @end


@dataclass(frozen=True, kw_only=True)
class LoadedSkill(Model):
    """A skill loaded for use: its ``SKILL.md`` checked against the listing, and the
    ``instructions`` after its front matter."""

    # @generated LoadedSkill
    skill: SkillInfo = field(default_factory=SkillInfo)
    instructions: str = ""
    # @end


@dataclass(frozen=True, kw_only=True)
class SkillFileContents(Model):
    """A file of a skill, checked against the listing: ``text`` for a text file, ``blob``
    (base64) for any other."""

    # @generated SkillFileContents
    uri: str = ""
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class AppCsp(Model):
    """The origins an MCP App view declares (``_meta.ui.csp``); only well-formed ones are
    kept."""

    # @generated AppCsp
    connect_domains: list[str] = field(default_factory=list)
    resource_domains: list[str] = field(default_factory=list)
    frame_domains: list[str] = field(default_factory=list)
    base_uri_domains: list[str] = field(default_factory=list)
    # @end


@dataclass(frozen=True, kw_only=True)
class AppPermissions(Model):
    """The browser features an MCP App view asks for; a host may grant them."""

    # @generated AppPermissions
    camera: bool = False
    microphone: bool = False
    geolocation: bool = False
    clipboard_write: bool = False
    # @end


@dataclass(frozen=True, kw_only=True)
class AppView(Model):
    """An MCP App view ready to render (:meth:`mcpmux.Pool.app_view`): load ``html`` in a
    sandboxed frame under ``content_security_policy`` (the declared origins and nothing else),
    with ``allow`` as the frame's ``allow`` attribute."""

    # @generated AppView
    tool_id: str = ""
    server_id: str = ""
    server_name: str = ""
    resource_uri: str = ""
    mime_type: str = ""
    html: str = ""
    csp: AppCsp = field(default_factory=AppCsp)
    content_security_policy: str = ""
    permissions: AppPermissions = field(default_factory=AppPermissions)
    allow: str = ""
    prefers_border: bool | None = None
    domain: str | None = None
    tool: ToolInfo = field(default_factory=ToolInfo)
    # @end


@dataclass(frozen=True, kw_only=True)
class AppBridgeOutput(Model):
    """What to do after handing a bridge one message from the view: ``post`` these to it, in
    order; ``host``, when set, is a message only the host can act on."""

    # @generated AppBridgeOutput
    post: list[dict[str, Any]] = field(default_factory=list)
    host: dict[str, Any] | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class ReadResourceResult(Model):
    """The contents of a resource (each a dict with ``uri`` and ``text`` or ``blob``)."""

    contents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text contents, joined by newlines."""
        return _texts(self.contents)


@dataclass(frozen=True, kw_only=True)
class PromptInfo(Model):
    """A prompt, with the server it comes from."""

    server_id: str = ""
    server_name: str = ""
    name: str = ""
    title: str | None = None
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class GetPromptResult(Model):
    """A prompt filled with arguments: its messages (dicts with ``role`` and ``content``)."""

    description: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Progress:
    """A progress notification of a tool call."""

    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class TaskUpdate:
    """A status of the task a server runs a tool call as (the tasks extension): ``working``,
    ``input_required``, then ``completed``, ``failed`` or ``cancelled``."""

    task_id: str
    status: str
    status_message: str | None = None


@dataclass(frozen=True, kw_only=True)
class Event(Model):
    """Something that happened in the pool.

    ``type`` is the event name (``"server:connected"``, ``"connection:state"``,
    ``"servers:changed"``, ``"server:pending"`` (a server imported from another host's file
    waits for approval: ``data["consent"]`` says what it would run), ``"tool:called"``,
    ``"tools:changed"``, ``"prompts:changed"``,
    ``"resources:changed"``, ``"resource:updated"``, ``"elicitation:complete"``,
    ``"notification"`` (one mcpmux has no meaning for: ``method``, ``params``),
    ``"progress"``, ``"log"``, and the rest of ``EVENT_NAMES``); ``data`` holds its other
    fields with snake_case keys.
    """

    type: str = ""
    server_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls: builtins.type[_M], data: dict[str, Any]) -> _M:
        """Builds the event from the core's JSON (``type`` tag, camelCase fields)."""
        fields = {snake(k): v for k, v in data.items() if k != "type"}
        kwargs = {"type": data.get("type", ""), "server_id": data.get("serverId"), "data": fields}
        return cls(_raw=data, **kwargs)

    def __getitem__(self, key: str) -> Any:
        """A field of ``data``: ``event["tool_id"]``."""
        return self.data[key]


@dataclass(frozen=True, kw_only=True)
class Completion(Model):
    """Completion values for an argument (:meth:`mcpmux.Pool.complete`): at most 100 values,
    with the ``total`` the server has and whether there are more (``has_more``)."""

    values: list[str] = field(default_factory=list)
    total: int | None = None
    has_more: bool | None = None


@dataclass(frozen=True, kw_only=True)
class UrlElicitation(Model):
    """A URL a server asks the user to open (:class:`mcpmux.UrlElicitationRequiredError`):
    ``message`` says why; the ``elicitation:complete`` event names ``elicitation_id`` when
    the user is done."""

    elicitation_id: str = ""
    url: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class HostRequest(Model):
    """A server's request to the host (sampling, elicitation, roots): ``params`` are the MCP
    request's params as the server sent them (camelCase keys; empty for ``roots/list``)."""

    server_id: str = ""
    server_name: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest(Model):
    """What an agent asks before running a tool that needs approval (or, with
    ``tool_id == "sampling/createMessage"``, before answering a server's sampling request):
    the call, and what to show the user: the tool's ``title``, ``description`` and
    ``annotations`` (hints from the server: ``readOnlyHint``, ``destructiveHint``, ...),
    whether its server is ``trusted``, and the ``reason`` the policy asks
    (``untrusted_server``, ``changed_since_trusted``, ``new_since_trusted``,
    ``not_auto_approved``, ``destructive``, ``not_read_only``, ``always``, ``sampling``).
    For a tool of a trusted server that changed or is new since it was trusted, ``change``
    says what is not as the user saw it (the description before and now)."""

    # @generated ApprovalRequest
    tool_id: str = ""
    server_name: str = ""
    arguments: Any = None
    server_id: str = ""
    title: str | None = None
    description: str | None = None
    annotations: dict[str, Any] | None = None
    trusted: bool = False
    reason: ApprovalReason | None = None
    change: str | None = None
    # @end


@dataclass(frozen=True, kw_only=True)
class AuthorizationPrompt(Model):
    """What an OAuth handler is asked: take the user to ``authorization_url`` and return the
    URL the authorization server redirected to (at ``redirect_uri``, with the code and
    state)."""

    server_id: str = ""
    server_name: str = ""
    authorization_url: str = ""
    redirect_uri: str = ""


class TokenStore(Protocol):
    """Where OAuth tokens live (a keychain, a database, ...): each method may be sync or
    async. ``load`` answers the credentials saved for a server (a dict, or its JSON text) or
    ``None``; ``save`` keeps them; ``clear`` forgets them. The credentials are secrets: never
    log them."""

    def load(self, server_id: str) -> Any: ...
    def save(self, server_id: str, credentials: dict[str, Any]) -> Any: ...
    def clear(self, server_id: str) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class Recipe(Model):
    """A recipe: markdown instructions with a widget name, description and parameter schema."""

    name: str = ""
    description: str = ""
    schema: dict[str, Any] | None = None
    body: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolDef(Model):
    """A function as offered to a model by a conversation."""

    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolLayer(Model):
    """One server's tools (``protocol`` ``mcp``), or the host's own (``local``)."""

    protocol: str = ""
    server_id: str = ""
    server_name: str = ""
    description: str | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    #: Why ``tools`` is empty when the server could not be listed (it did not start, say).
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Unlisted(Model):
    """A server whose tools an answer lacks because they could not be listed, and why."""

    server_id: str = ""
    server_name: str = ""
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class Usage(Model):
    """Tokens spent."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class AgentResult(Model):
    """The outcome of an agent run. ``stop`` is ``"finished"``, ``"max_iterations"`` or
    ``"cancelled"``; ``transcript`` (the messages, as dicts) can be the next run's
    ``history``."""

    text: str = ""
    transcript: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop: str = "finished"
    iterations: int = 0


# --- the wire shapes of providers and transcripts (TypedDicts of the core's JSON) ---------


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ImageBlock(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class _ToolResultBlockBase(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str


class ToolResultBlock(_ToolResultBlockBase, total=False):
    is_error: bool
    images: list[dict[str, str]]


ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock


class Message(TypedDict):
    """One message of a transcript."""

    role: Literal["user", "assistant"]
    content: list[ContentBlock]


class _ToolDefDict(TypedDict):
    name: str
    description: str
    inputSchema: dict[str, Any]


class _ChatRequestBase(TypedDict):
    model: str
    messages: list[Message]
    tools: list[_ToolDefDict]


class ChatRequest(_ChatRequestBase, total=False):
    """What a Python provider's ``chat`` receives."""

    system: str
    maxTokens: int
    temperature: float


class ChatUsage(TypedDict):
    inputTokens: int
    outputTokens: int


class _ChatResponseBase(TypedDict):
    content: list[ContentBlock]


class ChatResponse(_ChatResponseBase, total=False):
    """What a Python provider's ``chat`` answers (``stopReason``: ``end_turn``,
    ``tool_use`` or ``max_tokens``)."""

    stopReason: str
    usage: ChatUsage


class _ProviderConfigBase(TypedDict):
    type: Literal["openai", "remote", "anthropic", "ollama"]
    model: str


class ProviderConfig(_ProviderConfigBase, total=False):
    """A provider described as data: ``type`` is ``openai``, ``remote``, ``anthropic`` or
    ``ollama``; ``remote`` takes ``proxyUrl`` instead of ``baseUrl``."""

    baseUrl: str
    apiKey: str
    headers: dict[str, str]
    proxyUrl: str


# JSON keys that are not the camelCase of the attribute name.
_RENAMES: dict[str, dict[str, str]] = {
    # MCP's own result, not one of core's records.
    "CallToolResult": {"meta": "_meta"},
    # @generated renames
    "ToolInfo": {"meta": "_meta"},
    # @end
}

# Attributes holding another model (or a list of them).
_NESTED: dict[str, dict[str, type[Model]]] = {
    # Results whose fields are written here, not generated.
    "ToolLayer": {"tools": ToolInfo},
    "AgentResult": {"usage": Usage},
    # @generated nested
    "ServerConfig": {"sandbox": Sandbox},
    "ServerRecord": {"config": ServerConfig, "timeouts": Timeouts},
    "ImportResult": {"record": ServerRecord},
    "SkillInfo": {"files": SkillFile},
    "LoadedSkill": {"skill": SkillInfo},
    "AppView": {"csp": AppCsp, "permissions": AppPermissions, "tool": ToolInfo},
    # @end
}
