//! Tools that ask the client for input over several rounds: the rounds as
//! data, and the modern (MRTR) stepping with a self-checking `requestState`.
//!
//! The fake keeps no memory between rounds, as a stateless modern server
//! would: everything it needs travels in `requestState`, which carries a
//! checksum so that any change to it (a client that does not echo it byte
//! for byte) is caught.

use mcp_protocol::methods;
use serde_json::{Map, Value, json};

use mcp_protocol::ErrorObject;

use super::errors::invalid_params;

/// One input the server asks the client for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InputRequest {
    /// The key of the request in `inputRequests` and of its answer in
    /// `inputResponses`.
    pub key: String,
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// The request's params.
    pub params: Value,
    /// Asked only of a client that declared the capability it needs; left
    /// out otherwise (rather than failing the request with `-32021`), as a
    /// server that adapts to what the client can do.
    pub optional: bool,
}

impl InputRequest {
    /// An input request.
    pub fn new(key: &str, method: &str, params: Value) -> InputRequest {
        InputRequest {
            key: key.to_owned(),
            method: method.to_owned(),
            params,
            optional: false,
        }
    }

    /// The same request, asked only of a client that can answer it (see
    /// [`InputRequest::optional`](#structfield.optional)).
    pub fn if_capable(mut self) -> InputRequest {
        self.optional = true;
        self
    }

    /// The client capability the request needs.
    pub fn capability(&self) -> Option<&'static str> {
        match self.method.as_str() {
            methods::ELICITATION_CREATE => Some("elicitation"),
            methods::SAMPLING_CREATE_MESSAGE => Some("sampling"),
            methods::ROOTS_LIST => Some("roots"),
            _ => None,
        }
    }
}

/// One round of a multi-round tool.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputRound {
    /// Ask for these inputs.
    Ask(Vec<InputRequest>),
    /// Ask for nothing: answer with only `requestState` (load shedding).
    /// Legacy connections skip it.
    Shed,
}

impl InputRound {
    /// A round asking for a form elicitation of `{name: string}`.
    pub fn elicit(key: &str, message: &str) -> InputRound {
        InputRound::Ask(vec![InputRequest::new(
            key,
            methods::ELICITATION_CREATE,
            json!({
                "message": message,
                "requestedSchema": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"],
                },
            }),
        )])
    }

    /// A round asking the client's model one question.
    pub fn sample(key: &str, question: &str) -> InputRound {
        InputRound::Ask(vec![InputRequest::new(
            key,
            methods::SAMPLING_CREATE_MESSAGE,
            json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": question } }],
                "maxTokens": 100,
            }),
        )])
    }

    /// A round asking for the client's roots.
    pub fn roots(key: &str) -> InputRound {
        InputRound::Ask(vec![InputRequest::new(key, methods::ROOTS_LIST, json!({}))])
    }

    /// A load-shedding round.
    pub fn shed() -> InputRound {
        InputRound::Shed
    }

    fn requests(&self) -> &[InputRequest] {
        match self {
            InputRound::Ask(r) => r,
            InputRound::Shed => &[],
        }
    }
}

/// The rounds as asked of a client with `client_caps`: its optional
/// requests that need a capability the client did not declare are left
/// out, and a round left with nothing to ask is dropped.
pub(crate) fn for_client(rounds: Vec<InputRound>, client_caps: &Value) -> Vec<InputRound> {
    let can = |r: &InputRequest| {
        !r.optional || r.capability().is_none_or(|c| client_caps.get(c).is_some())
    };
    rounds
        .into_iter()
        .filter_map(|round| match round {
            InputRound::Ask(requests) => {
                let kept: Vec<InputRequest> = requests.into_iter().filter(can).collect();
                (!kept.is_empty()).then_some(InputRound::Ask(kept))
            }
            InputRound::Shed => Some(InputRound::Shed),
        })
        .collect()
}

/// The client capabilities `rounds` need, each once (optional requests
/// need none).
pub(crate) fn required_capabilities(rounds: &[InputRound]) -> Vec<&'static str> {
    let mut caps = Vec::new();
    for cap in rounds
        .iter()
        .flat_map(InputRound::requests)
        .filter(|r| !r.optional)
        .filter_map(InputRequest::capability)
    {
        if !caps.contains(&cap) {
            caps.push(cap);
        }
    }
    caps
}

/// The final result of a multi-round tool: the answers, as JSON text.
pub(crate) fn finish(answers: Map<String, Value>) -> Value {
    let text = Value::Object(answers).to_string();
    json!({ "content": [{ "type": "text", "text": text }], "isError": false })
}

/// What a modern request to a multi-round tool gets.
pub(crate) enum Step {
    /// An `input_required` result.
    Input(Value),
    /// All rounds answered: these answers.
    Done(Map<String, Value>),
}

/// How a modern multi-round request's `inputResponses` are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    /// As a test of the client: a key the round did not ask for, or
    /// responses without the `requestState` this server always sends, are
    /// `-32602`.
    Strict,
    /// As SEP-2322 has a server read them (and the conformance suite checks
    /// it): keys the round did not ask for are ignored, and responses
    /// without a `requestState` are taken as answers to the first round.
    Lenient,
}

