// DM buttons through the real Bolt receiver (signed requests), a real relay and the fake Slack: Accept as a
// `verify` job (verifying → accepted, or the verdict's refusal as a notice), and clicks that must change nothing.
import { TIMER_ARM_JOB, TIMER_FIRE_JOB } from '../../relay-core/queues/bullmq-timer-queue';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import type { TestRelay } from '../helpers/relay-harness';
import { dmText, pressAndFinish, explanations, press, threadDoc, waitForExplanation } from '../helpers/slack-dm';
import { clickButton } from '../../scripts/fake-slack/slack-requests';
import { testRedisUrl } from '../helpers/test-env';
import { SENDER, startSlackTeam, STRANGER, type SlackTeam } from '../helpers/slack-team';
import { waitUntil } from '../helpers/wait-until';
import { STORE_CLEANUP_JOB } from '../../relay-core/queues/store-cleanup-job';

let team: SlackTeam;
let slack: FakeSlack;
let relay: TestRelay;
let redis: Redis;
let verifyQueue: Queue;

beforeAll(async () => {
  team = await startSlackTeam('slack_buttons', { captureLogs: true });
  ({ slack, relay } = team);
  redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  verifyQueue = new Queue('verify', { connection: redis, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await verifyQueue?.close();
  redis?.disconnect();
  await team?.close();
});

const handoff = (summary: string, metadata?: Record<string, unknown>) => team.handoff(summary, metadata);

/**
 * Until the `verify` queue has nothing waiting, delayed or running but the handoffs' timers (delayed for hours, and
 * their arming after each event) and the store's clean-up (ten minutes away): every accept click has been decided.
 */
async function verifyQueueDrained(): Promise<void> {
  const background = new Set([TIMER_FIRE_JOB, TIMER_ARM_JOB, STORE_CLEANUP_JOB]);
  await waitUntil(async () => {
    const jobs = await verifyQueue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
    return jobs.every((job) => job && background.has(job.name));
  }, 'the verify queue to drain');
}

describe('Accept', () => {
  test('shows "Verifying acceptance…" at once, then the DM shows who accepted, when, via Slack', async () => {
    const dm = await handoff('accept me');
    const answer = await press(relay, dm.click('handoff_accept'));
    expect(answer.status).toBe(200);
    await slack.waitFor(
      'chat.update',
      (c) => c.args.ts === dm.ts && JSON.stringify(c.args.blocks).includes('Verifying acceptance'),
    );
    await slack.waitFor(
      'chat.update',
      (c) => c.args.ts === dm.ts && JSON.stringify(c.args.blocks).includes('Accepted by'),
    );
    const doc = await threadDoc(relay, dm.threadId);
    expect(doc.status).toBe('accepted');
    expect(doc.status_history.at(-1)).toMatchObject({ status: 'accepted', by: 'recipient@acme', via: 'slack' });
    await waitUntil(
      async () => !dmText(slack, dm.channel, dm.ts).includes('Verifying') || undefined,
      'the notice to go',
    );
    const shown = dmText(slack, dm.channel, dm.ts);
    expect(shown).toContain('via Slack');
    expect(shown).toContain('handoff_complete');
  });

  test('refused by the acceptance verdict: the DM shows the result code and reasons, the thread stays pending', async () => {
    const dm = await handoff('needs terraform', { required_tools: ['terraform'] });
    await press(relay, dm.click('handoff_accept'));
    await slack.waitFor(
      'chat.update',
      (c) => c.args.ts === dm.ts && JSON.stringify(c.args.blocks).includes('CAPABILITY_UNAVAILABLE'),
    );
    await verifyQueueDrained();
    const shown = dmText(slack, dm.channel, dm.ts);
    expect(shown).toContain(
      'Not accepted: a capability it needs is not available to you. required tools not available: terraform. (check CAPABILITY_UNAVAILABLE)',
    );
    expect(shown).not.toContain('Verifying acceptance');
    expect(shown).toContain('handoff_accept'); // still pending: Accept and Decline stay
    const doc = await threadDoc(relay, dm.threadId);
    expect(doc.status).toBe('pending');
    expect(doc.status_history).toHaveLength(1);
  });

  test('10 different Accept clicks at once: one transition, and the other nine clickers are told nothing changed', async () => {
    const dm = await handoff('click race');
    const clicks = Array.from({ length: 10 }, (_, i) =>
      dm.click('handoff_accept', {
        actionTs: `1700000001.00000${i}`,
        responseUrl: slack.responseUrl(`race-${dm.threadId}-${i}`),
      }),
    );
    const answers = await Promise.all(clicks.map((c) => press(relay, c)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    await waitUntil(async () => (await threadDoc(relay, dm.threadId)).status === 'accepted' || undefined, 'the accept');
    // (The ack answers before the job is added, so only after that could the queue drain early.)
    await waitUntil(
      async () => clicks.filter((c) => explanations(slack, c.responseUrl!).length > 0).length >= 9 || undefined,
      'nine explanations',
    );
    await verifyQueueDrained();
    const doc = await threadDoc(relay, dm.threadId);
    expect(doc.status).toBe('accepted');
    expect(doc.status_history.filter((h) => h.status === 'accepted')).toHaveLength(1);
    expect(doc.outbox.filter((e) => e.type === 'thread.accepted')).toHaveLength(1);
    const told = clicks.filter((c) =>
      explanations(slack, c.responseUrl!).some((e) => /nothing was changed/i.test(String(e.args.text))),
    );
    expect(told).toHaveLength(9);
    await waitUntil(async () => {
      const shown = dmText(slack, dm.channel, dm.ts);
      return (shown.includes('Accepted by') && !shown.includes('Verifying')) || undefined;
    }, 'the DM to show accepted');
  });

  test('Slack retrying the same click (same action_ts) is one verify job, not a doubled click', async () => {
    const dm = await handoff('retried click');
    const click = dm.click('handoff_accept', { actionTs: '1700000002.000001' });
    await Promise.all([press(relay, click), press(relay, click)]);
    await waitUntil(async () => (await threadDoc(relay, dm.threadId)).status === 'accepted' || undefined, 'the accept');
    await verifyQueueDrained();
    const jobs = await verifyQueue.getJobs(['completed', 'failed']);
    // The thread's timers are armed on the same queue after each event; the accept itself is one job.
    expect(
      jobs.filter((j) => j.data.thread_id === dm.threadId && j.name !== TIMER_ARM_JOB && j.name !== TIMER_FIRE_JOB),
    ).toHaveLength(1);
    expect(
      explanations(slack, click.responseUrl!).filter((e) => /already accepted/.test(String(e.args.text))),
    ).toHaveLength(0);
  });

  test('from the Home tab (no DM message, no response_url) it works too', async () => {
    const dm = await handoff('accept from home');
    const click = dm.click('handoff_accept', { surface: 'home', responseUrl: undefined });
    expect((await press(relay, click)).status).toBe(200);
    await waitUntil(async () => (await threadDoc(relay, dm.threadId)).status === 'accepted' || undefined, 'the accept');
  });
});

describe('clicks that change nothing get an ephemeral explanation', () => {
  test('a copy of the DM that is not the recorded message is out of date', async () => {
    const dm = await handoff('stale copy');
    const click = dm.click('handoff_accept', { messageTs: '1699999999.000100' });
    await press(relay, click);
    await waitForExplanation(slack, click.responseUrl!, /out of date/);
    await verifyQueueDrained();
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });

  test('a button showing another status than the thread has now', async () => {
    const dm = await handoff('moved on');
    const decline = dm.click('handoff_decline'); // shows pending
    await press(relay, dm.click('handoff_accept'));
    await waitUntil(async () => (await threadDoc(relay, dm.threadId)).status === 'accepted' || undefined, 'the accept');
    await pressAndFinish(relay, decline);
    const text = await waitForExplanation(slack, decline.responseUrl!, /Nothing was changed/);
    expect(text).toMatch(/is now accepted \(by recipient@acme via Slack/);
    expect(slack.callsTo('views.open').filter((c) => c.args.trigger_id === decline.triggerId)).toHaveLength(0);
    expect((await threadDoc(relay, dm.threadId)).status).toBe('accepted');
  });

  test.each([
    ['the sender (linked, not the recipient)', SENDER, /Only the recipient \(recipient@acme\) can accept/],
    ['a Slack user linked to no teammate', STRANGER, /not linked to a handoff-relay teammate/],
  ])('%s', async (_who, user, pattern) => {
    const dm = await handoff(`unauthorised ${user}`);
    const click = dm.click('handoff_accept', { user });
    await press(relay, click);
    await waitForExplanation(slack, click.responseUrl!, pattern);
    await verifyQueueDrained();
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });

  test('a button value the app never made', async () => {
    const dm = await handoff('forged value');
    const click = dm.click('handoff_accept', { value: '{"t":"not-a-thread","s":"pending"}' });
    await press(relay, click);
    await waitForExplanation(slack, click.responseUrl!, /not one handoff-relay recognises/);
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });

  test('from the Home tab, the explanation opens as a small modal (no response_url there)', async () => {
    const dm = await handoff('home explanation');
    const click = dm.click('handoff_accept', { surface: 'home', responseUrl: undefined, user: STRANGER });
    await press(relay, click);
    const opened = await slack.waitFor('views.open', (c) => c.args.trigger_id === click.triggerId);
    expect(JSON.stringify(opened.args.view)).toContain('not linked to a handoff-relay teammate');
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });
});

test('View in inbox is a link: its action is acked and changes nothing', async () => {
  const dm = await handoff('inbox link');
  const click = dm.click('handoff_open_inbox', { value: '' });
  expect((await pressAndFinish(relay, click)).status).toBe(200);
  expect(explanations(slack, click.responseUrl!)).toHaveLength(0);
  expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
});

describe('requests Slack did not sign are refused with 401 and change nothing', () => {
  test.each<[string, { unsigned?: boolean; secret?: string; skewSeconds?: number }]>([
    ['no signature', { unsigned: true }],
    ['the wrong secret', { secret: 'not-the-signing-secret' }],
    ['a timestamp 6 minutes old', { skewSeconds: -360 }],
    ['a timestamp 6 minutes in the future', { skewSeconds: 360 }],
  ])('%s', async (_name, { skewSeconds, ...opts }) => {
    const dm = await handoff(`unsigned ${_name}`);
    // The timestamp is taken when the click is sent: one taken when the file loaded is a minute or more stale by
    // now on a loaded machine, and "6 minutes in the future" is then within Slack's 5 minutes.
    const timestamp = skewSeconds === undefined ? {} : { timestamp: Math.floor(Date.now() / 1000) + skewSeconds };
    const answer = await clickButton(`${relay.url}/slack/events`, relay.signingSecret, dm.click('handoff_accept'), {
      ...opts,
      ...timestamp,
    });
    expect(answer.status).toBe(401);
    await verifyQueueDrained();
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });
});

describe('the verify queue refuses jobs it cannot trust, without retrying and without changing anything', () => {
  async function failedJob(name: string, data: Record<string, unknown>) {
    const job = await verifyQueue.add(name, data, { attempts: 5, backoff: { type: 'fixed', delay: 60_000 } });
    // Read the job after its state says failed: a copy read while it was still active has no failedReason.
    return waitUntil(
      async () => ((await verifyQueue.getJobState(job.id!)) === 'failed' ? verifyQueue.getJob(job.id!) : undefined),
      `the ${name} job to fail for good`,
    );
  }

  test('a slack-accept job with malformed data', async () => {
    const dm = await handoff('malformed job');
    const failed = await failedJob('slack-accept', {
      thread_id: dm.threadId,
      slack_user: 'recipient',
      shown_status: 'pending',
    });
    expect(failed.failedReason).toMatch(/malformed slack-accept data \(must be a Slack user id\)/);
    expect((await threadDoc(relay, dm.threadId)).status).toBe('pending');
  });

  test('a job name no processor knows', async () => {
    const failed = await failedJob('no-such-check', { thread_id: '00000000-0000-4000-8000-000000000000' });
    expect(failed.failedReason).toMatch(/unknown kind "no-such-check"/);
  });
});
