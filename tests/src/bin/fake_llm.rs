//! mcpmux-fake-llm: the scripted model service of `mcpmux_tests::fake_llm` as a program, for
//! the C, Python and Node tests (no LLM service can be reached from here).
//!
//! ```text
//! mcpmux-fake-llm [--dialect openai|anthropic|ollama] TURNS_JSON
//! ```
//!
//! `TURNS_JSON` is a JSON array of turns (see `fake_llm::turns_from_json`), e.g.
//! `[{"tools": [["search_tools", {"query": "echo"}]]}, {"callFound": "echo",
//! "arguments": {"message": "hi"}}, {"text": "Done."}]`. The program listens on a free port of
//! 127.0.0.1, prints its base URL (what a provider's `baseUrl` takes) as the first line of
//! stdout, and serves until its stdin closes, so it never outlives the test that started it.

use std::io::{Read, Write};
use std::process::ExitCode;

use mcpmux_tests::fake_llm::{Dialect, FakeOpenAi, turns_from_json};

fn parse_args() -> Result<(Dialect, serde_json::Value), String> {
    let mut dialect = Dialect::OpenAi;
    let mut turns = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dialect" => {
                dialect = match args.next().as_deref() {
                    Some("openai") => Dialect::OpenAi,
                    Some("anthropic") => Dialect::Anthropic,
                    Some("ollama") => Dialect::Ollama,
                    other => return Err(format!("unknown --dialect {other:?}")),
                }
            }
            text if turns.is_none() => {
                let value = serde_json::from_str(text)
                    .map_err(|e| format!("TURNS_JSON is not valid JSON: {e}"))?;
                turns = Some(value);
            }
            other => return Err(format!("unexpected argument '{other}'")),
        }
    }
    let turns = turns.ok_or("usage: mcpmux-fake-llm [--dialect D] TURNS_JSON")?;
    Ok((dialect, turns))
}

fn main() -> ExitCode {
    let (dialect, turns) = match parse_args().and_then(|(d, t)| Ok((d, turns_from_json(&t)?))) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("mcpmux-fake-llm: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let fake = runtime.block_on(FakeOpenAi::start_as(dialect, turns));
    println!("{}", fake.base_url);
    let _ = std::io::stdout().flush();
    // Serves on the runtime's thread until stdin reaches its end.
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(fake);
    ExitCode::SUCCESS
}
