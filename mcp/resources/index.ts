// The resource list: the caller's inbox and each of its threads; subscriptions where the connection lives on (stdio, a session).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RelayClient } from '../relay-client';
import { registerInboxResource } from './inbox-resource';
import { registerThreadResource } from './thread-resource';
import { ThreadSubscriptions } from './thread-subscriptions';

/**
 * Registers the resources; with `watch` (the relay client a subscription's long polls go through, unlogged: they
 * outlive the request that started them), resources/subscribe too. Returns what close() must stop.
 */
export function registerResources(
  server: McpServer,
  relay: RelayClient,
  opts: { watch?: RelayClient },
): { close: () => void } {
  registerInboxResource(server, relay);
  registerThreadResource(server, relay);
  if (!opts.watch) return { close: () => {} };
  const subscriptions = new ThreadSubscriptions(server, opts.watch);
  subscriptions.register();
  return { close: () => subscriptions.close() };
}
