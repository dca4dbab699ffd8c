// Arming the live App Home's refreshes after a Slack job: the participants come with the event's job, so the arm
// reads no thread; only a job queued before jobs carried them makes it read the thread.
import type { Queue } from 'bullmq';
import { HOME_REFRESH_JOB, homeRefresher } from '../../bot/home/home-refresh';
import type { Relay } from '../../relay-core/service/relay-service';

const slackUsers: Record<string, string | undefined> = {
  'api-dev@acme': 'U0AAAAAAA',
  'web-dev@acme': 'U0123456',
  'no-slack@acme': undefined,
};

function harness() {
  const threadReads: string[] = [];
  const armed: string[] = [];
  const uses = {
    reads: { threadById: async (id: string) => (threadReads.push(id), { from: 'api-dev@acme', to: 'no-slack@acme' }) },
    teammates: {
      get: async (handle: string) => (handle in slackUsers ? { handle, slack_user_id: slackUsers[handle] } : null),
    },
  };
  const queue = {
    add: async (name: string, data: { slack_user: string }) => void armed.push(`${name} ${data.slack_user}`),
  };
  const home = homeRefresher({
    ...(uses as unknown as Pick<Relay, 'reads' | 'teammates'>),
    queue: queue as unknown as Queue,
  });
  return { home, threadReads, armed };
}

test("a job that names the participants arms each linked one's refresh without reading the thread", async () => {
  const { home, threadReads, armed } = harness();
  await home.armForThread({ id: 'thread-1', from: 'api-dev@acme', to: 'web-dev@acme' });
  expect(threadReads).toEqual([]);
  expect(armed.sort()).toEqual([`${HOME_REFRESH_JOB} U0123456`, `${HOME_REFRESH_JOB} U0AAAAAAA`]);
});

test('a job queued before jobs named the participants reads them from the thread; a teammate without Slack gets none', async () => {
  const { home, threadReads, armed } = harness();
  await home.armForThread({ id: 'thread-2' });
  expect(threadReads).toEqual(['thread-2']);
  expect(armed).toEqual([`${HOME_REFRESH_JOB} U0AAAAAAA`]);
});
