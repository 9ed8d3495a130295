//! Waiting on sessions (SPEC §4.3): an event wait over several targets under one deadline,
//! which also says what each target is doing as it goes, for progress notifications and
//! the terminal's activity lines.
//!
//! A [`Waiter`] sleeps until a target changes, the deadline passes or the server stops;
//! no polling. Its first event, when any target still runs, is each running target's
//! current activity, so a client shows what is happening from the first moment. After
//! that it reports every activity transition (each one, even several that happened while
//! it slept, up to the history a session keeps) and every target that ends while others
//! still run.
//!
//! A target that asks its parent a question (SPEC §4.5) ends the wait at once, whatever
//! `return_when` says, and a wait that begins while a question is pending returns at once
//! too: the question is reported first ([`Step::Asked`]), then the wait finishes.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::question::Question;
use super::session::{Session, Snapshot, Status, short_id};
use crate::run::Activity;

/// When a wait returns (SPEC §4.3 `return_when`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReturnWhen {
    /// Once every target is terminal.
    #[default]
    All,
    /// As soon as one target is terminal.
    Any,
}

impl ReturnWhen {
    pub fn as_str(self) -> &'static str {
        match self {
            ReturnWhen::All => "all",
            ReturnWhen::Any => "any",
        }
    }

    /// Whether a wait over targets in these states is over; a wait over none is.
    fn met(self, snapshots: &[Snapshot]) -> bool {
        let mut statuses = snapshots.iter().map(|s| s.status.is_terminal());
        match self {
            ReturnWhen::All => statuses.all(|terminal| terminal),
            ReturnWhen::Any => snapshots.is_empty() || statuses.any(|terminal| terminal),
        }
    }
}

/// An ongoing wait.
pub struct Waiter {
    targets: Vec<Target>,
    deadline: Instant,
    return_when: ReturnWhen,
    /// The server is stopping: answer now rather than hold the transport open.
    shutdown: CancellationToken,
    /// The current activities have been reported.
    started: bool,
    /// Questions up to this id are being answered elsewhere (`mcp-agents run` asked the
    /// person): they end no wait.
    handled: u64,
}

struct Target {
    session: Arc<Session>,
    changes: watch::Receiver<u64>,
    /// The last transition reported.
    seen: u64,
    /// Its end has been reported.
    ended: bool,
    /// The last question reported (its id).
    asked: u64,
}

impl Target {
    /// A question pending that ends the wait: one this waiter was not told is handled.
    fn asks(&self, snapshot: &Snapshot, handled: u64) -> bool {
        snapshot.question.as_ref().is_some_and(|q| q.id > handled)
    }
}

/// What a waiter has to say next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitEvent {
    /// Targets moved on, in the order it happened for each.
    Progress(Vec<Progress>),
    /// Every target is terminal (with [`ReturnWhen::Any`]: one is), or the deadline passed.
    Finished {
        /// The deadline passed first: with [`ReturnWhen::All`], some target still runs;
        /// with [`ReturnWhen::Any`], none has ended.
        timed_out: bool,
        agents: Vec<Snapshot>,
    },
}

/// One thing a target did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub agent_id: String,
    pub name: String,
    pub step: Step,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// It began `activity`, `at` after its spawn; `seq` numbers its transitions.
    Activity {
        seq: u64,
        activity: Activity,
        at: Duration,
    },
    /// It reached a terminal state.
    Ended(Status),
    /// It asked its parent this question and waits for the answer (SPEC §4.5).
    Asked(Question),
}

impl Progress {
    /// `<name> <short agent_id>: <summary>`, the message of a progress notification.
    pub fn message(&self) -> String {
        let what = match &self.step {
            Step::Activity { activity, .. } => activity.summary.clone(),
            Step::Ended(Status::Completed(_)) => "completed".to_owned(),
            Step::Ended(Status::Failed(f)) => format!("failed ({})", f.error.code),
            Step::Ended(Status::Running) => "running".to_owned(),
            Step::Asked(question) => format!("asks: {}", question.text),
        };
        format!("{} {}: {what}", self.name, short_id(&self.agent_id))
    }
}

