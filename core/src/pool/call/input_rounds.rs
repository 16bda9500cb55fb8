//! Multi round-trip requests of protocol 2026-07-28: a server answers `tools/call`,
//! `prompts/get` or `resources/read` with `input_required`, the host answers the input
//! requests inside it (sampling, elicitation, roots), and the request is sent again with the
//! responses and the server's opaque state. One loop for every verb that can be answered so.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    InputRequiredResult, InputResponses, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult,
};

use crate::error::{Error, Result};
use crate::pool::server::slot::Slot;
use crate::pool::session::client_side::ClientSide;

/// How many `input_required` rounds a request may take unless the pool says otherwise (rmcp's
/// default as well).
pub(crate) const DEFAULT_MAX_INPUT_ROUNDS: u32 = 10;

/// A request that can be sent again with the host's input.
pub(crate) trait Retry {
    /// Carries the responses and the server's state into the next round.
    fn retry_with(&mut self, responses: Option<InputResponses>, state: Option<String>);
}

macro_rules! retry_params {
    ($($params:ty),*) => {$(
        impl Retry for $params {
            fn retry_with(&mut self, responses: Option<InputResponses>, state: Option<String>) {
                self.input_responses = responses;
                self.request_state = state;
            }
        }
    )*};
}

retry_params!(
    CallToolRequestParams,
    GetPromptRequestParams,
    ReadResourceRequestParams
);

/// A server's answer to one round: the result, or what it asks first.
pub(crate) enum Round<R> {
    Done(R),
    Input(InputRequiredResult),
    /// A kind of answer this request does not have.
    Unexpected,
}

macro_rules! round_from {
    ($($response:ident => $result:ty),*) => {$(
        impl From<$response> for Round<$result> {
            fn from(response: $response) -> Self {
                match response {
                    $response::Complete(result) => Round::Done(result),
                    $response::InputRequired(asked) => Round::Input(asked),
                    _ => Round::Unexpected,
                }
            }
        }
    )*};
}

round_from!(
    GetPromptResponse => GetPromptResult,
    ReadResourceResponse => ReadResourceResult
);

/// Why the rounds of a request ended without a result.
#[derive(Debug)]
pub(crate) enum RoundsError {
    /// The server still asked after the last round allowed.
    Exhausted(u32),
    /// The server's `input_required` carried neither requests nor state.
    Empty,
    /// The host could not answer an input request (no handler, the handler failed, a kind of
    /// request this client does not know).
    Host(String),
}

impl RoundsError {
    /// The error's text, naming the request's method.
    pub(crate) fn describe(&self, method: &str) -> String {
        match self {
            RoundsError::Exhausted(n) => {
                format!("{method}: still asking for input after {n} rounds")
            }
            RoundsError::Empty => {
                format!("{method}: the server answered input_required with nothing to answer")
            }
            RoundsError::Host(e) => {
                format!("{method}: answering the server's input request failed: {e}")
            }
        }
    }
}

/// The rounds one request has taken.
pub(crate) struct InputRounds {
    max: u32,
    taken: u32,
    /// Rounds in a row that carried only state (the server is still working): each waits a
    /// little longer before the retry, so such a server is not asked in a busy loop.
    state_only: u32,
}

impl InputRounds {
    pub(crate) fn new(max: u32) -> Self {
        InputRounds {
            max: max.max(1),
            taken: 0,
            state_only: 0,
        }
    }

    /// Answers what the server asked, with the host's handlers (the requests of one round
    /// concurrently), and sets the request up for its next round.
    pub(crate) async fn answer(
        &mut self,
        client: &ClientSide,
        asked: InputRequiredResult,
        request: &mut impl Retry,
    ) -> Result<(), RoundsError> {
        self.taken += 1;
        if self.taken >= self.max {
            return Err(RoundsError::Exhausted(self.max));
        }
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() {
            if asked.request_state.is_none() {
                return Err(RoundsError::Empty);
            }
            tokio::time::sleep(state_only_wait(self.state_only)).await;
            self.state_only += 1;
        } else {
            self.state_only = 0;
        }
        let responses = Box::pin(client.fulfil(requests))
            .await
            .map_err(|e| RoundsError::Host(e.message.into_owned()))?;
        request.retry_with(
            (!responses.is_empty()).then_some(responses),
            asked.request_state,
        );
        Ok(())
    }
}

/// 50 ms, doubling with each state-only round in a row, at most 250 ms (as rmcp waits).
fn state_only_wait(in_a_row: u32) -> Duration {
    Duration::from_millis((50u64 << in_a_row.min(3)).min(250))
}

/// The client side of a server's connection, answering its input requests.
pub(super) fn client_of(slot: &Slot) -> ClientSide {
    ClientSide {
        shared: slot.shared.clone(),
        server_name: slot.name(),
        legacy: false,
    }
}

/// Answers a server's `input_required` to `method` (not `tools/call`), for the next round.
pub(super) async fn answer_input(
    slot: &Slot,
    rounds: &mut InputRounds,
    asked: InputRequiredResult,
    request: &mut impl Retry,
    method: &str,
) -> Result<()> {
    rounds
        .answer(&client_of(slot), asked, request)
        .await
        .map_err(|e| Error::Protocol {
            server: slot.name(),
            message: e.describe(method),
        })
}

/// A response of a kind the request does not have.
pub(super) fn unexpected(slot: &Slot, method: &str) -> Error {
    Error::Protocol {
        server: slot.name(),
        message: format!("{method}: unexpected response type"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_only_rounds_back_off_to_a_quarter_second() {
        let waits: Vec<u64> = (0..6)
            .map(|n| state_only_wait(n).as_millis() as u64)
            .collect();
        assert_eq!(waits, [50, 100, 200, 250, 250, 250]);
    }

    #[test]
    fn a_retry_carries_the_responses_and_the_state() {
        let mut params = GetPromptRequestParams::new("p");
        let mut responses = InputResponses::new();
        responses.insert("name".into(), serde_json::json!({"action": "decline"}));
        params.retry_with(Some(responses), Some("s1".into()));
        assert_eq!(params.request_state.as_deref(), Some("s1"));
        assert!(
            params
                .input_responses
                .as_ref()
                .unwrap()
                .contains_key("name")
        );
        params.retry_with(None, None);
        assert!(params.input_responses.is_none() && params.request_state.is_none());
    }
}
