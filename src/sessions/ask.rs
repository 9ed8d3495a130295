//! The `ask_parent` tool (SPEC §4.5): served by the runtime itself, in process, next to the
//! run's child tools ([`WithParent`], a [`ToolBox`]), so the model is offered it like any
//! other tool while a call to it never reaches a child.
//!
//! A call parks the run: the question goes into the session's state (the record shows it,
//! every wait returns on it) with the activity `waiting_for_input`, and the call waits for
//! the first answer — `send_input`, or the manager's `answer_question` — or for the
//! definition's `ask_timeout_s`. The model loop makes the call alone, after the round's
//! other calls, and does not count the time it waits (`run::tool_round`). However the call
//! ends (answered, timed out, interrupted, stopped), the question leaves the session's state
//! ([`Parked`]'s drop), and an answer that came just as the call was cut short is queued as
//! input rather than lost.

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::question::{ParentAnswer, Pending, Question, answer_for_model, unanswered};
use super::session::{Session, SessionState};
use crate::definition::AskParent;
use crate::limits::{ASK_OPTION_CHARS, ASK_OPTIONS, ASK_QUESTION_CHARS};
use crate::redact::Secrets;
use crate::run::Activity;
use crate::toolbox::{BoxFuture, ToolBox, ToolDescriptor, ToolResult, ToolSpec};

/// The tool's name, as the model calls it.
pub(super) const ASK_PARENT: &str = "ask_parent";

/// A run's tools with `ask_parent` after them: calls to the others go to `tools`.
pub(super) struct WithParent<'a> {
    tools: &'a dyn ToolBox,
    descriptors: Vec<ToolDescriptor>,
    session: &'a Session,
    ask: AskParent,
    secrets: &'a Secrets,
}

impl<'a> WithParent<'a> {
    pub(super) fn new(
        tools: &'a dyn ToolBox,
        session: &'a Session,
        ask: AskParent,
        secrets: &'a Secrets,
    ) -> Self {
        let mut descriptors = tools.tools().to_vec();
        descriptors.push(descriptor(ask));
        WithParent {
            tools,
            descriptors,
            session,
            ask,
            secrets,
        }
    }

    /// Parks the run on the question `arguments` ask until an answer or the timeout.
    async fn ask(&self, arguments: Value) -> ToolResult {
        let (text, options) = match read_question(&arguments) {
            Ok(question) => question,
            Err(why) => return ToolResult::text(why, true),
        };
        let hide = |text: &str| self.secrets.redact(text).into_owned();
        let mut parked = park(
            self.session,
            hide(&text),
            options.iter().map(|o| hide(o)).collect(),
            self.ask,
        );
        let content = match tokio::time::timeout(self.ask.timeout, parked.answer()).await {
            Ok(answer) => answer_for_model(answer),
            Err(_) => unanswered(self.ask.timeout),
        };
        ToolResult::text(content, false)
    }
}

impl ToolBox for WithParent<'_> {
    fn tools(&self) -> &[ToolDescriptor] {
        &self.descriptors
    }

    fn call(&self, index: usize, arguments: Value) -> BoxFuture<'_, ToolResult> {
        if index < self.tools.tools().len() {
            self.tools.call(index, arguments)
        } else {
            Box::pin(self.ask(arguments))
        }
    }
}

/// `ask_parent` as the model is offered it.
fn descriptor(ask: AskParent) -> ToolDescriptor {
    let schema = json!({
        "type": "object",
        "properties": {
            "question": {
                "type": "string", "minLength": 1, "maxLength": ASK_QUESTION_CHARS,
                "description": "The question, self-contained: what you need to know and why."
            },
            "options": {
                "type": "array", "maxItems": ASK_OPTIONS,
                "items": {"type": "string", "minLength": 1, "maxLength": ASK_OPTION_CHARS},
                "description": "The answers to choose from, when it is a choice (short, \
                                most likely first)."
            }
        },
        "required": ["question"],
        "additionalProperties": false
    });
    let spec = ToolSpec {
        name: ASK_PARENT.to_owned(),
        description: format!(
            "Ask whoever gave you this task a question, when you cannot go on well without \
             the answer: a choice only they can make, or something your tools cannot find \
             out. Your work pauses until the answer comes, which is this tool's result (at \
             most {} s; if none comes, decide for yourself and say what you assumed). Do \
             not ask what you can find out yourself.",
            ask.timeout.as_secs()
        ),
        input_schema: schema.clone(),
    };
    ToolDescriptor {
        spec,
        original_schema: schema,
        server: "parent".to_owned(),
        tool: ASK_PARENT.to_owned(),
        timeout: ask.timeout,
        parks: true,
    }
}

