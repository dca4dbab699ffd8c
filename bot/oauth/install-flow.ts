// OAuth mode's "Add to Slack": the receiver options that serve /slack/install and /slack/oauth_redirect.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExpressReceiverOptions } from '@slack/bolt';
import type { Logger } from 'pino';
import type { SlackOAuthConfig } from '../../relay-core/ops/config';
import type { MongoInstallationStore } from './mongo-installation-store';
import type { MongoStateStore } from './mongo-state-store';

export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

/** The bot scopes an install asks for: exactly manifest.yml's (test/manifest.test.ts holds them together). */
export const SLACK_BOT_SCOPES = [
  'chat:write',
  'im:write',
  'commands',
  'users:read',
  'im:history',
  'channels:history',
  'groups:history',
  'links:read',
  'links:write',
] as const;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** /slack/install: one link to Slack's consent page (its state is single use: reload the page for a fresh one). */
export function installPage(addToSlackUrl: string): string {
  return (
    '<!doctype html><html><head><meta charset="utf-8"><title>Add handoff-relay to Slack</title></head><body>' +
    '<h1>Add handoff-relay to your Slack workspace</h1>' +
    '<p>Slack asks you to pick the workspace and allow the app; you come back here once it is installed.</p>' +
    `<p><a id="add-to-slack" href="${escape(addToSlackUrl)}">Add to Slack</a></p></body></html>`
  );
}

function page(res: ServerResponse, status: number, title: string, text: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
      `<body><h1>${escape(title)}</h1><p>${escape(text)}</p></body></html>`,
  );
}

export interface InstallFlowDeps {
  oauth: SlackOAuthConfig;
  publicUrl: string;
  apiUrl?: string | undefined;
  installations: MongoInstallationStore;
  states: MongoStateStore;
  log: Logger;
}

/** What ExpressReceiver needs for the install flow: the store, the single-use state, and pages a person can read. */
export function installFlowOptions(deps: InstallFlowDeps): Partial<ExpressReceiverOptions> {
  const { oauth, publicUrl, apiUrl, installations, states, log } = deps;
  return {
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    stateSecret: oauth.stateSecret,
    scopes: [...SLACK_BOT_SCOPES],
    redirectUri: `${publicUrl}${REDIRECT_PATH}`,
    installationStore: installations,
    installerOptions: {
      installPath: INSTALL_PATH,
      redirectUriPath: REDIRECT_PATH,
      stateStore: states,
      renderHtmlForInstallPath: installPage,
      authorizationUrl: oauth.authorizeUrl,
      ...(apiUrl ? { clientOptions: { slackApiUrl: apiUrl } } : {}),
      callbackOptions: {
        success: (installation, _options, _req: IncomingMessage, res: ServerResponse) => {
          const where = installation.isEnterpriseInstall ? installation.enterprise?.name : installation.team?.name;
          const key = installation.isEnterpriseInstall ? installation.enterprise?.id : installation.team?.id;
          log.info({ workspace: key }, 'slack app installed');
          page(
            res,
            200,
            'handoff-relay is installed',
            `handoff-relay is installed in ${where ?? key ?? 'your workspace'}. Open Slack and type /handoff help.`,
          );
        },
        failure: (error, _options, _req: IncomingMessage, res: ServerResponse) => {
          log.warn({ err: error.message, code: (error as { code?: string }).code }, 'slack install refused');
          const stateProblem =
            /state/i.test(error.message) || (error as { code?: string }).code === 'slack_oauth_invalid_state';
          page(
            res,
            400,
            'handoff-relay was not installed',
            stateProblem
              ? `This install link has expired or was already used, so nothing was installed. Start again at ${publicUrl}${INSTALL_PATH}.`
              : `Slack did not complete the install (${(error as { code?: string }).code ?? 'error'}), so nothing was installed. Start again at ${publicUrl}${INSTALL_PATH}.`,
          );
        },
      },
    },
  };
}
