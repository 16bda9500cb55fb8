//! `mcpmux`: a thin command line over the mcpmux core.

mod chat;
mod commands;
mod demo;
mod demo_server;
mod serve;
mod spinner;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// mimalloc, as in the bindings (see `mcpmux::alloc`): `serve` allocates a request's parts on
/// one task and frees them on another, and glibc's malloc was a fifth of its time per call.
#[global_allocator]
static ALLOCATOR: mcpmux::alloc::Allocator = mcpmux::alloc::Allocator;

#[derive(Parser)]
#[command(
    name = "mcpmux",
    version,
    about = "Use a fleet of MCP servers from one place"
)]
struct Cli {
    /// Config file (default: $MCPMUX_CONFIG, else ~/.config/mcpmux/servers.json).
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Also use this project's local-scope servers.
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<String>,
    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Manage the server list.
    #[command(subcommand)]
    Servers(ServersCommand),
    /// List tools of every active server (or one).
    Tools {
        #[arg(long, value_name = "NAME", conflicts_with = "search")]
        server: Option<String>,
        /// Rank the known tools for a query instead; answers from the catalog (a server is
        /// started only when its tools are not known yet).
        #[arg(long, value_name = "QUERY")]
        search: Option<String>,
        /// How many results `--search` prints (default 10).
        #[arg(long, value_name = "N", requires = "search")]
        limit: Option<usize>,
    },
    /// Call a tool by id (as `tools` prints it) with JSON arguments.
    Call {
        tool_id: String,
        #[arg(value_name = "ARGS_JSON")]
        args: Option<String>,
        /// Per-call timeout in milliseconds.
        #[arg(long, value_name = "MS")]
        timeout_ms: Option<u64>,
    },
    /// List resources of every server.
    Resources {
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
    },
    /// Read a resource of a server.
    Read { server: String, uri: String },
    /// List prompts of every server.
    Prompts {
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
    },
    /// Get a prompt of a server, with JSON arguments.
    Prompt {
        server: String,
        name: String,
        #[arg(value_name = "ARGS_JSON")]
        args: Option<String>,
    },
    /// Complete an argument of a prompt or resource template, as a form would (one value a
    /// line).
    Complete {
        server: String,
        /// The argument's name.
        argument: String,
        /// What is typed so far.
        #[arg(default_value = "")]
        value: String,
        /// The prompt whose argument it is.
        #[arg(
            long,
            value_name = "NAME",
            required_unless_present = "resource",
            conflicts_with = "resource"
        )]
        prompt: Option<String>,
        /// The resource template (its URI template) whose argument it is.
        #[arg(long, value_name = "URI")]
        resource: Option<String>,
        /// The arguments already chosen, as a JSON object of strings.
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
    },
    /// Connect every active server and print events as they happen (Ctrl-C stops).
    Events,
    /// Ask an LLM agent that uses the servers' tools; the answer streams to stdout, tool
    /// calls show on stderr. Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY.
    Chat(chat::ChatArgs),
    /// Serve every server as one MCP server (tools `server__tool`), over stdio or HTTP.
    Serve(serve::ServeArgs),
    /// Start the built-in demo server in a temporary config, list and call its tools.
    Demo,
    /// Serve the built-in demo MCP server over stdio.
    #[command(hide = true)]
    DemoServer,
}

#[derive(Subcommand)]
enum ServersCommand {
    /// List saved servers and their state.
    List {
        /// With --json: print env and header values, URL credentials and OAuth secrets as
        /// they are (else `<redacted>`).
        #[arg(long)]
        show_secrets: bool,
    },
    /// Add a stdio server (--command) or a remote one (--url).
    Add(Box<AddArgs>),
    /// Import servers from a Claude Desktop / Cursor / VS Code JSON file (`-` reads stdin).
    /// They are saved waiting for your approval: nothing of them runs before you have seen
    /// each command (asked on a terminal, else `servers approve`).
    Import {
        file: String,
    },
    /// Approve an imported server: it may run from now on, and is started and listed.
    Approve {
        /// The server to approve.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Approve every server that waits for approval.
        #[arg(long)]
        all: bool,
        /// Let it run without the sandbox an import gives it (its folders and the network),
        /// with your full rights, for a server that needs more.
        #[arg(long)]
        no_sandbox: bool,
    },
    Remove {
        name: String,
    },
    Enable {
        name: String,
    },
    Disable {
        name: String,
    },
    Trust {
        name: String,
    },
    Untrust {
        name: String,
    },
    /// Connect on a fresh connection and list the tools.
    Test {
        name: String,
    },
    /// Show tools, prompts and resources of a server.
    Discover {
        name: String,
    },
}

