//! The `rmcp` server handler. Cheap to clone: stateless HTTP builds one per request, so all
//! state lives in the shared [`SessionManager`] (and, over HTTP, the shared slots for long
//! waits).
//!
//! It knows which client it serves, per request: the `clientInfo` of `initialize`, or under
//! MCP 2026-07-28 the client information every request carries in `_meta` (`rmcp`'s
//! `RequestContext::client_info` reads both). `wait_agent`'s description advises that
//! client's longest wait (`crate::clients`), and a rejection that the client's configuration
//! fixes says how in that client's terms.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams,
    GetTaskResult, Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::call::{self, Call};
use super::schema;
use super::tasks::{self, Era};
use crate::clients::{self, KnownClient, Transport};
use crate::error::{AgentError, ErrorCode};
use crate::limits::HTTP_SHORT_WAIT;
use crate::sessions::{Accepted, ReturnWhen, SessionManager, WaitEvent};

/// What the server offers beyond the three tools, as the person who starts it chose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeOptions {
    /// Serve the MCP tasks extension for `spawn_agent` (`--mcp-tasks`, SPEC §4.4).
    pub mcp_tasks: bool,
}

#[derive(Clone)]
pub(super) struct AgentsServer {
    manager: Arc<SessionManager>,
    transport: Transport,
    options: ServeOptions,
    /// `spawn_agent` and `send_input`, built once; `None` when no agent may be started by
    /// the parent model (an empty catalog, or agents all started by hand only): no tools.
    fixed_tools: Option<Arc<(Tool, Tool)>>,
    /// Over HTTP: the waits longer than [`HTTP_SHORT_WAIT`] that may run at once, each
    /// holding a connection (SPEC §10). Stdio has one client, and no such bound.
    long_waits: Option<Arc<Semaphore>>,
}

impl AgentsServer {
    /// The handler for `manager`'s catalog served over `transport`. The agents' marks in
    /// `spawn_agent`'s description are read here, once: a key unset now is unset for the
    /// life of the process (a client passes its servers a fixed environment).
    pub(super) fn new(
        manager: Arc<SessionManager>,
        transport: Transport,
        options: ServeOptions,
    ) -> Self {
        let catalog = manager.catalog();
        // Agents only a person may start are left out; with none left there are no tools.
        let fixed_tools = catalog.offered().next().is_some().then(|| {
            let agents: Vec<_> = catalog
                .offered()
                .map(|agent| {
                    let marks = schema::agent_marks(agent, manager.missing_key(agent));
                    (&**agent, marks)
                })
                .collect();
            Arc::new((
                schema::spawn_agent_tool(&agents, options.mcp_tasks),
                schema::send_input_tool(),
            ))
        });
        AgentsServer {
            manager,
            transport,
            options,
            fixed_tools,
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

    /// The client a request comes from, when the table knows it.
    fn client(context: &RequestContext<RoleServer>) -> Option<&'static KnownClient> {
        let info = context.client_info()?;
        clients::identify(&info.name)
    }

    /// Whether `context`'s request may be answered with a task: the server serves the
    /// extension and the request declares it (its own `_meta` capabilities under 2026-07-28,
    /// `initialize`'s before).
    fn as_task(&self, context: &RequestContext<RoleServer>) -> bool {
        self.options.mcp_tasks
            && context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
    }

    /// `spawn_agent`: its result carries the agent's note; a name whose file was rejected
    /// for want of a default model says how to give one in this client's configuration.
    /// With `as_task`, a started agent is answered as a task (SPEC §4.4); a refusal is the
    /// same either way.
    fn spawn(
        &self,
        name: &str,
        task: &str,
        client: Option<&KnownClient>,
        as_task: bool,
    ) -> CallToolResponse {
        let accepted = match self.start(name, task, client) {
            Ok(accepted) => accepted,
            Err(refusal) => return call::failure(&refusal).into(),
        };
        if as_task && let Ok(first) = self.manager.first_run(&accepted.agent_id) {
            return CallToolResponse::Task(tasks::created(&accepted.agent_id, &first));
        }
        let note = self
            .manager
            .catalog()
            .get(&accepted.name)
            .and_then(|agent| agent.offer_note());
        call::success(call::spawned_json(&accepted, note)).into()
    }

    /// Starts agent `name` on `task`, or the refusal that answers the call.
    fn start(
        &self,
        name: &str,
        task: &str,
        client: Option<&KnownClient>,
    ) -> Result<Accepted, AgentError> {
        if let Some(e) = call::not_offered(self.manager.catalog(), name) {
            return Err(e);
        }
        self.manager.spawn(name, task).map_err(|e| {
            if e.code == ErrorCode::UnknownAgent && self.manager.catalog().wants_default_model(name)
            {
                let fix = clients::default_model_fix(client);
                AgentError::new(e.code, format!("{}. To set it: {fix}", e.message))
            } else {
                e
            }
        })
    }

    async fn wait(
        &self,
        targets: Vec<String>,
        timeout: Duration,
        return_when: ReturnWhen,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        // The slot is held until the answer is made.
        let (timeout, _slot, shortened) = self.wait_slot(timeout);
        let mut waiter = match self.manager.wait(&targets, timeout, return_when) {
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
                    let note = (shortened && timed_out).then(call::shortened_wait_note);
                    let spend = Some(self.manager.spend().report());
                    return call::wait_result(timed_out, &agents, spend, note);
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
        let capabilities = if self.options.mcp_tasks {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("mcp-agents", env!("CARGO_PKG_VERSION")))
            .with_instructions(schema::instructions(self.options.mcp_tasks))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let Some(fixed) = &self.fixed_tools else {
            return Ok(ListToolsResult::with_all_items(Vec::new()));
        };
        let advice = clients::wait_advice(Self::client(&context), self.transport);
        let (spawn, send) = fixed.as_ref();
        Ok(ListToolsResult::with_all_items(vec![
            spawn.clone(),
            send.clone(),
            schema::wait_agent_tool(&advice),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.fixed_tools.is_none() {
            let why = if self.manager.catalog().agents().is_empty() {
                "this workspace defines no agents"
            } else {
                "this workspace's agents are all started by hand only"
            };
            return Err(McpError::invalid_params(
                format!("tool not found: {} ({why})", request.name),
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
            Call::Spawn { name, task } => {
                let client = Self::client(&context);
                return Ok(self.spawn(&name, &task, client, self.as_task(&context)));
            }
            Call::SendInput {
                target,
                message,
                interrupt,
            } => match self.manager.send_input(&target, &message, interrupt).await {
                Ok(accepted) => call::success(call::queued_json(&accepted, interrupt)),
                Err(e) => call::failure(&e),
            },
            Call::Stop { target, reason } => {
                match self.manager.stop(&target, reason.as_deref()).await {
                    Ok(record) => call::success(call::stopped_json(&record)),
                    Err(e) => call::failure(&e),
                }
            }
            Call::Wait {
                targets,
                timeout,
                return_when,
            } => self.wait(targets, timeout, return_when, &context).await,
        };
        Ok(result.into())
    }

    // The tasks extension (SPEC §4.4). `rmcp` answers these with -32601 unless `get_info`
    // declares the extension, and with -32021 unless the request does.

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let era = if modern { Era::Modern } else { Era::Legacy };
        tasks::get(&self.manager, &request.task_id, era)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        tasks::update(&self.manager, &request)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        tasks::cancel(&self.manager, &request.task_id).await
    }
}
