//! `mcpmux chat`: one agent run over the configured servers, the answer streamed to stdout
//! and the tool calls shown on stderr as they happen.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use mcpmux::agent::{
    Agent, AgentOptions, Approval, ApprovalRequest, Attachment, ProviderConfig, RunOptions,
    RunParams, Stop, create_provider,
};
use mcpmux::{Event, Pool, ServerFilter};
use tokio_util::sync::CancellationToken;

use crate::commands::{CliError, Result, print_json};

/// Which model service `chat` talks to.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ProviderKind {
    Openai,
    Anthropic,
    Ollama,
}

/// The options of `mcpmux chat`.
#[derive(clap::Args)]
pub struct ChatArgs {
    /// What to ask.
    pub prompt: String,
    /// Who runs the model: OpenAI or any OpenAI-compatible service, Anthropic, or Ollama.
    #[arg(long, value_enum, default_value = "openai")]
    pub provider: ProviderKind,
    /// The model, by the provider's name for it (gpt-4.1, claude-sonnet-4-5, qwen3...).
    #[arg(long, value_name = "MODEL")]
    pub model: String,
    /// The service's URL (an OpenAI-compatible server, a proxy, a local Ollama...).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Run tools that need approval without asking.
    #[arg(long)]
    pub yes: bool,
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_iterations: usize,
    /// Attach a resource to the prompt, SERVER:URI (repeat for several).
    #[arg(long = "attach", value_name = "SERVER:URI")]
    pub attach: Vec<String>,
    /// Use only this server (repeat for several).
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
    /// Do not use this server (repeat for several).
    #[arg(long = "without", value_name = "NAME")]
    pub without: Vec<String>,
}

fn provider_config(args: &ChatArgs) -> Result<ProviderConfig> {
    let key = |var: &str| std::env::var(var).ok().filter(|k| !k.is_empty());
    let model = args.model.clone();
    Ok(match args.provider {
        ProviderKind::Openai => {
            let api_key = key("OPENAI_API_KEY");
            // The public API needs a key; a local server or proxy given by URL may not.
            if api_key.is_none() && args.base_url.is_none() {
                // OpenAI is the default provider: one who meant Anthropic's is told so, not
                // only to set a key they do not have.
                let anthropic = model.starts_with("claude") || key("ANTHROPIC_API_KEY").is_some();
                return Err(CliError::usage(format!(
                    "set OPENAI_API_KEY, or give --base-url for a server that needs no key{}",
                    if anthropic {
                        " (for Anthropic's models: --provider anthropic, with ANTHROPIC_API_KEY)"
                    } else {
                        ""
                    }
                )));
            }
            let json = serde_json::json!({
                "type": "openai", "model": model, "apiKey": api_key,
                "baseUrl": args.base_url.clone().unwrap_or_else(|| "https://api.openai.com/v1".into()),
            });
            serde_json::from_value(json).map_err(|e| CliError::usage(e.to_string()))?
        }
        ProviderKind::Anthropic => {
            let api_key = key("ANTHROPIC_API_KEY");
            if api_key.is_none() && args.base_url.is_none() {
                return Err(CliError::usage(
                    "set ANTHROPIC_API_KEY, or give --base-url for a proxy that adds it",
                ));
            }
            let json = serde_json::json!({
                "type": "anthropic", "model": model, "apiKey": api_key,
                "baseUrl": args.base_url.clone().unwrap_or_else(|| "https://api.anthropic.com/v1".into()),
            });
            serde_json::from_value(json).map_err(|e| CliError::usage(e.to_string()))?
        }
        ProviderKind::Ollama => {
            let json = serde_json::json!({
                "type": "ollama", "model": model,
                "baseUrl": args.base_url.clone().unwrap_or_else(|| "http://localhost:11434".into()),
            });
            serde_json::from_value(json).map_err(|e| CliError::usage(e.to_string()))?
        }
    })
}

fn attachments(args: &ChatArgs) -> Result<Vec<Attachment>> {
    args.attach
        .iter()
        .map(|a| match a.split_once(':') {
            Some((server, uri)) if !server.is_empty() && !uri.is_empty() => Ok(Attachment {
                server: server.into(),
                uri: uri.into(),
            }),
            _ => Err(CliError::usage(format!(
                "--attach takes SERVER:URI, got '{a}'"
            ))),
        })
        .collect()
}

/// Asks on the terminal; without one, `--yes` decides.
fn approver(yes: bool) -> mcpmux::agent::ApproveFn {
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    // One question at a time, even when the model asks for several tools at once.
    let asking = Arc::new(tokio::sync::Mutex::new(()));
    Arc::new(move |req: ApprovalRequest| {
        let asking = asking.clone();
        Box::pin(async move {
            if yes {
                return Approval::AllowOnce;
            }
            if !interactive {
                eprintln!(
                    "  denied {} (needs approval; no terminal to ask, --yes allows)",
                    req.tool_id
                );
                return Approval::Deny;
            }
            let _turn = asking.lock().await;
            tokio::task::spawn_blocking(move || {
                eprint!("{}", approval_question(&req));
                let _ = std::io::stderr().flush();
                let mut line = String::new();
                let _ = std::io::stdin().lock().read_line(&mut line);
                match line.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => Approval::AllowOnce,
                    "a" | "always" => Approval::AllowAlways,
                    _ => Approval::Deny,
                }
            })
            .await
            .unwrap_or(Approval::Deny)
        })
    })
}

