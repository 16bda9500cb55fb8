//! A 2026-07-28 client's input rounds through the gateway. Such a client has no session to be
//! asked on, so when an upstream answers its call with `input_required` (a sample, an answer
//! from the user, the roots), the question goes back to the client as the gateway's own
//! `input_required`, and the client calls again with its answers. The upstream's
//! `requestState` travels inside the gateway's, sealed with the replicas' key and bound to the
//! request (the tool called, the prompt got, the resource read), so that any replica can take
//! the next round and no client can alter the upstream's state or replay it on another
//! request. Prompts and resources are asked in rounds too.

use rmcp::ErrorData;
use rmcp::model::{InputRequiredResult, InputResponses};
use serde::{Deserialize, Serialize};

use crate::pool::InputRound;
use crate::serve::relay::seal::Seal;

/// What request states are sealed for (no other sealed text opens as one).
const REQUEST_STATE: &[u8] = b"requestState";

/// A 2026-07-28 client's request in rounds: what it brings upstream, and the request its
/// state is bound to (`tool call_tool` for a call through the search tools, whatever tool that
/// calls).
pub(in crate::serve) struct ClientRound {
    pub input: InputRound,
    pub asked_as: String,
}

/// What the gateway's `requestState` carries.
#[derive(Serialize, Deserialize)]
struct Carried {
    /// The request the round belongs to: `tool NAME`, `prompt NAME` or `resource URI`, as
    /// served.
    request: String,
    /// The upstream's own state, as it sent it.
    state: Option<String>,
}

/// The upstream's `asked` as the gateway's answer to `request` (`tool NAME`, ...).
pub(in crate::serve) fn ask_client(
    seal: &Seal,
    request: &str,
    mut asked: InputRequiredResult,
) -> Result<InputRequiredResult, ErrorData> {
    let carried = Carried {
        request: request.to_string(),
        state: asked.request_state.take(),
    };
    let sealed = seal
        .seal(REQUEST_STATE, &carried)
        .ok_or_else(|| ErrorData::internal_error("could not seal the request state", None))?;
    asked.request_state = Some(sealed);
    Ok(asked)
}

/// The round a client's `request` brings upstream: its responses, and the upstream's state
/// opened from the gateway's.
pub(in crate::serve) fn from_client(
    seal: &Seal,
    request: &str,
    responses: Option<InputResponses>,
    state: Option<&str>,
) -> Result<InputRound, ErrorData> {
    let state = match state {
        None => None,
        Some(sealed) => {
            let carried: Carried = seal
                .open(REQUEST_STATE, sealed)
                .filter(|c: &Carried| c.request == request)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "requestState was not issued by this server for {request}: send \
                             it back unchanged, with the request it came from"
                        ),
                        None,
                    )
                })?;
            carried.state
        }
    };
    Ok(InputRound { responses, state })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_state_comes_back_only_for_its_own_tool() {
        let seal = Seal::new(None).unwrap();
        let asked = InputRequiredResult::new(None, Some("upstream state".into()));
        let sent = ask_client(&seal, "tool add", asked).unwrap();
        let outer = sent.request_state.unwrap();
        assert!(!outer.contains("upstream"), "{outer}");
        let round = from_client(&seal, "tool add", None, Some(&outer)).unwrap();
        assert_eq!(round.state.as_deref(), Some("upstream state"));
        let error = from_client(&seal, "tool echo", None, Some(&outer)).unwrap_err();
        assert!(error.message.contains("unchanged"), "{error:?}");
        assert!(from_client(&seal, "add", None, Some("forged")).is_err());
        assert!(
            from_client(&seal, "add", None, None)
                .unwrap()
                .state
                .is_none()
        );
    }
}