/// The question and its options, trimmed; a message for the model when they are not ones
/// (the arguments already passed the schema; this holds even if they had not).
fn read_question(arguments: &Value) -> Result<(String, Vec<String>), String> {
    let text = arguments
        .get("question")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or("`question` must be a nonempty string")?;
    if text.chars().count() > ASK_QUESTION_CHARS {
        return Err(format!(
            "`question` is longer than {ASK_QUESTION_CHARS} characters; ask it shorter"
        ));
    }
    let options = match arguments.get("options") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() <= ASK_OPTIONS => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::trim)
                    .filter(|o| !o.is_empty() && o.chars().count() <= ASK_OPTION_CHARS)
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        format!(
                            "each of `options` must be a nonempty string of at most \
                             {ASK_OPTION_CHARS} characters"
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(format!(
                "`options` must be a list of at most {ASK_OPTIONS} short strings"
            ));
        }
    };
    Ok((text.to_owned(), options))
}

/// A question in the session's state, and the answer it waits for. Dropped, it takes the
/// question out of the state (if it is still there): whatever ended the call, the record
/// stops showing it.
pub(super) struct Parked<'a> {
    session: &'a Session,
    id: u64,
    answer: Option<oneshot::Receiver<ParentAnswer>>,
}

/// Puts the question in `session`'s state, with the activity `waiting_for_input` in the
/// same step, and wakes its waiters.
pub(super) fn park(
    session: &Session,
    text: String,
    options: Vec<String>,
    ask: AskParent,
) -> Parked<'_> {
    let (sender, receiver) = oneshot::channel();
    let mut state = session.lock();
    state.questions_asked += 1;
    let id = state.questions_asked;
    state.question = Some(Pending {
        question: Question { id, text, options },
        answer: sender,
    });
    state.set_activity(Activity::waiting_for_input(ask.timeout), session.spawned_at);
    drop(state);
    session.notify();
    Parked {
        session,
        id,
        answer: Some(receiver),
    }
}

impl Parked<'_> {
    /// The answer; never, once nobody can answer (the call ends another way).
    pub(super) async fn answer(&mut self) -> ParentAnswer {
        let Some(receiver) = self.answer.as_mut() else {
            return std::future::pending().await;
        };
        match receiver.await {
            Ok(answer) => {
                self.answer = None;
                answer
            }
            Err(_) => std::future::pending().await,
        }
    }
}

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        let mut state = self.session.lock();
        if state
            .question
            .as_ref()
            .is_some_and(|pending| pending.question.id == self.id)
        {
            state.question = None;
        }
        // An answer that came as the call was cut short (a timeout, an interrupt) is input.
        if let Some(Ok(ParentAnswer::Text(text))) = self.answer.as_mut().map(|r| r.try_recv()) {
            state.queue.push_back(text);
        }
        drop(state);
        self.session.notify();
    }
}

