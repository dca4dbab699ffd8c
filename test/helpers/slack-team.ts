// The Slack fixture of the DM button and modal tests: three people in the fake Slack workspace (a recipient, a
// sender, and a stranger linked to no teammate), the first two registered on a relay wired to that Slack.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from './relay-harness';
import { deliveredHandoff, type DeliveredDm } from './slack-dm';

export const RECIPIENT = 'U0RECIPIENT';
export const SENDER = 'U0SENDER';
export const STRANGER = 'U0STRANGER';

export interface SlackTeam {
  slack: FakeSlack;
  relay: TestRelay;
  senderKey: string;
  recipientKey: string;
  /** A handoff from sender@acme to recipient@acme, delivered as a DM and recorded. */
  handoff(summary: string, metadata?: Record<string, unknown>): Promise<DeliveredDm>;
  close(): Promise<void>;
}

export async function startSlackTeam(
  name: string,
  opts: { captureLogs?: boolean; env?: Record<string, string> } = {},
): Promise<SlackTeam> {
  const slack = await startFakeSlack();
  for (const user of [RECIPIENT, SENDER, STRANGER]) slack.addUser(user);
  const relay = await startTestRelay({
    name,
    slack,
    captureLogs: opts.captureLogs,
    ...(opts.env ? { env: opts.env } : {}),
  });
  const senderKey = await relay.register({ handle: 'sender@acme', slack_user_id: SENDER });
  const recipientKey = await relay.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
  return {
    slack,
    relay,
    senderKey,
    recipientKey,
    handoff: (summary, metadata) =>
      deliveredHandoff(relay, slack, senderKey, {
        to: 'recipient@acme',
        recipientSlackUser: RECIPIENT,
        summary,
        metadata,
      }),
    async close() {
      await relay.stop();
      await slack.close();
    },
  };
}
