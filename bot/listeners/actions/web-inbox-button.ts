// "Open web inbox" (DM and App Home): ack, make a one-time sign-in link for the clicker's teammate, show it in a modal.
import type { Relay } from '../../../relay-core/service/relay-service';
import { webInboxLinkModal, webInboxUnlinkedModal } from '../../blocks/web-inbox';
import type { ButtonArgs } from './button-click';

export interface WebInboxButtonDeps {
  teammates: Relay['teammates'];
  webSessions: Relay['webSessions'];
}

export function webInboxButton({ teammates, webSessions }: WebInboxButtonDeps) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const actor = await teammates.bySlackUser(args.body.user.id);
    const view =
      actor && actor.status === 'active'
        ? webInboxLinkModal((await webSessions.issueLink(actor.handle, 'slack')).url, actor.handle)
        : webInboxUnlinkedModal();
    await args.client.views.open({ trigger_id: args.body.trigger_id, view });
  };
}