impl Waiter {
    pub(crate) fn new(
        sessions: Vec<Arc<Session>>,
        deadline: Instant,
        return_when: ReturnWhen,
        shutdown: CancellationToken,
    ) -> Self {
        let targets = sessions
            .into_iter()
            .map(|session| Target {
                changes: session.subscribe(),
                seen: 0,
                ended: false,
                asked: 0,
                session,
            })
            .collect();
        Waiter {
            targets,
            deadline,
            return_when,
            shutdown,
            started: false,
            handled: 0,
        }
    }

    /// This waiter neither reports nor returns on the questions up to `question` (the
    /// caller is answering them), only on later ones.
    pub fn handled(mut self, question: u64) -> Self {
        self.handled = question;
        for target in &mut self.targets {
            target.asked = target.asked.max(question);
        }
        self
    }

    /// Waits for the next transition of a target, or the end.
    pub async fn next(&mut self) -> WaitEvent {
        loop {
            for target in &mut self.targets {
                target.changes.borrow_and_update();
            }
            let snapshots: Vec<Snapshot> =
                self.targets.iter().map(|t| t.session.snapshot()).collect();
            let asked = self.questions(&snapshots);
            if !asked.is_empty() {
                return WaitEvent::Progress(asked);
            }
            let met = self.return_when.met(&snapshots);
            let asking =
                (self.targets.iter().zip(&snapshots)).any(|(t, s)| t.asks(s, self.handled));
            if met || asking || Instant::now() >= self.deadline || self.shutdown.is_cancelled() {
                return WaitEvent::Finished {
                    timed_out: !met && !asking,
                    agents: snapshots,
                };
            }
            let progress = if self.started {
                self.transitions(&snapshots)
            } else {
                self.started = true;
                self.current(&snapshots)
            };
            if !progress.is_empty() {
                return WaitEvent::Progress(progress);
            }
            // Not empty: with no targets, `met` above is true and we returned.
            let changed = futures_util::future::select_all(
                self.targets
                    .iter_mut()
                    .map(|t| Box::pin(t.changes.changed())),
            );
            tokio::select! {
                _ = changed => {}
                () = tokio::time::sleep_until(self.deadline) => {}
                () = self.shutdown.cancelled() => {}
            }
        }
    }

    /// The questions pending that this wait has not reported yet.
    fn questions(&mut self, snapshots: &[Snapshot]) -> Vec<Progress> {
        let mut progress = Vec::new();
        for (target, snapshot) in self.targets.iter_mut().zip(snapshots) {
            if let Some(question) = &snapshot.question
                && question.id > target.asked
            {
                target.asked = question.id;
                progress.push(Progress {
                    agent_id: snapshot.agent_id.clone(),
                    name: snapshot.name.clone(),
                    step: Step::Asked(question.clone()),
                });
            }
        }
        progress
    }

    /// What each running target is doing now; the targets that are already terminal were
    /// terminal before the wait and are not news.
    fn current(&mut self, snapshots: &[Snapshot]) -> Vec<Progress> {
        let mut progress = Vec::new();
        for (target, snapshot) in self.targets.iter_mut().zip(snapshots) {
            let (recorded, newest) = target.session.transitions_after(0);
            target.seen = newest;
            if snapshot.status.is_terminal() {
                target.ended = true;
                continue;
            }
            if let Some(latest) = recorded.into_iter().last() {
                progress.push(Progress {
                    agent_id: snapshot.agent_id.clone(),
                    name: snapshot.name.clone(),
                    step: Step::Activity {
                        seq: latest.seq,
                        activity: latest.activity,
                        at: latest.at,
                    },
                });
            }
        }
        progress
    }

