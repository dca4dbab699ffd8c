// App Home: on app_home_opened, publish what waits for the user and what they sent, newest first.
import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { RelayError } from '../../../relay-core/domain/errors';
import type { Relay } from '../../../relay-core/service/relay-service';
import { HOME_PAGE_SIZE, homeView, unlinkedHomeView, type HomePage } from '../../views/home';
import type { DigestPrefs } from '../../digest/digest-prefs';

// An unlinked user gets a tab explaining `/handoff link`. The paging buttons (listeners/actions/home-page-button.ts)
// publish through the same function.

export interface HomeDeps {
  links: Relay['links'];
  reads: Relay['reads'];
  teammates: Relay['teammates'];
  /** The daily digest's opt-outs and hour, when the digest is on for this relay: the tab shows the setting and its button. */
  digest?: HomeDigest;
}

export interface HomeDigest {
  prefs: DigestPrefs;
  /** When the digest goes out as shown, e.g. 09:30 (RELAY_DIGEST_AT, or the policy's team.digest_at); null: off for everyone. */
  at: () => string | null;
}

/** Renders and publishes the Home tab of one Slack user at one page. */
export async function publishHome(
  { links, reads, teammates }: Pick<Relay, 'links' | 'reads' | 'teammates'>,
  client: WebClient,
  slackUser: string,
  page: HomePage = {},
  digest?: HomeDigest,
): Promise<void> {
  const caller = await teammates.bySlackUser(slackUser);
  if (!caller) {
    await client.views.publish({ user_id: slackUser, view: unlinkedHomeView() });
    return;
  }
  const list = (role: 'recipient' | 'sender', cursor?: string) =>
    reads.listThreads(caller, {
      role,
      status: role === 'recipient' ? ['unclaimed', 'pending', 'accepted'] : undefined,
      limit: HOME_PAGE_SIZE,
      cursor,
    });
  let waiting;
  let sent;
  try {
    [waiting, sent] = await Promise.all([list('recipient', page.w), list('sender', page.s)]);
  } catch (error) {
    // A cursor this relay did not issue: show the newest page instead.
    if (!(error instanceof RelayError)) throw error;
    [waiting, sent] = await Promise.all([list('recipient'), list('sender')]);
    page = {};
  }
  const digestAt = digest?.at();
  const digestSetting = digest && digestAt ? { off: await digest.prefs.isOff(caller.handle), at: digestAt } : undefined;
  const view = homeView({
    handle: caller.handle,
    waiting,
    sent,
    page,
    inboxUrl: (id) => links.url(id, caller.handle),
    digest: digestSetting,
  });
  await client.views.publish({ user_id: slackUser, view });
}

export function appHomeOpened(deps: HomeDeps) {
  return async ({ event, client }: SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs): Promise<void> => {
    // The event also fires for the Messages tab, which this app does not draw.
    if (event.tab !== 'home') return;
    await publishHome(deps, client, event.user, {}, deps.digest);
  };
}
