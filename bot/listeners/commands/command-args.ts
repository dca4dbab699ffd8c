// Slash-command listeners: what every `/handoff` handler is built with and called with.
import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { Logger } from 'pino';
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
  /** The MCP client configuration `/handoff link` shows with the new key. */
  clientSetup: ClientSetup;
}

export type CommandArgs = SlackCommandMiddlewareArgs & AllMiddlewareArgs;
