// The Web API client for the workspace a person is in: the one bot token (single-token mode) or their workspace's installation (OAuth mode).
import { WebClient } from '@slack/web-api';
import type { Collection } from 'mongodb';
import type { Logger } from 'pino';
import { installationKey, SlackNotInstalledError, type MongoInstallationStore } from './mongo-installation-store';

/** Which installation a Slack user was seen in: `key` is the workspace (T…) or the org of an org-wide install (E…). */
export interface SlackUserTeamDoc {
  _id: string;
  key: string;
  team_id: string | null;
  enterprise_id: string | null;
  seen_at: Date;
}

export interface SlackClients {
  /** The client bound to the token of the workspace `slackUser` is in; SlackNotInstalledError when there is none. */
  forUser(slackUser: string): Promise<WebClient>;
  /** Records the (team, user) pair Slack named in a request (a click, a command, `/handoff link`). */
  remember(
    slackUser: string,
    where: { teamId?: string | undefined; enterpriseId?: string | undefined; isEnterpriseInstall?: boolean },
  ): Promise<void>;
}

export type ClientFactory = (token: string) => WebClient;

/** Single-token mode: everyone is in the one workspace. */
export function singleTokenClients(client: WebClient): SlackClients {
  return { forUser: async () => client, remember: async () => undefined };
}

/**
 * OAuth mode. A person's workspace is what Slack said in their last request, else found by asking each live
 * installation (`users.info`: a token only sees its own workspace's people) and recorded.
 */
export function installedClients(deps: {
  store: MongoInstallationStore;
  userTeams: Collection<SlackUserTeamDoc>;
  newClient: ClientFactory;
  log: Logger;
}): SlackClients {
  const { store, userTeams, newClient, log } = deps;
  const byToken = new Map<string, WebClient>();
  const clientOf = (token: string) => {
    let client = byToken.get(token);
    if (!client) {
      client = newClient(token);
      byToken.set(token, client);
    }
    return client;
  };

  async function remember(slackUser: string, where: Parameters<SlackClients['remember']>[1]): Promise<void> {
    const key = installationKey(where);
    await userTeams.updateOne(
      { _id: slackUser },
      {
        $set: {
          key,
          team_id: where.teamId ?? null,
          enterprise_id: where.enterpriseId ?? null,
          seen_at: new Date(),
        },
      },
      { upsert: true },
    );
  }

  async function forUser(slackUser: string): Promise<WebClient> {
    const known = await userTeams.findOne({ _id: slackUser });
    if (known) {
      const installation = await store.fetchInstallation({
        teamId: known.team_id ?? undefined,
        enterpriseId: known.enterprise_id ?? undefined,
        isEnterpriseInstall: known.key === known.enterprise_id,
      });
      if (!installation.bot?.token) throw new SlackNotInstalledError(known.key);
      return clientOf(installation.bot.token);
    }
    for (const doc of await store.live()) {
      const token = doc.installation?.bot?.token;
      if (!token) continue;
      const client = clientOf(token);
      const found = await client.users.info({ user: slackUser }).then(
        (r) => r.user ?? null,
        () => null,
      );
      if (!found) continue;
      await remember(slackUser, {
        teamId: doc.team_id ?? undefined,
        enterpriseId: doc.enterprise_id ?? undefined,
        isEnterpriseInstall: doc._id === doc.enterprise_id,
      });
      log.info({ slack_user: slackUser, workspace: doc._id }, 'slack user placed in an installed workspace');
      return client;
    }
    throw new SlackNotInstalledError(`of ${slackUser}`);
  }

  return { forUser, remember };
}
