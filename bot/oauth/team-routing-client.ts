// OAuth mode's Web API client: one client for every job, each call sent with the token of the workspace it concerns.
import { WebClient, type WebAPICallResult, type WebClientOptions } from '@slack/web-api';
import type { SlackTokens } from './slack-clients';

// Why one routing client rather than a client per job: a thread's sender and recipient, an approver or a lead may sit
// in different workspaces, and the delivery code passes one client down to every post, redraw and read-back. Each
// call names the person (user/users) or the conversation (channel) it is about, which says whose token it needs.

export class TeamRoutingClient extends WebClient {
  constructor(
    private readonly tokens: SlackTokens,
    options: WebClientOptions,
  ) {
    super(undefined, options);
  }

  override async apiCall(method: string, options: Record<string, unknown> = {}): Promise<WebAPICallResult> {
    const token = typeof options.token === 'string' ? options.token : await this.tokens.tokenFor(method, options);
    const result = await super.apiCall(method, { ...options, token });
    // The IM just opened belongs to the opener's workspace: later posts to it name only the channel.
    const opened = (result as { channel?: { id?: string } }).channel?.id;
    if (method === 'conversations.open' && opened && typeof options.users === 'string') {
      const user = String(options.users).split(',')[0]!;
      await this.tokens.rememberLike(opened, user);
    }
    return result;
  }
}
