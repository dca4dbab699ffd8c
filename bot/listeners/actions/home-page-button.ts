// The Home tab's newer/older buttons: ack, then publish the tab again at the page the button carries.
import type { AllMiddlewareArgs, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from '@slack/bolt';
import { homePageSchema } from '../../views/home';
import { publishHome, type HomeDeps } from '../events/app-home';
import { safeJson } from '../safe-json';

export function homePageButton(deps: HomeDeps) {
  return async ({
    ack,
    body,
    action,
    client,
  }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> => {
    await ack();
    const page = homePageSchema.safeParse(safeJson(action.value));
    await publishHome(deps, client, body.user.id, page.success ? page.data : {}, deps.digest);
  };
}
