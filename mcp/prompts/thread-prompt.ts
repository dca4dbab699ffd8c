// What the prompts about one received thread share: the completed thread_id argument, and the thread embedded first.
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { threadIds } from '../completions';
import type { RelayClient } from '../relay-client';
import { threadText, threadUri, type readThread } from '../resources/thread-resource';

type ThreadView = Awaited<ReturnType<typeof readThread>>;

/** The argument: a thread the caller received, completed from their newest ones. */
export function receivedThreadArgs(relay: RelayClient, what: string) {
  return { thread_id: completable(z.uuid().describe(what), threadIds(relay, ['recipient'])) };
}

/** The prompt: the thread as an embedded resource (the text resources/read gives), then the instructions. */
export function threadPrompt(view: ThreadView, description: string, instructions: string): GetPromptResult {
  return {
    description,
    messages: [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: threadUri(view.thread_id), mimeType: 'text/plain', text: threadText(view) },
        },
      },
      { role: 'user', content: { type: 'text', text: instructions } },
    ],
  };
}