#[derive(Args)]
pub struct AddArgs {
    pub name: String,
    #[arg(long, conflicts_with = "url", required_unless_present = "url")]
    pub command: Option<String>,
    /// An argument of the command (repeat for several).
    #[arg(long = "arg", value_name = "A", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// An environment variable of the server, K=V (repeat for several).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Start it with this shell's whole environment (never mcpmux's own secrets) instead of
    /// only HOME, PATH, the locale and the like; --env adds to either.
    #[arg(long, requires = "command")]
    pub inherit_env: bool,
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    #[arg(long)]
    pub url: Option<String>,
    /// An HTTP header, K:V (repeat for several).
    #[arg(long = "header", value_name = "K:V")]
    pub headers: Vec<String>,
    /// Force the transport: stdio, http, sse or websocket.
    #[arg(long = "type", value_name = "TYPE")]
    pub transport: Option<String>,
    /// Save it inactive.
    #[arg(long)]
    pub disabled: bool,
    /// For a server that keeps state for its client (a browser, a REPL, a login): under
    /// `mcpmux serve`, each client gets a process (or remote session) of its own.
    #[arg(long)]
    pub per_client: bool,
    /// With --per-client: the most clients with a process of their own at once (default 8).
    #[arg(long, value_name = "N", requires = "per_client")]
    pub max_clients: Option<u32>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The sandbox of a stdio server: any of these runs it in one.
#[derive(Args)]
pub struct SandboxArgs {
    /// Run the server in a sandbox: no network, no files but what it needs to run (Linux:
    /// Landlock, a network namespace, no capabilities). Any flag below implies it.
    #[arg(long, requires = "command")]
    pub sandbox: bool,
    /// A path the sandboxed server may read, `~` for the home folder (repeat for several).
    #[arg(long = "allow-read", value_name = "PATH", requires = "command")]
    pub allow_read: Vec<String>,
    /// A path the sandboxed server may read and write (repeat for several).
    #[arg(long = "allow-write", value_name = "PATH", requires = "command")]
    pub allow_write: Vec<String>,
    /// Let the sandboxed server use the network.
    #[arg(long, requires = "command")]
    pub allow_network: bool,
    /// The most memory the sandboxed server may allocate, in MiB.
    #[arg(long, value_name = "MIB", requires = "command")]
    pub memory_mb: Option<u64>,
    /// The most files and sockets the sandboxed server may hold open.
    #[arg(long, value_name = "N", requires = "command")]
    pub open_files: Option<u64>,
    /// The most processes and threads the sandboxed server may run at once.
    #[arg(long, value_name = "N", requires = "command")]
    pub processes: Option<u64>,
    /// Refuse to start the server where the kernel cannot keep all of its sandbox.
    #[arg(long, requires = "command")]
    pub sandbox_required: bool,
}

/// The async runtime a command runs on: one thread to serve one client over stdio, two
/// workers otherwise.
///
/// A stdio front's calls go from the client's pipe to a server's and back; on one thread no
/// step of a call waits for another thread to wake. In the bench (`mcpmux-serve`, 32 calls
/// in flight, ten interleaved rounds) that served 21% more calls per second than two workers
/// (52.8k against 43.7k/s median) at the same sequential p50 (105 µs). Serving HTTP keeps
/// both workers for its many clients, and the other commands keep them because they wait on
/// things (a prompt on the terminal, a model's stream) while servers keep talking. The one
/// thread batches its writes to stdio servers (`write_batch`): with 32 calls in flight, a
/// third of the writes and 5-8% more calls per second.
fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Serve(args) if args.serves_one_client() => {
            mcpmux::event_loop::current_thread_runtime()
        }
        _ => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build(),
    }
}

/// Where tracing writes: stderr, each event's lines with the credentials of the URLs in them
/// taken out. Every crate's lines pass here (rmcp's and reqwest's name the server's URL,
/// whose query often holds a key), so none of them leaks one.
struct RedactedStderr;

/// One event's text, written to stderr, redacted, when tracing is done with it.
struct RedactedEvent(Vec<u8>);

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactedStderr {
    type Writer = RedactedEvent;

    fn make_writer(&'a self) -> RedactedEvent {
        RedactedEvent(Vec::new())
    }
}

impl std::io::Write for RedactedEvent {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedEvent {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let shown = mcpmux::config::record::redact_log_line(&text);
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), shown.as_bytes());
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if std::env::var_os("MCPMUX_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("MCPMUX_LOG"))
            .with_writer(RedactedStderr)
            .init();
    }
    let runtime = match runtime_for(&cli.command) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpmux: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(commands::run(cli));
    // Children and sessions were closed by the command; don't wait on stray blocking reads.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpmux: {e}");
            ExitCode::from(match e.kind() {
                Some(mcpmux::ErrorKind::InvalidArgument | mcpmux::ErrorKind::InvalidConfig)
                | None => 2,
                Some(mcpmux::ErrorKind::NotFound) => 3,
                _ => 1,
            })
        }
    }
}
