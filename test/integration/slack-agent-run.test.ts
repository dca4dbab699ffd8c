// Hand to my agent and Stop in the Slack DM (real Bolt receiver, signed clicks, the fake Slack), with a real runner
// process and the fake agent: the DMs show the run in place, progress arrives as replies once each, the result as
// on a normal completion.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import type { TestRelay } from '../helpers/relay-harness';
import { startAgentProcess, stopAgentProcess, type AgentProcess } from '../helpers/agent-process';
import { dmText, press, threadDoc } from '../helpers/slack-dm';
import { startSlackTeam, type SlackTeam } from '../helpers/slack-team';
import { waitUntil } from '../helpers/wait-until';

let team: SlackTeam;
let slack: FakeSlack;
let relay: TestRelay;
let root: string;
let runner: AgentProcess;

beforeAll(async () => {
  team = await startSlackTeam('slack_agent_run', {
    env: { RELAY_RUN_LEASE: '3s', RELAY_RUN_PROGRESS_INTERVAL: '200ms' },
  });
  ({ slack, relay } = team);
  root = await mkdtemp(join(tmpdir(), 'slack-agent-run-'));
  runner = await startAgentProcess({ relayUrl: relay.url, key: team.recipientKey, root, name: 'laptop' });
});

afterAll(async () => {
  if (runner) await stopAgentProcess(runner);
  await team?.close();
  await rm(root, { recursive: true, force: true });
});

/** The streamed reply under the DM `ts` (chat.startStream), as the fake Slack holds it. */
function streamUnder(channel: string, ts: string) {
  return slack.messages.get(channel)?.find((m) => m.thread_ts === ts && m.chunks !== undefined);
}

/** Every text Slack was sent as an update of the DM `ts`, in order. */
function updatesOf(ts: string): string[] {
  return slack.calls
    .filter((c) => c.method === 'chat.update' && c.args.ts === ts)
    .map((c) => JSON.stringify(c.args.blocks));
}

/** The replies posted under `ts`, by their text. */
function repliesUnder(ts: string): string[] {
  return slack.calls
    .filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts === ts)
    .map((c) => JSON.stringify(c.args));
}

test('Hand to my agent on a pending DM accepts, runs the agent, shows its progress and completes with its report', async () => {
  const dm = await team.handoff('fix the flaky test mode:succeed');
  expect(dmText(slack, dm.channel, dm.ts)).toContain('handoff_run_agent');
  expect((await press(relay, dm.click('handoff_run_agent'))).status).toBe(200);
  const done = await waitUntil(
    async () => {
      const doc = await threadDoc(relay, dm.threadId);
      return doc.status === 'completed' && doc.run?.status === 'succeeded' ? doc : null;
    },
    'the run to complete the handoff',
    30_000,
  );
  expect(done.completed_summary).toBe('All green: fixed the flaky test.');
  expect(done.status_history.map((h) => h.status)).toEqual(['pending', 'accepted', 'completed']);

  // The recipient's DM ends showing how the run ended and the result, as on a normal completion.
  await waitUntil(
    async () =>
      (dmText(slack, dm.channel, dm.ts).includes('finished') &&
        dmText(slack, dm.channel, dm.ts).includes('All green')) ||
      null,
    'the DM to show the finished run and the result',
  );
  expect(updatesOf(dm.ts).some((t) => t.includes('handoff_stop_agent'))).toBe(true);
  const final = dmText(slack, dm.channel, dm.ts);
  expect(final).toContain('All green: fixed the flaky test.');
  expect(final).not.toContain('handoff_stop_agent');
  expect(final).not.toContain('handoff_run_agent');

  // Progress streamed as one reply under each DM (start, appends, stop), each batch once; no reply per batch.
  const sender = done.slack_sender!;
  const runId = done.run!.id;
  await waitUntil(async () => {
    const doc = await threadDoc(relay, dm.threadId);
    return Object.keys(doc.slack_replies ?? {}).filter((k) => /^recipient:\d+$/.test(k)).length === doc.message_seq &&
      Object.keys(doc.slack_replies ?? {}).filter((k) => /^sender:\d+$/.test(k)).length === doc.message_seq &&
      doc.slack_replies?.[`recipient:s:${runId}:stop`] &&
      doc.slack_replies?.[`sender:s:${runId}:stop`]
      ? doc
      : null;
  }, 'every batch streamed under both DMs, and both streams stopped');
  const doc = await threadDoc(relay, dm.threadId);
  expect(doc.message_seq).toBeGreaterThan(0);
  for (const under of [dm, { channel: sender.channel, ts: sender.ts }]) {
    const stream = streamUnder(under.channel, under.ts)!;
    expect(stream.streaming).toBe(false);
    expect(stream.text).toContain('step 1: reading the handoff');
    // One chunk per batch, then the stop's line.
    expect(stream.chunks).toHaveLength(doc.message_seq + 1);
    expect(stream.chunks!.at(-1)).toBe('**Finished** on laptop: the result is on the handoff.');
    expect(slack.callsTo('chat.startStream').filter((c) => c.args.thread_ts === under.ts)).toHaveLength(1);
  }
  expect(repliesUnder(dm.ts)).toHaveLength(0);
  // The sender's: one notice each for the accept and the completion, which names the agent run.
  const notices = await waitUntil(async () => {
    const under = repliesUnder(sender.ts).filter((r) => r.includes('"kind":"sender:e:'));
    return under.length === 2 ? under : null;
  }, "the sender's two notices");
  expect(repliesUnder(sender.ts)).toHaveLength(2);
  expect(notices[1]).toContain("was completed by <@U0RECIPIENT>'s agent on `laptop`.");
  expect(dmText(slack, dm.channel, dm.ts)).toContain("Completed by <@U0RECIPIENT>'s agent on `laptop`");
  // The sender's DM follows the run too.
  await waitUntil(
    async () => dmText(slack, sender.channel, sender.ts).includes('agent (laptop) finished') || null,
    'the sender DM to show how the run ended',
  );
});

