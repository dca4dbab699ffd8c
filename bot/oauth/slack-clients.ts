// OAuth mode's "client for team": which installation's bot token a Web API call needs, from the person or channel it names.
import type { Installation } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Collection } from 'mongodb';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { slackErrorCode } from '../delivery/slack-errors';
import { installationKey, SlackNotInstalledError, type MongoInstallationStore } from './mongo-installation-store';

/**
 * Which installation a Slack user or conversation belongs to: `_id` a user id (U…/W…) or a conversation id (D…, C…,
 * G…); `key` the workspace (T…) or the org of an org-wide install (E…).
 */
export interface SlackUserTeamDoc {
  _id: string;
  key: string;
  team_id: string | null;
  enterprise_id: string | null;
  seen_at: Date;
}

export interface Workspace {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}

export interface SlackTokens {
  /** The bot token of the workspace a call is for (the person or conversation it names); SlackNotInstalledError if none. */
  tokenFor(method: string, args: Record<string, unknown>): Promise<string>;
  /** Records the workspace Slack named in a request for each of these ids (a person, the conversation they were in). */
  remember(ids: string[], where: Workspace): Promise<void>;
  /** Whether the workspace `user` is in has the app installed (a transient failure is thrown). */
  reachable(user: string): Promise<boolean>;
  /** Records `id` (an IM just opened) as in the workspace `user` is in. */
  rememberLike(id: string, user: string): Promise<void>;
  /**
   * The workspaces (`T…`) the app is installed in: each workspace install's, and for an org-wide install the workspaces
   * of the org that people have used the app from. A call about a whole workspace (users.list) names one as `team_id`.
   */
  teams(): Promise<string[]>;
}

/**
 * A call that names no person, conversation or workspace (users.list without team_id, auth.test) while more than one
 * workspace has the app: there is no telling whose token it needs. Permanent for the call as made.
 */
export class SlackWorkspaceNotNamedError extends Error {
  constructor(
    readonly method: string,
    readonly installed: number,
  ) {
    super(
      `Slack ${method} names no person, conversation or workspace, and ${installed} workspaces have the app installed: pass team_id to say which`,
    );
    this.name = 'SlackWorkspaceNotNamedError';
  }
}

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const TEAM_ID = /^T[A-Z0-9]{2,}$/;
/** A rotating token is refreshed when it has less than this left (Slack's tokens live 12 hours). */
const REFRESH_MARGIN_S = 300;

export interface RefreshedToken {
  token: string;
  refreshToken: string;
  /** Seconds since the epoch, as Bolt stores it. */
  expiresAt: number;
}

function keyQuery(installation: Installation) {
  return {
    teamId: installation.team?.id,
    enterpriseId: installation.enterprise?.id,
    isEnterpriseInstall: installation.isEnterpriseInstall ?? false,
  };
}

/**
 * A person's workspace is what Slack said in their last request, else found by asking each live installation
 * (`users.info`: a token only sees its own workspace's people) and recorded. A conversation's is what Slack said in a
 * request from it, or the workspace of the person conversations.open opened it with.
 */
