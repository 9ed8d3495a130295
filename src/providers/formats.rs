//! The wire formats by the name a definition gives them.

use super::chat::Chat;
use super::messages::Messages;
use super::responses::Responses;
use super::wire::WireFormat;
use crate::definition::WireApi;

/// The format that speaks `api`.
pub fn format(api: WireApi) -> &'static dyn WireFormat {
    match api {
        WireApi::Responses => &Responses,
        WireApi::AnthropicMessages => &Messages,
        WireApi::ChatCompletions => &Chat,
    }
}