test('Stop on the DM ends the running agent; the DM says it was stopped and the handoff stays accepted', async () => {
  const dm = await team.handoff('wait forever mode:hang');
  await press(relay, dm.click('handoff_run_agent'));
  await waitUntil(
    async () => dmText(slack, dm.channel, dm.ts).includes('handoff_stop_agent') || null,
    'the Stop button',
    30_000,
  );
  await waitUntil(
    async () => (await threadDoc(relay, dm.threadId)).run?.status === 'running' || null,
    'the run to start',
  );
  // Until it is stopped, both DMs say where it runs, since when, and its last line.
  const running = await waitUntil(async () => {
    const text = dmText(slack, dm.channel, dm.ts);
    return text.includes('last update') && text.includes('waiting until stopped') ? text : null;
  }, 'the DM to show the running agent and its last line');
  expect(running).toContain("Running on <@U0RECIPIENT>'s agent (laptop) · started <!date^");
  const sender = (await threadDoc(relay, dm.threadId)).slack_sender!;
  await waitUntil(
    async () => dmText(slack, sender.channel, sender.ts).includes('waiting until stopped') || null,
    "the sender's DM to follow",
  );
  expect(dmText(slack, sender.channel, sender.ts)).not.toContain('handoff_stop_agent');
  // The agent's output streams under the DM.
  await waitUntil(
    async () => streamUnder(dm.channel, dm.ts)?.text.includes('waiting until stopped') || null,
    'the streamed progress',
  );
  expect((await press(relay, dm.click('handoff_stop_agent'))).status).toBe(200);
  const doc = await waitUntil(
    async () => {
      const d = await threadDoc(relay, dm.threadId);
      return d.run?.status === 'stopped' ? d : null;
    },
    'the run to stop',
    30_000,
  );
  expect(doc.status).toBe('accepted');
  await waitUntil(
    async () => dmText(slack, dm.channel, dm.ts).includes('was stopped') || null,
    'the DM to say it was stopped',
  );
  // Stopped, the recipient can hand it over again.
  expect(dmText(slack, dm.channel, dm.ts)).toContain('handoff_run_agent');
});

// Before the test without streaming: a worker that met a Slack without streaming stops trying it.
test('a stream start whose answer Slack lost is found under the DM, not started a second time', async () => {
  // The first chat.startStream takes effect, but its answer never reaches the relay (the job retries).
  slack.dropResponseNext('chat.startStream');
  const dm = await team.handoff('fix it once more mode:succeed');
  await press(relay, dm.click('handoff_run_agent'));
  const done = await waitUntil(
    async () => {
      const d = await threadDoc(relay, dm.threadId);
      const runId = d.run?.id;
      return d.status === 'completed' &&
        runId &&
        d.slack_replies?.[`recipient:s:${runId}:stop`] &&
        d.slack_replies?.[`sender:s:${runId}:stop`]
        ? d
        : null;
    },
    'the run to complete and both streams to stop',
    30_000,
  );
  const lost = slack.calls.find((c) => c.method === 'chat.startStream' && c.response.response_lost);
  expect(lost).toBeDefined();
  for (const under of [dm, done.slack_sender!]) {
    const streams = slack.messages.get(under.channel)!.filter((m) => m.thread_ts === under.ts && m.chunks);
    expect(streams).toHaveLength(1);
    expect(slack.callsTo('chat.startStream').filter((c) => c.args.thread_ts === under.ts)).toHaveLength(1);
    expect(streams[0]!.chunks).toHaveLength(done.message_seq + 1);
  }
});

test('where Slack cannot stream, the progress arrives as replies, each batch once', async () => {
  slack.setStreaming(false);
  try {
    const dm = await team.handoff('fix it again mode:succeed');
    await press(relay, dm.click('handoff_run_agent'));
    const done = await waitUntil(
      async () => {
        const d = await threadDoc(relay, dm.threadId);
        return d.status === 'completed' &&
          Object.keys(d.slack_replies ?? {}).filter((k) => /^recipient:\d+$/.test(k)).length === d.message_seq
          ? d
          : null;
      },
      'the run to complete and every batch to be a reply',
      30_000,
    );
    expect(done.message_seq).toBeGreaterThan(0);
    expect(repliesUnder(dm.ts)).toHaveLength(done.message_seq);
    expect(repliesUnder(dm.ts).join('')).toContain('step 1: reading the handoff');
    expect(streamUnder(dm.channel, dm.ts)).toBeUndefined();
  } finally {
    slack.setStreaming(true);
  }
});
