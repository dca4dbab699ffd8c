// The digest's "Turn off the daily digest" / "Turn it back on": ack, store the choice for the clicker's teammate, and say so.
import type { AllMiddlewareArgs, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import type { Clock } from '../../../relay-core/domain/clock';
import type { Relay } from '../../../relay-core/service/relay-service';
import { publishHome, type HomeDigest } from '../events/app-home';
import { digestSettingMessage } from '../../views/daily-digest';
import { NOT_LINKED } from '../commands/handoff-command';
import { explain } from './button-click';

export interface DigestButtonDeps {
  teammates: Relay['teammates'];
  reads: Relay['reads'];
  links: Relay['links'];
  /** Absent where the digest is off on this relay (then the button explains that). */
  digest?: HomeDigest;
  clock?: Clock;
}

/** The clicker decides for their own teammate only: the button carries nothing that says whose digest it is. */
export function digestButton(deps: DigestButtonDeps, off: boolean) {
  return async (args: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> => {
    await args.ack();
    const teammate = await deps.teammates.bySlackUser(args.body.user.id);
    if (!teammate) return explain(args, NOT_LINKED);
    if (!deps.digest)
      return explain(args, 'The daily digest is off on this relay (RELAY_DIGEST_AT=off); nothing was changed.');
    await deps.digest.prefs.set(teammate.handle, off, (deps.clock ?? { now: () => new Date() }).now());
    // The Home tab shows the setting: draw it again either way; a click on the digest message is also answered there.
    await publishHome(deps, args.client, args.body.user.id, {}, deps.digest);
    if (args.body.response_url)
      await args.respond({ response_type: 'ephemeral', replace_original: false, ...digestSettingMessage(off) });
  };
}
