//! The `rmcp` server handler. Cheap to clone: stateless HTTP builds one per request, so all
//! state lives in the shared [`SessionManager`] (and, over HTTP, the shared slots for long
//! waits).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::call::{self, Call};
use super::schema;
use crate::limits::HTTP_SHORT_WAIT;
use crate::sessions::SessionManager;
use crate::sessions::WaitEvent;

#[derive(Clone)]
pub(super) struct AgentsServer {
    manager: Arc<SessionManager>,
    tools: Arc<Vec<Tool>>,
    /// Over HTTP: the waits longer than [`HTTP_SHORT_WAIT`] that may run at once, each
    /// holding a connection (SPEC §10). Stdio has one client, and no such bound.
    long_waits: Option<Arc<Semaphore>>,
}

impl AgentsServer {
    pub(super) fn new(manager: Arc<SessionManager>) -> Self {
        let tools = Arc::new(schema::tool_list(manager.catalog()));
        AgentsServer {
            manager,
            tools,
            long_waits: None,
        }
    }

    /// At most `slots` waits longer than [`HTTP_SHORT_WAIT`] at once; one beyond them is
    /// shortened to it.
    pub(super) fn with_long_waits(mut self, slots: usize) -> Self {
        self.long_waits = Some(Arc::new(Semaphore::new(slots)));
        self
    }

    /// The wait to make for a `timeout` the call asked for, and the slot it holds: a long
    /// one takes a slot, or is shortened to [`HTTP_SHORT_WAIT`] when none is free
    /// (`shortened`).
    fn wait_slot(&self, timeout: Duration) -> (Duration, Option<OwnedSemaphorePermit>, bool) {
        let Some(slots) = &self.long_waits else {
            return (timeout, None, false);
        };
        if timeout <= HTTP_SHORT_WAIT {
            return (timeout, None, false);
        }
        match slots.clone().try_acquire_owned() {
            Ok(slot) => (timeout, Some(slot), false),
            Err(_) => (HTTP_SHORT_WAIT, None, true),
        }
    }

    async fn wait(
        &self,
        targets: Vec<String>,
        timeout: Duration,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        // The slot is held until the answer is made.
        let (timeout, _slot, shortened) = self.wait_slot(timeout);
        let mut waiter = match self.manager.wait(&targets, timeout) {
            Ok(waiter) => waiter,
            Err(e) => return call::failure(&e),
        };
        let token = context.meta.get_progress_token();
        let mut sent = 0u32;
        loop {
            let event = tokio::select! {
                biased;
                // The client gave up (cancelled on stdio, closed the stream on HTTP): nobody
                // reads what follows.
                () = context.ct.cancelled() => return call::success(serde_json::json!({})),
                event = waiter.next() => event,
            };
            match event {
                WaitEvent::Finished { timed_out, agents } => {
                    let mut answer = call::wait_json(timed_out, &agents);
                    if shortened && timed_out {
                        answer["note"] = serde_json::json!(call::shortened_wait_note());
                    }
                    return call::success(answer);
                }
                WaitEvent::Progress(steps) => {
                    let Some(token) = &token else { continue };
                    for line in steps.iter().map(|p| p.message()) {
                        sent += 1;
                        let param = ProgressNotificationParam::new(token.clone(), f64::from(sent))
                            .with_message(line);
                        if context.peer.notify_progress(param).await.is_err() {
                            tracing::debug!("progress notification not delivered");
                        }
                    }
                }
            }
        }
    }
}

impl ServerHandler for AgentsServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mcp-agents", env!("CARGO_PKG_VERSION")))
            .with_instructions(schema::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.tools.is_empty() {
            return Err(McpError::invalid_params(
                format!(
                    "tool not found: {} (this workspace defines no agents)",
                    request.name
                ),
                None,
            ));
        }
        let call = match call::parse_call(&request.name, request.arguments.as_ref()) {
            None => {
                return Err(McpError::invalid_params(
                    format!("tool not found: {}", request.name),
                    None,
                ));
            }
            Some(Err(e)) => return Ok(call::failure(&e).into()),
            Some(Ok(call)) => call,
        };
        let result = match call {
            Call::Spawn { name, task } => match self.manager.spawn(&name, &task) {
                Ok(accepted) => call::success(call::accepted_json(&accepted, false)),
                Err(e) => call::failure(&e),
            },
            Call::SendInput {
                target,
                message,
                interrupt,
            } => match self.manager.send_input(&target, &message, interrupt) {
                Ok(accepted) => call::success(call::accepted_json(&accepted, true)),
                Err(e) => call::failure(&e),
            },
            Call::Wait { targets, timeout } => self.wait(targets, timeout, &context).await,
        };
        Ok(result.into())
    }
}
