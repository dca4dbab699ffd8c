#!/usr/bin/env -S node --max-semi-space-size=4
// `npm run slack:local`: the relay as `npm start` runs it, wired to a fake Slack on this machine, and a page to use
// that Slack in a browser. A development tool: the production start (`handoff-relay start`) never loads it.
import { randomBytes } from 'node:crypto';
import { startFakeSlack } from '../fake-slack/fake-slack-api';
import { UsageError, commandHelp, parseOptions, wantsHelp, type CommandSpec } from '../cli-help';
import { startCommand } from '../start-command';
import { startLocalSlack } from './local-slack-server';

const LOCAL_SLACK_COMMAND = {
  name: 'slack:local',
  summary: 'run the relay wired to a fake Slack on this machine, and a page to click in it (development only)',
  usage: ['npm run slack:local [-- --page-port 3001] [--oauth]'],
  options: {
    'page-port': {
      type: 'string',
      value: 'PORT',
      description: 'where the local Slack page listens (default 3001; 0: any free port)',
    },
    oauth: {
      type: 'boolean',
      description: 'OAuth mode: no bot token; install the app from /slack/install ("Add to Slack") first',
    },
  },
  examples: [
    'npm run slack:local',
    'PORT=4000 npm run slack:local -- --page-port 4001',
    'npm run slack:local -- --oauth',
  ],
  env: 'the same as start (PORT, MONGODB_URL, REDIS_URL, RELAY_DATA_DIR…); SLACK_* are set to the fake Slack',
} satisfies CommandSpec;

const say = (line: string) => process.stderr.write(`${line}\n`);

async function main(argv: string[]): Promise<void> {
  if (wantsHelp(argv)) return void process.stdout.write(commandHelp(LOCAL_SLACK_COMMAND));
  const { values } = parseOptions(LOCAL_SLACK_COMMAND.name, LOCAL_SLACK_COMMAND.options, argv);
  const pagePort = Number(values['page-port'] ?? 3001);
  if (!Number.isInteger(pagePort) || pagePort < 0 || pagePort > 65535)
    throw new UsageError('--page-port must be a port number (0 for any free port)');

  // Whoever a teammate is registered as (--slack-user U0…) is in this workspace as soon as the relay names them.
  const slack = await startFakeSlack({ anyUser: true });
  const signingSecret = randomBytes(16).toString('hex');
  const oauth = values.oauth === true;
  // OAuth mode: the same app credentials serve Add to Slack and Sign in with Slack, as on api.slack.com.
  if (oauth) slack.enableOAuth({ clientId: slack.clientId, clientSecret: slack.clientSecret });
  const stopPage: Array<() => Promise<void>> = [];
  const { relay } = await startCommand({
    env: {
      ...process.env,
      ...(oauth
        ? { SLACK_BOT_TOKEN: '', SLACK_STATE_SECRET: randomBytes(16).toString('hex') }
        : { SLACK_BOT_TOKEN: slack.token }),
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: slack.url,
      SLACK_APP_TOKEN: '',
      // Sign in with Slack on the web inbox: the fake's authorize page lists the people to sign in as.
      SLACK_CLIENT_ID: slack.clientId,
      SLACK_CLIENT_SECRET: slack.clientSecret,
    },
    say,
    alsoStop: [async () => Promise.all(stopPage.map((stop) => stop())).then(() => slack.close())],
  });
  const page = await startLocalSlack({
    slack,
    relayUrl: relay.url,
    signingSecret,
    port: pagePort,
    people: async () =>
      (
        await relay.store.agents
          .find({ slack_user_id: { $ne: null } }, { projection: { handle: 1, name: 1, slack_user_id: 1 } })
          .toArray()
      ).map((a) => ({
        slack_user_id: a.slack_user_id!,
        handle: a.handle,
        name: a.name,
      })),
  });
  stopPage.push(() => page.close());
  say(`Local Slack (development only; a fake Slack on this machine, nothing reaches slack.com): ${page.url}`);
  if (oauth)
    say(
      `OAuth mode: nothing is installed yet. Open ${relay.url}/slack/install, press Add to Slack and Allow for the workspace ${slack.teamId}.`,
    );
}

main(process.argv.slice(2)).catch((error: Error) => {
  say(`slack:local: ${error.message}`);
  process.exit(1);
});