    /// The transitions since the last report, and the targets that ended since.
    fn transitions(&mut self, snapshots: &[Snapshot]) -> Vec<Progress> {
        let mut progress = Vec::new();
        for (target, snapshot) in self.targets.iter_mut().zip(snapshots) {
            let (recorded, newest) = target.session.transitions_after(target.seen);
            target.seen = newest;
            for transition in recorded {
                progress.push(Progress {
                    agent_id: snapshot.agent_id.clone(),
                    name: snapshot.name.clone(),
                    step: Step::Activity {
                        seq: transition.seq,
                        activity: transition.activity,
                        at: transition.at,
                    },
                });
            }
            if snapshot.status.is_terminal() && !target.ended {
                target.ended = true;
                progress.push(Progress {
                    agent_id: snapshot.agent_id.clone(),
                    name: snapshot.name.clone(),
                    step: Step::Ended(snapshot.status.clone()),
                });
            } else if !snapshot.status.is_terminal() {
                // Resumed after it ended: its next end is news again.
                target.ended = false;
            }
        }
        progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunObserver;
    use crate::testkit::mock_definition;
    use std::time::Duration;

    fn session() -> Arc<Session> {
        let definition = Arc::new(mock_definition(
            crate::definition::WireApi::Responses,
            url::Url::parse("http://127.0.0.1:9/v1").unwrap(),
        ));
        Arc::new(Session::new(
            "a".repeat(32),
            definition,
            String::new(),
            "t".into(),
            1,
        ))
    }

    fn activities(event: WaitEvent) -> Vec<String> {
        match event {
            WaitEvent::Progress(steps) => steps.iter().map(Progress::message).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn the_first_event_is_the_current_activity_then_every_transition_once() {
        let s = session();
        let mut waiter = Waiter::new(
            vec![s.clone()],
            Instant::now() + Duration::from_secs(60),
            ReturnWhen::All,
            CancellationToken::new(),
        );
        assert_eq!(
            activities(waiter.next().await),
            ["tester aaaaaaaa: Starting"]
        );
        // Three transitions before the waiter looks again: each is reported, in order.
        s.activity(Activity::provider_request("p", "m", 1, 3));
        s.activity(Activity::tool_call("srv", "t", Duration::from_secs(60)));
        s.activity(Activity::provider_request("p", "m", 2, 3));
        assert_eq!(
            activities(waiter.next().await),
            [
                "tester aaaaaaaa: Waiting for m (turn 1 of 3)",
                "tester aaaaaaaa: Calling srv.t",
                "tester aaaaaaaa: Waiting for m (turn 2 of 3)"
            ]
        );
    }

    /// Ends `session` at `at` after now, as the manager does: terminal, then the waiters
    /// woken.
    fn end_after(session: Arc<Session>, at: Duration, text: &'static str) {
        tokio::spawn(async move {
            tokio::time::sleep(at).await;
            let mut state = session.lock();
            state.status = Status::Completed(text.into());
            state.ended_at = Some(Instant::now());
            drop(state);
            session.notify();
        });
    }

    fn named(id: char) -> Arc<Session> {
        let definition = Arc::new(mock_definition(
            crate::definition::WireApi::Responses,
            url::Url::parse("http://127.0.0.1:9/v1").unwrap(),
        ));
        Arc::new(Session::new(
            id.to_string().repeat(32),
            definition,
            String::new(),
            "t".into(),
            1,
        ))
    }

    async fn finished(waiter: &mut Waiter) -> (bool, Vec<Snapshot>) {
        loop {
            if let WaitEvent::Finished { timed_out, agents } = waiter.next().await {
                return (timed_out, agents);
            }
        }
    }

    /// SPEC §4.5: a question ends a wait at once, whatever `return_when` says, reported
    /// first as its own step; a wait that begins while it is pending returns at once too.
    #[tokio::test(start_paused = true)]
    async fn a_question_ends_every_wait_at_once_and_is_reported_first() {
        let (asking, busy) = (named('e'), named('f'));
        let start = Instant::now();
        let ask = crate::definition::AskParent {
            timeout: Duration::from_secs(600),
        };
        let mut waiter = Waiter::new(
            vec![busy.clone(), asking.clone()],
            start + Duration::from_secs(60),
            ReturnWhen::All,
            CancellationToken::new(),
        );
        assert_eq!(
            activities(waiter.next().await).len(),
            2,
            "the current activities"
        );
        let asker = asking.clone();
        let parking = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(3)).await;
            let parked = super::super::ask::park(&asker, "Which one?".into(), vec![], ask);
            std::mem::forget(parked);
        });
        let mut steps = Vec::new();
        let agents = loop {
            match waiter.next().await {
                WaitEvent::Progress(progress) => steps.extend(progress),
                WaitEvent::Finished { timed_out, agents } => {
                    assert!(!timed_out, "a question is no timeout");
                    break agents;
                }
            }
        };
        parking.await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        let asked: Vec<String> = steps
            .iter()
            .filter(|p| matches!(p.step, Step::Asked(_)))
            .map(Progress::message)
            .collect();
        assert_eq!(asked, ["tester eeeeeeee: asks: Which one?"]);
        assert_eq!(agents[1].question.as_ref().unwrap().text, "Which one?");
        assert_eq!(agents[0].status, Status::Running);

        let mut again = Waiter::new(
            vec![busy, asking],
            Instant::now() + Duration::from_secs(60),
            ReturnWhen::Any,
            CancellationToken::new(),
        );
        assert_eq!(
            activities(again.next().await),
            ["tester eeeeeeee: asks: Which one?"]
        );
        let (timed_out, _) = finished(&mut again).await;
        assert!(!timed_out);
        assert_eq!(start.elapsed(), Duration::from_secs(3), "at once");
    }