/// One modern round: reads `requestState` and `inputResponses` from
/// `params`, checks them, and says what to answer. Each response must be
/// an object (a result); anything else is `-32602`.
pub(crate) fn modern_step(
    tool: &str,
    rounds: &[InputRound],
    params: &Value,
    reading: Reading,
) -> Result<Step, ErrorObject> {
    let mut responses = match params.get("inputResponses") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(invalid_params("inputResponses must be an object")),
    };
    if let Some((key, _)) = responses.iter().find(|(_, v)| !v.is_object()) {
        return Err(invalid_params(format!(
            "inputResponses[{key:?}] must be an object (the client's result)"
        )));
    }
    let (round, mut answers) = match params.get("requestState") {
        Some(state) => {
            let state = state
                .as_str()
                .ok_or_else(|| invalid_params("requestState must be a string"))?;
            decode(tool, state)?
        }
        None if responses.is_empty() => return Ok(issue(tool, rounds, 0, Map::new())),
        None if reading == Reading::Lenient => (0, Map::new()),
        None => {
            return Err(invalid_params(
                "inputResponses without requestState: this server always sends one, echo it",
            ));
        }
    };
    let Some(current) = rounds.get(round) else {
        return Err(invalid_params(
            "requestState names a round this tool has not",
        ));
    };
    let asked = current.requests();
    let unasked = |k: &String| !asked.iter().any(|r| &r.key == k);
    if reading == Reading::Lenient {
        responses.retain(|k, _| !unasked(k));
    } else if let Some(extra) = responses.keys().find(|k| unasked(k)) {
        return Err(invalid_params(format!(
            "inputResponses has the key {extra:?}, which this round did not ask for"
        )));
    }
    if asked.iter().any(|r| !responses.contains_key(&r.key)) {
        // The spec says to ask again rather than fail.
        return Ok(issue(tool, rounds, round, answers));
    }
    answers.extend(responses);
    Ok(issue(tool, rounds, round + 1, answers))
}

fn issue(tool: &str, rounds: &[InputRound], round: usize, answers: Map<String, Value>) -> Step {
    let Some(current) = rounds.get(round) else {
        return Step::Done(answers);
    };
    let state = encode(tool, round, &answers);
    let mut result = json!({ "resultType": "input_required", "requestState": state });
    if let InputRound::Ask(requests) = current {
        let map: Map<String, Value> = requests
            .iter()
            .map(|r| {
                let request = json!({ "method": r.method, "params": r.params });
                (r.key.clone(), request)
            })
            .collect();
        result["inputRequests"] = Value::Object(map);
    }
    Step::Input(result)
}

const STATE_PREFIX: &str = "fake1.";

fn encode(tool: &str, round: usize, answers: &Map<String, Value>) -> String {
    let payload = json!({ "tool": tool, "round": round, "answers": answers }).to_string();
    let hex = hex(payload.as_bytes());
    let sum = fnv1a(hex.as_bytes());
    format!("{STATE_PREFIX}{hex}.{sum:016x}")
}

fn decode(tool: &str, state: &str) -> Result<(usize, Map<String, Value>), ErrorObject> {
    let tampered = || invalid_params("requestState was not echoed exactly as it was sent");
    let body = state.strip_prefix(STATE_PREFIX).ok_or_else(tampered)?;
    let (hex_part, sum) = body.rsplit_once('.').ok_or_else(tampered)?;
    if format!("{:016x}", fnv1a(hex_part.as_bytes())) != sum {
        return Err(tampered());
    }
    let bytes = unhex(hex_part).ok_or_else(tampered)?;
    let payload: Value = serde_json::from_slice(&bytes).map_err(|_| tampered())?;
    if payload["tool"] != tool {
        return Err(invalid_params(format!(
            "requestState belongs to the tool {}, not {tool:?}",
            payload["tool"]
        )));
    }
    let round = payload["round"].as_u64().ok_or_else(tampered)? as usize;
    let answers = payload["answers"].as_object().cloned().unwrap_or_default();
    Ok((round, answers))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    // Salted so that a client cannot forge a state by accident.
    bytes
        .iter()
        .chain(b"mcp-testkit")
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds() -> Vec<InputRound> {
        vec![InputRound::elicit("a", "?"), InputRound::shed()]
    }

    #[test]
    fn walks_the_rounds() {
        let Ok(Step::Input(first)) = modern_step("t", &rounds(), &json!({}), Reading::Strict)
        else {
            panic!()
        };
        assert!(first["inputRequests"]["a"].is_object());
        let params = json!({"requestState": first["requestState"], "inputResponses": {"a": {"action": "decline"}}});
        let Ok(Step::Input(second)) = modern_step("t", &rounds(), &params, Reading::Strict) else {
            panic!()
        };
        assert!(second.get("inputRequests").is_none());
        let params = json!({"requestState": second["requestState"]});
        let Ok(Step::Done(answers)) = modern_step("t", &rounds(), &params, Reading::Strict) else {
            panic!()
        };
        assert_eq!(answers["a"]["action"], "decline");
    }

    #[test]
    fn catches_a_changed_state() {
        let Ok(Step::Input(first)) = modern_step("t", &rounds(), &json!({}), Reading::Strict)
        else {
            panic!()
        };
        let mut state = first["requestState"].as_str().unwrap().to_owned();
        state.insert(8, '0');
        let params = json!({"requestState": state, "inputResponses": {"a": {}}});
        assert_eq!(
            modern_step("t", &rounds(), &params, Reading::Strict)
                .err()
                .unwrap()
                .code,
            mcp_protocol::error_codes::INVALID_PARAMS
        );
    }
}