/// Answers `state`'s pending question with `answer`, if there is one (and it is question
/// `id`, when given): the first answer takes it, and the record stops showing it at once.
/// Returns the question answered.
pub(super) fn answer_pending(
    state: &mut SessionState,
    id: Option<u64>,
    answer: ParentAnswer,
) -> Option<Question> {
    let pending = state
        .question
        .take_if(|pending| id.is_none_or(|id| pending.question.id == id))?;
    // The call is waiting on the other end; if it ended in between, its drop queues a text.
    let _ = pending.answer.send(answer);
    Some(pending.question)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use serde_json::json;
    use tokio::time::Instant;

    use super::*;
    use crate::error::ErrorCode;
    use crate::run::{INTERRUPTED_RESULT, Phase, STOPPED_RESULT};
    use crate::sessions::lifecycle::resume;
    use crate::sessions::question::DECLINED;
    use crate::sessions::run_harness::{Harness, failure};
    use crate::sessions::session::Status;
    use crate::sessions::stop::{request_stop, stopped_message, until_stopped};
    use crate::testkit::Step;

    const TEN_MINUTES: Duration = Duration::from_secs(600);

    fn ask(question: &str) -> Step {
        Step::tool_call(ASK_PARENT, json!({"question": question}))
    }

    /// The tool results the last request carried, as the model reads them.
    fn results(h: &Harness) -> Vec<String> {
        let requests = h.mock.requests();
        requests.last().unwrap().body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["type"] == "function_call_output")
            .map(|item| item["output"].as_str().unwrap().to_owned())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_question_parks_the_run_and_the_answer_is_the_tools_result() {
        let question = Step::tool_call(
            ASK_PARENT,
            json!({"question": "  Which file?  ", "options": ["a.py", "b.py"]}),
        );
        let h = Harness::asking(TEN_MINUTES, None, vec![question, Step::text("Done.")]).await;
        h.start();
        let asked = h.asked().await;
        assert_eq!(asked.status, Status::Running);
        let shown = asked.question.clone().unwrap();
        assert_eq!((shown.id, shown.text.as_str()), (1, "Which file?"));
        assert_eq!(shown.options, ["a.py", "b.py"]);
        let (activity, _) = asked.activity.unwrap();
        assert_eq!(activity.phase, Phase::WaitingForInput);
        assert_eq!(activity.summary, "Waiting for the parent's answer");
        assert_eq!(activity.timeout, Some(TEN_MINUTES));
        assert!(
            h.mock.requests()[0].body["tools"]
                .to_string()
                .contains(ASK_PARENT)
        );

        let answer = ParentAnswer::Text("b.py, the one with the bug".into());
        let answered = answer_pending(&mut h.session.lock(), Some(1), answer);
        assert_eq!(answered, Some(shown));
        assert!(h.session.snapshot().question.is_none(), "gone at once");
        let done = h.terminal().await;
        assert_eq!(done.status, Status::Completed("Done.".into()));
        assert_eq!(results(&h), ["b.py, the one with the bug"]);
        assert_eq!(done.totals.tool_calls, 0, "asking is no child tool call");
        assert!(done.tools_used.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_question_times_out_and_the_run_goes_on() {
        let steps = vec![ask("Which file?"), Step::text("I assumed a.py.")];
        let h = Harness::asking(Duration::from_secs(30), None, steps).await;
        let began = Instant::now();
        h.start();
        h.asked().await;
        let done = h.terminal().await;
        assert_eq!(done.status, Status::Completed("I assumed a.py.".into()));
        assert_eq!(results(&h), [unanswered(Duration::from_secs(30))]);
        assert!(results(&h)[0].contains("No answer came within 30 s"));
        assert_eq!(began.elapsed(), Duration::from_secs(30));
        // A late answer to it is refused.
        let late = ParentAnswer::Text("a.py".into());
        assert_eq!(answer_pending(&mut h.session.lock(), Some(1), late), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_declined_question_tells_the_agent_to_decide_for_itself() {
        let h = Harness::asking(TEN_MINUTES, None, vec![ask("Which?"), Step::text("Ok.")]).await;
        h.start();
        h.asked().await;
        // An answer to another question is refused, and leaves this one pending.
        let other = answer_pending(&mut h.session.lock(), Some(2), ParentAnswer::Declined);
        assert_eq!(other, None);
        assert!(h.session.snapshot().question.is_some());
        answer_pending(&mut h.session.lock(), None, ParentAnswer::Declined).unwrap();
        h.terminal().await;
        assert_eq!(results(&h), [DECLINED]);
    }

    /// `max_run_seconds` 10, a question that waits 60 s unanswered, then a call that never
    /// answers: the run ends 70 s after it began, 10 s of its own.
    #[tokio::test(start_paused = true)]
    async fn time_waiting_for_the_parent_is_not_counted_against_max_run_seconds() {
        let call = Step::tool_call("test__wait", json!({}));
        let steps = vec![ask("Which?"), call];
        let h = Harness::asking(Duration::from_secs(60), Some(10), steps).await;
        h.start();
        let done = h.terminal().await;
        let error = &failure(&done.status).error;
        assert_eq!(error.code, ErrorCode::BudgetExceeded, "{error:?}");
        assert!(
            error.message.contains("max_run_seconds of 10 s"),
            "{error:?}"
        );
        assert_eq!(done.total_elapsed, Duration::from_secs(70), "wall time");
        assert_eq!(h.session.lock().parked, Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn an_ask_with_other_calls_in_its_round_waits_until_they_have_answered() {
        let round = Step::tool_calls(vec![
            (ASK_PARENT, json!({"question": "Go on?"})),
            ("test__echo", json!({})),
        ]);
        let h = Harness::asking(TEN_MINUTES, None, vec![round, Step::text("Done.")]).await;
        h.start();
        h.asked().await;
        assert_eq!(
            h.log().echoed.load(Ordering::SeqCst),
            1,
            "no child call in flight"
        );
        answer_pending(
            &mut h.session.lock(),
            None,
            ParentAnswer::Text("Yes.".into()),
        )
        .unwrap();
        h.terminal().await;
        assert_eq!(results(&h), ["Yes.", "echoed"], "in the order of the calls");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_while_waiting_ends_the_run_with_the_question_answered_as_stopped() {
        let steps = vec![ask("Which?"), Step::text("Resumed.")];
        let h = Harness::asking(TEN_MINUTES, None, steps).await;
        h.start();
        h.asked().await;
        let run = request_stop(&mut h.session.lock(), stopped_message(None));
        let record = until_stopped(&h.session, run).await.unwrap();
        assert_eq!(failure(&record.status).error.code, ErrorCode::Cancelled);
        assert!(record.question.is_none());
        assert!(h.session.lock().question.is_none());
        // The history stays valid: a resume sends the call with its answer.
        h.tasks_ended().await;
        let permit = h.permits.clone().try_acquire_owned().unwrap();
        {
            let mut state = h.session.lock();
            state.queue.push_back("Go on.".into());
            resume(&mut state, permit, &h.shutdown, h.session.spawned_at);
        }
        h.start();
        h.terminal().await;
        assert_eq!(results(&h).len(), 1);
        assert!(results(&h)[0].contains(STOPPED_RESULT), "{:?}", results(&h));
    }

    #[tokio::test(start_paused = true)]
    async fn an_interrupt_while_waiting_answers_the_question_as_interrupted_and_goes_on() {
        let h = Harness::asking(TEN_MINUTES, None, vec![ask("Which?"), Step::text("On.")]).await;
        h.start();
        h.asked().await;
        {
            // What `send_input` with `interrupt` does to a session with a question.
            let mut state = h.session.lock();
            state.queue.push_back("Forget it, do b.".into());
            state.question = None;
            state.interrupt.send_modify(|n| *n += 1);
        }
        let done = h.terminal().await;
        assert_eq!(done.status, Status::Completed("On.".into()));
        assert_eq!(results(&h).len(), 1);
        assert!(
            results(&h)[0].contains(INTERRUPTED_RESULT),
            "{:?}",
            results(&h)
        );
        let body = h.mock.requests().last().unwrap().body.to_string();
        assert!(body.contains("Forget it, do b."), "{body}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_that_comes_as_the_call_is_cut_short_is_queued_not_lost() {
        let h = Harness::asking(TEN_MINUTES, None, vec![]).await;
        let ask = AskParent {
            timeout: TEN_MINUTES,
        };
        let parked = park(&h.session, "Which?".into(), Vec::new(), ask);
        answer_pending(&mut h.session.lock(), None, ParentAnswer::Text("b".into())).unwrap();
        drop(parked);
        let state = h.session.lock();
        assert!(state.question.is_none());
        assert_eq!(state.queue.back().map(String::as_str), Some("b"));
    }

    #[test]
    fn the_arguments_are_checked_again_and_trimmed() {
        let read = |v: Value| read_question(&v);
        assert_eq!(
            read(json!({"question": " Why? ", "options": [" a ", "b"]})),
            Ok(("Why?".to_owned(), vec!["a".to_owned(), "b".to_owned()]))
        );
        assert!(read(json!({"question": "  "})).is_err());
        assert!(read(json!({"question": "x".repeat(ASK_QUESTION_CHARS + 1)})).is_err());
        let many: Vec<String> = (0..=ASK_OPTIONS).map(|i| i.to_string()).collect();
        assert!(read(json!({"question": "Q", "options": many})).is_err());
        assert!(read(json!({"question": "Q", "options": [""]})).is_err());
        assert!(read(json!({"question": "Q", "options": "a"})).is_err());
    }
}
