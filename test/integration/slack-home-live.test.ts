// The live App Home: a change to a handoff re-publishes both participants' Home tabs (views.publish at the fake Slack),
// and a burst of changes publishes once per person; a teammate without Slack gets nothing.
import { homeJobsProbe, type HomeJobsProbe } from '../helpers/home-jobs';
import { text } from '../helpers/handoffs';
import { RECIPIENT, SENDER, startSlackTeam, type SlackTeam } from '../helpers/slack-team';

let team: SlackTeam;
let probe: HomeJobsProbe;

beforeAll(async () => {
  team = await startSlackTeam('home_live');
  probe = homeJobsProbe(team.relay);
}, 60_000);

afterAll(async () => {
  await probe?.close();
  await team?.close();
});

const publishesTo = (user: string, since = 0) =>
  team.slack
    .callsTo('views.publish')
    .slice(since)
    .filter((c) => c.args.user_id === user);
const blocksText = (user: string) => JSON.stringify(team.slack.homeViews.get(user)?.blocks ?? []);

async function rpc(key: string, method: string, params: Record<string, unknown>) {
  const { body } = await team.relay.rpc(key, method, params);
  expect(body.error).toBeUndefined();
}

test('a new handoff re-publishes the Home tab of both participants, nobody opening it', async () => {
  const before = team.slack.callsTo('views.publish').length;
  const { threadId } = await team.handoff('Live home: the /users endpoint changed');
  await probe.settled();
  expect(publishesTo(RECIPIENT, before)).toHaveLength(1);
  expect(publishesTo(SENDER, before)).toHaveLength(1);
  expect(blocksText(RECIPIENT)).toContain(`thread_${threadId}`);
  expect(blocksText(RECIPIENT)).toContain('Live home: the /users endpoint changed');
  expect(blocksText(SENDER)).toContain(`thread_${threadId}`);
});

test('a burst of changes (accept, two messages, complete) publishes once per person, showing the last state', async () => {
  const { threadId } = await team.handoff('Live home burst');
  await probe.settled();
  const before = team.slack.callsTo('views.publish').length;
  // The refreshes are held while the burst lands, so however slow the box, every change meets the waiting one.
  await probe.pause();
  await rpc(team.recipientKey, 'tasks/update', { task_id: threadId, transition: 'accept' });
  await rpc(team.recipientKey, 'message/send', { task_id: threadId, message: text('on it') });
  await rpc(team.senderKey, 'message/send', { task_id: threadId, message: text('thanks') });
  await rpc(team.recipientKey, 'tasks/update', { task_id: threadId, transition: 'complete', result_summary: 'done' });
  await probe.resume();
  await probe.settled();
  expect(publishesTo(RECIPIENT, before)).toHaveLength(1);
  expect(publishesTo(SENDER, before)).toHaveLength(1);
  // Completed: no longer waiting for the recipient; listed as completed for the sender.
  expect(blocksText(RECIPIENT)).not.toContain(`thread_${threadId}`);
  const sent = (team.slack.homeViews.get(SENDER)!.blocks as any[]).findIndex(
    (b) => b.block_id === `thread_${threadId}`,
  );
  expect(JSON.stringify((team.slack.homeViews.get(SENDER)!.blocks as any[])[sent - 1])).toContain(':tada: completed');
});

test('a change between two teammates of whom only one has Slack publishes only that one', async () => {
  const loneKey = await team.relay.register({ handle: 'no-slack@acme' });
  const before = team.slack.callsTo('views.publish').length;
  const { body } = await team.relay.rpc(loneKey, 'message/send', {
    recipient: 'recipient@acme',
    intent: 'inform',
    message: text('from outside Slack'),
  });
  expect(body.result.task_id).toBeDefined();
  await probe.settled();
  expect(
    team.slack
      .callsTo('views.publish')
      .slice(before)
      .map((c) => c.args.user_id),
  ).toEqual([RECIPIENT]);
});