export function installationTokens(deps: {
  store: MongoInstallationStore;
  userTeams: Collection<SlackUserTeamDoc>;
  /** A plain client for a probe with one token. */
  newClient: (token: string) => WebClient;
  /** Token rotation: trades a refresh token for a new bot token (oauth.v2.access with the app's credentials). */
  refresh?: (refreshToken: string) => Promise<RefreshedToken>;
  log: Logger;
}): SlackTokens {
  const { store, userTeams, newClient, log } = deps;
  const refreshing = new Map<string, Promise<string>>();

  /**
   * The installation's bot token, refreshed first when the app has token rotation on and it expires within
   * REFRESH_MARGIN_S (Bolt's authorize does the same for requests; a queue job needs it too). One refresh per
   * installation at a time in this process; the refreshed installation is stored whole.
   */
  async function botToken(installation: Installation): Promise<string> {
    const bot = installation.bot;
    if (!bot?.token) throw new SlackNotInstalledError(installationKey(keyQuery(installation)));
    const due = bot.refreshToken && bot.expiresAt && bot.expiresAt - Date.now() / 1000 < REFRESH_MARGIN_S;
    if (!due || !deps.refresh) return bot.token;
    const key = installationKey(keyQuery(installation));
    let pending = refreshing.get(key);
    if (!pending) {
      pending = deps
        .refresh(bot.refreshToken!)
        .then(async (fresh) => {
          await store.storeInstallation({
            ...installation,
            bot: { ...bot, token: fresh.token, refreshToken: fresh.refreshToken, expiresAt: fresh.expiresAt },
          });
          log.info({ workspace: key }, 'slack bot token rotated');
          return fresh.token;
        })
        .finally(() => refreshing.delete(key));
      refreshing.set(key, pending);
    }
    return pending;
  }

  // What this process wrote last for each id: a request from a known place costs no write.
  const written = new LRUCache<string, string>({ max: 50_000 });
  async function remember(ids: string[], where: Workspace): Promise<void> {
    const key = installationKey(where);
    const set = { key, team_id: where.teamId ?? null, enterprise_id: where.enterpriseId ?? null, seen_at: new Date() };
    const fresh = ids.filter((id) => written.get(id) !== key);
    await Promise.all(fresh.map((id) => userTeams.updateOne({ _id: id }, { $set: set }, { upsert: true })));
    for (const id of fresh) written.set(id, key);
  }

  async function tokenOfKnown(known: SlackUserTeamDoc): Promise<string> {
    const installation = await store.fetchInstallation({
      teamId: known.team_id ?? undefined,
      enterpriseId: known.enterprise_id ?? undefined,
      isEnterpriseInstall: known.key === known.enterprise_id,
    });
    return botToken(installation);
  }

  async function tokenOfUser(user: string): Promise<string> {
    const known = await userTeams.findOne({ _id: user });
    if (known) return tokenOfKnown(known);
    for (const doc of await store.live()) {
      if (!doc.installation?.bot?.token) continue;
      const token = await botToken(doc.installation);
      // Only Slack's "no such person here" moves on; a 429 or a network failure is thrown, so the job retries later
      // instead of deciding that nobody installed the app for this person.
      const found = await newClient(token)
        .users.info({ user })
        .then(
          (r) => r.user ?? null,
          (error: unknown) => {
            if (slackErrorCode(error) === 'user_not_found' || slackErrorCode(error) === 'token_revoked') return null;
            throw error;
          },
        );
      if (!found) continue;
      const where = {
        teamId: doc.team_id ?? undefined,
        enterpriseId: doc.enterprise_id ?? undefined,
        isEnterpriseInstall: doc._id === doc.enterprise_id,
      };
      await remember([user], where);
      log.info({ slack_user: user, workspace: doc._id }, 'slack user placed in an installed workspace');
      return token;
    }
    throw new SlackNotInstalledError(`of ${user}`);
  }

  /** A call naming no one (users.list, auth.test): only a relay with a single live installation knows where. */
  async function onlyToken(what: string): Promise<string> {
    const live = await store.live();
    if (live.length > 1) throw new SlackWorkspaceNotNamedError(what, live.length);
    const only = live.length === 1 ? live[0]!.installation : null;
    if (!only?.bot?.token) throw new SlackNotInstalledError(`of ${what} (${live.length} workspaces installed)`);
    return botToken(only);
  }

  /** The org of a workspace, as Slack named it in a request from someone there (null: none known). */
  async function orgOfTeam(team: string): Promise<string | null> {
    const seen = await userTeams.findOne({ team_id: team, enterprise_id: { $ne: null } });
    return seen?.enterprise_id ?? null;
  }

  /** A call about a whole workspace (`team_id`): its own install, else the org-wide install of its org. */
  async function tokenOfTeam(team: string): Promise<string> {
    const installation = await store.fetchInstallation({
      teamId: team,
      enterpriseId: (await orgOfTeam(team)) ?? undefined,
      isEnterpriseInstall: false,
    });
    return botToken(installation);
  }

  async function teams(): Promise<string[]> {
    const found = new Set<string>();
    for (const doc of await store.live()) {
      if (doc.team_id) found.add(doc.team_id);
      else if (doc.enterprise_id)
        for (const team of await userTeams.distinct('team_id', { enterprise_id: doc.enterprise_id }))
          if (typeof team === 'string') found.add(team);
    }
    return [...found];
  }

  async function tokenFor(method: string, args: Record<string, unknown>): Promise<string> {
    const users = typeof args.users === 'string' ? String(args.users).split(',') : [];
    const user = typeof args.user === 'string' && USER_ID.test(args.user) ? args.user : users[0];
    if (user) return tokenOfUser(user);
    if (typeof args.team_id === 'string' && TEAM_ID.test(args.team_id)) return tokenOfTeam(args.team_id);
    if (typeof args.channel === 'string') {
      const known = await userTeams.findOne({ _id: args.channel });
      return known ? tokenOfKnown(known) : onlyToken(`conversation ${args.channel}`);
    }
    return onlyToken(method);
  }

  async function rememberLike(id: string, user: string): Promise<void> {
    const known = await userTeams.findOne({ _id: user });
    if (known)
      await userTeams.updateOne(
        { _id: id },
        { $set: { key: known.key, team_id: known.team_id, enterprise_id: known.enterprise_id, seen_at: new Date() } },
        { upsert: true },
      );
  }

  async function reachable(user: string): Promise<boolean> {
    return tokenOfUser(user).then(
      () => true,
      (error: unknown) => {
        if (error instanceof SlackNotInstalledError) return false;
        throw error;
      },
    );
  }

  return { tokenFor, remember, rememberLike, reachable, teams };
}
