// Slash-command listeners: what every `/handoff` handler is built with and called with.
import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Logger } from 'pino';
import type { Invites } from '../../../relay-core/service/invites';
import type { Relay } from '../../../relay-core/service/relay-service';
import type { ClientSetup } from '../../views/link-modal';

export interface CommandDeps {
  channels: Relay['channels'];
  creates: Relay['creates'];
  links: Relay['links'];
  reads: Relay['reads'];
  teammates: Relay['teammates'];
  log: Logger;
  /** RELAY_TEAM: the team a teammate created by `/handoff link` joins. */
  team?: string;
  /** The MCP client configuration `/handoff link` and `/handoff join` show with the new key. */
  clientSetup: ClientSetup;
  /** Invitations: `/handoff invite` makes one, `/handoff join` redeems one. */
  invites: Invites;
}

export type CommandArgs = SlackCommandMiddlewareArgs & AllMiddlewareArgs;