    /// SPEC §4.3 `return_when`: with targets ending at 1 s and 5 s, `any` returns at the first
    /// end and `all` at the last, each on the event itself (the clock is paused: a poll of
    /// any period would show as time past the end).
    #[tokio::test(start_paused = true)]
    async fn any_returns_at_the_first_end_and_all_at_the_last() {
        for (return_when, returns_at, finished_count) in [
            (ReturnWhen::Any, Duration::from_secs(1), 1),
            (ReturnWhen::All, Duration::from_secs(5), 2),
        ] {
            let (fast, slow) = (named('a'), named('b'));
            let start = Instant::now();
            end_after(fast.clone(), Duration::from_secs(1), "fast");
            end_after(slow.clone(), Duration::from_secs(5), "slow");
            let mut waiter = Waiter::new(
                vec![slow, fast],
                start + Duration::from_secs(60),
                return_when,
                CancellationToken::new(),
            );
            let (timed_out, agents) = finished(&mut waiter).await;
            let waited = start.elapsed();
            assert!(
                waited >= returns_at && waited <= returns_at + Duration::from_millis(5),
                "{return_when:?} returned after {waited:?}"
            );
            assert!(!timed_out, "{return_when:?}: the condition was met");
            assert_eq!(
                agents.iter().filter(|a| a.status.is_terminal()).count(),
                finished_count
            );
            assert_eq!(agents[1].status, Status::Completed("fast".into()));
            assert_eq!(agents.len(), 2, "every target's record, in the order asked");
        }
    }

    /// With `any`, a target that has already ended returns the wait at once; with none
    /// ending, the timeout is reported as such.
    #[tokio::test(start_paused = true)]
    async fn any_is_met_by_an_ended_target_and_times_out_when_none_ends() {
        let (done, running) = (named('c'), named('d'));
        end_after(done.clone(), Duration::ZERO, "done");
        tokio::time::sleep(Duration::from_millis(1)).await;
        let start = Instant::now();
        let mut waiter = Waiter::new(
            vec![running.clone(), done],
            start + Duration::from_secs(30),
            ReturnWhen::Any,
            CancellationToken::new(),
        );
        let (timed_out, _) = finished(&mut waiter).await;
        assert!(!timed_out);
        assert_eq!(start.elapsed(), Duration::ZERO);
        let mut waiter = Waiter::new(
            vec![running],
            start + Duration::from_secs(30),
            ReturnWhen::Any,
            CancellationToken::new(),
        );
        let (timed_out, agents) = finished(&mut waiter).await;
        assert!(timed_out, "no target ended within the timeout");
        assert_eq!(start.elapsed(), Duration::from_secs(30));
        assert_eq!(agents[0].status, Status::Running);
    }
}
