//! How the mock authenticates a request under its [`MockAuth`]: as each real API does (the
//! default), or as the gateways and local engines users point agents at do (SPEC §3.1
//! `auth`).

use axum::http::HeaderMap;
use serde_json::json;

use super::script::{MockAuth, MockEngine, MockWire};
use super::state::{MockState, Refusal, refusal};

/// Checks the request's credential under the mock's [`MockAuth`].
pub(super) fn check(st: &MockState, wire: MockWire, headers: &HeaderMap) -> Result<(), Refusal> {
    if st.engine == MockEngine::LlamaCpp && st.auth == MockAuth::Native {
        return super::llama_cpp::auth(st, headers);
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let bearer = format!("Bearer {}", st.key);
    match (st.auth, wire) {
        (MockAuth::Ignored, _) => Ok(()),
        (MockAuth::BearerOnly, _) if header("authorization") == Some(bearer.as_str()) => Ok(()),
        (MockAuth::BearerOnly, _) => Err(Refusal {
            status: 401,
            message: "unauthorized".to_owned(),
            body: json!({"error": "unauthorized"}),
        }),
        (MockAuth::Native, MockWire::Responses | MockWire::Chat)
            if header("authorization") == Some(bearer.as_str()) =>
        {
            Ok(())
        }
        (MockAuth::Native, MockWire::Responses | MockWire::Chat) => {
            let mut r = refusal(
                wire,
                401,
                "invalid_request_error",
                None,
                "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
            );
            r.body["error"]["code"] = json!("invalid_api_key");
            Err(r)
        }
        // The Messages API takes `x-api-key`, or the key as a bearer token (which the
        // official SDK sends for an auth token).
        (MockAuth::Native, MockWire::Messages)
            if header("x-api-key") == Some(st.key.as_str())
                || header("authorization") == Some(bearer.as_str()) =>
        {
            Ok(())
        }
        (MockAuth::Native, MockWire::Messages) => Err(refusal(
            MockWire::Messages,
            401,
            "authentication_error",
            None,
            "invalid x-api-key",
        )),
    }
}