/// The question the terminal asks: the tool (its title when it has one), its server and
/// whether it is trusted, why it is asked, the server's hints, and the arguments.
fn approval_question(req: &ApprovalRequest) -> String {
    let what = match &req.title {
        Some(title) => format!("{title} ({})", req.tool_id),
        None => req.tool_id.clone(),
    };
    let trust = if req.trusted {
        "trusted"
    } else {
        "not trusted"
    };
    let why = match req.reason.as_str() {
        "destructive" => "it says it may destroy data",
        "not_read_only" => "it is not read-only",
        "not_auto_approved" => "the server's record asks for it",
        "always" => "every tool is asked about",
        "sampling" => "a server asks the model",
        "changed_since_trusted" => "it changed since you trusted its server",
        "new_since_trusted" => "it is new since you trusted its server",
        _ => "its server is not trusted",
    };
    // What changed, in the server's own words: the user decides on that, not on the name.
    let change = match &req.change {
        Some(change) => format!("\n  {change}"),
        None => String::new(),
    };
    let hints: Vec<String> = req
        .annotations
        .as_ref()
        .and_then(|a| a.as_object())
        .into_iter()
        .flatten()
        .filter(|(k, v)| k.ends_with("Hint") && v.is_boolean())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let hints = if hints.is_empty() {
        String::new()
    } else {
        format!("\n  hints: {}", hints.join(", "))
    };
    format!(
        "Allow {what} on server '{}' ({trust}; asked because {why})?{change}{hints}\n  \
         arguments: {}\n[y]es / [a]lways / [N]o: ",
        req.server_name, req.arguments
    )
}

/// Prints the agent's tool calls as they happen, until `finish`.
struct ToolCallPrinter {
    task: tokio::task::JoinHandle<()>,
    done: tokio::sync::oneshot::Sender<()>,
}

impl ToolCallPrinter {
    fn start(pool: &Pool) -> ToolCallPrinter {
        let mut events = pool.events();
        let (done, mut finished) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    event = events.recv() => match event {
                        Some(event) => show_tool_call(&event),
                        None => return,
                    },
                    _ = &mut finished => break,
                }
            }
            // The run is over, so each of its events is queued by now: the last result of a
            // fast run is printed, not lost to the process ending first.
            while let Some(event) = events.try_recv() {
                show_tool_call(&event);
            }
        });
        ToolCallPrinter { task, done }
    }

    /// Prints what the run left queued, then stops.
    async fn finish(self) {
        let _ = self.done.send(());
        let _ = self.task.await;
    }
}

fn show_tool_call(event: &Event) {
    match event {
        Event::AgentToolUse {
            tool_id, arguments, ..
        } => eprintln!("\n→ {tool_id} {arguments}"),
        Event::AgentToolResult {
            is_error, preview, ..
        } => {
            let line = preview.lines().next().unwrap_or_default();
            eprintln!("{} {line}", if *is_error { "✗" } else { "←" });
        }
        _ => {}
    }
}

pub async fn run(args: &ChatArgs, pool: &Pool, json: bool) -> Result<()> {
    let provider = create_provider(provider_config(args)?)?;
    let agent = Agent::new(
        pool.clone(),
        provider,
        AgentOptions {
            max_iterations: args.max_iterations,
            ..Default::default()
        },
    );
    let cancel = CancellationToken::new();
    let on_ctrl_c = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let printer = (!json).then(|| ToolCallPrinter::start(pool));
    let on_token: Option<mcpmux::agent::TokenFn> = (!json).then(|| {
        Arc::new(|t: &str| {
            print!("{t}");
            let _ = std::io::stdout().flush();
        }) as mcpmux::agent::TokenFn
    });
    let result = agent
        .run(
            &args.prompt,
            RunOptions {
                params: RunParams {
                    attachments: attachments(args)?,
                    servers: ServerFilter {
                        enabled: (!args.only.is_empty()).then(|| args.only.clone()),
                        disabled: args.without.clone(),
                    },
                    ..Default::default()
                },
                on_token,
                approve: Some(approver(args.yes)),
                cancel: Some(cancel),
            },
        )
        .await;
    on_ctrl_c.abort();
    if let Some(printer) = printer {
        printer.finish().await;
    }
    let result = result?;
    if json {
        print_json(&result);
        return Ok(());
    }
    println!();
    match result.stop {
        Stop::Finished => Ok(()),
        Stop::Cancelled => Err(CliError::failed("cancelled")),
        Stop::MaxIterations => Err(CliError::failed(result.text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approval_question_shows_the_tool_and_its_hints() {
        let req = ApprovalRequest {
            tool_id: "mcp__files__write_file".into(),
            server_name: "files".into(),
            arguments: serde_json::json!({"path": "/tmp/x"}),
            title: Some("Write File".into()),
            annotations: Some(serde_json::json!({"destructiveHint": true, "title": "W"})),
            trusted: true,
            reason: "destructive".into(),
            ..Default::default()
        };
        let q = approval_question(&req);
        assert!(q.starts_with("Allow Write File (mcp__files__write_file) on server 'files' (trusted; asked because it says it may destroy data)?"), "{q}");
        assert!(q.contains("hints: destructiveHint=true\n"), "{q}");
        assert!(q.contains(r#"arguments: {"path":"/tmp/x"}"#), "{q}");
    }

    #[test]
    fn the_question_about_a_changed_tool_shows_the_change() {
        let req = ApprovalRequest {
            tool_id: "mcp__test__echo".into(),
            server_name: "test".into(),
            trusted: true,
            reason: "changed_since_trusted".into(),
            change: Some("its description changed: it was \"a\" and is now \"b\"".into()),
            ..Default::default()
        };
        let q = approval_question(&req);
        assert!(
            q.contains("asked because it changed since you trusted its server)?\n  its description changed: it was \"a\" and is now \"b\""),
            "{q}"
        );
    }
}
